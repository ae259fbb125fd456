/*
 * tests/test-reader-basic.c - the reader on recordings built byte by byte
 * (tests/recbuild.h): every field encoding, references through pools,
 * tick deltas of both signs, several chunks, lz4 and stored blocks, an
 * unfinished chunk, skippable blocks, a newer minor version with a larger
 * header, and poll() on a growing file.
 */
#include <config.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rec/record.h"
#include "recbuild.h"
#include "tap.h"

static char path[256];

static bool str_is(const rec_value *v, const char *s)
{
    return v->kind == REC_STRING && v->v.str.len == strlen(s) &&
           memcmp(v->v.str.s, s, v->v.str.len) == 0;
}

/* String entry referenced by v has text s. */
static bool ref_str_is(const rec_value *v, const char *s)
{
    rec_value x;
    if (v->kind != REC_REF || !v->v.ref.entry)
        return false;
    return rec_entry_get(v->v.ref.entry, 0, &x) == 0 && str_is(&x, s);
}

/* Check event i of rb_mini_sample; ticks is the expected absolute value. */
static bool check_sample(const rec_event *ev, unsigned i, uint64_t ticks, char *why)
{
    rec_value v, x, y;
    const rec_type *t = rec_event_type(ev);
#define CHECK(c) do { if (!(c)) { sprintf(why, "event %u: %s", i, #c); return false; } } while (0)
    CHECK(strcmp(rec_type_name(t), "Sample") == 0);
    CHECK(rec_event_get(ev, 0, &v) == 0 && v.kind == REC_REF && v.v.ref.id == 1);
    CHECK(v.v.ref.entry && rec_entry_id(v.v.ref.entry) == 1);
    CHECK(strcmp(rec_type_name(rec_entry_type(v.v.ref.entry)), "Thread") == 0);
    CHECK(rec_entry_get(v.v.ref.entry, 0, &x) == 0 && x.kind == REC_UINT && x.v.u == 4242);
    CHECK(rec_entry_get(v.v.ref.entry, 1, &x) == 0 && ref_str_is(&x, "main"));
    CHECK(rec_event_get(ev, 1, &v) == 0 && v.kind == REC_UINT && v.v.u == 1000000 + i);
    CHECK(rec_event_get(ev, 2, &v) == 0 && v.kind == REC_INT &&
          v.v.i == (int64_t)i * (i & 1 ? -1 : 1));
    CHECK(rec_event_get(ev, 3, &v) == 0 && v.kind == REC_BOOL && v.v.b == (i % 3 == 0));
    CHECK(rec_event_get(ev, 4, &v) == 0);
    if (i % 4 == 3) {
        CHECK(v.kind == REC_NULL);
    } else {
        CHECK(v.kind == REC_REF && v.v.ref.entry);
        CHECK(rec_entry_get(v.v.ref.entry, 0, &x) == 0 && x.kind == REC_BOOL && !x.v.b);
        CHECK(rec_entry_get(v.v.ref.entry, 1, &x) == 0 && x.kind == REC_ARRAY &&
              x.v.array.n == 2);
        const rec_entry *f0 = x.v.array.items[0].v.ref.entry;
        const rec_entry *f1 = x.v.array.items[1].v.ref.entry;
        CHECK(f0 && f1 && rec_entry_id(f0) == 1 && rec_entry_id(f1) == 2);
        CHECK(rec_entry_get(f0, 0, &y) == 0 && ref_str_is(&y, "work"));
        CHECK(rec_entry_get(f0, 1, &y) == 0 && y.kind == REC_UINT && y.v.u == 17);
        CHECK(rec_entry_get(f1, 0, &y) == 0 && ref_str_is(&y, "caf\xc3\xa9"));
        CHECK(rec_entry_get(f1, 1, &y) == 0 && y.kind == REC_NULL);
    }
    CHECK(rec_event_get(ev, 5, &v) == 0);
    CHECK(i % 2 ? v.kind == REC_NULL : str_is(&v, "n\xc3\xb6te"));
    CHECK(rec_event_get(ev, 6, &v) == 0 && v.kind == REC_UINT && v.v.u == ticks);
    CHECK(rec_event_get(ev, 7, &v) == REC_ENOTFOUND);
    CHECK(rec_event_bytes(ev) > 8);
#undef CHECK
    return true;
}

/* Read all of path; check events against the mini sequence with nblocks
 * blocks of per events per chunk. Returns events read or -1. */
static long read_mini(const char *p, unsigned per, unsigned nblocks, int *rc_out,
                      char *why)
{
    rec_reader *r;
    const rec_event *ev;
    long n = 0;
    uint64_t ticks = 0;
    int rc = rec_reader_open(&r, p, 0);
    if (rc < 0) {
        *rc_out = rc;
        return -1;
    }
    *why = 0;
    while ((rc = rec_reader_next(r, &ev)) == 1) {
        unsigned i = (unsigned)n;
        unsigned in_chunk = i % (per * nblocks);
        if (in_chunk % per == 0)
            ticks = RB_START_TICKS + 100 * (in_chunk / per);
        ticks += i % 5 == 4 ? (uint64_t)-3 : 10;
        if (!*why)
            check_sample(ev, i, ticks, why);
        n++;
    }
    *rc_out = rc;
    rec_reader_close(r);
    return n;
}

static void test_valid(bool lz4)
{
    rb_file f = { 0 };
    char why[256];
    int rc;
    unsigned n = rb_mini_recording(&f, 3, 4, 50, lz4);
    rb_write(&f.out, path);
    long got = read_mini(path, 50, 4, &rc, why);
    tap_ok(got == n && rc == 0, "%s: %ld of %u events, rc %d", lz4 ? "lz4" : "stored",
           got, n, rc);
    tap_ok(!*why, "%s: every field decoded %s", lz4 ? "lz4" : "stored", why);
    rb_free(&f.out);
}

static void test_api(void)
{
    rb_file f = { 0 };
    rec_reader *r;
    const rec_event *ev;
    rec_chunk_info ci;
    rb_mini_recording(&f, 2, 1, 3, true);
    rb_write(&f.out, path);
    tap_ok(rec_reader_open(&r, path, 0) == 0, "open");
    tap_ok(rec_reader_ntypes(r) == 6, "schema known after open: %zu types",
           rec_reader_ntypes(r));
    const rec_type *s = rec_reader_type_by_name(r, "Sample");
    tap_ok(s && rec_type_is_event(s) && rec_type_id(s) == 32 && rec_type_nfields(s) == 7,
           "Sample type");
    tap_ok(s && rec_type_field_index(s, "startTime") == 6 &&
           rec_type_field_index(s, "nope") == -1, "field index");
    const rec_field_info *fi = s ? rec_type_field(s, 4) : NULL;
    tap_ok(fi && strcmp(fi->name, "stackTrace") == 0 && fi->nullable && !fi->array &&
           fi->ref == rec_reader_type_by_name(r, "StackTrace") &&
           strcmp(fi->label, "stackTrace") == 0, "field info");
    const rec_type *st = rec_reader_type_by_name(r, "StackTrace");
    tap_ok(st && rec_type_field(st, 1)->array && !rec_type_is_event(st), "array field");
    tap_ok(rec_reader_next(r, &ev) == 1 && rec_event_type(ev) == s, "first event");
    tap_ok(rec_event_ticks(ev) == 10 &&
           rec_event_time_ns(ev) == RB_START_WALL + 10 * 1000, "event time");
    tap_ok(rec_reader_chunk(r, &ci) == 0 && ci.index == 0 && ci.finished && !ci.last &&
           ci.offset == 0 && ci.major == 1 && ci.ticks_per_second == RB_TPS &&
           ci.start_ns == RB_START_WALL && ci.duration_ns == 1000000, "chunk info");
    rec_reader_next(r, &ev);
    rec_reader_next(r, &ev);
    tap_ok(rec_reader_next(r, &ev) == 1 && rec_event_type(ev) == s,
           "type pointer stable across chunks with equal metadata");
    tap_ok(rec_reader_chunk(r, &ci) == 0 && ci.index == 1 && ci.last && ci.offset > 0,
           "second chunk info");
    rec_reader_next(r, &ev);
    rec_reader_next(r, &ev);
    tap_ok(rec_reader_next(r, &ev) == 0 && !rec_reader_message(r) &&
           !rec_reader_warning(r), "clean end, no warning");
    tap_ok(rec_reader_next(r, &ev) == 0, "end is sticky");
    rec_reader_close(r);
    rb_free(&f.out);
}

/* An OPEN chunk ends with a warning, or an error in strict mode; poll()
 * then picks up what a writer appended. */
static void test_open_chunk_and_poll(void)
{
    rb_file f = { 0 };
    rb_buf m = { 0 }, p = { 0 }, e = { 0 };
    rec_reader *r;
    const rec_event *ev;
    int rc, n = 0;
    rb_chunk_begin(&f);
    rb_mini_metadata(&m);
    rb_block(&f, REC_BLOCK_METADATA, true, &m);
    rb_mini_pools(&p);
    rb_block(&f, REC_BLOCK_POOL, false, &p);
    rb_uint(&e, RB_START_TICKS);
    for (unsigned i = 0; i < 5; i++)
        rb_mini_sample(&e, i);
    rb_block(&f, REC_BLOCK_EVENTS, true, &e);
    rb_chunk_end(&f, REC_STATE_OPEN, 0);
    size_t committed = f.out.n;
    /* uncommitted bytes past chunk_size must be ignored */
    rb_block(&f, REC_BLOCK_EVENTS, true, &e);
    rb_write(&f.out, path);

    rec_reader_open(&r, path, 0);
    while ((rc = rec_reader_next(r, &ev)) == 1)
        n++;
    tap_ok(rc == 0 && n == 5, "open chunk: %d events up to the flush, rc %d", n, rc);
    const char *w = rec_reader_warning(r);
    char want[400];
    snprintf(want, sizeof want, "%s: chunk 0: unfinished, read up to last flush at offset %zu",
             path, committed);
    tap_ok(w && strcmp(w, want) == 0, "warning: %s", w ? w : "(none)");
    tap_ok(rec_reader_poll(r) == 0, "poll: nothing new");

    /* the writer commits the second block */
    rb_chunk_end(&f, REC_STATE_OPEN, 0);
    rb_write(&f.out, path);
    tap_ok(rec_reader_poll(r) == 1, "poll sees the new flush");
    while ((rc = rec_reader_next(r, &ev)) == 1)
        n++;
    tap_ok(rc == 0 && n == 10, "after poll: %d events", n);

    /* then finishes the chunk and starts another */
    rb_chunk_end(&f, REC_STATE_FINISHED, 0);
    rb_write(&f.out, path);
    tap_ok(rec_reader_poll(r) == 1, "poll sees the chunk finished");
    rc = rec_reader_next(r, &ev);
    w = rec_reader_warning(r);
    tap_ok(rc == 0 && w && strstr(w, "not closed"),
           "finished chunk without successor: end, warning %s", w ? w : "-");
    rb_chunk_begin(&f);
    rb_block(&f, REC_BLOCK_METADATA, false, &m);
    rb_block(&f, REC_BLOCK_POOL, false, &p);
    rb_block(&f, REC_BLOCK_EVENTS, false, &e);
    size_t full = f.out.n;
    rb_chunk_end(&f, REC_STATE_FINISHED, REC_CHUNK_LAST);
    /* first only half of the new chunk reached the disk */
    rb_buf half = f.out;
    half.n = full - 20;
    rb_write(&half, path);
    tap_ok(rec_reader_poll(r) == 1, "poll sees a new chunk");
    while ((rc = rec_reader_next(r, &ev)) == 1)
        n++;
    w = rec_reader_message(r);
    tap_ok(rc == REC_ETRUNCATED && n == 10, "half a chunk: truncated, %d events (%s)", n,
           w ? w : "-");
    tap_ok(rec_reader_poll(r) == 0, "poll after truncation: nothing new");
    rb_write(&f.out, path);
    tap_ok(rec_reader_poll(r) == 1, "poll after the rest arrived");
    while ((rc = rec_reader_next(r, &ev)) == 1)
        n++;
    tap_ok(rc == 0 && n == 15 && !rec_reader_warning(r), "whole recording: %d events", n);
    rec_reader_close(r);

    /* strict mode: unfinished is an error */
    rb_chunk_end(&f, REC_STATE_OPEN, 0);
    rb_write(&f.out, path);
    rec_reader_open(&r, path, REC_READ_STRICT);
    n = 0;
    while ((rc = rec_reader_next(r, &ev)) == 1)
        n++;
    w = rec_reader_message(r);
    tap_ok(rc == REC_ETRUNCATED && n == 15, "strict: %d events then %d (%s)", n, rc,
           w ? w : "-");
    rec_reader_close(r);
    rb_free(&f.out);
    rb_free(&m);
    rb_free(&p);
    rb_free(&e);
}

/* Skippable blocks, a newer minor version with a bigger header, and a
 * second recording appended after a LAST chunk. */
static void test_compat(void)
{
    rb_file f = { 0 };
    rb_buf m = { 0 }, p = { 0 }, e = { 0 }, x = { 0 };
    rec_reader *r;
    const rec_event *ev;
    int rc, n = 0;
    rb_mini_metadata(&m);
    rb_mini_pools(&p);
    rb_uint(&e, RB_START_TICKS);
    for (unsigned i = 0; i < 3; i++)
        rb_mini_sample(&e, i);
    rb_text(&x, "extension data");
    f.minor = 7;
    f.header_size = 96;
    rb_chunk_begin(&f);
    rb_block(&f, 200, false, &x);
    rb_block(&f, REC_BLOCK_METADATA, false, &m);
    rb_block(&f, 128, true, &x);
    rb_block(&f, REC_BLOCK_POOL, false, &p);
    rb_block(&f, REC_BLOCK_EVENTS, false, &e);
    rb_block(&f, 255, false, &x);
    rb_chunk_end(&f, REC_STATE_FINISHED, REC_CHUNK_LAST);
    f.minor = 0;
    f.header_size = 0;
    rb_chunk_begin(&f);
    rb_block(&f, REC_BLOCK_METADATA, false, &m);
    rb_block(&f, REC_BLOCK_POOL, false, &p);
    rb_block(&f, REC_BLOCK_EVENTS, false, &e);
    rb_chunk_end(&f, REC_STATE_FINISHED, REC_CHUNK_LAST);
    rb_write(&f.out, path);
    rec_reader_open(&r, path, 0);
    while ((rc = rec_reader_next(r, &ev)) == 1)
        n++;
    tap_ok(rc == 0 && n == 6 && !rec_reader_warning(r),
           "minor 1.7, header 96, skippable blocks, appended recording: %d events, rc %d",
           n, rc);
    rec_reader_close(r);
    rb_free(&f.out);
    rb_free(&m);
    rb_free(&p);
    rb_free(&e);
    rb_free(&x);
}

/* A reference to an undefined id reads as a ref with a NULL entry plus a
 * warning, not an error. */
static void test_dangling(void)
{
    rb_file f = { 0 };
    rb_buf m = { 0 }, p = { 0 }, e = { 0 };
    rec_reader *r;
    const rec_event *ev;
    rec_value v;
    const char *w;
    int rc;
    rb_mini_metadata(&m);
    rb_array(&p, 3);             /* only String 1; no Thread */
    rb_uint(&p, RB_STRING);
    rb_uint(&p, 1);
    rb_text(&p, "x");
    rb_uint(&e, 7);
    rb_array(&e, 2);
    rb_uint(&e, RB_MARKER);
    rb_int(&e, -7);
    rb_mini_sample(&e, 3);       /* Thread 1 is undefined; stackTrace null */
    rb_chunk_begin(&f);
    rb_block(&f, REC_BLOCK_METADATA, false, &m);
    rb_block(&f, REC_BLOCK_POOL, false, &p);
    rb_block(&f, REC_BLOCK_EVENTS, false, &e);
    rb_chunk_end(&f, REC_STATE_FINISHED, REC_CHUNK_LAST);
    rb_write(&f.out, path);
    rec_reader_open(&r, path, 0);
    tap_ok(rec_reader_next(r, &ev) == 1 && rec_event_get(ev, 0, &v) == 0 &&
           v.kind == REC_UINT && v.v.u == 0, "negative delta to tick 0");
    tap_ok(rec_reader_next(r, &ev) == 1 && rec_event_get(ev, 0, &v) == 0 &&
           v.kind == REC_REF && v.v.ref.id == 1 && v.v.ref.entry == NULL,
           "dangling ref: entry NULL");
    rc = rec_reader_next(r, &ev);
    w = rec_reader_warning(r);
    tap_ok(rc == 0 && w && strstr(w, "undefined"), "warning: %s", w ? w : "-");
    rec_reader_close(r);
    rb_free(&f.out);
    rb_free(&m);
    rb_free(&p);
    rb_free(&e);
}

/* Chunks with different metadata (recordings of two schema versions
 * concatenated): each chunk decodes with its own schema, and types of the
 * first stay valid (and distinct) while the second is read. */
static void test_schema_change(void)
{
    rb_file f = { 0 };
    rb_buf m1 = { 0 }, m2 = { 0 }, e1 = { 0 }, e2 = { 0 };
    rec_reader *r;
    const rec_event *ev;
    rec_value v;
    rb_mini_metadata(&m1);
    rb_map(&m2, 1);
    rb_text(&m2, "types");
    rb_array(&m2, 1);
    rb_type(&m2, RB_MARKER, "Marker", true, 2);
    rb_field(&m2, "startTime", "ticks", false, false);
    rb_field(&m2, "extra", "int", false, true);
    rb_uint(&e1, 100);
    rb_array(&e1, 2);
    rb_uint(&e1, RB_MARKER);
    rb_int(&e1, 5);
    rb_uint(&e2, 200);
    rb_array(&e2, 3);
    rb_uint(&e2, RB_MARKER);
    rb_int(&e2, -5);
    rb_int(&e2, -42);
    rb_chunk_begin(&f);
    rb_block(&f, REC_BLOCK_METADATA, false, &m1);
    rb_block(&f, REC_BLOCK_EVENTS, false, &e1);
    rb_chunk_end(&f, REC_STATE_FINISHED, 0);
    rb_chunk_begin(&f);
    rb_block(&f, REC_BLOCK_METADATA, true, &m2);
    rb_block(&f, REC_BLOCK_EVENTS, false, &e2);
    rb_chunk_end(&f, REC_STATE_FINISHED, REC_CHUNK_LAST);
    rb_write(&f.out, path);
    rec_reader_open(&r, path, 0);
    const rec_type *t1 = rec_reader_type_by_name(r, "Marker");
    tap_ok(rec_reader_next(r, &ev) == 1 && rec_event_type(ev) == t1 &&
           rec_type_nfields(t1) == 1 && rec_event_get(ev, 0, &v) == 0 && v.v.u == 105,
           "schema 1: Marker with 1 field");
    tap_ok(rec_reader_next(r, &ev) == 1, "event of chunk 2");
    const rec_type *t2 = rec_event_type(ev);
    tap_ok(t2 != t1 && t2 == rec_reader_type_by_name(r, "Marker") &&
           rec_reader_ntypes(r) == 1 && rec_type_nfields(t2) == 2 &&
           rec_type_field_index(t2, "extra") == 1 && rec_type_nfields(t1) == 1 &&
           strcmp(rec_type_name(t1), "Marker") == 0, "schema 2: a new Marker type");
    tap_ok(rec_event_get(ev, 0, &v) == 0 && v.v.u == 195 && rec_event_get(ev, 1, &v) == 0 &&
           v.kind == REC_INT && v.v.i == -42, "schema 2 values");
    tap_ok(rec_reader_next(r, &ev) == 0, "end");
    rec_reader_close(r);
    rb_free(&f.out);
    rb_free(&m1);
    rb_free(&m2);
    rb_free(&e1);
    rb_free(&e2);
}

int main(void)
{
    snprintf(path, sizeof path, "test-reader-basic.%d.rec", (int)getpid());
    test_valid(true);
    test_valid(false);
    test_api();
    test_open_chunk_and_poll();
    test_compat();
    test_dangling();
    test_schema_change();
    unlink(path);
    return tap_done();
}
