# tests for the librecord reader: hand-built recordings (tests/recbuild.h),
# round trips through the real writer, damage at many offsets, and the
# committed corpus of damaged recordings (tests/data/corpus, made by
# tests/corpus-gen).
READER_TEST_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/tests $(LZ4_CFLAGS) $(CBOR_CFLAGS)
READER_TEST_LDADD = librecord/librecord.la $(LZ4_LIBS) $(PTHREAD_LIBS)

check_PROGRAMS += tests/test-reader-basic tests/test-reader-corpus tests/corpus-gen \
	tests/test-reader-roundtrip tests/test-reader-damage tests/test-reader-live \
	tests/test-reader-fuzz
tests_test_reader_basic_SOURCES = tests/test-reader-basic.c tests/recbuild.h
tests_test_reader_basic_CPPFLAGS = $(READER_TEST_CPPFLAGS)
tests_test_reader_basic_LDADD = $(READER_TEST_LDADD)
tests_test_reader_corpus_SOURCES = tests/test-reader-corpus.c
tests_test_reader_corpus_LDADD = $(READER_TEST_LDADD)
tests_corpus_gen_SOURCES = tests/corpus-gen.c tests/recbuild.h
tests_corpus_gen_CPPFLAGS = $(READER_TEST_CPPFLAGS)
tests_corpus_gen_LDADD = $(LZ4_LIBS)

tests_test_reader_roundtrip_SOURCES = tests/test-reader-roundtrip.c
tests_test_reader_roundtrip_LDADD = $(READER_TEST_LDADD)

tests_test_reader_damage_SOURCES = tests/test-reader-damage.c
tests_test_reader_damage_CPPFLAGS = $(READER_TEST_CPPFLAGS)
tests_test_reader_damage_LDADD = $(READER_TEST_LDADD)
tests_test_reader_fuzz_SOURCES = tests/test-reader-fuzz.c tests/recbuild.h
tests_test_reader_fuzz_CPPFLAGS = $(READER_TEST_CPPFLAGS)
tests_test_reader_fuzz_LDADD = $(READER_TEST_LDADD)
check_PROGRAMS += tests/test-follow
tests_test_follow_SOURCES = tests/test-follow.c
tests_test_follow_LDADD = $(READER_TEST_LDADD)
TESTS += tests/test-follow
check_PROGRAMS += tests/test-reader-stream
tests_test_reader_stream_SOURCES = tests/test-reader-stream.c
tests_test_reader_stream_CFLAGS = $(AM_CFLAGS) $(PTHREAD_CFLAGS)
tests_test_reader_stream_LDADD = $(READER_TEST_LDADD)
TESTS += tests/test-reader-stream
check_PROGRAMS += tests/test-reader-streamed
tests_test_reader_streamed_SOURCES = tests/test-reader-streamed.c librecord/crc32c.c
tests_test_reader_streamed_CPPFLAGS = $(READER_TEST_CPPFLAGS) -I$(top_srcdir)/librecord
tests_test_reader_streamed_CFLAGS = $(AM_CFLAGS) $(PTHREAD_CFLAGS)
tests_test_reader_streamed_LDADD = $(READER_TEST_LDADD)
TESTS += tests/test-reader-streamed
tests_test_reader_live_SOURCES = tests/test-reader-live.c
tests_test_reader_live_CFLAGS = $(AM_CFLAGS) $(PTHREAD_CFLAGS)
tests_test_reader_live_LDADD = $(READER_TEST_LDADD)

TESTS += tests/test-reader-basic tests/test-reader-corpus tests/test-reader-roundtrip \
	tests/test-reader-damage tests/test-reader-live tests/test-reader-fuzz

check_PROGRAMS += tests/test-relay
tests_test_relay_SOURCES = tests/test-relay.c tests/recbuild.h
tests_test_relay_CPPFLAGS = $(READER_TEST_CPPFLAGS) -I$(top_srcdir)/librecord
tests_test_relay_LDADD = $(READER_TEST_LDADD)
$(tests_test_relay_OBJECTS): librecord/rec/events.h
TESTS += tests/test-relay
