/*
 * tools/cpu/cpu-model.c - fold CPU events into per-thread figures.
 *
 * Everything here is independent of the reader: cpu-read.c decodes events
 * and calls these functions with plain numbers, which keeps the accounting
 * rules in one place and testable.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include <rec/record.h>

#include "cpu-model.h"

/* A timeline wider than this per thread is a mistake (1 us intervals over
 * an hour), not something to allocate for. */
#define CPU_MAX_INTERVALS (1u << 22)
/* All threads together: 128 MiB of counters. */
#define CPU_MAX_CELLS (1u << 24)
/* Empty intervals a timeline may show beyond 4 per used one. */
#define CPU_MAX_GAP 10000u

void cpu_model_init(cpu_model *m, const cpu_options *opt)
{
    memset(m, 0, sizeof *m);
    m->opt = *opt;
    m->hi_ns = UINT64_MAX;
}

void cpu_model_free(cpu_model *m)
{
    for (size_t i = 0; i < m->nthreads; i++) {
        cpu_thread *t = m->threads[i];
        free(t->name);
        free(t->marks);
        free(t->iv);
        free(t->lv);
        free(t->lost);
        cpu_tstacks_free(&t->stacks);
        free(t);
    }
    free(m->threads);
    free(m->procs);
    cli_map_free(&m->by_key);
    cli_strtab_free(&m->funcs);
    cpu_stacktab_free(&m->stacks);
    free(m->func_rank);
    memset(m, 0, sizeof *m);
}

void cpu_model_set_origin(cpu_model *m, uint64_t origin_ns)
{
    m->origin_ns = origin_ns;
    m->have_origin = true;
    if (m->opt.have_since)
        m->lo_ns = cli_time_resolve(&m->opt.since, origin_ns);
    if (m->opt.have_until)
        m->hi_ns = cli_time_resolve(&m->opt.until, origin_ns);
}

bool cpu_model_in_range(const cpu_model *m, uint64_t ts)
{
    return ts >= m->lo_ns && ts < m->hi_ns;
}

static uint64_t thread_key(uint64_t pid, uint64_t tid)
{
    /* pid_max is at most 2^22; the +1 keeps the key non-zero. */
    return ((pid & 0xffffffffu) << 32 | (tid & 0xffffffffu)) + 1;
}

static cpu_thread *add_thread(cpu_model *m, uint64_t pid, uint64_t tid,
                              uint32_t seq)
{
    if (m->nthreads == m->cap_threads) {
        size_t cap = m->cap_threads ? m->cap_threads * 2 : 64;
        cpu_thread **v = realloc(m->threads, cap * sizeof *v);
        if (!v)
            return NULL;
        m->threads = v;
        m->cap_threads = cap;
    }
    cpu_thread *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->pid = pid;
    t->tid = tid;
    t->seq = seq;
    t->index = (uint32_t)m->nthreads;
    t->iv_min = INT64_MAX;
    t->iv_max = INT64_MIN;
    if (cli_map_put(&m->by_key, thread_key(pid, tid),
                    (uint32_t)m->nthreads) < 0) {
        free(t);
        return NULL;
    }
    m->threads[m->nthreads++] = t;
    return t;
}

cpu_thread *cpu_model_thread(cpu_model *m, uint64_t pid, uint64_t tid)
{
    uint32_t i;
    if (cli_map_get(&m->by_key, thread_key(pid, tid), &i))
        return m->threads[i];
    return add_thread(m, pid, tid, 0);
}

cpu_process *cpu_model_process(cpu_model *m, uint64_t pid)
{
    for (size_t i = 0; i < m->nprocs; i++)
        if (m->procs[i].pid == pid)
            return &m->procs[i];
    if (m->nprocs == m->cap_procs) {
        size_t cap = m->cap_procs ? m->cap_procs * 2 : 8;
        cpu_process *v = realloc(m->procs, cap * sizeof *v);
        if (!v)
            return NULL;
        m->procs = v;
        m->cap_procs = cap;
    }
    cpu_process *p = &m->procs[m->nprocs++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    return p;
}

static void touch(cpu_thread *t, uint64_t ts)
{
    if (!t->in_range || ts < t->first_ns)
        t->first_ns = ts;
    if (!t->in_range || ts > t->last_ns)
        t->last_ns = ts;
    t->in_range = true;
}

/* ---- timeline -------------------------------------------------------- */

static int iv_reserve(cpu_model *m, cpu_thread *t, int64_t lo, int64_t hi)
{
    if (t->iv_n && lo >= t->iv_lo && hi < t->iv_lo + (int64_t)t->iv_n)
        return 0;
    int64_t nlo = t->iv_n && t->iv_lo < lo ? t->iv_lo : lo;
    int64_t nhi = t->iv_n && t->iv_lo + (int64_t)t->iv_n - 1 > hi
                  ? t->iv_lo + (int64_t)t->iv_n - 1 : hi;
    if (nhi - nlo + 1 > (int64_t)CPU_MAX_INTERVALS)
        return REC_ETOOBIG;
    size_t n = (size_t)(nhi - nlo + 1);
    /* Grow by half again so a thread read in time order reallocates
     * O(log n) times. */
    size_t want = n + n / 2;
    if (want > CPU_MAX_INTERVALS)
        want = n;
    if (m->iv_cells - t->iv_n + want > CPU_MAX_CELLS) {
        want = n;
        if (m->iv_cells - t->iv_n + want > CPU_MAX_CELLS)
            return REC_ETOOBIG;
    }
    uint64_t *iv = calloc(want, sizeof *iv), *lv = calloc(want, sizeof *lv);
    if (!iv || !lv) {
        free(iv);
        free(lv);
        return REC_ENOMEM;
    }
    if (t->iv_n) {
        memcpy(iv + (t->iv_lo - nlo), t->iv, t->iv_n * sizeof *iv);
        memcpy(lv + (t->iv_lo - nlo), t->lv, t->iv_n * sizeof *lv);
    }
    free(t->iv);
    free(t->lv);
    m->iv_cells = m->iv_cells - t->iv_n + want;
    t->iv = iv;
    t->lv = lv;
    t->iv_lo = nlo;
    t->iv_n = want;
    return 0;
}

/* A sample stands for CPU time the thread used before the timer fired:
 * spread its period evenly over [ts - period, ts), clipped at the start of
 * the analysed range, so that per-interval figures stay near 100% of a
 * CPU at most even with overrun samples, and the intervals of a thread sum
 * to its sampledCpuTime exactly. */
static int spread_over(cpu_model *m, cpu_thread *t, uint64_t beg,
                       uint64_t end, uint64_t period, bool lost);

static int spread(cpu_model *m, cpu_thread *t, uint64_t ts, uint64_t period)
{
    uint64_t floor = m->lo_ns > m->origin_ns ? m->lo_ns : m->origin_ns;
    /* Nor before the thread's previous sample: one thread's CPU time cannot
     * pass faster than wall time, and the CPU time before that sample is
     * that sample's. An absurd period (a damaged or crafted file) then
     * shows as absurd percentages in a few intervals instead of filling
     * millions of them. */
    if (t->last_sample_ns > floor && t->last_sample_ns <= ts)
        floor = t->last_sample_ns;
    if (ts > t->last_sample_ns)
        t->last_sample_ns = ts;
    uint64_t end = ts > floor ? ts : floor;
    uint64_t beg = end - floor >= period ? end - period : floor;

    return spread_over(m, t, beg, end, period, false);
}

/* period ns over [beg, end) into the samples' or the lost timeline. */
static int spread_over(cpu_model *m, cpu_thread *t, uint64_t beg,
                       uint64_t end, uint64_t period, bool lost)
{
    uint64_t I = m->opt.interval_ns;
    int64_t k0 = (int64_t)((beg - m->origin_ns) / I);
    int64_t k1 = end > beg ? (int64_t)((end - 1 - m->origin_ns) / I) : k0;
    int rc = iv_reserve(m, t, k0, k1);
    if (rc < 0)
        return rc;
    if (k0 < t->iv_min)
        t->iv_min = k0;
    if (k1 > t->iv_max)
        t->iv_max = k1;
    uint64_t *iv = lost ? t->lv : t->iv;
    if (k0 == k1) {
        iv[k0 - t->iv_lo] += period;
        return 0;
    }
    /* Cumulative rounding keeps the parts summing to period exactly. */
    uint64_t span = end - beg, given = 0;
    for (int64_t k = k0; k <= k1; k++) {
        uint64_t upto = k == k1 ? end
                        : m->origin_ns + (uint64_t)(k + 1) * I;
        uint64_t cum = (uint64_t)((unsigned __int128)period
                                  * (upto - beg) / span);
        iv[k - t->iv_lo] += cum - given;
        given = cum;
    }
    return 0;
}

/* ---- events ---------------------------------------------------------- */

int cpu_model_sample(cpu_model *m, cpu_thread *t, uint64_t ts,
                     uint64_t period, bool failed, bool biased, int partial)
{
    touch(t, ts);
    t->samples++;
    t->failed += failed;
    t->biased += biased;
    if (partial >= 0 && partial < CLI_PARTIAL_N)
        t->partial[partial]++;
    t->sampled_ns += period;
    cpu_model_period(m, period);
    m->events++;
    if (m->opt.interval_ns && period)
        return spread(m, t, ts, period);
    return 0;
}

void cpu_model_period(cpu_model *m, uint64_t period)
{
    if (period && (!m->period_ns || period < m->period_ns))
        m->period_ns = period;
}

void cpu_model_lost(cpu_model *m, cpu_thread *t, uint64_t ts,
                    uint64_t count, uint64_t ns)
{
    touch(t, ts);
    t->lost_samples += count;
    t->lost_ns += ns;
    m->events++;
    /* Placed in the timeline at the end, once the thread's start is known
     * (streams are read in file order, not time order). */
    if (m->opt.interval_ns && ns) {
        if (t->nlost == t->cap_lost) {
            size_t cap = t->cap_lost ? t->cap_lost * 2 : 8;
            struct cpu_lost *v = realloc(t->lost, cap * sizeof *v);
            if (!v)
                return;          /* the totals stay right */
            t->lost = v;
            t->cap_lost = cap;
        }
        t->lost[t->nlost++] = (struct cpu_lost){ ts, ns };
    }
}

static int cmp_lost(const void *a, const void *b)
{
    const struct cpu_lost *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Lost CPU carries no time of its own: a lost event reports what was lost
 * since the thread's previous one (or its start), so it is spread evenly
 * over that span, clipped to the analysed range. */
static void place_lost(cpu_model *m, cpu_thread *t)
{
    uint64_t floor = m->lo_ns > m->origin_ns ? m->lo_ns : m->origin_ns;
    uint64_t from = t->has_start ? t->start_ns : t->first_ns;

    if (!t->nlost)
        return;
    qsort(t->lost, t->nlost, sizeof *t->lost, cmp_lost);
    for (size_t i = 0; i < t->nlost; i++) {
        uint64_t end = t->lost[i].ts > floor ? t->lost[i].ts : floor;
        uint64_t beg = from > floor ? from : floor;
        if (beg > end)
            beg = end;
        if (spread_over(m, t, beg, end, t->lost[i].ns, true) < 0)
            return;
        from = t->lost[i].ts;
    }
}

static int add_mark(cpu_thread *t, uint64_t ts, uint64_t cpu, bool end,
                    bool snapshot)
{
    if (t->nmarks == t->cap_marks) {
        /* A thread has a few marks (start, end, one per exec); a flood
         * means a broken writer: keep the first ones. */
        if (t->cap_marks >= 4096)
            return 0;
        size_t cap = t->cap_marks ? t->cap_marks * 2 : 4;
        cpu_mark *v = realloc(t->marks, cap * sizeof *v);
        if (!v)
            return REC_ENOMEM;
        t->marks = v;
        t->cap_marks = cap;
    }
    t->marks[t->nmarks++] = (cpu_mark){ ts, cpu, end, snapshot };
    if (cpu > t->max_cpu)
        t->max_cpu = cpu;
    return 0;
}

int cpu_model_thread_start(cpu_model *m, cpu_thread **tp, uint64_t ts,
                           uint64_t cpu)
{
    cpu_thread *t = *tp;
    /* A thread's CPU clock never goes back: a start below what we saw is
     * a new thread that reused the tid (an exec'd main thread keeps its
     * clock and stays one row). */
    if (t->nmarks && cpu < t->max_cpu) {
        cpu_thread *n = add_thread(m, t->pid, t->tid, t->seq + 1);
        if (!n)
            return REC_ENOMEM;
        *tp = t = n;
    }
    m->events++;
    if (cpu_model_in_range(m, ts)) {
        touch(t, ts);
        if (!t->has_start || ts < t->start_ns)
            t->start_ns = ts;
        t->has_start = true;
    }
    return add_mark(t, ts, cpu, false, false);
}

int cpu_model_thread_end(cpu_model *m, cpu_thread *t, uint64_t ts,
                         uint64_t cpu, bool snapshot)
{
    m->events++;
    if (cpu_model_in_range(m, ts)) {
        touch(t, ts);
        if (!t->has_end || ts >= t->end_ns) {
            t->end_ns = ts;
            t->snapshot = snapshot;
        }
        t->has_end = true;
    }
    return add_mark(t, ts, cpu, true, snapshot);
}

void cpu_model_usage(cpu_model *m, uint64_t pid, uint64_t ts,
                     uint64_t user, uint64_t sys, uint64_t sampler)
{
    cpu_process *p = cpu_model_process(m, pid);
    m->events++;
    if (!p)
        return;
    /* getrusage is cumulative: the latest reading is the total. */
    if (!p->has_usage || ts >= p->usage_time_ns) {
        p->has_usage = true;
        p->usage_time_ns = ts;
        p->user_ns = user;
        p->system_ns = sys;
        p->sampler_ns = sampler <= user + sys ? sampler : 0;
    }
}

/* ---- derived ---------------------------------------------------------- */

static int cmp_mark(const void *a, const void *b)
{
    const cpu_mark *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->cpu != y->cpu)
        return x->cpu < y->cpu ? -1 : 1;
    return (int)x->end - (int)y->end;
}

/* Replay the marks in time order. A ThreadEnd adds the clock's advance
 * since the segment began: the last ThreadStart's cpuTime, or 0 if the
 * thread was never seen starting (the kernel figure then covers its whole
 * life). A ThreadStart while a segment is open (an exec'd image starting
 * over) closes it at that clock. A segment that begins before --since,
 * runs past --until or never ends makes the figure unknown, not wrong. */
static void measure(cpu_model *m, cpu_thread *t)
{
    if (t->nmarks > 1)
        qsort(t->marks, t->nmarks, sizeof *t->marks, cmp_mark);
    uint64_t base = 0, sum = 0;
    /* open: a ThreadStart began the current segment; before: the segment
     * began before the window (a thread's birth is assumed to). */
    bool open = false, before = m->opt.have_since, ended = false, cut = false;
    for (size_t i = 0; i < t->nmarks; i++) {
        const cpu_mark *k = &t->marks[i];
        if (k->ts >= m->hi_ns) {
            cut = cut || open;
            open = false;
            break;
        }
        if (k->ts < m->lo_ns) {
            base = k->cpu;
            open = !k->end;
            before = true;
            continue;
        }
        if (k->end || open) {
            sum += k->cpu >= base ? k->cpu - base : 0;
            cut = cut || before;
        }
        ended = ended || k->end;
        base = k->cpu;
        open = !k->end;
        before = false;
    }
    if (open && ended)
        cut = true;
    t->measured_ns = sum;
    t->measured_known = ended && !cut;
}

int cpu_model_finish(cpu_model *m)
{
    for (size_t i = 0; i < m->nprocs; i++)
        m->procs[i].reconstructed_ns = 0;
    for (size_t i = 0; i < m->nthreads; i++) {
        cpu_thread *t = m->threads[i];
        measure(m, t);
        place_lost(m, t);
        cpu_process *p = t->in_range ? cpu_model_process(m, t->pid) : NULL;
        if (p)
            p->reconstructed_ns += t->sampled_ns + t->lost_ns;
    }
    return m->opt.hot ? cpu_hot_finish(m) : 0;
}

static int cmp_thread(const void *a, const void *b)
{
    const cpu_thread *x = *(cpu_thread *const *)a, *y = *(cpu_thread *const *)b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

cpu_thread **cpu_model_selected(const cpu_model *m, size_t *n)
{
    cpu_thread **v = malloc((m->nthreads + 1) * sizeof *v);
    *n = 0;
    if (!v)
        return NULL;
    for (size_t i = 0; i < m->nthreads; i++) {
        cpu_thread *t = m->threads[i];
        if (!t->in_range)
            continue;
        if (m->opt.filter
            && !cli_threads_match(m->opt.filter, t->tid, t->name,
                                  t->name ? strlen(t->name) : 0))
            continue;
        v[(*n)++] = t;
    }
    qsort(v, *n, sizeof *v, cmp_thread);
    return v;
}

/* The timeline outputs are dense grids (a row per interval from the first
 * used to the last, a column per thread): when the samples are far apart
 * (threads or recordings of different runs, a thread idle for hours, a
 * crafted file with two samples days apart) that grid is mostly empty and
 * may be huge. Allow a few empty intervals per non-empty one, and a grid no
 * bigger than the counters the model may hold, so that what is printed
 * stays in proportion to what the recordings hold. */
int cpu_model_timeline_check(const cpu_model *m)
{
    size_t n;
    cpu_thread **v = cpu_model_selected(m, &n);
    if (!v)
        return REC_ENOMEM;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    uint64_t used = 0;      /* non-empty cells: at least the non-empty rows */
    for (size_t i = 0; i < n; i++) {
        const cpu_thread *t = v[i];
        if (t->iv_min > t->iv_max)
            continue;
        if (t->iv_min < lo)
            lo = t->iv_min;
        if (t->iv_max > hi)
            hi = t->iv_max;
        for (size_t k = 0; k < t->iv_n; k++)
            used += t->iv[k] != 0 || (t->lv && t->lv[k] != 0);
    }
    free(v);
    if (lo > hi)
        return 0;
    uint64_t span = (uint64_t)(hi - lo) + 1;
    if (span > 4 * used + CPU_MAX_GAP || span > CPU_MAX_CELLS / n)
        return REC_ETOOBIG;
    return 0;
}

uint64_t cpu_model_process_sampled(const cpu_model *m, uint64_t pid)
{
    for (size_t i = 0; i < m->nprocs; i++)
        if (m->procs[i].pid == pid)
            return m->procs[i].reconstructed_ns;
    return 0;
}
