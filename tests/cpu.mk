# tests for cpu: rec-cpu on recordings with known figures (tests/mkcpu.c).
check_PROGRAMS += tests/mkcpu
tests_mkcpu_SOURCES = tests/mkcpu.c
tests_mkcpu_LDADD = librecord/librecord.la

# Shell tests: listed once, run and distributed. test-cpu-lanes: legend,
# y-scale, axis to the recording's end, grouped lanes (bench/rec-synth
# makes the 2000-thread recording).
CPU_SH_TESTS = tests/test-cpu.sh tests/test-cpu-timeline.sh tests/test-cpu-errors.sh \
	tests/test-cpu-bounds.sh \
	tests/test-cpu-budget.sh \
	tests/test-cpu-lanes.sh
TESTS += $(CPU_SH_TESTS)
dist_check_SCRIPTS += $(CPU_SH_TESTS)
EXTRA_DIST += tests/cpu-lib.sh
$(tests_mkcpu_OBJECTS): librecord/rec/events.h
