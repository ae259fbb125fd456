/* tests/test-writer.c - writer: file structure, options, dedup, rotation,
 * flush visibility, tick encoding. Checked with a test-only walker
 * (writer-walk.h), independent of librecord's reader. */
#include <config.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <rec/record.h>
#include "tap.h"
#include "writer-walk.h"

static char path[256];

static void tmp_path(const char *name)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, sizeof path, "%s/test-writer-%ld-%s.rec", dir, (long)getpid(), name);
    unlink(path);
}

struct fixture {
    rec_id thread, frames[3], stack, stack2;
};

static int setup(rec_writer *w, struct fixture *fx)
{
    int rc;
    rec_id name, fn, mod;
    if ((rc = rec_intern_cstr(w, "main", &name)) || (rc = rec_intern_cstr(w, "f", &fn)) ||
        (rc = rec_intern_cstr(w, "/bin/prog", &mod)))
        return rc;
    struct rec_Thread t = { .osThreadId = 100, .name = name, .processId = 99 };
    if ((rc = rec_intern_Thread(w, &t, &fx->thread)))
        return rc;
    for (int i = 0; i < 3; i++) {
        struct rec_Frame f = { .function = fn, .module = mod, .offset = 0x10 * (i + 1) };
        if ((rc = rec_intern_Frame(w, &f, &fx->frames[i])))
            return rc;
    }
    struct rec_StackTrace s = { .frames = fx->frames, .frames_count = 3 };
    if ((rc = rec_intern_StackTrace(w, &s, &fx->stack)))
        return rc;
    s.frames_count = 2;
    return rec_intern_StackTrace(w, &s, &fx->stack2);
}

static int emit_n(rec_stream *s, const struct fixture *fx, int n, uint64_t t0)
{
    for (int i = 0; i < n; i++) {
        struct rec_CPUTimeSample e = { .eventThread = fx->thread, .samplingPeriod = 10000000,
                                       .stackTrace = i % 2 ? fx->stack : fx->stack2,
                                       .startTime = t0 ? t0 + (uint64_t)i * 1000 : 0 };
        int rc = rec_emit_CPUTimeSample(s, &e);
        if (rc)
            return rc;
    }
    return 0;
}

static uint64_t header_u64(int off)
{
    unsigned char b[8] = { 0 };
    int fd = open(path, O_RDONLY);
    if (fd < 0 || pread(fd, b, 8, off) != 8) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    close(fd);
    return ww_le(b, 8);
}

static void test_structure(void)
{
    rec_writer *w;
    rec_stream *s;
    struct fixture fx;
    struct ww_stats st;
    tmp_path("structure");
    tap_ok(rec_writer_open(&w, path, NULL) == 0, "open a new file");
    tap_ok(setup(w, &fx) == 0 && rec_stream_open(w, &s) == 0, "intern and open a stream");
    tap_ok(emit_n(s, &fx, 1000, 0) == 0, "emit 1000 samples");
    tap_ok(rec_stream_close(s) == 0, "close the stream");
    tap_ok(rec_writer_close(w) == 0, "close the writer");
    int rc = ww_walk(path, 0, &st, NULL, NULL);
    tap_ok(rc == 0, "file is well formed (%s)", st.error);
    tap_ok(st.chunks == 1 && st.metadata_first == 1 && st.finished == 1 && st.last_flags == 1,
           "one FINISHED chunk, METADATA first, LAST flag (%u chunks)", st.chunks);
    tap_ok(st.events == 1000, "1000 events (%u)", st.events);
    /* 3 strings, thread, 3 frames, 2 stacks; each written once */
    tap_ok(st.pool_entries == 9, "each referenced entry written once (%u)", st.pool_entries);

    rec_writer_options o;
    rec_writer_options_init(&o);
    tap_ok(rec_writer_open(&w, path, &o) == REC_EEXIST, "existing file: REC_EEXIST");
    o.overwrite = true;
    o.append = true;
    tap_ok(rec_writer_open(&w, path, &o) == REC_EINVAL, "overwrite+append: REC_EINVAL");
    o.append = false;
    o.tick_ns = 7;
    tap_ok(rec_writer_open(&w, path, &o) == REC_EINVAL, "tick_ns not dividing 1e9: REC_EINVAL");

    /* append: a second recording after the first */
    rec_writer_options_init(&o);
    o.append = true;
    tap_ok(rec_writer_open(&w, path, &o) == 0 && setup(w, &fx) == 0 &&
           rec_stream_open(w, &s) == 0 && emit_n(s, &fx, 10, 0) == 0 &&
           rec_writer_close(w) == 0, "append a recording");
    rc = ww_walk(path, 0, &st, NULL, NULL);
    tap_ok(rc == 0 && st.chunks == 2 && st.last_flags == 2 && st.events == 1010,
           "appended file: 2 chunks, both LAST, 1010 events (%s)", st.error);

    /* overwrite, uncompressed */
    rec_writer_options_init(&o);
    o.overwrite = true;
    o.no_compress = true;
    tap_ok(rec_writer_open(&w, path, &o) == 0 && setup(w, &fx) == 0 &&
           rec_stream_open(w, &s) == 0 && emit_n(s, &fx, 100, 0) == 0 &&
           rec_writer_close(w) == 0, "overwrite, no_compress");
    rc = ww_walk(path, 0, &st, NULL, NULL);
    tap_ok(rc == 0 && st.chunks == 1 && st.events == 100, "overwritten file has 100 events");
    unlink(path);
}

static void test_dedup(void)
{
    rec_writer *w;
    rec_id a, b, c, d, e;
    tmp_path("dedup");
    tap_ok(rec_writer_open(&w, path, NULL) == 0, "open");
    tap_ok(rec_intern_cstr(w, "alpha", &a) == 0 && rec_intern_cstr(w, "beta", &b) == 0 &&
           rec_intern_cstr(w, "alpha", &c) == 0, "intern strings");
    tap_ok(a == 1 && b == 2 && c == a, "ids dense from 1, equal content same id (%u %u %u)", a, b, c);
    struct rec_Thread t1 = { .osThreadId = 1, .name = a, .processId = 1 };
    struct rec_Thread t2 = { .osThreadId = 1, .name = b, .processId = 1 };
    tap_ok(rec_intern_Thread(w, &t1, &d) == 0 && rec_intern_Thread(w, &t2, &e) == 0 &&
           d == 1 && e == 2, "ids per type; different content, different id");
    tap_ok(rec_intern_Thread(w, &t1, &e) == 0 && e == d, "thread dedup");
    struct rec_Thread bad = { .osThreadId = 1, .name = 77, .processId = 1 };
    tap_ok(rec_intern_Thread(w, &bad, &e) == REC_ENOTFOUND, "undefined reference: REC_ENOTFOUND");
    struct rec_Module m = { .path = 0 };
    tap_ok(rec_intern_Module(w, &m, &e) == REC_EINVAL, "null non-nullable reference: REC_EINVAL");
    rec_id fr[2] = { 1, 0 };
    struct rec_StackTrace st = { .frames = fr, .frames_count = 2 };
    tap_ok(rec_intern_StackTrace(w, &st, &e) != 0, "frame id 0 in a stack is refused");
    struct rec_Frame f = { .function = a, .offset = 5, .line = 0 };
    rec_id f1, f2, s1, s2;
    tap_ok(rec_intern_Frame(w, &f, &f1) == 0, "frame with null fields");
    f.line = 12;
    tap_ok(rec_intern_Frame(w, &f, &f2) == 0 && f2 != f1, "line 12 differs from null line");
    rec_id v1[2] = { f1, f2 }, v2[2] = { f2, f1 };
    struct rec_StackTrace x = { .frames = v1, .frames_count = 2 }, y = { .frames = v2, .frames_count = 2 };
    tap_ok(rec_intern_StackTrace(w, &x, &s1) == 0 && rec_intern_StackTrace(w, &y, &s2) == 0 &&
           s1 != s2, "frame order matters");
    tap_ok(rec_intern_StackTrace(w, &x, &s2) == 0 && s1 == s2, "stack dedup");
    /* many entries: the hash table grows and lookups stay right */
    int ok = 1;
    for (int i = 0; i < 5000 && ok; i++) {
        char buf[32];
        rec_id id, id2;
        snprintf(buf, sizeof buf, "s%d", i);
        ok = rec_intern_cstr(w, buf, &id) == 0 && id == (rec_id)(3 + i) &&
             rec_intern_cstr(w, buf, &id2) == 0 && id2 == id;
    }
    tap_ok(ok, "5000 distinct strings get dense ids and dedup");
    tap_ok(rec_writer_close(w) == 0, "close");
    unlink(path);
}

static unsigned chunk_events[64];
static void count_chunk(const struct ww_event *ev, void *arg)
{
    (void)arg;
    if (ev->chunk < 64)
        chunk_events[ev->chunk]++;
}

static void test_rotation(void)
{
    rec_writer *w;
    rec_stream *s;
    struct fixture fx;
    struct ww_stats st;
    rec_writer_options o;

    tmp_path("size");
    rec_writer_options_init(&o);
    o.max_chunk_bytes = 4096;
    o.buffer_bytes = 1024;
    o.no_compress = true;
    tap_ok(rec_writer_open(&w, path, &o) == 0 && setup(w, &fx) == 0 &&
           rec_stream_open(w, &s) == 0, "open with 4 KiB chunks");
    tap_ok(emit_n(s, &fx, 5000, 0) == 0, "emit 5000 samples");
    tap_ok(rec_writer_close(w) == 0, "close with the stream open");
    memset(chunk_events, 0, sizeof chunk_events);
    int rc = ww_walk(path, 0, &st, count_chunk, NULL);
    tap_ok(rc == 0, "size-rotated file well formed, pools re-emitted per chunk (%s)", st.error);
    tap_ok(st.chunks >= 5 && st.metadata_first == st.chunks && st.finished == st.chunks &&
           st.last_flags == 1, "%u chunks, each starting with METADATA, one LAST", st.chunks);
    tap_ok(st.events == 5000, "no event lost (%u)", st.events);
    int most = 1;
    for (unsigned i = 0; i + 1 < st.chunks && i < 64; i++)
        most &= chunk_events[i] > 0;
    tap_ok(most, "every chunk but the last holds events");

    tmp_path("age");
    rec_writer_options_init(&o);
    o.max_chunk_age_ns = 1;
    tap_ok(rec_writer_open(&w, path, &o) == 0 && setup(w, &fx) == 0 &&
           rec_stream_open(w, &s) == 0, "open with 1 ns chunk age");
    rc = 0;
    for (int i = 0; i < 4; i++)
        rc |= emit_n(s, &fx, 10, 0) | rec_writer_flush(w);
    tap_ok(rc == 0, "four emit+flush rounds");
    tap_ok(rec_writer_close(w) == 0, "close");
    rc = ww_walk(path, 0, &st, NULL, NULL);
    tap_ok(rc == 0 && st.chunks == 5 && st.metadata_first == 5 && st.events == 40,
           "age rotation at each flush: 5 chunks, 40 events (%u chunks, %s)", st.chunks, st.error);

    tmp_path("explicit");
    tap_ok(rec_writer_open(&w, path, NULL) == 0 && setup(w, &fx) == 0 &&
           rec_stream_open(w, &s) == 0 && emit_n(s, &fx, 3, 0) == 0 &&
           rec_writer_rotate(w) == 0 && emit_n(s, &fx, 3, 0) == 0 &&
           rec_writer_rotate(w) == 0 && rec_writer_close(w) == 0, "explicit rotations");
    rc = ww_walk(path, 0, &st, NULL, NULL);
    tap_ok(rc == 0 && st.chunks == 3 && st.events == 6 && st.pool_entries == 18,
           "3 chunks, pools written again in the second (%u entries, %s)", st.pool_entries, st.error);
    unlink(path);
}

static void test_flush_visibility(void)
{
    rec_writer *w;
    rec_stream *s;
    struct fixture fx;
    struct ww_stats st;
    tmp_path("flush");
    tap_ok(rec_writer_open(&w, path, NULL) == 0 && setup(w, &fx) == 0 &&
           rec_stream_open(w, &s) == 0, "open");
    uint64_t s0 = header_u64(REC_CH_SIZE);
    int rc = ww_walk(path, 1, &st, NULL, NULL);
    tap_ok(rc == 0 && st.open == 1 && st.events == 0 && s0 > 80 && s0 == rec_writer_bytes(w),
           "after open: OPEN chunk with the metadata committed (%llu bytes)", (unsigned long long)s0);
    tap_ok(emit_n(s, &fx, 100, 0) == 0, "emit 100");
    tap_ok(header_u64(REC_CH_SIZE) == s0, "not visible before flush");
    tap_ok(rec_writer_flush(w) == 0, "flush");
    uint64_t s1 = header_u64(REC_CH_SIZE);
    rc = ww_walk(path, 1, &st, NULL, NULL);
    tap_ok(s1 > s0 && rc == 0 && st.open == 1 && st.events == 100,
           "after flush: chunk_size grew (%llu) and 100 events are readable (%s)",
           (unsigned long long)s1, st.error);
    tap_ok(emit_n(s, &fx, 50, 0) == 0 && rec_writer_flush(w) == 0 &&
           header_u64(REC_CH_SIZE) > s1, "second flush grows it again");
    rc = ww_walk(path, 1, &st, NULL, NULL);
    tap_ok(rc == 0 && st.events == 150 && st.pool_entries == 9,
           "150 events, entries not repeated within the chunk (%u)", st.pool_entries);
    tap_ok(rec_writer_close(w) == 0, "close");
    unlink(path);
}

static uint64_t seen_ticks[8];
static unsigned nseen;
static void collect_ticks(const struct ww_event *ev, void *arg)
{
    (void)arg;
    if (nseen < 8)
        seen_ticks[nseen++] = ev->ticks;
}

static void test_ticks(void)
{
    rec_writer *w;
    rec_stream *s;
    struct fixture fx;
    struct ww_stats st;
    rec_writer_options o;
    tmp_path("ticks");
    rec_writer_options_init(&o);
    o.tick_ns = 1000;
    tap_ok(rec_writer_open(&w, path, &o) == 0 && setup(w, &fx) == 0 &&
           rec_stream_open(w, &s) == 0, "open");
    uint64_t ns[5] = { 5000000000ull, 5000001999ull, 4999990000ull, 6000000000ull, 6000000000ull };
    int rc = 0;
    for (int i = 0; i < 5; i++) {
        struct rec_CPUTimeSample e = { .eventThread = fx.thread, .samplingPeriod = 1,
                                       .startTime = ns[i], .failed = true };
        rc |= rec_emit_CPUTimeSample(s, &e);
    }
    tap_ok(rc == 0 && rec_writer_close(w) == 0, "emit 5 samples, times going back and forth");
    nseen = 0;
    rc = ww_walk(path, 0, &st, collect_ticks, NULL);
    int ok = rc == 0 && nseen == 5;
    for (unsigned i = 0; ok && i < 5; i++)
        ok = seen_ticks[i] == ns[i] / 1000;
    tap_ok(ok, "baseTicks + signed deltas give ns / tick_ns");
    unlink(path);
}

static void test_errors(void)
{
    rec_writer *w;
    rec_stream *s;
    rec_writer_options o;
    struct fixture fx;

    /* the first chunk is written at open: a full device fails there */
    rec_writer_options_init(&o);
    o.overwrite = true;
    errno = 0;
    int rc = 0;
    if (access("/dev/full", W_OK) == 0) {
        rc = rec_writer_open(&w, "/dev/full", &o);
        tap_ok(rc == REC_EIO && errno == ENOSPC, "write error: REC_EIO with errno kept (%s, %s)",
               rec_strerror(rc), strerror(errno));
    } else {
        tap_ok(1, "# SKIP no /dev/full");
    }

    tmp_path("full");
    rec_writer_options_init(&o);
    o.buffer_bytes = 64;
    tap_ok(rec_writer_open(&w, path, &o) == 0 && setup(w, &fx) == 0 &&
           rec_stream_open(w, &s) == 0, "open with 64-byte stream buffers");
    struct rec_ProcessUsage pu = { .userTime = UINT64_MAX, .systemTime = UINT64_MAX,
                                   .maxRss = UINT64_MAX, .voluntarySwitches = UINT64_MAX,
                                   .involuntarySwitches = UINT64_MAX };
    tap_ok(rec_emit_ProcessUsage(s, &pu) == REC_EFULL, "an event larger than the buffer: REC_EFULL");
    tap_ok(emit_n(s, &fx, 20, 0) == 0, "smaller events still go through, one buffer each");
    struct rec_CPUTimeSample bad = { .eventThread = 999 };
    tap_ok(rec_emit_CPUTimeSample(s, &bad) == REC_ENOTFOUND, "undefined thread id: REC_ENOTFOUND");
    bad.eventThread = 0;
    tap_ok(rec_emit_CPUTimeSample(s, &bad) == REC_EINVAL, "null non-nullable thread: REC_EINVAL");
    tap_ok(rec_writer_close(w) == 0, "close");
    struct ww_stats st;
    rc = ww_walk(path, 0, &st, NULL, NULL);
    tap_ok(rc == 0 && st.events == 20, "only the 20 good events are in the file (%u, %s)",
           st.events, st.error);
    unlink(path);
}

/* rec_writer_finish: the file complete with the stream still open, the
 * descriptor closed, later writes refused, close only frees. */
static void test_finish(void)
{
    rec_writer *w;
    rec_stream *s;
    struct fixture fx;
    struct ww_stats st;
    int fd;

    tmp_path("finish");
    tap_ok(rec_writer_open(&w, path, NULL) == 0 && setup(w, &fx) == 0 &&
           rec_stream_open(w, &s) == 0, "open for finish");
    tap_ok(emit_n(s, &fx, 300, 0) == 0, "emit 300 samples");
    fd = rec_writer_fd(w);
    tap_ok(rec_writer_finish(w) == 0, "finish with the stream open");
    tap_ok(fcntl(fd, F_GETFD) < 0 && errno == EBADF, "finish closed the descriptor");
    int rc = ww_walk(path, 0, &st, NULL, NULL);
    tap_ok(rc == 0 && st.chunks == 1 && st.finished == 1 && st.last_flags == 1 &&
           st.events == 300, "the file is complete after finish (%u events, %s)",
           st.events, st.error);
    tap_ok(rec_writer_finish(w) == 0, "a second finish returns the first result");
    tap_ok(rec_writer_flush(w) == REC_EIO, "a flush after finish fails");
    rc = ww_walk(path, 0, &st, NULL, NULL);
    tap_ok(rc == 0 && st.events == 300 && st.finished == 1,
           "nothing written after finish (%u events)", st.events);
    tap_ok(rec_writer_close(w) == 0, "close after finish only frees");
    unlink(path);
}

int main(void)
{
    test_structure();
    test_finish();
    test_dedup();
    test_rotation();
    test_flush_visibility();
    test_ticks();
    test_errors();
    free(ww_defined);
    return tap_done();
}
