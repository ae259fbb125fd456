# tests for record (the writer); reader round trips are in reader.mk
EXTRA_DIST += tests/writer-walk.h
check_PROGRAMS += tests/test-writer tests/test-writer-threads
TESTS += tests/test-writer tests/test-writer-threads
# The tests walk chunks themselves: they take the CRC-32C from its source
# (librecord exports only its API).
tests_test_writer_SOURCES = tests/test-writer.c librecord/crc32c.c
tests_test_writer_CPPFLAGS = $(AM_CPPFLAGS) $(LZ4_CFLAGS)
tests_test_writer_LDADD = librecord/librecord.la $(LZ4_LIBS)
tests_test_writer_threads_SOURCES = tests/test-writer-threads.c librecord/crc32c.c
tests_test_writer_threads_CPPFLAGS = $(AM_CPPFLAGS) $(LZ4_CFLAGS)
tests_test_writer_threads_CFLAGS = $(AM_CFLAGS) $(PTHREAD_CFLAGS)
tests_test_writer_threads_LDADD = librecord/librecord.la $(LZ4_LIBS) $(PTHREAD_LIBS)
$(tests_test_writer_OBJECTS) $(tests_test_writer_threads_OBJECTS): librecord/rec/events.h
check_PROGRAMS += tests/test-seal
TESTS += tests/test-seal
tests_test_seal_LDADD = librecord/librecord.la
$(tests_test_seal_OBJECTS): librecord/rec/events.h
# Shell tests: listed once, run and distributed.
RECORD_SH_TESTS = tests/test-recgen.sh
TESTS += $(RECORD_SH_TESTS)
dist_check_SCRIPTS += $(RECORD_SH_TESTS)
