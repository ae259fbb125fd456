/*
 * libsampler/drain.c - the drain: take every thread's queue, lost counters
 * and lifecycle news under reg_lock (copies only), then, outside it, turn
 * them into events: ThreadStart, CPUTimeSample (stacks resolved through
 * drain-stacks.c), CPUTimeSampleLost per reason, ThreadEnd. Runs with drain_lock
 * held, in the sampler thread, in recs_drain() or at the end of a session.
 */
#include <config.h>
#include "internal.h"
#include "unwind-fp.h"
#include "sym.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* What the drain took from one thread under reg_lock. The thread's pool
 * entry is resolved after the lock is released (reading its name from
 * /proc and interning are too slow for a lock that pthread_create and
 * thread exit wait on): the drain owns the recs__thread until it frees it,
 * so t and parent stay valid; what exit changes is copied. */
typedef struct titem {
    rec_id ref, parent_ref;
    recs__thread *t, *parent;
    pid_t parent_tid;
    bool ended, refresh, parent_ended;
    char name[16], parent_name[16];
    uint32_t nreq;
    size_t off;                /* into the batch buffer */
    size_t bytes;
    uint64_t lost_n[RECS_LOST_NREASONS], lost_ns[RECS_LOST_NREASONS];
    bool start, end, snapshot;
    int engine;                /* 0: no source */
    uint64_t start_ns, start_cpu, end_ns, end_cpu;
} titem;

static titem *items;
static size_t nitems, citems;

static int batch_reserve(size_t more)
{
    size_t need = recs__g.batch_size + more;
    static size_t cap;

    if (need > cap) {
        size_t nc = cap ? cap * 2 : 65536;
        while (nc < need)
            nc *= 2;
        unsigned char *nb = realloc(recs__g.batch, nc);
        if (!nb)
            return REC_ENOMEM;
        recs__g.batch = nb;
        cap = nc;
    }
    return 0;
}

static titem *item_new(void)
{
    if (nitems == citems) {
        size_t nc = citems ? citems * 2 : 64;
        titem *n = realloc(items, nc * sizeof *n);
        if (!n)
            return NULL;
        items = n;
        citems = nc;
    }
    memset(&items[nitems], 0, sizeof items[0]);
    return &items[nitems++];
}

static void pause_cpu(void)
{
    sched_yield();
}

/* reg_lock held: the parent, if it is a registered thread. */
static void find_parent(titem *it, pid_t tid)
{
    it->parent_tid = tid;
    for (recs__thread *p = recs__g.threads; p; p = p->next)
        if (p->tid == tid) {
            it->parent = p;
            it->parent_ended = p->ended;
            memcpy(it->parent_name, p->name, sizeof it->parent_name);
            return;
        }
}

/* reg_lock released: the pool entries of the item's threads. */
static void resolve_refs(titem *it)
{
    it->ref = recs__thread_ref(it->t, it->ended, it->name, it->refresh);
    if (it->start) {
        if (it->parent)
            it->parent_ref = recs__thread_ref(it->parent, it->parent_ended,
                                              it->parent_name, false);
        else if (it->parent_tid)
            it->parent_ref = recs__thread_ref_tid(it->parent_tid, NULL);
    }
}

/* Threads that block the sampling signal for real (a raw rt_sigprocmask
 * that hook-sigmask.c could not see): looked for at most once a second and at
 * the final drain. A thread whose signals arrived since the last look is
 * not blocking them, and one that has not run a period since cannot have
 * missed one: only the others cost a read of their /proc status (tens of
 * microseconds each, the largest part of a busy sampler's fixed cost).
 * Read outside reg_lock (a thread exiting meanwhile is simply not found). */
static pid_t *btids, *ctids;       /* blocking; looked at */
static size_t nbtids, nctids, cbtids;
static uint64_t last_bscan_ns;

/* Whether t's status must be read (reg_lock held). A thread believed
 * blocking is read again, so that a look that caught it inside a short
 * block does not stay. */
static bool scan_needed(recs__thread *t, bool final)
{
    uint64_t cpu = recs__thread_cpu_ns(t), period = atomic_load(&t->period_ns);
    bool ran = cpu - t->scan_cpu >= (period ? period : 1);
    bool took = t->scan_signals != 0;

    t->scan_signals = 0;
    t->scan_cpu = cpu;
    if (final)
        return true;
    if (took)
        t->sig_blocked = false;
    return !took && (ran || t->sig_blocked);
}

static void scan_blocked(bool final)
{
    uint64_t now = recs__now_ns();
    size_t n = 0, k = 0;
    pid_t self = recs__gettid();

    if (!final && now - last_bscan_ns < 1000000000ull)
        return;
    last_bscan_ns = now;
    pthread_mutex_lock(&recs__g.reg_lock);
    for (recs__thread *t = recs__g.threads; t; t = t->next)
        n += t->in_session;
    if (n > cbtids) {
        pid_t *nb = realloc(btids, n * sizeof *nb);
        if (nb)
            btids = nb;
        pid_t *nc = realloc(ctids, n * sizeof *nc);
        if (nc)
            ctids = nc;
        if (nb && nc)
            cbtids = n;
    }
    /* Not the caller: it blocks signals around this very drain. */
    for (recs__thread *t = recs__g.threads; t && k < cbtids; t = t->next) {
        if (!t->in_session)
            continue;
        if (t->tid == self)
            t->sig_blocked = false;
        else if (scan_needed(t, final))
            ctids[k++] = t->tid;
    }
    pthread_mutex_unlock(&recs__g.reg_lock);
    nctids = k;
    nbtids = 0;
    for (size_t i = 0; i < k; i++)
        if (recs__tid_blocks_signal(ctids[i]))
            btids[nbtids++] = ctids[i];
}

static bool tid_in(const pid_t *v, size_t n, pid_t tid)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == tid)
            return true;
    return false;
}

/* Take t's queue, lost counters and lifecycle news (reg_lock held). */
static void collect(recs__thread *t, bool dead, bool final, bool scanned)
{
    titem *it;
    bool locked;

    if (!t->in_session)
        return;
    if (!dead && scanned && tid_in(ctids, nctids, t->tid))
        t->sig_blocked = tid_in(btids, nbtids, t->tid);
    if (!(it = item_new()))
        return;
    it->off = recs__g.batch_size;
    /* A dead thread has no handler left. After a stop every handler has
     * normally finished, but the stop's wait for them is bounded: a queue
     * still held by one is skipped rather than read torn. */
    locked = dead || recs__queue_try_dequeue_lock(&t->q, 100, pause_cpu);
    if (locked && t->q.slots && t->q.count &&
        batch_reserve(t->q.used) == 0) {
        it->nreq = recs__queue_take(&t->q, recs__g.batch + recs__g.batch_size,
                                   &it->bytes);
        recs__g.batch_size += it->bytes;
    }
    if (locked && !dead)
        recs__queue_unlock(&t->q);
    if (!dead && final) {
        /* The timer stopped at the pause (recs_stop): the thread's figure
         * and its arming end there; every handler has finished. */
        if (!t->stopped)
            t->end_ns = recs__now_ns();
        it->end_cpu = t->stopped ? t->stop_cpu : recs__thread_cpu_ns(t);
        recs__thread_close_arming(t, it->end_cpu);
        t->stopped = false;
    }
    for (int i = 0; i < RECS_LOST_NREASONS; i++) {
        it->lost_n[i] = atomic_exchange(&t->lost[i].count, 0);
        it->lost_ns[i] = atomic_exchange(&t->lost[i].ns, 0);
    }
    /* Signals that reached the handler (scan_blocked). */
    t->scan_signals += it->nreq + it->lost_n[RECS_LOST_FULL] +
                       it->lost_n[RECS_LOST_BUSY] + it->lost_n[RECS_LOST_UNSAFE];
    if (t->start_pending) {
        it->start = true;
        it->start_ns = t->start_ns;
        it->start_cpu = t->start_cpu;
        find_parent(it, t->parent_tid);
        it->engine = t->timer_failed ? 0 : t->engine;
        t->start_pending = false;
    }
    if (dead || final) {
        it->end = true;
        it->snapshot = !dead && !recs__g.exiting;
        if (dead) {
            it->end_ns = t->end_ns;
            it->end_cpu = t->end_cpu;
        } else {
            it->end_ns = t->end_ns;   /* set with the figure above */
        }
        if (t->timer_failed) {
            /* Never sampled: its whole CPU time in the session is lost. */
            uint64_t ns = it->end_cpu > t->start_cpu ? it->end_cpu - t->start_cpu : 0;
            it->lost_ns[RECS_LOST_TIMER] += ns;
            it->lost_n[RECS_LOST_TIMER] += ns / (recs__g.period_ns ? recs__g.period_ns : 1);
        }
        t->in_session = false;
    }
    /* Dead threads keep their exit-time name; live ones are re-read at most
     * once a second, and only when they have something to report. */
    it->t = t;
    it->ended = t->ended;
    memcpy(it->name, t->name, sizeof it->name);
    if (dead || it->nreq || it->start || it->end)
        it->refresh = !dead;
    else {
        int any = 0;
        for (int i = 0; i < RECS_LOST_NREASONS; i++)
            any |= it->lost_n[i] != 0;
        if (!any)
            nitems--;    /* nothing to say */
    }
}

static void emit_item(const titem *it)
{
    rec_stream *st = recs__g.st;

    if (it->start) {
        struct rec_ThreadStart ev;
        memset(&ev, 0, sizeof ev);
        ev.eventThread = it->ref;
        ev.parentThread = it->parent_ref;
        ev.cpuTime = it->start_cpu;
        ev.startTime = it->start_ns;
        if (it->engine)
            rec_intern_cstr(recs__g.w, recs__engine_name(it->engine),
                            &ev.engine);
        rec_emit_ThreadStart(st, &ev);
    }
    const unsigned char *p = recs__g.batch + it->off;
    for (uint32_t i = 0; i < it->nreq; i++) {
        const recs__request *r = (const recs__request *)p;
        p += recs__request_bytes(r);
        struct rec_CPUTimeSample ev;
        bool biased = false;
        memset(&ev, 0, sizeof ev);
        ev.eventThread = it->ref;
        ev.samplingPeriod = r->period_ns;
        ev.stackTrace = recs__stack_for(r, &biased);
        ev.failed = ev.stackTrace == 0;
        ev.biased = biased;
        ev.startTime = r->time_ns;
        if (rec_emit_CPUTimeSample(st, &ev) == 0) {
            recs__g.stats.samples++;
            recs__g.early_stacks += recs__request_stop(r) == RECS_STOP_EARLY;
        }
    }
    for (int i = 0; i < RECS_LOST_NREASONS; i++) {
        struct rec_CPUTimeSampleLost ev;
        rec_id reason = 0;
        if (!it->lost_n[i] && !it->lost_ns[i])
            continue;
        rec_intern_cstr(recs__g.w, recs__lost_names[i], &reason);
        memset(&ev, 0, sizeof ev);
        ev.eventThread = it->ref;
        ev.lostSamples = it->lost_n[i];
        ev.lostTime = it->lost_ns[i];
        ev.reason = reason;
        ev.startTime = recs__now_ns();
        rec_emit_CPUTimeSampleLost(st, &ev);
        recs__g.stats.lost += it->lost_n[i];
        recs__g.stats.lost_ns += it->lost_ns[i];
    }
    if (it->end) {
        struct rec_ThreadEnd ev;
        memset(&ev, 0, sizeof ev);
        ev.eventThread = it->ref;
        ev.cpuTime = it->end_cpu;
        ev.snapshot = it->snapshot;
        ev.startTime = it->end_ns;
        rec_emit_ThreadEnd(st, &ev);
    }
}

/* Every chunk is self-contained, module mappings included: after a
 * rotation, all ModuleLoad events again. Events emitted once the writer's
 * chunk index has moved on land in the new chunk, and only this thread's
 * own writes (emit, flush) rotate, so checking before each flush and
 * before each drain's events covers every chunk. drain_lock held. */
void recs__chunk_modules(void)
{
    uint32_t idx;

    if (!recs__g.w || !recs__g.st || !recs__g.sym)
        return;
    idx = rec_writer_chunk_index(recs__g.w);
    if (idx == recs__g.modules_chunk)
        return;
    recs__g.modules_chunk = idx;
    /* A rotation by size: its age, and what it holds, start now. */
    recs__g.chunk_born_ns = recs__now_ns();
    recs__g.chunk_news = 0;
    recs__symbols_emit_modules(recs__g.sym, recs__g.st, true);
}

/* One pass over every thread; drain_lock held. final: the session ends
 * (no handler runs any more): snapshot the live threads. Returns how many
 * samples, lost counts and thread starts and ends it took: the sampler
 * thread's cadence follows it. */
uint64_t recs__drain_locked(bool final)
{
    recs__thread *dead;
    uint64_t scan_before = last_bscan_ns, news = 0;
    bool scanned;

    if (!recs__g.st)
        return 0;
    scan_blocked(final);
    scanned = last_bscan_ns != scan_before || final;
    recs__chunk_modules();
    nitems = 0;
    recs__g.batch_size = 0;
    pthread_mutex_lock(&recs__g.reg_lock);
    for (recs__thread *t = recs__g.threads; t; t = t->next)
        collect(t, false, final, scanned);
    dead = recs__g.dead;
    recs__g.dead = NULL;
    recs__g.ndead = 0;
    for (recs__thread *t = dead; t; t = t->next)
        collect(t, true, final, scanned);
    pthread_mutex_unlock(&recs__g.reg_lock);

    for (size_t i = 0; i < nitems; i++) {
        news += items[i].nreq + items[i].start + items[i].end;
        for (int r = 0; r < RECS_LOST_NREASONS; r++)
            news += items[i].lost_n[r];
        resolve_refs(&items[i]);
    }
    for (size_t i = 0; i < nitems; i++)
        emit_item(&items[i]);
    /* Modules the symbolizer found on its own rescans (dlopen). */
    if (nitems)
        recs__symbols_emit_modules(recs__g.sym, recs__g.st, false);
    /* Names of JIT code written unnamed, when its runtime wrote them. */
    recs__symbols_emit_jit_names(recs__g.sym, recs__g.st, final);
    /* A full stream buffer may have rotated the chunk meanwhile. */
    recs__chunk_modules();
    while (dead) {
        recs__thread *next = dead->next;
        recs__thread_free(dead);
        dead = next;
    }
    return news;
}

void recs__jit_warnings(void)
{
    static bool unnamed, untimed, dropped;

    if (recs__jit_still_unnamed() && !unnamed) {
        unnamed = true;
        recs__warn("JIT-compiled code was sampled (its frames are [jit]) and "
                   "no perf map or jitdump names it: node --perf-basic-prof "
                   "or --perf-prof, python3.12 -X perf, or java "
                   "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit "
                   "write one; java needs -XX:+PreserveFramePointer for "
                   "stacks through it");
    }
    if (recs__jit_untimed() && !untimed) {
        untimed = true;
        recs__warn("the jitdump file's code was named by address alone (%s): "
                   "a sample taken before its code moved or was replaced "
                   "may carry the later name", recs__jit_untimed());
    }
    if (recs__jit_dropped() && !dropped) {
        dropped = true;
        recs__warn("%zu names of JIT code were not kept (the runtime made "
                   "more code than the sampler keeps names for): that code "
                   "is [jit]", recs__jit_dropped());
    }
}
