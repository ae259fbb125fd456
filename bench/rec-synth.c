/*
 * bench/rec-synth.c - write a realistic synthetic CPU-time recording through
 * the public librecord API; with --bench, measure the writer.
 *
 *   rec-synth [-n N] [-t threads] [-s stacks] [--seed S] [--period ns]
 *             [--streams batched|single|per-thread] [--drain ns] [--time-base ns]
 *             [--tick-ns ns] [--buffer bytes] [--intern-each] [--no-compress]
 *             [--bench] OUT.rec
 *
 * Streams: "batched" (default) emits like libsampler, one stream drained
 * every --drain ns (100 ms), each thread's samples together; "single" one
 * stream in strict time order; "per-thread" one stream per thread.
 *
 * Samples follow each thread's CPU-time timer: one every period of the
 * thread's CPU time, so every period/utilisation of wall time, with timer
 * overruns (x2, x3), failed walks (no stack) and biased samples. Stacks are
 * drawn Zipf-like from a fixed set; like libsampler, a stack is interned the
 * first time and its id reused from then on (its own pc-key cache), or with
 * --intern-each interned at every sample (the writer's dedup path).
 * Everything is derived from the seed: with --time-base the output is
 * byte-identical apart from the chunk headers.
 */
#include <config.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <rec/record.h>

struct rng { uint64_t s; };

static uint64_t rnd(struct rng *r)   /* splitmix64 */
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static uint64_t rnd_below(struct rng *r, uint64_t n) { return n ? rnd(r) % n : 0; }
static double rnd_unit(struct rng *r) { return (double)(rnd(r) >> 11) / 9007199254740992.0; }

struct sthread {
    rec_id id;
    rec_stream *stream;
    uint64_t next;          /* wall ns of the next sample */
    uint64_t cpu;           /* CPU ns consumed */
    double util;            /* share of wall time on CPU */
    unsigned shift;         /* which stacks it favours */
    uint32_t tid;
};

struct stack {
    rec_id id;              /* once interned */
    rec_id *frames;
    size_t n;
    bool truncated;
};

static const char *const modules[] = {
    "/usr/bin/synthd", "/usr/lib/x86_64-linux-gnu/libc.so.6",
    "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
    "/usr/lib/x86_64-linux-gnu/libz.so.1", "/usr/lib/x86_64-linux-gnu/libssl.so.3",
    "/usr/lib/x86_64-linux-gnu/libcrypto.so.3", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
};
#define NMOD (sizeof modules / sizeof modules[0])

static const char *const words[] = {
    "parse", "lex", "eval", "hash", "insert", "lookup", "compress", "encode", "decode",
    "render", "flush", "write", "read", "alloc", "free", "sort", "merge", "visit", "emit",
    "scan", "match", "update", "apply", "resolve", "load", "store", "commit", "poll",
};
static const char *const nouns[] = {
    "Parser", "Tree", "Table", "Buffer", "Stream", "Index", "Cache", "Queue", "Session",
    "Request", "Node", "Block", "Page", "Codec", "Scheduler", "Worker", "Arena", "Matcher",
};

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void usage(void)
{
    fprintf(stderr, "usage: rec-synth [-n N] [-t threads] [-s stacks] [--seed S] [--period ns]\n"
                    "                 [--streams batched|single|per-thread] [--drain ns] [--time-base ns]\n"
                    "                 [--tick-ns ns] [--buffer bytes] [--intern-each] [--no-compress]\n"
                    "                 [--bench] OUT.rec\n");
    exit(2);
}

#define CHECK(call) do { int rc_ = (call); if (rc_) { \
    fprintf(stderr, "rec-synth: %s: %s\n", #call, rec_strerror(rc_)); exit(1); } } while (0)

static rec_id str(rec_writer *w, const char *s)
{
    rec_id id;
    CHECK(rec_intern_cstr(w, s, &id));
    return id;
}

int main(int argc, char **argv)
{
    uint64_t n = 1000000, seed = 1, period = 10000000, time_base = 0;
    unsigned nthreads = 8, nstacks = 300;
    bool bench = false, no_compress = false, intern_each = false;
    uint32_t tick_ns = 0, buffer = 0;
    enum { BATCHED, SINGLE, PER_THREAD } mode = BATCHED;
    uint64_t drain = 100000000;
    static const struct option lo[] = {
        { "seed", required_argument, NULL, 'S' }, { "period", required_argument, NULL, 'p' },
        { "bench", no_argument, NULL, 'b' }, { "streams", required_argument, NULL, 'm' },
        { "no-compress", no_argument, NULL, 'z' }, { "tick-ns", required_argument, NULL, 'k' },
        { "buffer", required_argument, NULL, 'B' }, { "intern-each", no_argument, NULL, 'I' },
        { "time-base", required_argument, NULL, 'T' }, { "drain", required_argument, NULL, 'd' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;
    while ((c = getopt_long(argc, argv, "n:t:s:h", lo, NULL)) != -1) {
        switch (c) {
        case 'n': n = strtoull(optarg, NULL, 0); break;
        case 't': nthreads = (unsigned)strtoul(optarg, NULL, 0); break;
        case 's': nstacks = (unsigned)strtoul(optarg, NULL, 0); break;
        case 'S': seed = strtoull(optarg, NULL, 0); break;
        case 'p': period = strtoull(optarg, NULL, 0); break;
        case 'b': bench = true; break;
        case 'T': time_base = strtoull(optarg, NULL, 0); break;
        case 'z': no_compress = true; break;
        case 'I': intern_each = true; break;
        case 'k': tick_ns = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'B': buffer = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'd': drain = strtoull(optarg, NULL, 0); break;
        case 'm':
            if (!strcmp(optarg, "single"))
                mode = SINGLE;
            else if (!strcmp(optarg, "batched"))
                mode = BATCHED;
            else if (!strcmp(optarg, "per-thread"))
                mode = PER_THREAD;
            else
                usage();
            break;
        default: usage();
        }
    }
    if (optind + 1 != argc || nthreads < 1 || nthreads > 4096 || nstacks < 1 ||
        nstacks > 1000000 || period < 1000)
        usage();
    const char *out = argv[optind];
    struct rng r = { seed };

    rec_writer *w;
    rec_writer_options opt;
    rec_writer_options_init(&opt);
    opt.overwrite = true;
    opt.no_compress = no_compress;
    opt.tick_ns = tick_ns;
    opt.buffer_bytes = buffer;
    CHECK(rec_writer_open(&w, out, &opt));
    uint64_t t = time_base ? time_base : rec_now_ns();
    const uint32_t pid = 4242;

    /* Modules, functions and frames. */
    rec_id mod[NMOD], modpath[NMOD];
    for (size_t i = 0; i < NMOD; i++) {
        char bid[41];
        for (int k = 0; k < 40; k++)
            bid[k] = "0123456789abcdef"[rnd_below(&r, 16)];
        bid[40] = 0;
        modpath[i] = str(w, modules[i]);
        struct rec_Module m = { .path = modpath[i], .buildId = str(w, bid),
                                .baseAddress = i ? 0x7f0000000000ull + i * 0x1000000 : 0x400000,
                                .size = 0x10000 + rnd_below(&r, 0x400000) };
        CHECK(rec_intern_Module(w, &m, &mod[i]));
    }
    size_t nframes = 1500 + nstacks * 2;
    rec_id *frames = malloc(nframes * sizeof *frames);
    rec_id srcfile[16];
    for (int i = 0; i < 16; i++) {
        char f[64];
        snprintf(f, sizeof f, "src/%s/%s.cc", words[i % 28], nouns[i % 18]);
        srcfile[i] = str(w, f);
    }
    for (size_t i = 0; i < nframes; i++) {
        char fn[160];
        size_t m = i < nframes / 2 ? 0 : 1 + rnd_below(&r, NMOD - 1);
        snprintf(fn, sizeof fn, m ? "%s_%s_%zu" : "app::%s::%s_%zu",
                 nouns[rnd_below(&r, 18)], words[rnd_below(&r, 28)], i);
        bool src = m == 0 && rnd_below(&r, 3) != 0;
        struct rec_Frame f = {
            .function = rnd_below(&r, 50) ? str(w, fn) : 0,
            .module = modpath[m], .offset = 0x1000 + rnd_below(&r, 0x200000),
            .file = src ? srcfile[rnd_below(&r, 16)] : 0,
            .line = src ? 1 + rnd_below(&r, 3000) : 0,
            .inlined = src && rnd_below(&r, 10) == 0,
        };
        CHECK(rec_intern_Frame(w, &f, &frames[i]));
    }
    /* Stacks: a shared outer part (_start .. main, a worker loop) and a
     * random inner part, depth 5..60 biased towards 15..30. */
    struct stack *stacks = calloc(nstacks, sizeof *stacks);
    for (unsigned i = 0; i < nstacks; i++) {
        size_t d = 5 + (rnd_below(&r, 28) + rnd_below(&r, 28));
        if (rnd_below(&r, 10) == 0)
            d = 40 + rnd_below(&r, 21);
        stacks[i].n = d;
        stacks[i].truncated = d == 60 && rnd_below(&r, 2);
        stacks[i].frames = malloc(d * sizeof(rec_id));
        for (size_t k = 0; k < d; k++) {
            size_t outer = d - 1 - k;    /* 0 = outermost */
            stacks[i].frames[k] = outer < 4 ? frames[outer + (i % 3) * 4]
                                            : frames[12 + rnd_below(&r, nframes - 12)];
        }
    }
    /* Zipf-like popularity: weight 1/(rank+1), drawn through a table of
     * quantiles so that the harness costs little next to the writer. */
    double *cdf = malloc(nstacks * sizeof *cdf), sum = 0;
    for (unsigned i = 0; i < nstacks; i++)
        cdf[i] = (sum += 1.0 / (i + 1));
    enum { QBITS = 12 };   /* 16 KiB: stays in L1 */
    uint32_t *quant = malloc(sizeof *quant << QBITS);
    for (unsigned q = 0, rank = 0; q < 1u << QBITS; q++) {
        double x = (q + 0.5) / (1u << QBITS) * sum;
        while (rank < nstacks - 1 && cdf[rank] < x)
            rank++;
        quant[q] = rank;
    }

    /* Threads. */
    struct sthread *th = calloc(nthreads, sizeof *th);
    rec_stream *main_stream;
    CHECK(rec_stream_open(w, &main_stream));
    for (unsigned i = 0; i < nthreads; i++) {
        char name[32];
        snprintf(name, sizeof name, i ? "worker-%u" : "synthd", i);
        th[i].tid = pid + i;
        struct rec_Thread tt = { .osThreadId = th[i].tid, .name = str(w, name), .processId = pid };
        CHECK(rec_intern_Thread(w, &tt, &th[i].id));
        th[i].util = 0.3 + 0.7 * rnd_unit(&r);
        th[i].shift = (unsigned)rnd_below(&r, nstacks);
        th[i].next = t + (uint64_t)((double)period / th[i].util * rnd_unit(&r));
        if (mode != PER_THREAD)
            th[i].stream = main_stream;
        else
            CHECK(rec_stream_open(w, &th[i].stream));
    }
    struct rec_RecordingSettings rs = { .throttle = str(w, "10ms"), .samplingPeriod = period,
                                        .signal = 27, .unwinder = str(w, "fp"),
                                        .stackDepth = 64, .queueCapacity = 500, .startTime = t };
    CHECK(rec_emit_RecordingSettings(main_stream, &rs));
    struct rec_ProcessInfo pi = { .processId = pid, .parentProcessId = 1, .executable = modpath[0],
                                  .commandLine = str(w, "/usr/bin/synthd --serve --workers 8"),
                                  .hostName = str(w, "synth-host"), .startTime = t };
    CHECK(rec_emit_ProcessInfo(main_stream, &pi));
    struct rec_CPUInfo ci = { .onlineCpus = 8, .availableCpus = 8, .clockTickHz = 250,
                              .model = str(w, "Synthetic CPU @ 3.0GHz"), .startTime = t };
    CHECK(rec_emit_CPUInfo(main_stream, &ci));
    for (size_t i = 0; i < NMOD; i++) {
        struct rec_ModuleLoad ml = { .module = mod[i], .startTime = t };
        CHECK(rec_emit_ModuleLoad(main_stream, &ml));
    }
    for (unsigned i = 0; i < nthreads; i++) {
        struct rec_ThreadStart ts = { .eventThread = th[i].id, .parentThread = i ? th[0].id : 0,
                                      .cpuTime = 0, .startTime = t + i * 1000 };
        CHECK(rec_emit_ThreadStart(th[i].stream, &ts));
    }
    rec_id lost_reason = str(w, "queue-full");

    /* The measured phase: intern each sample's stack, emit, flush, close. */
    uint64_t t0 = rec_now_ns(), c0 = cpu_ns(), last = t;
    uint64_t lost_every = n / 7 + 1;
    uint64_t round_end = t + drain;
    unsigned cur = 0;
    for (uint64_t k = 0; k < n; k++) {
        struct sthread *s = &th[0];
        if (mode == BATCHED) {
            /* Like libsampler's drain: every `drain` ns, each thread's
             * queued samples in turn. */
            while (th[cur].next >= round_end) {
                if (++cur == nthreads) {
                    cur = 0;
                    round_end += drain;
                }
            }
            s = &th[cur];
        } else {
            for (unsigned i = 1; i < nthreads; i++)
                if (th[i].next < s->next)
                    s = &th[i];
        }
        uint64_t u = rnd(&r);
        unsigned ov = (u & 0xff) < 5 ? 2 : (u & 0xff) < 6 ? 3 : 1;   /* 2%: x2, 0.4%: x3 */
        bool failed = ((u >> 8) & 0x7f) == 0;                     /* 0.8% */
        bool biased = !failed && ((u >> 15) & 0x3f) == 0;         /* 1.6% */
        unsigned rank = quant[(u >> 24) & ((1u << QBITS) - 1)];
        unsigned idx = rank + s->shift;
        const struct stack *st = &stacks[idx >= nstacks ? idx - nstacks : idx];
        rec_id sid = 0;
        if (!failed && st->id && !intern_each) {
            sid = st->id;      /* a sampler's own pc-key cache hit */
        } else if (!failed) {
            struct rec_StackTrace v = { .truncated = st->truncated, .frames = st->frames,
                                        .frames_count = st->n };
            CHECK(rec_intern_StackTrace(w, &v, &sid));
            ((struct stack *)st)->id = sid;
        }
        struct rec_CPUTimeSample e = { .eventThread = s->id, .samplingPeriod = period * ov,
                                       .failed = failed, .biased = biased, .stackTrace = sid,
                                       .startTime = s->next };
        CHECK(rec_emit_CPUTimeSample(s->stream, &e));
        last = s->next;
        s->cpu += period * ov;
        /* Wall time until the thread has used `period` more CPU, +-5%. */
        double gap = (double)period / s->util * (0.95 + 0.1 * rnd_unit(&r));
        s->next += (uint64_t)gap * ov;
        if (k % lost_every == lost_every - 1) {
            uint64_t nl = 1 + rnd_below(&r, 5);
            struct rec_CPUTimeSampleLost l = { .eventThread = s->id, .lostSamples = nl,
                                               .lostTime = nl * period, .reason = lost_reason,
                                               .startTime = last };
            s->cpu += nl * period;
            CHECK(rec_emit_CPUTimeSampleLost(s->stream, &l));
        }
    }
    for (unsigned i = 0; i < nthreads; i++) {
        struct rec_ThreadEnd te = { .eventThread = th[i].id,
                                    .cpuTime = th[i].cpu + rnd_below(&r, period),
                                    .snapshot = i == 0, .startTime = last + 1000 + i };
        CHECK(rec_emit_ThreadEnd(th[i].stream, &te));
    }
    struct rec_ProcessUsage pu = { .userTime = 0, .systemTime = 0, .maxRss = 12 << 20,
                                   .voluntarySwitches = 1000, .involuntarySwitches = 50,
                                   .startTime = last + 100000 };
    for (unsigned i = 0; i < nthreads; i++)
        pu.userTime += th[i].cpu;
    pu.systemTime = pu.userTime / 20;
    CHECK(rec_emit_ProcessUsage(main_stream, &pu));
    CHECK(rec_writer_flush(w));
    CHECK(rec_writer_close(w));
    uint64_t t1 = rec_now_ns(), c1 = cpu_ns();

    if (bench) {
        struct stat sb;
        if (stat(out, &sb) < 0) {
            fprintf(stderr, "rec-synth: %s: %s\n", out, strerror(errno));
            return 1;
        }
        double secs = (double)(t1 - t0) / 1e9, cpu = (double)(c1 - c0) / 1e9;
        printf("events %" PRIu64 " wall %.3f s cpu %.3f s rate %.0f events/s (cpu %.0f) "
               "bytes %lld bytes/event %.2f\n", n, secs, cpu, (double)n / secs, (double)n / cpu,
               (long long)sb.st_size, (double)sb.st_size / (double)n);
    }
    for (unsigned i = 0; i < nstacks; i++)
        free(stacks[i].frames);
    free(stacks);
    free(cdf);
    free(quant);
    free(frames);
    free(th);
    return 0;
}
