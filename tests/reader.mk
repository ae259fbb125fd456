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
tests_test_reader_live_SOURCES = tests/test-reader-live.c
tests_test_reader_live_CFLAGS = $(AM_CFLAGS) $(PTHREAD_CFLAGS)
tests_test_reader_live_LDADD = $(READER_TEST_LDADD)

TESTS += tests/test-reader-basic tests/test-reader-corpus tests/test-reader-roundtrip \
	tests/test-reader-damage tests/test-reader-live tests/test-reader-fuzz
EXTRA_DIST += tests/data/corpus/MANIFEST \
	tests/data/corpus/bad-lz4.rec \
	tests/data/corpus/bitflip-block-header.rec \
	tests/data/corpus/bitflip-block.rec \
	tests/data/corpus/bitflip-chunk-header.rec \
	tests/data/corpus/chunk-size-beyond-eof.rec \
	tests/data/corpus/dangling-refs.rec \
	tests/data/corpus/empty.rec \
	tests/data/corpus/event-too-few-fields.rec \
	tests/data/corpus/garbage-after-magic.rec \
	tests/data/corpus/garbage.rec \
	tests/data/corpus/huge-array.rec \
	tests/data/corpus/huge-event.rec \
	tests/data/corpus/huge-raw-size.rec \
	tests/data/corpus/huge-string.rec \
	tests/data/corpus/indefinite-array.rec \
	tests/data/corpus/metadata-huge-map.rec \
	tests/data/corpus/metadata-too-deep.rec \
	tests/data/corpus/no-metadata.rec \
	tests/data/corpus/null-not-nullable.rec \
	tests/data/corpus/pool-type-as-event.rec \
	tests/data/corpus/raw-size-mismatch.rec \
	tests/data/corpus/skippable-blocks.rec \
	tests/data/corpus/truncated-between-chunks.rec \
	tests/data/corpus/truncated-chunk2-header.rec \
	tests/data/corpus/truncated-chunk2-metadata.rec \
	tests/data/corpus/truncated-header.rec \
	tests/data/corpus/truncated-last-block.rec \
	tests/data/corpus/unfinished-chunk.rec \
	tests/data/corpus/unknown-block-kind.rec \
	tests/data/corpus/unknown-event-type.rec \
	tests/data/corpus/unknown-field-type.rec \
	tests/data/corpus/valid.rec \
	tests/data/corpus/version-1.9-bigger-header.rec \
	tests/data/corpus/version-2.0.rec \
	tests/data/corpus/wrong-magic.rec \
	tests/data/corpus/wrong-value-type.rec \
	tests/data/corpus/zero-size-event.rec
