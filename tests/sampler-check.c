/*
 * tests/sampler-check.c - summarize a recording made by libsampler for
 * the sampler tests, and check its CPU-time accounting.
 *
 *   sampler-check [--accounting SLACK_NS [--percent P]] [--pid PID] FILE
 *
 * Prints, for the shell tests to grep:
 *   total samples=N failed=N biased=N stacks=N period_ns=N lost=N lost_ns=N
 *         starts=N ends=N snapshots=N settings=N processinfo=N usage=N
 *         modules=N recordings=N maxdepth=N threads=N setperiod=NS
 *         (setperiod: samplingPeriod of the last RecordingSettings)
 *         undelivered=N chunks=N (with events) nomodchunks=N (chunks
 *         with events but no ModuleLoad) minchunk=BYTES (the smallest
 *         chunk with events but the last: a size-rotated recording has
 *         every such chunk at least as large as its limit) busy=N unsafe=N timerfailed=N
 *         untracked_ns=NS blocked=N (lost: the thread blocked the signal)
 *         stacked_ns=NS (periods of the samples with a stack)
 *         (lost samples by reason)
 *   thread pid=P tid=T samples=N period_ns=N lost=N lost_ns=N cpu_ns=N
 *          undelivered=N diff=NS (recorded - cpu)
 *          started=0|1 ended=0|1 snapshot=0|1 blocked=N stacked_ns=NS
 *          name=NAME
 *   func NAME          (every distinct function name seen in stacks)
 * With --accounting: for every thread with a ThreadStart and a ThreadEnd,
 * |samples' periods + lost time - (end cpu - start cpu)| must be below the
 * largest period in force during the thread's life (the first expiry comes
 * after a random part of a period, the partial period at the end never
 * expires; expiries the kernel did not signal are counted lost as
 * "undelivered")
 * plus SLACK_NS (clock reads), per recording session of the thread, plus
 * P% of its CPU time (default 0): prints "accounting-error ..." lines and
 * exits 1 otherwise.
 * Exit 2 if the file cannot be read to its end.
 */
#include <config.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rec/record.h>

struct th {
    uint64_t pid, tid;
    uint64_t samples, period_ns, lost, lost_ns, allow, undelivered;
    uint64_t stacked_ns, blocked;
    uint64_t span_period;       /* largest period in force in the span */
    uint64_t start_cpu, end_cpu;
    uint64_t cpu_ns;
    int started, ended, snapshot, open, spans;
    char name[32];
};

static struct th *ths;
static size_t nths, cths;
static char **funcs;
static size_t nfuncs, cfuncs;

static struct th *thread_of(uint64_t pid, uint64_t tid)
{
    for (size_t i = 0; i < nths; i++)
        if (ths[i].pid == pid && ths[i].tid == tid)
            return &ths[i];
    if (nths == cths) {
        cths = cths ? cths * 2 : 64;
        ths = realloc(ths, cths * sizeof *ths);
        if (!ths)
            exit(3);
    }
    memset(&ths[nths], 0, sizeof ths[0]);
    ths[nths].pid = pid;
    ths[nths].tid = tid;
    return &ths[nths++];
}

static void add_func(const char *s, size_t len)
{
    for (size_t i = 0; i < nfuncs; i++)
        if (strlen(funcs[i]) == len && !memcmp(funcs[i], s, len))
            return;
    if (nfuncs == cfuncs) {
        cfuncs = cfuncs ? cfuncs * 2 : 64;
        funcs = realloc(funcs, cfuncs * sizeof *funcs);
        if (!funcs)
            exit(3);
    }
    funcs[nfuncs] = strndup(s, len);
    nfuncs++;
}

static uint64_t field_u(const rec_event *ev, const char *name)
{
    rec_value v;
    long i = rec_type_field_index(rec_event_type(ev), name);
    if (i < 0 || rec_event_get(ev, (size_t)i, &v) < 0)
        return 0;
    if (v.kind == REC_UINT)
        return v.v.u;
    if (v.kind == REC_BOOL)
        return v.v.b;
    if (v.kind == REC_INT)
        return (uint64_t)v.v.i;
    return 0;
}

static const rec_entry *field_ref(const rec_event *ev, const char *name)
{
    rec_value v;
    long i = rec_type_field_index(rec_event_type(ev), name);
    if (i < 0 || rec_event_get(ev, (size_t)i, &v) < 0 || v.kind != REC_REF)
        return NULL;
    return v.v.ref.entry;
}

static uint64_t entry_u(const rec_entry *e, const char *name)
{
    rec_value v;
    long i = rec_type_field_index(rec_entry_type(e), name);
    if (i < 0 || rec_entry_get(e, (size_t)i, &v) < 0 || v.kind != REC_UINT)
        return 0;
    return v.v.u;
}

static void entry_str(const rec_entry *e, const char *name, char *buf, size_t size)
{
    rec_value v;
    long i = rec_type_field_index(rec_entry_type(e), name);
    buf[0] = '\0';
    if (i < 0 || rec_entry_get(e, (size_t)i, &v) < 0)
        return;
    if (v.kind == REC_REF && v.v.ref.entry) {
        entry_str(v.v.ref.entry, "value", buf, size);
        return;
    }
    if (v.kind == REC_STRING) {
        size_t n = v.v.str.len < size - 1 ? v.v.str.len : size - 1;
        memcpy(buf, v.v.str.s, n);
        buf[n] = '\0';
    }
}

static struct th *event_thread(const rec_event *ev)
{
    const rec_entry *t = field_ref(ev, "eventThread");
    struct th *th;
    if (!t)
        return thread_of(0, 0);
    th = thread_of(entry_u(t, "processId"), entry_u(t, "osThreadId"));
    entry_str(t, "name", th->name, sizeof th->name);
    return th;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    long long slack = -1;
    uint64_t pct = 0;
    uint64_t only_pid = 0;
    rec_reader *r;
    const rec_event *ev;
    int rc, bad = 0;
    uint64_t samples = 0, failed = 0, biased = 0, stacks = 0, period = 0,
             lost = 0, lost_ns = 0, starts = 0, ends = 0, snaps = 0,
             settings = 0, pinfo = 0, usage = 0, modules = 0, recordings = 0,
             maxdepth = 0, set_period = 0, undelivered = 0;
    uint64_t busy = 0, unsafe = 0, timerfailed = 0, untracked_ns = 0;
    uint64_t blocked = 0, stacked_ns = 0;
    uint64_t last_offset = UINT64_MAX, chunk_offset = UINT64_MAX;
    uint64_t chunks = 0, nomod = 0, chunk_mods = 0;
    uint64_t min_chunk = 0, chunk_size = 0;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--accounting") && i + 1 < argc)
            slack = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--percent") && i + 1 < argc)
            pct = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--pid") && i + 1 < argc)
            only_pid = strtoull(argv[++i], NULL, 10);
        else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: sampler-check [--accounting NS] [--pid PID] FILE\n");
        return 2;
    }
    /* Every chunk's own mappings are checked: their restatements too. */
    if ((rc = rec_reader_open(&r, path, REC_READ_RESTATED)) < 0) {
        fprintf(stderr, "%s: %s\n", path, rec_strerror(rc));
        return 2;
    }
    while ((rc = rec_reader_next(r, &ev)) == 1) {
        const char *type = rec_type_name(rec_event_type(ev));
        rec_chunk_info ci;
        struct th *th;

        if (rec_reader_chunk(r, &ci) == 0 && ci.index == 0 &&
            ci.offset != last_offset) {
            recordings++;
            last_offset = ci.offset;
        }
        if (rec_reader_chunk(r, &ci) == 0 && ci.offset != chunk_offset) {
            if (chunks && !chunk_mods)
                nomod++;
            if (chunks && (!min_chunk || chunk_size < min_chunk))
                min_chunk = chunk_size;
            chunks++;
            chunk_mods = 0;
            chunk_offset = ci.offset;
            chunk_size = ci.size;
        }
        if (!strcmp(type, "ModuleLoad"))
            chunk_mods++;
        if (!strcmp(type, "RecordingSettings")) {
            settings++;
            set_period = field_u(ev, "samplingPeriod");
            for (size_t i = 0; i < nths; i++)
                if (ths[i].open && set_period > ths[i].span_period)
                    ths[i].span_period = set_period;
            continue;
        }
        if (!strcmp(type, "ProcessInfo")) {
            pinfo++;
            continue;
        }
        if (!strcmp(type, "ProcessUsage")) {
            usage++;
            continue;
        }
        if (!strcmp(type, "ModuleLoad")) {
            modules++;
            continue;
        }
        if (strcmp(type, "CPUTimeSample") && strcmp(type, "CPUTimeSampleLost") &&
            strcmp(type, "ThreadStart") && strcmp(type, "ThreadEnd"))
            continue;
        th = event_thread(ev);
        if (only_pid && th->pid != only_pid)
            continue;
        if (!strcmp(type, "CPUTimeSample")) {
            const rec_entry *st = field_ref(ev, "stackTrace");
            uint64_t p = field_u(ev, "samplingPeriod");
            samples++;
            period += p;
            th->samples++;
            th->period_ns += p;
            failed += field_u(ev, "failed");
            if (st && !field_u(ev, "failed")) {
                th->stacked_ns += p;
                stacked_ns += p;
            }
            biased += field_u(ev, "biased");
            if (st) {
                rec_value fr;
                long fi = rec_type_field_index(rec_entry_type(st), "frames");
                stacks++;
                if (fi >= 0 && rec_entry_get(st, (size_t)fi, &fr) == 0 &&
                    fr.kind == REC_ARRAY) {
                    if (fr.v.array.n > maxdepth)
                        maxdepth = fr.v.array.n;
                    for (size_t k = 0; k < fr.v.array.n; k++) {
                        const rec_value *f = &fr.v.array.items[k];
                        char name[256];
                        if (f->kind != REC_REF || !f->v.ref.entry)
                            continue;
                        entry_str(f->v.ref.entry, "function", name, sizeof name);
                        if (name[0])
                            add_func(name, strlen(name));
                    }
                }
            }
        } else if (!strcmp(type, "CPUTimeSampleLost")) {
            uint64_t n = field_u(ev, "lostSamples"), ns = field_u(ev, "lostTime");
            const rec_entry *re = field_ref(ev, "reason");
            char reason[32] = "";
            if (re)
                entry_str(re, "value", reason, sizeof reason);
            if (!strcmp(reason, "undelivered")) {
                undelivered += n;
                th->undelivered += n;
            } else if (!strcmp(reason, "queue-busy")) {
                busy += n;
            } else if (!strcmp(reason, "unsafe")) {
                unsafe += n;
            } else if (!strcmp(reason, "timer-failed")) {
                timerfailed += n;
            } else if (!strcmp(reason, "blocked")) {
                blocked += n;
                th->blocked += n;
            } else if (!strcmp(reason, "untracked")) {
                untracked_ns += ns;
            }
            lost += n;
            lost_ns += ns;
            th->lost += n;
            th->lost_ns += ns;
        } else if (!strcmp(type, "ThreadStart")) {
            starts++;
            th->started = 1;
            th->start_cpu = field_u(ev, "cpuTime");
            th->open = 1;
            th->span_period = set_period;
        } else {
            ends++;
            th->ended = 1;
            th->end_cpu = field_u(ev, "cpuTime");
            /* A thread can be recorded by several sessions (exec keeps the
             * pid and tid): sum the spans. */
            if (th->open && th->end_cpu > th->start_cpu)
                th->cpu_ns += th->end_cpu - th->start_cpu;
            th->spans++;
            /* The first expiry may come up to a period early (random
             * phase) and the last partial period never expires: within
             * the largest period in force during the span. */
            th->allow += set_period > th->span_period ? set_period
                                                      : th->span_period;
            th->open = 0;
            th->snapshot = (int)field_u(ev, "snapshot");
            snaps += th->snapshot;
        }
    }
    if (chunks && !chunk_mods)
        nomod++;
    if (rc < 0) {
        fprintf(stderr, "%s: %s (%s)\n", path, rec_strerror(rc),
                rec_reader_message(r));
        bad = 2;
    }
    printf("total samples=%" PRIu64 " failed=%" PRIu64 " biased=%" PRIu64
           " stacks=%" PRIu64 " period_ns=%" PRIu64 " lost=%" PRIu64
           " lost_ns=%" PRIu64 " starts=%" PRIu64 " ends=%" PRIu64
           " snapshots=%" PRIu64 " settings=%" PRIu64 " processinfo=%" PRIu64
           " usage=%" PRIu64 " modules=%" PRIu64 " recordings=%" PRIu64
           " maxdepth=%" PRIu64 " threads=%zu setperiod=%" PRIu64
           " undelivered=%" PRIu64 " chunks=%" PRIu64 " nomodchunks=%" PRIu64
           " minchunk=%" PRIu64 " busy=%" PRIu64 " unsafe=%" PRIu64 " timerfailed=%" PRIu64
           " untracked_ns=%" PRIu64 " blocked=%" PRIu64
           " stacked_ns=%" PRIu64 "\n",
           samples, failed, biased, stacks, period, lost, lost_ns, starts, ends,
           snaps, settings, pinfo, usage, modules, recordings, maxdepth, nths,
           set_period, undelivered, chunks, nomod, min_chunk, busy, unsafe,
           timerfailed, untracked_ns, blocked, stacked_ns);
    for (size_t i = 0; i < nths; i++) {
        struct th *t = &ths[i];
        uint64_t cpu = t->cpu_ns;
        if (nths <= 200)
            printf("thread pid=%" PRIu64 " tid=%" PRIu64 " samples=%" PRIu64
                   " period_ns=%" PRIu64 " lost=%" PRIu64 " lost_ns=%" PRIu64
                   " cpu_ns=%" PRIu64 " undelivered=%" PRIu64 " diff=%" PRId64
                   " started=%d ended=%d snapshot=%d blocked=%" PRIu64
                   " stacked_ns=%" PRIu64 " name=%s\n",
                   t->pid, t->tid, t->samples, t->period_ns, t->lost, t->lost_ns,
                   cpu, t->undelivered,
                   (int64_t)(t->period_ns + t->lost_ns) - (int64_t)cpu,
                   t->started, t->ended, t->snapshot, t->blocked,
                   t->stacked_ns, t->name);
        if (slack >= 0 && t->started && t->ended) {
            int64_t diff = (int64_t)(t->period_ns + t->lost_ns) - (int64_t)cpu;
            /* Each span (session) may miss its last, unexpired period. */
            int64_t allow = (int64_t)t->allow + slack * (t->spans ? t->spans : 1) +
                            (int64_t)(cpu / 100 * pct);
            if (diff >= allow || -diff >= allow) {
                printf("accounting-error tid=%" PRIu64 " recorded=%" PRIu64
                       " cpu=%" PRIu64 " diff=%" PRId64 " allowed=%" PRId64 "\n",
                       t->tid, t->period_ns + t->lost_ns, cpu, diff, allow);
                if (!bad)
                    bad = 1;
            }
        }
    }
    for (size_t i = 0; i < nfuncs; i++)
        printf("func %s\n", funcs[i]);
    rec_reader_close(r);
    return bad;
}
