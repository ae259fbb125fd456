# tests for libsampler: unit tests (settings parsing, queue lock, frame
# walker) and hazard programs run under the preloaded sampler.
check_PROGRAMS += tests/test-sampler tests/sampler-check
tests_test_sampler_SOURCES = tests/test-sampler.c \
	libsampler/throttle.c libsampler/fpwalk.c
tests_test_sampler_CFLAGS = $(AM_CFLAGS) $(PTHREAD_CFLAGS)
tests_test_sampler_LDADD = $(PTHREAD_LIBS)

tests_sampler_check_SOURCES = tests/sampler-check.c
tests_sampler_check_LDADD = librecord/librecord.la

# Hazard programs: ordinary programs run under LD_PRELOAD (instrumented
# like everything else under --enable-sanitizers).
HAZARDS = tests/hazards/burn tests/hazards/forker tests/hazards/execer \
	tests/hazards/spawner tests/hazards/ownprof tests/hazards/blocker \
	tests/hazards/manythreads tests/hazards/slowsys tests/hazards/exitthread \
	tests/hazards/killed tests/hazards/api tests/hazards/altstack \
	tests/hazards/dlopener tests/hazards/sigdisp tests/hazards/c11sig \
	tests/hazards/sighijack tests/hazards/sigwaiter tests/hazards/closeall \
	tests/hazards/jumper tests/hazards/exitdrain tests/hazards/earlymain \
	tests/hazards/sigstack tests/hazards/closer tests/hazards/spawnenv
check_PROGRAMS += $(HAZARDS)
tests_hazards_sigdisp_SOURCES = tests/hazards/sigdisp.c tests/hazards/hazard.h
# Strict ISO C: signal() is glibc's one-shot __sysv_signal there.
tests_hazards_c11sig_SOURCES = tests/hazards/c11sig.c tests/hazards/hazard.h
tests_hazards_c11sig_CFLAGS = $(AM_CFLAGS) -std=c11
tests_hazards_spawnenv_SOURCES = tests/hazards/spawnenv.c tests/hazards/hazard.h
tests_hazards_closer_SOURCES = tests/hazards/closer.c tests/hazards/hazard.h
tests_hazards_sigstack_SOURCES = tests/hazards/sigstack.c tests/hazards/hazard.h
tests_hazards_sighijack_SOURCES = tests/hazards/sighijack.c tests/hazards/hazard.h
tests_hazards_sigwaiter_SOURCES = tests/hazards/sigwaiter.c tests/hazards/hazard.h
tests_hazards_sigwaiter_LDADD = $(PTHREAD_LIBS)
tests_hazards_jumper_SOURCES = tests/hazards/jumper.c tests/hazards/hazard.h
tests_hazards_jumper_LDADD = $(PTHREAD_LIBS)
tests_hazards_closeall_SOURCES = tests/hazards/closeall.c tests/hazards/hazard.h
tests_hazards_burn_SOURCES = tests/hazards/burn.c tests/hazards/hazard.h
tests_hazards_burn_LDADD = $(PTHREAD_LIBS)
tests_hazards_forker_SOURCES = tests/hazards/forker.c tests/hazards/hazard.h
tests_hazards_forker_LDADD = $(PTHREAD_LIBS)
tests_hazards_execer_SOURCES = tests/hazards/execer.c tests/hazards/hazard.h
tests_hazards_execer_LDADD = $(PTHREAD_LIBS)
tests_hazards_spawner_SOURCES = tests/hazards/spawner.c tests/hazards/hazard.h
tests_hazards_spawner_LDADD = $(PTHREAD_LIBS)
tests_hazards_ownprof_SOURCES = tests/hazards/ownprof.c tests/hazards/hazard.h
tests_hazards_ownprof_LDADD = $(PTHREAD_LIBS)
tests_hazards_blocker_SOURCES = tests/hazards/blocker.c tests/hazards/hazard.h
tests_hazards_blocker_LDADD = $(PTHREAD_LIBS)
tests_hazards_manythreads_SOURCES = tests/hazards/manythreads.c tests/hazards/hazard.h
tests_hazards_manythreads_LDADD = $(PTHREAD_LIBS)
tests_hazards_slowsys_SOURCES = tests/hazards/slowsys.c tests/hazards/hazard.h
tests_hazards_slowsys_LDADD = $(PTHREAD_LIBS)
tests_hazards_exitthread_SOURCES = tests/hazards/exitthread.c tests/hazards/hazard.h
tests_hazards_exitthread_LDADD = $(PTHREAD_LIBS)
tests_hazards_killed_SOURCES = tests/hazards/killed.c tests/hazards/hazard.h
tests_hazards_killed_LDADD = $(PTHREAD_LIBS)
tests_hazards_altstack_SOURCES = tests/hazards/altstack.c tests/hazards/hazard.h
tests_hazards_altstack_LDADD = $(PTHREAD_LIBS)
tests_hazards_dlopener_SOURCES = tests/hazards/dlopener.c tests/hazards/hazard.h
tests_hazards_dlopener_LDADD = -ldl
# The module dlopener loads once the recording runs.
check_LTLIBRARIES += tests/hazards/libhzplugin.la
tests_hazards_libhzplugin_la_SOURCES = tests/hazards/plugin.c tests/hazards/hazard.h
tests_hazards_libhzplugin_la_LDFLAGS = -module -avoid-version -rpath /nowhere
tests_hazards_exitdrain_SOURCES = tests/hazards/exitdrain.c tests/hazards/hazard.h
tests_hazards_exitdrain_LDADD = libsampler/libsampler.la librecord/librecord.la $(PTHREAD_LIBS)
# A library whose constructor starts a thread before the sampler's runs.
check_LTLIBRARIES += tests/hazards/libhzearly.la
tests_hazards_libhzearly_la_SOURCES = tests/hazards/earlylib.c tests/hazards/hazard.h
tests_hazards_libhzearly_la_LIBADD = $(PTHREAD_LIBS)
tests_hazards_libhzearly_la_LDFLAGS = -avoid-version -rpath /nowhere
tests_hazards_earlymain_SOURCES = tests/hazards/earlymain.c tests/hazards/hazard.h
tests_hazards_earlymain_LDADD = tests/hazards/libhzearly.la $(PTHREAD_LIBS)
tests_hazards_api_SOURCES = tests/hazards/api.c tests/hazards/hazard.h
tests_hazards_api_LDADD = libsampler/libsampler.la librecord/librecord.la $(PTHREAD_LIBS)

TESTS += tests/test-sampler tests/test-sampler-hazards.sh
dist_check_SCRIPTS += tests/test-sampler-hazards.sh
# The Go hazard program (built by the test when go is installed) and the
# build cache the test keeps in the build directory.
EXTRA_DIST += tests/hazards/go/main.go tests/hazards/go/go.mod
clean-local: clean-go-cache
clean-go-cache:
	-chmod -R u+w tests/go-cache 2>/dev/null; rm -rf tests/go-cache
.PHONY: clean-go-cache
