# tools: dump - rec-dump, rec-summary and the helpers every tool shares.

# Shared command-line helpers (tools/common.h), also used by rec-cpu.
noinst_LTLIBRARIES += tools/libreccli.la
tools_libreccli_la_SOURCES = tools/common.c tools/common.h tools/cli-opts.c
tools_libreccli_la_CPPFLAGS = $(AM_CPPFLAGS) $(JANSSON_CFLAGS)
tools_libreccli_la_LIBADD = $(JANSSON_LIBS)

bin_PROGRAMS += tools/rec-dump tools/rec-summary

tools_rec_dump_SOURCES = tools/rec-dump.c tools/dump-render.c tools/dump-render.h \
	tools/debug-syms.c tools/debug-syms.h
tools_rec_dump_CPPFLAGS = $(AM_CPPFLAGS) $(JANSSON_CFLAGS) $(ELF_CFLAGS)
tools_rec_dump_LDADD = tools/libreccli.la librecord/librecord.la $(JANSSON_LIBS) \
	$(ELF_LIBS)

tools_rec_summary_SOURCES = tools/rec-summary.c
tools_rec_summary_CPPFLAGS = $(AM_CPPFLAGS) $(JANSSON_CFLAGS)
tools_rec_summary_LDADD = tools/libreccli.la librecord/librecord.la $(JANSSON_LIBS)
# <rec/events.h> is generated: objects built on their own (make tools/rec-dump)
# need it first.
$(tools_libreccli_la_OBJECTS) $(tools_rec_dump_OBJECTS) $(tools_rec_summary_OBJECTS): librecord/rec/events.h
