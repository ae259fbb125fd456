# tests for libsampler: unit tests (settings parsing, queue lock, frame
# walker) and hazard programs run under the preloaded sampler.
check_PROGRAMS += tests/test-sampler tests/sampler-check tests/test-jit
tests_test_sampler_SOURCES = tests/test-sampler.c \
	libsampler/session-throttle.c libsampler/unwind-fp.c
tests_test_sampler_CFLAGS = $(AM_CFLAGS) $(PTHREAD_CFLAGS)
tests_test_sampler_LDADD = $(PTHREAD_LIBS)

tests_test_jit_SOURCES = tests/test-jit.c libsampler/sym-jit.c libsampler/sym-jit.h
# A small table, so that its bound is met.
tests_test_jit_CPPFLAGS = $(AM_CPPFLAGS) -DJIT_MAX_NAMES=256

tests_sampler_check_SOURCES = tests/sampler-check.c
tests_sampler_check_LDADD = librecord/librecord.la

# Hazard programs: ordinary programs run under LD_PRELOAD (instrumented
# like everything else under --enable-sanitizers). A new one is one word
# here: tests/hazards/NAME is built from tests/hazards/NAME.c and linked
# with the default LDADD (threads, dlopen); only programs that need more
# have rules below.
EXTRA_DIST += tests/hazards/hazard.h
HAZARDS = tests/hazards/burn tests/hazards/forker tests/hazards/execer \
	tests/hazards/spawner tests/hazards/ownprof tests/hazards/blocker \
	tests/hazards/manythreads tests/hazards/slowsys tests/hazards/exitthread \
	tests/hazards/killed tests/hazards/api tests/hazards/altstack \
	tests/hazards/dlopener tests/hazards/sigdisp tests/hazards/c11sig \
	tests/hazards/sighijack tests/hazards/sigwaiter tests/hazards/closeall \
	tests/hazards/jumper tests/hazards/exitdrain tests/hazards/earlymain \
	tests/hazards/maskview tests/hazards/exiter tests/hazards/sigstack \
	tests/hazards/closer tests/hazards/spawnenv tests/hazards/forkstack \
	tests/hazards/sigreenter tests/hazards/stuck tests/hazards/sigexit
check_PROGRAMS += $(HAZARDS)
# Strict ISO C: signal() is glibc's one-shot __sysv_signal there.
tests_hazards_c11sig_CFLAGS = $(AM_CFLAGS) -std=c11
# The module dlopener loads once the recording runs.
check_LTLIBRARIES += tests/hazards/libhzplugin.la
tests_hazards_libhzplugin_la_SOURCES = tests/hazards/plugin.c tests/hazards/hazard.h
tests_hazards_libhzplugin_la_LDFLAGS = -module -avoid-version -rpath /nowhere
tests_hazards_exitdrain_LDADD = libsampler/libsampler.la librecord/librecord.la $(PTHREAD_LIBS)
# A library whose constructor starts a thread before the sampler's runs.
check_LTLIBRARIES += tests/hazards/libhzearly.la
tests_hazards_libhzearly_la_SOURCES = tests/hazards/earlylib.c tests/hazards/hazard.h
tests_hazards_libhzearly_la_LIBADD = $(PTHREAD_LIBS)
tests_hazards_libhzearly_la_LDFLAGS = -avoid-version -rpath /nowhere
tests_hazards_earlymain_SOURCES = tests/hazards/earlymain.c tests/hazards/hazard.h
tests_hazards_earlymain_LDADD = tests/hazards/libhzearly.la $(PTHREAD_LIBS)
tests_hazards_api_LDADD = libsampler/libsampler.la librecord/librecord.la $(PTHREAD_LIBS)

# Shell tests: listed once, run and distributed.
SAMPLER_SH_TESTS = tests/test-sampler-hazards.sh \
	tests/test-sampler-hazards-perf.sh
TESTS += tests/test-sampler tests/test-jit $(SAMPLER_SH_TESTS)
dist_check_SCRIPTS += $(SAMPLER_SH_TESTS)
# The Go hazard program (built by the test when go is installed) and the
# build cache the test keeps in the build directory.
EXTRA_DIST += tests/hazards/go/main.go tests/hazards/go/go.mod
clean-local: clean-go-cache
clean-go-cache:
	-chmod -R u+w tests/go-cache 2>/dev/null; rm -rf tests/go-cache
.PHONY: clean-go-cache
