/*
 * tests/mkgolden.c - write the small recordings of tests/data/golden/
 * through librecord's public writer API.
 *
 *   mkgolden basic OUT.rec        two chunks, every event type, all the
 *                                 rendering cases (null names, failed and
 *                                 deep stacks, odd strings)
 *   mkgolden unfinished OUT.rec   one OPEN chunk: flushed, never closed
 *                                 (the process exits like a crashed writer)
 *   mkgolden stripped OUT.rec BUILDID LEAF MID
 *                                 samples in a stripped library of that
 *                                 build-id whose static functions start at
 *                                 LEAF and MID (hex): the sampler's names
 *                                 module+0xSTART, and one frame no FDE named
 *                                 (tests/test-debug-dir.sh)
 *
 * Everything but the times is fixed, so a fresh recording dumps like the
 * committed one once startTime is set aside (tests/test-dump-golden.sh).
 * To regenerate the committed files on purpose:
 *   tests/mkgolden basic tests/data/golden/basic.rec
 *   tests/mkgolden unfinished tests/data/golden/unfinished.rec
 *   REGEN=1 tests/test-dump-golden.sh
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rec/record.h>

#define CHECK(call) do { int rc_ = (call); if (rc_ < 0) { \
    fprintf(stderr, "mkgolden: %s: %s\n", #call, rec_strerror(rc_)); exit(1); } } while (0)

struct golden {
    rec_writer *w;
    rec_stream *s;
    uint64_t base;      /* monotonic ns of the first event */
    unsigned k;         /* events so far: event k is at base + k ms */
};

static uint64_t next_time(struct golden *g)
{
    return g->base + (uint64_t)g->k++ * 1000000u;
}

static rec_id str(struct golden *g, const char *s)
{
    rec_id id;
    CHECK(rec_intern_cstr(g->w, s, &id));
    return id;
}

static rec_id thread(struct golden *g, uint64_t tid, const char *name)
{
    struct rec_Thread t = { .osThreadId = tid, .name = name ? str(g, name) : 0,
                            .processId = 1000 };
    rec_id id;
    CHECK(rec_intern_Thread(g->w, &t, &id));
    return id;
}

static rec_id frame(struct golden *g, const char *fn, const char *mod,
                    uint64_t off, const char *file, uint64_t line, bool inl)
{
    struct rec_Frame f = {
        .function = fn ? str(g, fn) : 0, .module = mod ? str(g, mod) : 0,
        .offset = off, .file = file ? str(g, file) : 0, .line = line,
        .inlined = inl,
    };
    rec_id id;
    CHECK(rec_intern_Frame(g->w, &f, &id));
    return id;
}

/* Stacks by depth, innermost first: depth <= 8. */
static rec_id stack(struct golden *g, unsigned depth, bool truncated)
{
    const char *exe = "/usr/bin/golden", *libc = "/lib/x86_64-linux-gnu/libc.so.6";
    rec_id fr[8] = {
        frame(g, "spin", exe, 0x1260, "golden.c", 12, false),
        frame(g, "step_inlined", exe, 0x1290, "golden.c", 20, true),
        frame(g, "compute", exe, 0x12a4, "golden.c", 31, false),
        frame(g, NULL, NULL, 0x7f0000001000, NULL, 0, false),   /* unresolved */
        frame(g, "worker_main", exe, 0x1300, "golden.c", 44, false),
        frame(g, "start_thread", libc, 0x94ac3, NULL, 0, false),
        frame(g, "clone3", libc, 0x126850, NULL, 0, false),
        frame(g, "main", exe, 0x1100, "golden.c", 60, false),
    };
    if (depth == 3)     /* main's own: spin <- compute <- main */
        fr[1] = fr[2], fr[2] = fr[7];
    struct rec_StackTrace st = { .truncated = truncated, .frames = fr,
                                 .frames_count = depth };
    rec_id id;
    CHECK(rec_intern_StackTrace(g->w, &st, &id));
    return id;
}

static void sample(struct golden *g, rec_id th, uint64_t period, bool failed,
                   bool biased, rec_id st)
{
    struct rec_CPUTimeSample e = {
        .eventThread = th, .samplingPeriod = period, .failed = failed,
        .biased = biased, .stackTrace = failed ? 0 : st, .startTime = next_time(g),
    };
    CHECK(rec_emit_CPUTimeSample(g->s, &e));
}

static void lost(struct golden *g, rec_id th, uint64_t n, uint64_t ns,
                 const char *reason)
{
    struct rec_CPUTimeSampleLost e = {
        .eventThread = th, .lostSamples = n, .lostTime = ns,
        .reason = reason ? str(g, reason) : 0, .startTime = next_time(g),
    };
    CHECK(rec_emit_CPUTimeSampleLost(g->s, &e));
}

static void thread_start(struct golden *g, rec_id th, rec_id parent, uint64_t cpu)
{
    struct rec_ThreadStart e = { .eventThread = th, .parentThread = parent,
                                 .cpuTime = cpu, .startTime = next_time(g) };
    CHECK(rec_emit_ThreadStart(g->s, &e));
}

static void thread_end(struct golden *g, rec_id th, uint64_t cpu, bool snapshot)
{
    struct rec_ThreadEnd e = { .eventThread = th, .cpuTime = cpu,
                               .snapshot = snapshot, .startTime = next_time(g) };
    CHECK(rec_emit_ThreadEnd(g->s, &e));
}

static void open_golden(struct golden *g, const char *path)
{
    rec_writer_options opt;
    rec_writer_options_init(&opt);
    opt.overwrite = true;
    CHECK(rec_writer_open(&g->w, path, &opt));
    CHECK(rec_stream_open(g->w, &g->s));
    g->base = rec_now_ns();
    g->k = 0;
}

static void prologue(struct golden *g)
{
    struct rec_ProcessInfo pi = {
        .processId = 1000, .parentProcessId = 1,
        .executable = str(g, "/usr/bin/golden"),
        .commandLine = str(g, "golden --label \"q\" C:\\tmp \xc3\xa9t\xc3\xa9"),
        .hostName = 0, .startTime = next_time(g),
    };
    CHECK(rec_emit_ProcessInfo(g->s, &pi));
    struct rec_CPUInfo ci = { .onlineCpus = 2, .availableCpus = 2,
                              .clockTickHz = 250, .model = str(g, "Golden CPU @ 1.00GHz"),
                              .startTime = next_time(g) };
    CHECK(rec_emit_CPUInfo(g->s, &ci));
    struct rec_RecordingSettings rs = {
        .throttle = str(g, "10ms"), .samplingPeriod = 10000000, .signal = 27,
        .unwinder = str(g, "fp"), .stackDepth = 64, .queueCapacity = 500,
        .startTime = next_time(g),
    };
    CHECK(rec_emit_RecordingSettings(g->s, &rs));
    struct rec_Module m = { .path = str(g, "/usr/bin/golden"),
                            .buildId = str(g, "0123456789abcdef0123456789abcdef01234567"),
                            .baseAddress = 0x555555554000, .size = 8192 };
    rec_id mid;
    CHECK(rec_intern_Module(g->w, &m, &mid));
    struct rec_ModuleLoad ml = { .module = mid, .startTime = next_time(g) };
    CHECK(rec_emit_ModuleLoad(g->s, &ml));
    m = (struct rec_Module){ .path = str(g, "/lib/x86_64-linux-gnu/libc.so.6"),
                             .buildId = 0, .baseAddress = 0x7ffff7d80000, .size = 1609728 };
    CHECK(rec_intern_Module(g->w, &m, &mid));
    ml = (struct rec_ModuleLoad){ .module = mid, .startTime = next_time(g) };
    CHECK(rec_emit_ModuleLoad(g->s, &ml));
}

static void basic(const char *path)
{
    struct golden g;
    open_golden(&g, path);
    prologue(&g);
    rec_id tmain = thread(&g, 1000, "main");
    rec_id tw1 = thread(&g, 1001, "worker-1");
    rec_id tanon = thread(&g, 1002, NULL);
    rec_id todd = thread(&g, 1003, "odd \"name\"\t\\ \xe2\x9c\x93");
    thread_start(&g, tmain, 0, 1234567);
    thread_start(&g, tw1, tmain, 0);
    thread_start(&g, tanon, tmain, 0);
    thread_start(&g, todd, tmain, 0);
    sample(&g, tmain, 10000000, false, false, stack(&g, 3, false));
    sample(&g, tw1, 10000000, false, false, stack(&g, 8, false));
    sample(&g, tanon, 20000000, true, false, 0);      /* failed, overran once */
    sample(&g, tw1, 10000000, false, true, stack(&g, 5, false));   /* biased */
    sample(&g, todd, 10000000, false, false, stack(&g, 1, false));
    lost(&g, tw1, 3, 30000000, "queue-full");
    /* A second chunk: pools are re-emitted there, caches keyed by chunk. */
    CHECK(rec_writer_rotate(g.w));
    sample(&g, tmain, 10000000, false, false, stack(&g, 3, false));
    sample(&g, tw1, 40000000, false, false, stack(&g, 8, true));   /* cut by the recorder */
    sample(&g, tanon, 10000000, true, true, 0);
    lost(&g, tanon, 1, 10000000, NULL);
    thread_end(&g, tw1, 60000123, false);
    thread_end(&g, tanon, 30000456, false);
    thread_end(&g, todd, 10000789, false);
    thread_end(&g, tmain, 21234567, true);
    struct rec_ProcessUsage pu = { .userTime = 120000000, .systemTime = 4000000,
                                   .maxRss = 3145728, .voluntarySwitches = 12,
                                   .involuntarySwitches = 3, .startTime = next_time(&g) };
    CHECK(rec_emit_ProcessUsage(g.s, &pu));
    CHECK(rec_stream_close(g.s));
    CHECK(rec_writer_close(g.w));
}

static void unfinished(const char *path)
{
    struct golden g;
    open_golden(&g, path);
    prologue(&g);
    rec_id tmain = thread(&g, 2000, "main");
    rec_id tw = thread(&g, 2001, "worker-9");
    thread_start(&g, tmain, 0, 0);
    thread_start(&g, tw, tmain, 0);
    sample(&g, tmain, 10000000, false, false, stack(&g, 3, false));
    sample(&g, tw, 10000000, false, false, stack(&g, 8, false));
    lost(&g, tw, 2, 20000000, "queue-busy");
    CHECK(rec_writer_flush(g.w));
    /* Not flushed: lost with the "crash". */
    sample(&g, tw, 10000000, false, false, stack(&g, 5, false));
    fflush(stdout);
    _exit(0);
}

static void stripped(const char *path, const char *bid, uint64_t leaf,
                     uint64_t mid)
{
    const char *lib = "/opt/rec-test/libunws.so", *exe = "/usr/bin/golden";
    char name[64];
    struct golden g;
    open_golden(&g, path);
    prologue(&g);
    struct rec_Module m = { .path = str(&g, lib), .buildId = str(&g, bid),
                            .baseAddress = 0x7ffff7fb0000, .size = 4096 };
    rec_id modid;
    CHECK(rec_intern_Module(g.w, &m, &modid));
    struct rec_ModuleLoad ml = { .module = modid, .startTime = next_time(&g) };
    CHECK(rec_emit_ModuleLoad(g.s, &ml));
    rec_id t = thread(&g, 1000, "main");
    thread_start(&g, t, 0, 0);
    snprintf(name, sizeof name, "libunws.so+0x%" PRIx64, leaf);
    rec_id fleaf = frame(&g, name, lib, leaf + 4, NULL, 0, false);
    rec_id fnone = frame(&g, NULL, lib, leaf + 6, NULL, 0, false);
    snprintf(name, sizeof name, "libunws.so+0x%" PRIx64, mid);
    rec_id fmid = frame(&g, name, lib, mid + 8, NULL, 0, false);
    rec_id frun = frame(&g, "unws_run", lib, 0x10, NULL, 0, false);
    rec_id fmain = frame(&g, "main", exe, 0x1100, "golden.c", 60, false);
    rec_id a[] = { fleaf, fmid, frun, fmain }, b[] = { fnone, fmid, frun, fmain };
    struct rec_StackTrace st = { .frames = a, .frames_count = 4 };
    rec_id sa, sb, sc;
    CHECK(rec_intern_StackTrace(g.w, &st, &sa));
    st.frames = b;
    CHECK(rec_intern_StackTrace(g.w, &st, &sb));
    st.frames = a + 1;
    st.frames_count = 3;
    CHECK(rec_intern_StackTrace(g.w, &st, &sc));
    for (int i = 0; i < 3; i++)
        sample(&g, t, 10000000, false, false, sa);
    sample(&g, t, 10000000, false, false, sb);
    sample(&g, t, 10000000, false, false, sc);
    thread_end(&g, t, 50000000, false);
    CHECK(rec_stream_close(g.s));
    CHECK(rec_writer_close(g.w));
}

int main(int argc, char **argv)
{
    if (argc == 6 && strcmp(argv[1], "stripped") == 0) {
        stripped(argv[2], argv[3], strtoull(argv[4], NULL, 16),
                 strtoull(argv[5], NULL, 16));
        return 0;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: mkgolden basic|unfinished OUT.rec\n");
        return 2;
    }
    if (strcmp(argv[1], "basic") == 0)
        basic(argv[2]);
    else if (strcmp(argv[1], "unfinished") == 0)
        unfinished(argv[2]);
    else {
        fprintf(stderr, "mkgolden: unknown recording '%s'\n", argv[1]);
        return 2;
    }
    return 0;
}
