# tools: cpu - rec-cpu, per-thread CPU reconstruction (man/rec-cpu.1).
bin_PROGRAMS += tools/rec-cpu
tools_rec_cpu_SOURCES = tools/rec-cpu.c tools/cpu-model.h tools/cpu-model.c \
	tools/cpu-map.c tools/cpu-read.c tools/cpu-table.c tools/cpu-svg.c \
	tools/cpu-hot.c tools/cpu-follow.c tools/cpu-follow.h
tools_rec_cpu_CPPFLAGS = $(AM_CPPFLAGS) $(JANSSON_CFLAGS)
tools_rec_cpu_LDADD = tools/libreccli.la librecord/librecord.la $(JANSSON_LIBS) -lm
dist_man_MANS += man/rec-cpu.1
$(tools_rec_cpu_OBJECTS): librecord/rec/events.h
