/*
 * tests/mkcpu.c - write recordings with known CPU figures for rec-cpu's
 * tests (tests/test-cpu*.sh) and benchmarks.
 *
 *   mkcpu basic FILE     threads covering every accounting rule
 *   mkcpu child FILE     a second process (pid 2000) for multi-file input
 *   mkcpu live FILE      flushed but never closed: an unfinished recording
 *   mkcpu names FILE     thread names that need escaping (XML, JSON, CSV)
 *   mkcpu spread FILE    two threads with one sample each, 10^6 s apart
 *   mkcpu idle FILE      one thread, two samples 1000 s apart
 *   mkcpu bench FILE N   N samples over 8 threads and 64 distinct stacks
 *
 * Event times are offsets from the first chunk's start (read back from its
 * header), so the relative times rec-cpu prints are the same every run.
 * The expected figures are spelled out next to each thread below and in
 * tests/test-cpu.sh.
 */
#include <config.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rec/record.h>
#include "format.h"

#define MS 1000000ull

static rec_writer *w;
static uint64_t t0;

static void check(int rc, const char *what)
{
    if (rc < 0) {
        fprintf(stderr, "mkcpu: %s: %s\n", what, rec_strerror(rc));
        exit(1);
    }
}

static uint64_t at(uint64_t ms_x10)
{
    return t0 + ms_x10 * (MS / 10);     /* tenths of a ms */
}

static rec_id str(const char *s)
{
    rec_id id;
    check(rec_intern_cstr(w, s, &id), "intern string");
    return id;
}

static rec_id thread(uint64_t pid, uint64_t tid, const char *name)
{
    struct rec_Thread t = { .osThreadId = tid, .name = name ? str(name) : 0,
                            .processId = pid };
    rec_id id;
    check(rec_intern_Thread(w, &t, &id), "intern thread");
    return id;
}

static rec_id frame(const char *fn, const char *module, uint64_t off)
{
    struct rec_Frame f = { .function = fn ? str(fn) : 0,
                           .module = module ? str(module) : 0,
                           .offset = off };
    rec_id id;
    check(rec_intern_Frame(w, &f, &id), "intern frame");
    return id;
}

/* Stack from innermost to outermost function names (NULL ends). */
static rec_id stack(const char *const *fns)
{
    rec_id fr[16];
    size_t n = 0;
    for (; fns[n] && n < 16; n++)
        fr[n] = strcmp(fns[n], "?") == 0
                ? frame(NULL, "/usr/lib/libfoo.so", 0x1234 + n)
                : frame(fns[n], "/usr/bin/app", 0x100 * (n + 1));
    struct rec_StackTrace st = { .frames = fr, .frames_count = n };
    rec_id id;
    check(rec_intern_StackTrace(w, &st, &id), "intern stack");
    return id;
}

static void sample(rec_stream *s, rec_id th, uint64_t when, uint64_t period,
                   bool failed, bool biased, rec_id st)
{
    struct rec_CPUTimeSample e = { .eventThread = th, .samplingPeriod = period,
                                   .failed = failed, .biased = biased,
                                   .stackTrace = failed ? 0 : st,
                                   .startTime = when };
    check(rec_emit_CPUTimeSample(s, &e), "sample");
}

static void lost(rec_stream *s, rec_id th, uint64_t when, uint64_t n,
                 uint64_t ns)
{
    struct rec_CPUTimeSampleLost e = { .eventThread = th, .lostSamples = n,
                                       .lostTime = ns,
                                       .reason = str("queue-full"),
                                       .startTime = when };
    check(rec_emit_CPUTimeSampleLost(s, &e), "lost");
}

static void tstart(rec_stream *s, rec_id th, rec_id parent, uint64_t when,
                   uint64_t cpu)
{
    struct rec_ThreadStart e = { .eventThread = th, .parentThread = parent,
                                 .cpuTime = cpu, .startTime = when };
    check(rec_emit_ThreadStart(s, &e), "thread start");
}

static void tend(rec_stream *s, rec_id th, uint64_t when, uint64_t cpu,
                 bool snapshot)
{
    struct rec_ThreadEnd e = { .eventThread = th, .cpuTime = cpu,
                               .snapshot = snapshot, .startTime = when };
    check(rec_emit_ThreadEnd(s, &e), "thread end");
}

static void process(rec_stream *s, uint64_t pid, uint64_t when)
{
    struct rec_ProcessInfo e = { .processId = pid, .parentProcessId = 1,
                                 .executable = str("/usr/bin/app"),
                                 .commandLine = str("app --work"),
                                 .hostName = str("testhost"),
                                 .startTime = when };
    check(rec_emit_ProcessInfo(s, &e), "process info");
}

static void usage_ev(rec_stream *s, uint64_t when, uint64_t user, uint64_t sys)
{
    struct rec_ProcessUsage e = { .userTime = user, .systemTime = sys,
                                  .maxRss = 1 << 20, .startTime = when };
    check(rec_emit_ProcessUsage(s, &e), "process usage");
}

static void open_writer(const char *path)
{
    rec_writer_options o;
    rec_writer_options_init(&o);
    o.overwrite = true;
    check(rec_writer_open(&w, path, &o), path);
    /* The chunk's own start, so offsets from it are exact. */
    unsigned char h[REC_CHUNK_HEADER_SIZE];
    int fd = open(path, O_RDONLY);
    if (fd < 0 || pread(fd, h, sizeof h, 0) != (ssize_t)sizeof h) {
        perror(path);
        exit(1);
    }
    close(fd);
    uint64_t ticks = 0;
    for (int i = 7; i >= 0; i--)
        ticks = ticks << 8 | h[REC_CH_START_TICKS + i];
    t0 = ticks * o.tick_ns;
}

static const char *const S_MAIN[] = { "leaf", "compute", "main", NULL };
static const char *const S_FIB[] = { "fib", "fib", "fib", "worker", NULL };
static const char *const S_LIB[] = { "?", "compute", "main", NULL };
static const char *const S_IDLE[] = { "poll", "worker", NULL };

/* Process 1000. Per thread (sampled + lost vs measured, all in ms):
 *  1000 main      start cpu 5 @0, 20 x 10 (2 failed, 3 biased) + one
 *                 40 overrun sample, lost 3 = 30; snapshot end cpu 282
 *                 -> sampled 240, lost 30, measured 277, diff -7
 *  1001 worker-1  start cpu 0 @5ms, 15 x 10, exit cpu 153 @30ms
 *                 -> sampled 150, measured 153, diff -3
 *  1002 worker-2  no ThreadStart, 2 x 10, exit cpu 25 -> measured 25
 *  1003 (no name) 3 x 10, no end -> measured unknown
 *  1004 short     start cpu 0, end cpu 3, no sample -> diff -3
 *  1005 gen       start 0, 2 x 10, exit 20; the tid is then reused:
 *  1005 gen2      start 0, 1 x 10, exit 12 (second row)
 * ProcessUsage: user 800, system 40.
 * A rotation after 1001's samples puts the rest in a second chunk. */
static void basic(const char *path)
{
    open_writer(path);
    rec_stream *a, *b;
    check(rec_stream_open(w, &a), "stream");
    check(rec_stream_open(w, &b), "stream");
    rec_id tmain = thread(1000, 1000, "main");
    rec_id tw1 = thread(1000, 1001, "worker-1");
    process(a, 1000, at(0));
    tstart(a, tmain, 0, at(0), 5 * MS);
    tstart(b, tw1, tmain, at(50), 0);

    rec_id smain = stack(S_MAIN), sfib = stack(S_FIB), slib = stack(S_LIB);
    for (int i = 1; i <= 20; i++)
        sample(a, tmain, at(100 * (uint64_t)i), 10 * MS, i == 7 || i == 8,
               i <= 3, i % 2 ? smain : slib);
    sample(a, tmain, at(2100), 40 * MS, false, false, smain);
    lost(a, tmain, at(2150), 3, 30 * MS);
    for (int i = 1; i <= 15; i++)
        sample(b, tw1, at(50 + 100 * (uint64_t)i + 5), 10 * MS, false, false,
               sfib);
    tend(b, tw1, at(3000), 153 * MS, false);
    check(rec_writer_flush(w), "flush");
    check(rec_writer_rotate(w), "rotate");

    rec_id tw2 = thread(1000, 1002, "worker-2");
    rec_id tnn = thread(1000, 1003, NULL);
    rec_id tsh = thread(1000, 1004, "short");
    rec_id tg = thread(1000, 1005, "gen");
    rec_id sidle = stack(S_IDLE);
    sample(b, tw2, at(1234), 10 * MS, false, false, sidle);
    sample(b, tw2, at(1334), 10 * MS, false, false, sidle);
    tend(b, tw2, at(1400), 25 * MS, false);
    for (int i = 0; i < 3; i++)
        sample(a, tnn, at(500 + 100 * (uint64_t)i), 10 * MS, false, false,
               sidle);
    tstart(b, tsh, tmain, at(10), 0);
    tend(b, tsh, at(20), 3 * MS, false);
    tstart(b, tg, tmain, at(100), 0);
    sample(b, tg, at(200), 10 * MS, false, false, smain);
    sample(b, tg, at(300), 10 * MS, false, false, smain);
    tend(b, tg, at(350), 20 * MS, false);
    rec_id tg2 = thread(1000, 1005, "gen2");
    tstart(b, tg2, tmain, at(400), 0);
    sample(b, tg2, at(500), 10 * MS, false, false, smain);
    tend(b, tg2, at(550), 12 * MS, false);

    tend(a, tmain, at(3500), 282 * MS, true);
    usage_ev(a, at(3500), 800 * MS, 40 * MS);
    check(rec_stream_close(a), "close stream");
    check(rec_stream_close(b), "close stream");
    check(rec_writer_close(w), "close");
}

/* Process 2000 (a child): 2000 child, start cpu 1, 5 x 10, snapshot
 * end cpu 52 -> measured 51, diff -1; usage user 60, system 2. */
static void child(const char *path)
{
    open_writer(path);
    rec_stream *a;
    check(rec_stream_open(w, &a), "stream");
    rec_id tc = thread(2000, 2000, "child");
    process(a, 2000, at(0));
    tstart(a, tc, 0, at(0), 1 * MS);
    rec_id s = stack(S_MAIN);
    for (int i = 1; i <= 5; i++)
        sample(a, tc, at(100 * (uint64_t)i), 10 * MS, false, false, s);
    tend(a, tc, at(600), 52 * MS, true);
    usage_ev(a, at(600), 60 * MS, 2 * MS);
    check(rec_stream_close(a), "close stream");
    check(rec_writer_close(w), "close");
}

/* Flushed, never closed: 3000 live, start cpu 0, 4 x 10, no end. */
static void live(const char *path)
{
    open_writer(path);
    rec_stream *a;
    check(rec_stream_open(w, &a), "stream");
    rec_id t = thread(3000, 3000, "live");
    process(a, 3000, at(0));
    tstart(a, t, 0, at(0), 0);
    rec_id s = stack(S_MAIN);
    for (int i = 1; i <= 4; i++)
        sample(a, t, at(100 * (uint64_t)i), 10 * MS, false, false, s);
    check(rec_stream_close(a), "close stream");
    check(rec_writer_flush(w), "flush");
    _exit(0);       /* as if the writer crashed */
}

/* Names with markup, quotes, commas and bytes that are not UTF-8. */
static void names(const char *path)
{
    static const char *const nm[] = {
        "<b>&amp;\"x\"</b>", "comma,\"quote\"", "bad\xff\xfeutf8",
        "tab\tnew\nline", "ok-ascii",
    };
    open_writer(path);
    rec_stream *a;
    check(rec_stream_open(w, &a), "stream");
    process(a, 5000, at(0));
    rec_id s = stack(S_MAIN);
    for (int k = 0; k < 5; k++) {
        rec_id t = thread(5000, 5001 + (uint64_t)k, nm[k]);
        tstart(a, t, 0, at(0), 0);
        for (int i = 1; i <= 3 + k; i++)
            sample(a, t, at(100 * (uint64_t)i), 10 * MS, false, false, s);
        tend(a, t, at(1000), (uint64_t)(3 + k) * 10 * MS, false);
    }
    check(rec_stream_close(a), "close stream");
    check(rec_writer_close(w), "close");
}

/* Process 6000, corner cases (ms):
 *  6001 exec       start cpu 5, 1 x 10, start again cpu 20 (an exec'd
 *                  image, same clock), 1 x 10, snapshot end cpu 50
 *                  -> measured (20 - 5) + (50 - 20) = 45, one row
 *  6002 twoends    start 0, snapshot end 30, then exit end 35 -> 35
 *  6003 backwards  start 100, end 90 (a broken clock) -> measured 0
 *  6004 stacks     an empty stack (10), no stack and not failed (10),
 *                  a zero period -> 3 samples, 20 sampled; no end */
static void edge(const char *path)
{
    open_writer(path);
    rec_stream *a;
    check(rec_stream_open(w, &a), "stream");
    process(a, 6000, at(0));
    rec_id te = thread(6000, 6001, "exec"), t2 = thread(6000, 6002, "twoends");
    rec_id tb = thread(6000, 6003, "backwards");
    rec_id ts = thread(6000, 6004, "stacks");
    rec_id s = stack(S_MAIN);
    struct rec_StackTrace empty = { .frames = NULL, .frames_count = 0 };
    rec_id se;
    check(rec_intern_StackTrace(w, &empty, &se), "intern empty stack");
    tstart(a, te, 0, at(0), 5 * MS);
    sample(a, te, at(10), 10 * MS, false, false, s);
    tstart(a, te, 0, at(20), 20 * MS);
    sample(a, te, at(30), 10 * MS, false, false, s);
    tend(a, te, at(40), 50 * MS, true);
    tstart(a, t2, 0, at(0), 0);
    tend(a, t2, at(50), 30 * MS, true);
    tend(a, t2, at(60), 35 * MS, false);
    tstart(a, tb, 0, at(0), 100 * MS);
    tend(a, tb, at(70), 90 * MS, false);
    sample(a, ts, at(80), 10 * MS, false, false, se);
    sample(a, ts, at(90), 10 * MS, false, false, 0);
    sample(a, ts, at(95), 0, false, false, s);
    check(rec_stream_close(a), "close stream");
    check(rec_writer_close(w), "close");
}

/* Two threads whose only samples are 10^6 s apart: a small valid file
 * whose dense timeline at 100 ms would have 10^7 rows. */
static void spread(const char *path)
{
    open_writer(path);
    rec_stream *a;
    check(rec_stream_open(w, &a), "stream");
    process(a, 7000, at(0));
    rec_id t1 = thread(7000, 7001, "early"), t2 = thread(7000, 7002, "late");
    rec_id s = stack(S_MAIN);
    sample(a, t1, at(10), 1 * MS, false, false, s);
    sample(a, t2, at(10) + 1000000ull * 1000 * MS, 1 * MS, false, false, s);
    check(rec_stream_close(a), "close stream");
    check(rec_writer_close(w), "close");
}

/* One thread, a sample at the start and one 1000 s later: at 10 ms its
 * timeline would be 10^5 rows for two samples. */
static void idle(const char *path)
{
    open_writer(path);
    rec_stream *a;
    check(rec_stream_open(w, &a), "stream");
    process(a, 7100, at(0));
    rec_id t = thread(7100, 7101, "idle");
    rec_id s = stack(S_MAIN);
    sample(a, t, at(10), 1 * MS, false, false, s);
    sample(a, t, at(10) + 1000ull * 1000 * MS, 1 * MS, false, false, s);
    check(rec_stream_close(a), "close stream");
    check(rec_writer_close(w), "close");
}

/* Many samples with a realistic mix: per-thread streams, stacks of depth
 * 8 to 24 from a set of 64, a flush every 10000 samples. */
static void bench(const char *path, uint64_t n)
{
    open_writer(path);
    enum { NT = 8, NS = 64 };
    rec_stream *s[NT];
    rec_id th[NT], st[NS];
    char name[32];
    for (int i = 0; i < NT; i++) {
        check(rec_stream_open(w, &s[i]), "stream");
        snprintf(name, sizeof name, "bench-%d", i);
        th[i] = thread(4000, 4000 + (uint64_t)i, name);
        tstart(s[i], th[i], 0, at(0), 0);
    }
    for (int k = 0; k < NS; k++) {
        const char *fns[25];
        char buf[24][16];
        int depth = 8 + k % 17;
        for (int d = 0; d < depth; d++) {
            snprintf(buf[d], sizeof buf[d], "fn%d", (k * 7 + d * 3) % 97);
            fns[d] = buf[d];
        }
        fns[depth] = NULL;
        st[k] = stack(fns);
    }
    uint64_t per[NT] = { 0 };
    for (uint64_t i = 0; i < n; i++) {
        int t = (int)(i % NT);
        per[t]++;
        sample(s[t], th[t], at(per[t] * 10), 1 * MS, i % 101 == 0,
               i % 37 == 0, st[(i * 2654435761u) % NS]);
        if (i % 10000 == 9999)
            check(rec_writer_flush(w), "flush");
    }
    for (int i = 0; i < NT; i++) {
        tend(s[i], th[i], at(per[i] * 10 + 1), per[i] * MS, true);
        check(rec_stream_close(s[i]), "close stream");
    }
    check(rec_writer_close(w), "close");
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "basic") == 0)
        basic(argv[2]);
    else if (argc >= 3 && strcmp(argv[1], "child") == 0)
        child(argv[2]);
    else if (argc >= 3 && strcmp(argv[1], "live") == 0)
        live(argv[2]);
    else if (argc >= 3 && strcmp(argv[1], "names") == 0)
        names(argv[2]);
    else if (argc >= 3 && strcmp(argv[1], "idle") == 0)
        idle(argv[2]);
    else if (argc >= 3 && strcmp(argv[1], "spread") == 0)
        spread(argv[2]);
    else if (argc >= 3 && strcmp(argv[1], "edge") == 0)
        edge(argv[2]);
    else if (argc >= 4 && strcmp(argv[1], "bench") == 0)
        bench(argv[2], strtoull(argv[3], NULL, 10));
    else {
        fprintf(stderr, "usage: mkcpu basic|child|live|names|edge FILE | bench FILE N\n");
        return 2;
    }
    return 0;
}
