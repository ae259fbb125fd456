# tests for tools: rec-dump, rec-summary and their shared helpers.
check_PROGRAMS += tests/test-cli-common tests/mkgolden tests/mkhostile
tests_test_cli_common_SOURCES = tests/test-cli-common.c
tests_test_cli_common_CPPFLAGS = $(TOOLS_CPPFLAGS) -I$(top_srcdir)/tests
tests_test_cli_common_LDADD = tools/cli/libreccli.la librecord/librecord.la $(JANSSON_LIBS)

# The tools' typed event view on a schema unlike the built-in one, written
# by hand (tests/recbuild.h).
check_PROGRAMS += tests/test-cli-evview
tests_test_cli_evview_SOURCES = tests/test-cli-evview.c tests/recbuild.h
tests_test_cli_evview_CPPFLAGS = $(TOOLS_CPPFLAGS) -I$(top_srcdir)/tests \
	$(LZ4_CFLAGS)
tests_test_cli_evview_LDADD = tools/cli/libreccli.la librecord/librecord.la \
	$(JANSSON_LIBS) $(LZ4_LIBS)

# Writes the recordings of tests/data/golden/ (see the file's comment).
tests_mkgolden_SOURCES = tests/mkgolden.c
tests_mkgolden_LDADD = librecord/librecord.la

# Writes recordings with reference cycles by hand (tests/recbuild.h).
tests_mkhostile_SOURCES = tests/mkhostile.c tests/recbuild.h
tests_mkhostile_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests $(LZ4_CFLAGS)
tests_mkhostile_LDADD = $(LZ4_LIBS)

# Shell tests: listed once, run and distributed.
TOOLS_SH_TESTS = tests/test-dump-golden.sh \
	tests/test-dump-contract.sh \
	tests/test-dump-errors.sh \
	tests/test-dump-corpus.sh \
	tests/test-dump-hostile.sh \
	tests/test-summary.sh \
	tests/test-export.sh \
	tests/test-flame.sh \
	tests/test-dump-schema.sh \
	tests/test-dump-follow.sh tests/test-dump-dir.sh \
	tests/test-inputs.sh tests/test-tools-mistakes.sh
TESTS += tests/test-cli-common tests/test-cli-evview $(TOOLS_SH_TESTS)
dist_check_SCRIPTS += $(TOOLS_SH_TESTS)
EXTRA_DIST += tests/tools-tap.sh
$(tests_mkgolden_OBJECTS) $(tests_test_cli_common_OBJECTS) \
$(tests_test_cli_evview_OBJECTS): librecord/rec/events.h
