# tests for rec-start: the bundled workloads with known behaviour and the
# tests that run them under rec-start.
# Workloads with known behaviour (README demo, CPU budgets, call chains).
# Not instrumented under --enable-sanitizers: they stand for ordinary
# programs; frame pointers on, sibling calls off so that chains are exact.
WORKLOAD_CFLAGS = $(WARN_CFLAGS) $(PTHREAD_CFLAGS) -O2 -g \
	-fno-omit-frame-pointer -fno-optimize-sibling-calls
noinst_PROGRAMS += tests/workloads/demo tests/workloads/budget tests/workloads/stacks \
	tests/workloads/sigblock tests/workloads/rawexit tests/workloads/rename \
	tests/workloads/sigcount tests/workloads/jitmove tests/workloads/fpspin
tests_workloads_fpspin_SOURCES = tests/workloads/fpspin.c
tests_workloads_fpspin_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_fpspin_LDFLAGS =
tests_workloads_fpspin_LDADD = $(PTHREAD_LIBS)
tests_workloads_jitmove_SOURCES = tests/workloads/jitmove.c
tests_workloads_jitmove_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_jitmove_LDFLAGS =
tests_workloads_jitmove_LDADD = $(PTHREAD_LIBS)
tests_workloads_sigcount_SOURCES = tests/workloads/sigcount.c
tests_workloads_sigcount_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_sigcount_LDFLAGS =
tests_workloads_sigcount_LDADD = $(PTHREAD_LIBS)
tests_workloads_rename_SOURCES = tests/workloads/rename.c
tests_workloads_rename_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_rename_LDFLAGS =
tests_workloads_rename_LDADD = $(PTHREAD_LIBS)
tests_workloads_rawexit_SOURCES = tests/workloads/rawexit.c
tests_workloads_rawexit_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_rawexit_LDFLAGS =
tests_workloads_rawexit_LDADD = $(PTHREAD_LIBS)
tests_workloads_sigblock_SOURCES = tests/workloads/sigblock.c
tests_workloads_sigblock_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_sigblock_LDFLAGS =
tests_workloads_sigblock_LDADD = $(PTHREAD_LIBS)
tests_workloads_demo_SOURCES = tests/workloads/demo.c
tests_workloads_demo_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_demo_LDFLAGS =
tests_workloads_demo_LDADD = $(PTHREAD_LIBS)
tests_workloads_budget_SOURCES = tests/workloads/budget.c
tests_workloads_budget_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_budget_LDFLAGS =
tests_workloads_budget_LDADD = $(PTHREAD_LIBS)
tests_workloads_stacks_SOURCES = tests/workloads/stacks.c
tests_workloads_stacks_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_stacks_LDFLAGS =
tests_workloads_stacks_LDADD = $(PTHREAD_LIBS)

# Symbolization unit test (libsampler/sym-map.c against this very program).
check_PROGRAMS += tests/test-symbols
tests_test_symbols_SOURCES = tests/test-symbols.c tests/fd-stubs.c tests/session-stubs.c \
	libsampler/sym-map.c libsampler/unwind-modinfo.c libsampler/unwind-mods.c \
	libsampler/unwind-build.c libsampler/unwind-walk.c libsampler/unwind-cache.c \
	libsampler/unwind-fp.c libsampler/sym-jit.c \
	libsampler/sym-elf.c libsampler/sym-table.c libsampler/cache.c libsampler/sym-dwload.c \
	libsampler/sym-dwarf.c libsampler/sym-cfi.c libsampler/sym.h \
	libsampler/sym-internal.h
tests_test_symbols_CPPFLAGS = -I$(top_srcdir)/libsampler $(AM_CPPFLAGS) \
	-I$(top_srcdir)/tests $(ELF_CFLAGS) \
	$(LZMA_CFLAGS)
tests_test_symbols_CFLAGS = $(AM_CFLAGS) $(PTHREAD_CFLAGS) -fno-optimize-sibling-calls
tests_test_symbols_LDADD = librecord/librecord.la $(ELF_LIBS) $(LZMA_LIBS) \
	$(PTHREAD_LIBS) -ldl

# Shell tests: listed once, run and distributed.
START_SH_TESTS = tests/test-start.sh tests/test-start-exit.sh \
	tests/test-start-follow.sh tests/test-stacks.sh tests/test-start-losses.sh \
	tests/test-start-runs.sh tests/test-start-engine.sh \
	tests/test-start-full.sh tests/test-start-stream.sh tests/test-start-names.sh \
	tests/test-start-retention.sh tests/test-start-attach.sh \
	tests/test-start-jit.sh
TESTS += tests/test-symbols $(START_SH_TESTS)
dist_check_SCRIPTS += $(START_SH_TESTS)

# perf_event_open denied by a seccomp filter (the engine's fallback test).
check_PROGRAMS += tests/noperf
tests_noperf_SOURCES = tests/noperf.c

# The chunk rec-start -o - writes in place of a dropped one, from a schema
# this build does not have (start-drop.c called directly).
check_PROGRAMS += tests/test-start-drop
tests_test_start_drop_SOURCES = tests/test-start-drop.c tests/recbuild.h \
	tools/start/start-drop.c tools/start/start-summary.c
tests_test_start_drop_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests \
	-I$(top_srcdir)/tools/start -I$(top_srcdir)/tools/cli \
	-I$(top_srcdir)/librecord $(LZ4_CFLAGS)
tests_test_start_drop_LDADD = tools/cli/libreccli.la librecord/librecord.la \
	$(LZ4_LIBS) -lm
TESTS += tests/test-start-drop
