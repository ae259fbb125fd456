# tests for the CFI unwinder: the table builder and walk (unit), and
# workloads built without frame pointers run under rec-start.
check_PROGRAMS += tests/test-unwind-table
tests_test_unwind_table_SOURCES = tests/test-unwind-table.c libsampler/unwind-build.c \
	libsampler/unwind-walk.c libsampler/unwind-fp.c libsampler/unwind.h
tests_test_unwind_table_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests
check_PROGRAMS += tests/test-unwind-cache
tests_test_unwind_cache_SOURCES = tests/test-unwind-cache.c tests/fd-stubs.c \
	libsampler/unwind-cache.c libsampler/cache.c libsampler/cache.h \
	libsampler/unwind-build.c libsampler/unwind.h
tests_test_unwind_cache_CPPFLAGS = -I$(top_srcdir)/libsampler $(AM_CPPFLAGS) \
	-I$(top_srcdir)/tests

# Workloads as Debian builds its packages: -O2, no frame pointers.
NOFP_CFLAGS = $(WARN_CFLAGS) $(PTHREAD_CFLAGS) -O2 -g -fomit-frame-pointer \
	-fno-optimize-sibling-calls
noinst_PROGRAMS += tests/workloads/stacks-nofp tests/workloads/unwind-sig \
	tests/workloads/unwind-dl tests/workloads/unws-main \
	tests/workloads/unwind-bad
tests_workloads_unwind_bad_SOURCES = tests/workloads/unwind-bad.c
tests_workloads_unwind_bad_CFLAGS = $(NOFP_CFLAGS)
tests_workloads_unwind_bad_LDFLAGS =
tests_workloads_stacks_nofp_SOURCES = tests/workloads/stacks.c
tests_workloads_stacks_nofp_CFLAGS = $(NOFP_CFLAGS)
tests_workloads_stacks_nofp_LDFLAGS =
tests_workloads_stacks_nofp_LDADD = $(PTHREAD_LIBS)
tests_workloads_unwind_sig_SOURCES = tests/workloads/unwind-sig.c
tests_workloads_unwind_sig_CFLAGS = $(NOFP_CFLAGS)
tests_workloads_unwind_sig_LDFLAGS =
tests_workloads_unwind_dl_SOURCES = tests/workloads/unwind-dl.c
tests_workloads_unwind_dl_CFLAGS = $(NOFP_CFLAGS)
tests_workloads_unwind_dl_LDFLAGS =
tests_workloads_unwind_dl_LDADD = -ldl
tests_workloads_unws_main_SOURCES = tests/workloads/unws-main.c
tests_workloads_unws_main_CFLAGS = $(NOFP_CFLAGS)
tests_workloads_unws_main_LDFLAGS =
tests_workloads_unws_main_LDADD = -ldl
# Loaded by the workloads above (the test strips a copy of libunws).
check_LTLIBRARIES += tests/workloads/libunwdl.la tests/workloads/libunws.la \
	tests/workloads/libunwdf.la
tests_workloads_libunwdl_la_SOURCES = tests/workloads/unwdl-lib.c
tests_workloads_libunwdl_la_CFLAGS = $(NOFP_CFLAGS)
tests_workloads_libunwdl_la_LDFLAGS = -module -avoid-version -rpath /nowhere
tests_workloads_libunws_la_SOURCES = tests/workloads/unws-lib.c
tests_workloads_libunws_la_CFLAGS = $(NOFP_CFLAGS)
tests_workloads_libunws_la_LDFLAGS = -module -avoid-version -rpath /nowhere \
	-Wl,--build-id
# The same code with .debug_frame only (no .eh_frame FDEs).
tests_workloads_libunwdf_la_SOURCES = tests/workloads/unws-lib.c
tests_workloads_libunwdf_la_CFLAGS = $(NOFP_CFLAGS) \
	-fno-asynchronous-unwind-tables -fno-unwind-tables
tests_workloads_libunwdf_la_LDFLAGS = -module -avoid-version -rpath /nowhere

# Shell tests: listed once, run and distributed. test-runtimes and
# test-python: stacks through JIT code (node, Java) and Python frames
# (tests/runtimes/).
UNWIND_SH_TESTS = tests/test-unwind.sh tests/test-debug-dir.sh \
	tests/test-runtimes.sh tests/test-python.sh
TESTS += tests/test-unwind-table tests/test-unwind-cache $(UNWIND_SH_TESTS)
dist_check_SCRIPTS += $(UNWIND_SH_TESTS)
EXTRA_DIST += tests/runtimes/hot.js tests/runtimes/Hot.java tests/runtimes/hot.py
# The readers' --debug-dir on a recording of libunws (tests/mkgolden).
EXTRA_DIST += tests/data/debug-dir/dump-names.txt \
	tests/data/debug-dir/collapsed.txt tests/data/debug-dir/cpu-hot.txt

# The handler's walk of Python frames over built interpreter state.
check_PROGRAMS += tests/test-python-walk
tests_test_python_walk_SOURCES = tests/test-python-walk.c tests/session-stubs.c \
	libsampler/unwind-python.c libsampler/unwind-python.h libsampler/unwind-py-layouts.h \
	libsampler/unwind-fp.c libsampler/unwind-fp.h
tests_test_python_walk_CPPFLAGS = -I$(top_srcdir)/libsampler $(AM_CPPFLAGS) \
	-I$(top_srcdir)/tests
tests_test_python_walk_CFLAGS = $(AM_CFLAGS) $(PTHREAD_CFLAGS)
tests_test_python_walk_LDADD = librecord/librecord.la $(PTHREAD_LIBS) -ldl
TESTS += tests/test-python-walk
# The drain's line tables against each interpreter's (test-python.sh).
check_PROGRAMS += tests/py-lines
tests_py_lines_SOURCES = tests/py-lines.c libsampler/sym-py-lines.c \
	libsampler/unwind-python.h
tests_py_lines_CPPFLAGS = -I$(top_srcdir)/libsampler $(AM_CPPFLAGS)
EXTRA_DIST += tests/runtimes/lines.py
