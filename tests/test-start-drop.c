/*
 * tests/test-start-drop.c - the chunk rec-start writes in place of one its
 * consumer was too slow to take (tools/start/start-drop.c) keeps every
 * event but the samples with all of its fields, by the dropped chunk's own
 * schema: here a schema that grew since this program was built (a field
 * appended to Thread, ThreadStart, ThreadEnd and CPUTimeSampleLost, and an
 * event type it has never heard of).
 */
#include <config.h>
#include "start.h"
#include "recbuild.h"
#include "tap.h"

#include <rec/record.h>

#include <sys/mman.h>
#include <unistd.h>

enum { T_STRING = 1, T_THREAD = 2, T_SAMPLE = 32, T_LOST = 33, T_TSTART = 34,
       T_TEND = 35, T_GC = 90 };

static void metadata(rb_buf *b)
{
    rb_map(b, 2);
    rb_text(b, "version");
    rb_uint(b, 1);
    rb_text(b, "types");
    rb_array(b, 7);
    rb_type(b, T_STRING, "String", false, 1);
    rb_field(b, "value", "string", false, false);
    rb_type(b, T_THREAD, "Thread", false, 4);
    rb_field(b, "osThreadId", "uint", false, false);
    rb_field(b, "name", "String", false, true);
    rb_field(b, "processId", "uint", false, false);
    rb_field(b, "container", "String", false, true);         /* new */
    rb_type(b, T_SAMPLE, "CPUTimeSample", true, 4);
    rb_field(b, "eventThread", "Thread", false, false);
    rb_field(b, "samplingPeriod", "uint", false, false);
    rb_field(b, "startTime", "ticks", false, false);
    rb_field(b, "cpu", "uint", false, false);                /* new */
    rb_type(b, T_LOST, "CPUTimeSampleLost", true, 6);
    rb_field(b, "eventThread", "Thread", false, false);
    rb_field(b, "lostSamples", "uint", false, false);
    rb_field(b, "lostTime", "uint", false, false);
    rb_field(b, "reason", "String", false, true);
    rb_field(b, "startTime", "ticks", false, false);
    rb_field(b, "queue", "uint", false, false);              /* new */
    rb_type(b, T_TSTART, "ThreadStart", true, 6);
    rb_field(b, "eventThread", "Thread", false, false);
    rb_field(b, "parentThread", "Thread", false, true);
    rb_field(b, "cpuTime", "uint", false, false);
    rb_field(b, "startTime", "ticks", false, false);
    rb_field(b, "engine", "String", false, true);
    rb_field(b, "cgroup", "String", false, true);            /* new */
    rb_type(b, T_TEND, "ThreadEnd", true, 5);
    rb_field(b, "eventThread", "Thread", false, false);
    rb_field(b, "cpuTime", "uint", false, false);
    rb_field(b, "snapshot", "boolean", false, false);
    rb_field(b, "startTime", "ticks", false, false);
    rb_field(b, "exitCode", "int", false, false);            /* new */
    rb_type(b, T_GC, "GcPause", true, 7);                    /* new */
    rb_field(b, "eventThread", "Thread", false, false);
    rb_field(b, "startTime", "ticks", false, false);
    rb_field(b, "pause", "uint", false, false);
    rb_field(b, "collector", "String", false, false);
    rb_field(b, "phases", "String", true, false);
    rb_field(b, "delta", "int", false, false);
    rb_field(b, "note", "string", false, true);
}

static const char *strs[] = { "main", "worker", "ctr-a", "g1", "young", "mixed",
                              "perf-task-clock" };

static void pools(rb_buf *b)
{
    for (unsigned i = 0; i < 7; i++) {
        rb_array(b, 3);
        rb_uint(b, T_STRING);
        rb_uint(b, i + 1);
        rb_text(b, strs[i]);
    }
    /* thread 1: tid 100 "main" in ctr-a; thread 2: tid 101 "worker" */
    rb_array(b, 6);
    rb_uint(b, T_THREAD);
    rb_uint(b, 1);
    rb_uint(b, 100);
    rb_uint(b, 1);
    rb_uint(b, 100);
    rb_uint(b, 3);
    rb_array(b, 6);
    rb_uint(b, T_THREAD);
    rb_uint(b, 2);
    rb_uint(b, 101);
    rb_uint(b, 2);
    rb_uint(b, 100);
    rb_null(b);
}

static void sample(rb_buf *b, unsigned thread)
{
    rb_array(b, 5);
    rb_uint(b, T_SAMPLE);
    rb_uint(b, thread);
    rb_uint(b, 1000000);
    rb_int(b, 5);
    rb_uint(b, 3);
}

static void events(rb_buf *b)
{
    rb_uint(b, RB_START_TICKS);
    rb_array(b, 7);                         /* ThreadStart, base + 10 */
    rb_uint(b, T_TSTART);
    rb_uint(b, 2);
    rb_uint(b, 1);
    rb_uint(b, 5000);
    rb_int(b, 10);
    rb_uint(b, 7);
    rb_uint(b, 3);
    for (int i = 0; i < 3; i++)             /* worker: base + 25 */
        sample(b, 2);
    for (int i = 0; i < 2; i++)             /* main: base + 35 */
        sample(b, 1);
    rb_array(b, 8);                         /* GcPause, base + 36 */
    rb_uint(b, T_GC);
    rb_uint(b, 1);
    rb_int(b, 1);
    rb_uint(b, 777);
    rb_uint(b, 4);
    rb_array(b, 2);
    rb_uint(b, 5);
    rb_uint(b, 6);
    rb_int(b, -12);
    rb_text(b, "hello");
    rb_array(b, 6);                         /* ThreadEnd, base + 37 */
    rb_uint(b, T_TEND);
    rb_uint(b, 2);
    rb_uint(b, 9000);
    rb_bool(b, false);
    rb_int(b, 1);
    rb_int(b, -3);
}

static rec_value get(const rec_event *ev, const rec_entry *e, const char *name)
{
    rec_value v = { .kind = REC_NULL };
    const rec_type *t = ev ? rec_event_type(ev) : rec_entry_type(e);
    long i = rec_type_field_index(t, name);
    if (i < 0 || (ev ? rec_event_get(ev, (size_t)i, &v)
                     : rec_entry_get(e, (size_t)i, &v)) < 0)
        v.kind = REC_NULL - 1;      /* absent: matches nothing */
    return v;
}

static bool is_str(rec_value v, const char *s)
{
    if (v.kind == REC_REF && v.v.ref.entry)
        v = get(NULL, v.v.ref.entry, "value");
    return v.kind == REC_STRING && v.v.str.len == strlen(s) &&
           !memcmp(v.v.str.s, s, v.v.str.len);
}

static bool is_uint(rec_value v, uint64_t u) { return v.kind == REC_UINT && v.v.u == u; }

static const rec_entry *ref(rec_value v)
{
    return v.kind == REC_REF ? v.v.ref.entry : NULL;
}

/* Thread entry e is tid, named name, in container ctr (NULL: null). */
static bool thread_is(const rec_entry *e, uint64_t tid, const char *name,
                      const char *ctr)
{
    if (!e || !is_uint(get(NULL, e, "osThreadId"), tid) ||
        !is_str(get(NULL, e, "name"), name) ||
        !is_uint(get(NULL, e, "processId"), 100))
        return false;
    rec_value c = get(NULL, e, "container");
    return ctr ? is_str(c, ctr) : c.kind == REC_NULL;
}

int main(void)
{
    rb_file f = { 0 };
    rb_buf m = { 0 }, p = { 0 }, e = { 0 };

    /* A chunk that is not the file's first: the replacement is read from
     * an offset, as start-stream.c does. The mini chunks around it have
     * another schema. */
    rb_mini_recording(&f, 1, 1, 3, false);
    uint64_t off = f.out.n;
    rb_chunk_begin(&f);
    metadata(&m);
    rb_block(&f, REC_BLOCK_METADATA, false, &m);
    pools(&p);
    rb_block(&f, REC_BLOCK_POOL, true, &p);
    events(&e);
    rb_block(&f, REC_BLOCK_EVENTS, true, &e);
    rb_chunk_end(&f, REC_STATE_FINISHED, 0);
    /* and one after it: reading on into it frees the dropped chunk's
     * entries before the last losses are written */
    rb_mini_recording(&f, 1, 1, 3, false);
    int fd = memfd_create("test-start-drop", MFD_CLOEXEC);
    if (fd < 0 || write(fd, f.out.p, f.out.n) != (ssize_t)f.out.n)
        TAP_BAIL("memfd");

    uint8_t *out;
    size_t outlen;
    start_drop_stats ds;
    int rc = start_drop_chunk(fd, off, &out, &outlen, &ds);
    tap_ok(rc == 0 && out && outlen > REC_CHUNK_HEADER_SIZE,
           "the chunk is replaced (rc %d, %zu bytes)", rc, outlen);
    tap_ok(ds.samples == 5 && ds.cpu_ns == 5000000,
           "its 5 samples are counted as dropped (%llu, %llu ns)",
           (unsigned long long)ds.samples, (unsigned long long)ds.cpu_ns);
    if (rc)
        return tap_done();
    tap_ok(rb_rdle(out + REC_CH_INDEX, 4) == 1 &&
           !memcmp(out + REC_CH_START_TICKS, f.out.p + off + REC_CH_START_TICKS, 8),
           "the replacement takes the dropped chunk's place (index, start)");

    int rfd = memfd_create("test-start-drop-out", MFD_CLOEXEC);
    rec_reader *r;
    const rec_event *ev;
    if (rfd < 0 || write(rfd, out, outlen) != (ssize_t)outlen ||
        lseek(rfd, 0, SEEK_SET) < 0 || rec_reader_open_fd(&r, rfd, "out", 0) < 0)
        TAP_BAIL("reopen");
    const rec_type *th = rec_reader_type_by_name(r, "Thread");
    tap_ok(th && rec_type_nfields(th) == 4 && rec_reader_type_by_name(r, "GcPause"),
           "the replacement carries the dropped chunk's schema");

    const char *order[8];
    size_t n = 0, nsamples = 0;
    bool start_ok = false, end_ok = false, gc_ok = false, gc_phases = false;
    bool lost_worker = false, lost_main = false, lost_before_end = false;
    while ((rc = rec_reader_next(r, &ev)) > 0) {
        const char *name = rec_type_name(rec_event_type(ev));
        if (n < 8)
            order[n] = name;
        n++;
        const rec_entry *t = ref(get(ev, NULL, "eventThread"));
        if (!strcmp(name, "CPUTimeSample")) {
            nsamples++;
        } else if (!strcmp(name, "ThreadStart")) {
            start_ok = thread_is(t, 101, "worker", NULL) &&
                       thread_is(ref(get(ev, NULL, "parentThread")), 100, "main", "ctr-a") &&
                       is_uint(get(ev, NULL, "cpuTime"), 5000) &&
                       is_uint(get(ev, NULL, "startTime"), RB_START_TICKS + 10) &&
                       is_str(get(ev, NULL, "engine"), "perf-task-clock") &&
                       is_str(get(ev, NULL, "cgroup"), "ctr-a");
        } else if (!strcmp(name, "ThreadEnd")) {
            rec_value x = get(ev, NULL, "exitCode");
            end_ok = thread_is(t, 101, "worker", NULL) &&
                     is_uint(get(ev, NULL, "cpuTime"), 9000) &&
                     get(ev, NULL, "snapshot").kind == REC_BOOL &&
                     is_uint(get(ev, NULL, "startTime"), RB_START_TICKS + 37) &&
                     x.kind == REC_INT && x.v.i == -3;
            lost_before_end = lost_worker;
        } else if (!strcmp(name, "GcPause")) {
            rec_value d = get(ev, NULL, "delta"), ph = get(ev, NULL, "phases");
            gc_ok = thread_is(t, 100, "main", "ctr-a") &&
                    is_uint(get(ev, NULL, "startTime"), RB_START_TICKS + 36) &&
                    is_uint(get(ev, NULL, "pause"), 777) &&
                    is_str(get(ev, NULL, "collector"), "g1") &&
                    d.kind == REC_INT && d.v.i == -12 &&
                    is_str(get(ev, NULL, "note"), "hello");
            gc_phases = ph.kind == REC_ARRAY && ph.v.array.n == 2 &&
                        is_str(ph.v.array.items[0], "young") &&
                        is_str(ph.v.array.items[1], "mixed");
        } else if (!strcmp(name, "CPUTimeSampleLost")) {
            bool ok = is_str(get(ev, NULL, "reason"), "stream-dropped") &&
                      is_uint(get(ev, NULL, "queue"), 0);
            if (thread_is(t, 101, "worker", NULL))
                lost_worker = ok && is_uint(get(ev, NULL, "lostSamples"), 3) &&
                              is_uint(get(ev, NULL, "lostTime"), 3000000) &&
                              is_uint(get(ev, NULL, "startTime"), RB_START_TICKS + 25);
            else if (thread_is(t, 100, "main", "ctr-a"))
                lost_main = ok && is_uint(get(ev, NULL, "lostSamples"), 2) &&
                            is_uint(get(ev, NULL, "lostTime"), 2000000);
        }
    }
    /* not the last chunk of its recording: the reader only warns of that */
    tap_ok(rc == 0, "the replacement reads cleanly (%d: %s; %s)", rc,
           rc ? rec_reader_message(r) : "", rec_reader_warning(r) ? rec_reader_warning(r) : "");
    tap_ok(nsamples == 0 && n == 5, "no sample is left: 5 events (%zu, %zu samples)",
           n, nsamples);
    tap_ok(start_ok, "ThreadStart keeps every field, the appended cgroup too");
    tap_ok(end_ok, "ThreadEnd keeps every field, the appended exitCode too");
    tap_ok(gc_ok, "an event type this program does not know is carried with its fields");
    tap_ok(gc_phases, "its array of references too");
    tap_ok(lost_worker, "the worker's samples are lost, reason stream-dropped");
    tap_ok(lost_before_end, "before its ThreadEnd");
    tap_ok(lost_main, "the main thread's samples too (its appended container kept)");
    tap_ok(n == 5 && !strcmp(order[0], "ThreadStart") && !strcmp(order[1], "GcPause") &&
           !strcmp(order[4], "CPUTimeSampleLost"), "in the dropped chunk's order");
    rec_reader_close(r);
    free(out);

    /* An unreadable chunk gets no replacement, and says so. */
    f.out.p[off + REC_CHUNK_HEADER_SIZE + REC_BLOCK_HEADER_SIZE + 3] ^= 0xff;
    if (pwrite(fd, f.out.p, f.out.n, 0) != (ssize_t)f.out.n)
        TAP_BAIL("pwrite");
    rc = start_drop_chunk(fd, off, &out, &outlen, &ds);
    tap_ok(rc < 0 && !out && !outlen, "a damaged schema: no replacement (rc %d)", rc);
    rc = start_drop_chunk(fd, f.out.n + 100, &out, &outlen, &ds);
    tap_ok(rc < 0 && !out, "no chunk at the offset: no replacement (rc %d)", rc);
    tap_ok(ds.samples == 0, "and nothing counted");
    close(fd);
    rb_free(&m);
    rb_free(&p);
    rb_free(&e);
    rb_free(&f.out);
    return tap_done();
}
