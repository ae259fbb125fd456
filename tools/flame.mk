# tools: flame - rec-flame, interactive and differential flame graphs
# (man/rec-flame.1). The page's script and style are compiled in from
# tools/flame.js and tools/flame.css as C strings.
bin_PROGRAMS += tools/rec-flame
tools_rec_flame_SOURCES = tools/rec-flame.c tools/export.h \
	tools/export-profile.c tools/cpu-map.c
nodist_tools_rec_flame_SOURCES = tools/flame-asset.c
tools_rec_flame_CPPFLAGS = $(AM_CPPFLAGS) $(JANSSON_CFLAGS)
tools_rec_flame_LDADD = tools/libreccli.la librecord/librecord.la $(JANSSON_LIBS)
$(tools_rec_flame_OBJECTS): librecord/rec/events.h
EXTRA_DIST += tools/flame.js tools/flame.css
CLEANFILES += tools/flame-asset.c
dist_man_MANS += man/rec-flame.1

# Each line becomes a C string literal line: backslashes and quotes
# escaped, a newline kept.
FLAME_TO_C = sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/'
tools/flame-asset.c: $(srcdir)/tools/flame.js $(srcdir)/tools/flame.css
	$(AM_V_GEN)$(MKDIR_P) tools && { \
	  echo '/* generated from tools/flame.js and tools/flame.css */'; \
	  echo 'const char rec_flame_js[] ='; \
	  $(FLAME_TO_C) $(srcdir)/tools/flame.js; echo ';'; \
	  echo 'const char rec_flame_css[] ='; \
	  $(FLAME_TO_C) $(srcdir)/tools/flame.css; echo ';'; \
	} > $@.tmp && mv $@.tmp $@
