/*
 * libsampler/session-thread.c - per-thread state: registration, the arming of the
 * thread's signal source (engine.h: a CPU-time timer or a perf event),
 * teardown.
 *
 * A thread's state is created by the thread itself (our pthread_create
 * trampoline, the constructor for the main thread, recs_start for its
 * caller) and freed at its exit by a pthread key destructor, which runs on
 * every exit path (return, pthread_exit, cancellation). Before the state is
 * given up the thread blocks the sampling signal and deletes its timer, so
 * no handler can run on freed memory. Threads that exit during a recording
 * are moved to a dead list; the drain writes their last samples and their
 * ThreadEnd, then frees them.
 *
 * Expiry accounting. A CPU timer's expiry is only noticed at a scheduler
 * tick that finds the thread running, so expiries late in a thread's life,
 * of a thread that runs in short bursts, or on a loaded machine may never
 * be signalled before the thread exits or the timer stops. Each arming
 * therefore records the thread's CPU clock read just before timer_settime
 * (arm_cpu), the period (arm_period) and how much sooner than a period the
 * first expiry was set (arm_phase: random for a new thread, see
 * first_phase(); the partial period carried over at a re-arm); the
 * handler adds overrun + 1 to the thread's expiry count K for every signal
 * it turns into a sample or a lost count (whatever the reason), and a
 * signal collected as pending at exit is added the same way. When the
 * arming ends (exit, stop, re-arm) with the CPU clock at cpu, the timer has
 * expired E = floor((cpu - arm_cpu + arm_phase) / arm_period) times;
 * E - K > 0 expiries were never signalled and are counted lost with reason
 * "undelivered". E * period differs from the CPU time used by less than a
 * period (the first expiry may stand for less than a period, the partial
 * one at the end never expired): the one inherent error of the method,
 * unbiased with a random phase.
 *
 * Memory ordering of K: only the handler running on the thread itself and
 * that thread's exit path (signal blocked) write it, with relaxed atomic
 * adds. It is read by the thread itself at exit (program order), at stop
 * after every handler has left (the handler's seq_cst decrement of
 * recs__g.inflight after its add, and the stopper's seq_cst load of 0,
 * order it), and at a re-arm with an atomic exchange (see rearm()).
 */
#include <config.h>
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

__thread recs__thread *recs__self __attribute__((tls_model("initial-exec")));

/* The cookie our timers carry in si_value, to tell their signals from the
 * program's own (setitimer, kill, sigqueue). */
char recs__timer_cookie;

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

const char *const recs__lost_names[RECS_LOST_NREASONS] = {
    "queue-full", "queue-busy", "unsafe", "timer-failed", "undelivered",
    "blocked",
};

pid_t recs__gettid(void)
{
    return gettid();
}

int recs__block_signal(sigset_t *old)
{
    sigset_t set;

    sigemptyset(&set);
    if (recs__g.signo > 0)
        sigaddset(&set, recs__g.signo);
    return pthread_sigmask(SIG_BLOCK, &set, old);
}

/* Around the sections program threads run under our locks: a program
 * handler that calls exit() (common, if not async-signal-safe) would
 * otherwise find the lock held by the thread it interrupted. Synchronous
 * faults stay open (blocking them does not stop them). */
void recs__block_async(sigset_t *old)
{
    sigset_t set;

    sigfillset(&set);
    sigdelset(&set, SIGSEGV);
    sigdelset(&set, SIGBUS);
    sigdelset(&set, SIGFPE);
    sigdelset(&set, SIGILL);
    sigdelset(&set, SIGTRAP);
    sigdelset(&set, SIGSYS);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

void recs__restore_mask(const sigset_t *old)
{
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

static void exit_destructor(void *arg)
{
    (void)arg;
    recs__thread_exit();
}

static void make_key(void)
{
    pthread_key_create(&exit_key, exit_destructor);
}

void recs__thread_key_init(void)
{
    pthread_once(&exit_key_once, make_key);
}

uint32_t recs__queue_capacity(uint64_t period_ns, unsigned depth)
{
    size_t slot = recs__request_size(depth, recs__g.cfg.fp_walker ? RECS_WINDOW_WORDS : 0);
    size_t budget = (RECS_THREAD_BYTES - sizeof(recs__thread)) / slot;
    /* A timer signals at most once per tick (1 ms at HZ=1000, overruns
     * folded in); a perf event once per period. */
    uint64_t floor = recs__g.engine == RECS_ENGINE_PERF ? 0 : 1000000;
    uint64_t per = period_ns > floor ? period_ns : floor;
    /* The signals of the longest busy nap, twice over: the handler wakes
     * the sampler thread at half full, which may run late on a busy
     * machine. Counted at the full depth: shorter stacks fit more. */
    uint64_t cap = 2 * (RECS_BUSY_MAX_NS + per - 1) / per;

    if (recs__g.cfg.queue_capacity)
        return recs__g.cfg.queue_capacity;
    if (cap < 32)
        cap = 32;
    if (cap > budget)
        cap = budget;
    if (cap < 4)
        cap = 4;
    return (uint32_t)cap;
}

static void stack_bounds(recs__thread *t)
{
    pthread_attr_t attr;
    void *addr = NULL;
    size_t size = 0;

    t->stack_lo = t->stack_hi = 0;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
        t->stack_lo = (uintptr_t)addr;
        t->stack_hi = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&attr);
}

uint64_t recs__thread_cpu_ns(const recs__thread *t)
{
    struct timespec ts;

    if (clock_gettime(t->cpuclock, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

recs__thread *recs__thread_new(pid_t parent_tid)
{
    recs__thread *t = calloc(1, sizeof *t);

    if (!t)
        return NULL;
    t->tid = recs__gettid();
    t->parent_tid = parent_tid;
    t->self = pthread_self();
    if (pthread_getcpuclockid(t->self, &t->cpuclock) != 0)
        t->cpuclock = CLOCK_THREAD_CPUTIME_ID;
    t->perf_fd = -1;
    atomic_store(&t->perf_sig_fd, -1);
    stack_bounds(t);
    return t;
}

/* A thread of a process the sampler was attached to (session-attach.c), made by
 * another thread: no pthread_t, and its stack bounds are found later from
 * a stack pointer its handler saw (until then its walks read through the
 * kernel, as on a stack not the thread's). */
recs__thread *recs__thread_adopt(pid_t tid, uint64_t start)
{
    recs__thread *t = calloc(1, sizeof *t);

    if (!t)
        return NULL;
    t->tid = tid;
    t->adopted = true;
    t->adopt_start = start;
    /* The kernel's per-thread CPU clock, encoded as glibc's
     * pthread_getcpuclockid() does: ~tid << 3 | CPUCLOCK_PERTHREAD_MASK
     * | CPUCLOCK_SCHED. */
    t->cpuclock = (clockid_t)((~(unsigned)tid << 3) | 6u);
    t->perf_fd = -1;
    atomic_store(&t->perf_sig_fd, -1);
    t->last_cpu = recs__thread_cpu_ns(t);
    return t;
}

void recs__thread_free(recs__thread *t)
{
    if (!t)
        return;
    free(t->q.slots);
    free(t);
}

/* (Re)size the queue for the session's depth; only while the handler cannot
 * touch it (safe == 0). */
static int queue_prepare(recs__thread *t)
{
    unsigned depth = recs__g.cfg.depth;
    unsigned window = recs__g.cfg.fp_walker ? RECS_WINDOW_WORDS : 0;
    size_t size = (size_t)recs__g.capacity * recs__request_size(depth, window);

    /* A handler can no longer be abandoned mid-enqueue (it runs with
     * every signal blocked), but a lock left by one before a fork or by
     * any other accident must not cost this thread every later sample. */
    atomic_store(&t->q.lock, RECS_UNLOCKED);
    if (t->q.slots && t->q.depth == depth && t->q.window == window &&
        t->q.size == size) {
        t->q.count = 0;
        t->q.used = 0;
        return 0;
    }
    free(t->q.slots);
    t->q.slots = malloc(size);
    if (!t->q.slots) {
        t->q.size = 0;
        return REC_ENOMEM;
    }
    t->q.size = size;
    t->q.depth = depth;
    t->q.window = window;
    t->q.count = 0;
    t->q.used = 0;
    atomic_store(&t->q.lock, RECS_UNLOCKED);
    return 0;
}

/* Arm t's source: every period_ns, the first expiry after first_ns. */
static int settime(recs__thread *t, uint64_t period_ns, uint64_t first_ns)
{
    atomic_store(&t->period_ns, period_ns);
    return recs__engine_settime(t, period_ns, first_ns);
}

/* End t's current arming at CPU clock cpu_ns: the expiries the kernel
 * never signalled are counted lost (undelivered). reg_lock held; K must
 * already hold every signal of this arming that will ever be recorded.
 * Returns the partial period that had not expired. */
static uint64_t close_arming(recs__thread *t, uint64_t cpu_ns)
{
    uint64_t k = atomic_exchange(&t->expiries, 0);
    uint64_t e, used;

    if (!t->armed)
        return 0;
    t->armed = false;
    if (!t->arm_period || cpu_ns + t->arm_phase <= t->arm_cpu)
        return 0;
    used = cpu_ns + t->arm_phase - t->arm_cpu;
    e = used / t->arm_period;
    if (e > k)
        recs__thread_add_lost(t, t->sig_blocked ? RECS_LOST_BLOCKED
                                                : RECS_LOST_UNDELIVERED,
                              e - k, (e - k) * t->arm_period);
    return used - e * t->arm_period;
}

void recs__thread_close_arming(recs__thread *t, uint64_t cpu_ns)
{
    close_arming(t, cpu_ns);
}

/* A new period for a thread being sampled (another thread may call this).
 * The old arming is closed at the clock read just before timer_settime,
 * and its partial period carried into the new one: the new arming's origin
 * is set back by it and its first expiry comes that much sooner, so a
 * re-arm adds no error of its own (whole new periods the partial already
 * covers never expire and are counted undelivered when the arming ends);
 * on Linux >= 6.13 a signal of the old arming still pending is dropped by
 * the re-arm, and is then counted undelivered. Not exact: a signal the
 * thread dequeued before the re-arm but whose handler runs after the
 * exchange below is counted in the new arming (and its expiry as
 * undelivered in the old one), and one of the new arming handled before
 * the exchange in the old one; either way at most one period per re-arm
 * is misplaced, never lost. */
static int rearm(recs__thread *t, uint64_t period_ns)
{
    uint64_t c = recs__thread_cpu_ns(t);
    uint64_t partial = 0;

    if (t->armed && t->arm_period && c + t->arm_phase > t->arm_cpu)
        partial = (c + t->arm_phase - t->arm_cpu) % t->arm_period;
    if (settime(t, period_ns, period_ns - partial % period_ns) != 0)
        return REC_EIO;
    close_arming(t, c);
    t->arm_cpu = c;
    t->arm_phase = partial;
    atomic_store(&t->origin_cpu, c - partial);
    t->arm_period = period_ns;
    t->armed = true;
    return 0;
}

/* The first expiry of a thread comes after a random part of a period,
 * uniform in (0, period]: how much sooner than a whole period. With a
 * fixed phase, a thread whose CPU time is a multiple of the period (a
 * fixed budget, a short worker) has its last expiry at its very end,
 * where no scheduler tick signals it: lost every time. With a random one
 * the expiries stand for the thread's CPU time without bias, and each
 * thread loses its last expiry only when it falls in its final tick. */
static uint64_t first_phase(const recs__thread *t, uint64_t period_ns)
{
    uint64_t x = recs__now_ns() ^ ((uint64_t)t->tid * 0x9e3779b97f4a7c15ull);

    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return period_ns ? x % period_ns : 0;
}

/* Start sampling t in the running session: ThreadStart due, queue ready,
 * timer armed. With reg_lock held; t may be another thread (a timer can
 * target any thread of the process). A thread already in the session only
 * gets its period changed. */
int recs__thread_arm(recs__thread *t, uint64_t period_ns)
{
    bool fallback;
    uint64_t phase;

    if (t->in_session)
        return t->has_timer && !recs__g.hijacked ? rearm(t, period_ns) : 0;
    atomic_store(&t->safe, 0);
    t->in_session = true;
    t->start_pending = true;
    t->start_ns = recs__now_ns();
    t->start_cpu = recs__thread_cpu_ns(t);
    t->timer_failed = false;
    t->armed = t->stopped = false;
    atomic_store(&t->expiries, 0);
    t->ref = 0;              /* pool ids belong to the previous writer */
    for (int i = 0; i < RECS_LOST_NREASONS; i++) {
        atomic_store(&t->lost[i].count, 0);
        atomic_store(&t->lost[i].ns, 0);
    }
    atomic_fetch_add(&recs__g.threads_seen, 1);
    if (queue_prepare(t) < 0)
        goto failed;
    if (recs__g.hijacked) {
        /* Our handler is gone (warned): no timer, its CPU time is lost. */
        t->timer_failed = true;
        return REC_EIO;
    }

    if (recs__engine_create(t, period_ns, &fallback) != 0)
        goto failed;
    t->fell_back = fallback;
    atomic_store(&t->period_ns, period_ns);
    atomic_store(&t->safe, 1);
    /* ThreadStart's CPU time is the arming's origin: the same reading. */
    t->start_cpu = recs__thread_cpu_ns(t);
    /* A random first phase for both engines: the perf event's first
     * overflow too would otherwise fall at the end of a thread whose CPU
     * time is a multiple of the period. */
    phase = first_phase(t, period_ns);
    atomic_store(&t->origin_cpu, t->start_cpu - phase);
    if (settime(t, period_ns, period_ns - phase) != 0) {
        atomic_store(&t->safe, 0);
        recs__engine_destroy(t);
        t->has_timer = false;
        goto failed;
    }
    t->arm_cpu = t->start_cpu;
    t->arm_phase = phase;
    t->arm_period = period_ns;
    t->armed = true;
    return 0;

failed:
    /* Not fatal: the thread runs unsampled and its whole CPU time is
     * reported lost (reason timer-failed) when it ends. */
    {
        int err = errno;
        t->timer_failed = true;
        if (atomic_fetch_add(&recs__g.timer_failures, 1) == 0)
            recs__warn("cannot create a CPU-time timer for thread %d (%s); "
                       "its CPU time is reported as lost",
                       (int)t->tid, strerror(err));
    }
    return REC_EIO;
}

/* Stop t's timer at recs_stop, noting the CPU clock just after: the
 * arming ends there, and so does the thread's figure in the recording
 * (its snapshot ThreadEnd). After, not before: t may be running on another
 * CPU, and an expiry between a reading taken first and the pause (the
 * stopping thread preempted in between, on a busy machine) would be a
 * sample beyond the thread's figure; every expiry signalled happened
 * before the pause, so a later reading covers them all, and the CPU time
 * between the pause and the reading is counted undelivered. */
void recs__thread_pause_timer(recs__thread *t)
{
    if (recs__engine_pause(t) == 0) {
        t->stop_cpu = recs__thread_cpu_ns(t);
        /* An adopted thread gone since the last look (its process ends
         * with the session): its last signal's reading. */
        if (t->adopted && !t->stop_cpu)
            t->stop_cpu = atomic_load(&t->seen_cpu) > t->last_cpu
                          ? atomic_load(&t->seen_cpu) : t->last_cpu;
        t->end_ns = recs__now_ns();
        t->stopped = true;
    }
}

void recs__thread_disarm(recs__thread *t)
{
    atomic_store(&t->safe, 0);
    if (t->has_timer) {
        recs__engine_destroy(t);
        t->has_timer = false;
    }
}

static void link_thread(recs__thread *t)
{
    t->prev = NULL;
    t->next = recs__g.threads;
    if (recs__g.threads)
        recs__g.threads->prev = t;
    recs__g.threads = t;
}

static void unlink_thread(recs__thread *t)
{
    if (t->prev)
        t->prev->next = t->next;
    else if (recs__g.threads == t)
        recs__g.threads = t->next;
    if (t->next)
        t->next->prev = t->prev;
    t->prev = t->next = NULL;
}

/* Called by t's own thread. */
void recs__thread_register(recs__thread *t)
{
    sigset_t old;

    recs__thread_key_init();
    recs__block_async(&old);
    recs__self = t;
    pthread_setspecific(exit_key, t);
    pthread_mutex_lock(&recs__g.reg_lock);
    link_thread(t);
    if (atomic_load(&recs__g.running))
        recs__thread_arm(t, recs__g.period_ns);
    pthread_mutex_unlock(&recs__g.reg_lock);
    recs__restore_mask(&old);
}

/* reg_lock held: an adopted thread joins the registry, armed if a session
 * runs. */
void recs__thread_link_adopted(recs__thread *t)
{
    link_thread(t);
    if (atomic_load(&recs__g.running))
        recs__thread_arm(t, recs__g.period_ns);
}

/* reg_lock held: an adopted thread that /proc no longer lists. The clock
 * of a thread that is gone cannot be read: its end is its CPU clock at
 * the last look or at its last signal, whichever is later. */
void recs__thread_reap(recs__thread *t)
{
    atomic_store(&t->safe, 0);
    recs__thread_disarm(t);
    unlink_thread(t);
    if (!t->in_session) {
        recs__thread_free(t);
        return;
    }
    t->ended = true;
    t->end_ns = recs__now_ns();
    /* The later of the last look and its last signal: what it ran after
     * both is less than a period (else another signal had come). */
    if (atomic_load(&t->seen_cpu) > t->last_cpu)
        t->last_cpu = atomic_load(&t->seen_cpu);
    t->end_cpu = t->stopped ? t->stop_cpu : t->last_cpu;
    recs__thread_close_arming(t, t->end_cpu);
    memcpy(t->name, t->ref_name, sizeof t->name);
    t->next = recs__g.dead;
    recs__g.dead = t;
    recs__g.ndead++;
}

/* reg_lock held, no session: an adopted thread leaves the registry for
 * good (the sampler detaches). */
void recs__thread_forget(recs__thread *t)
{
    recs__thread_disarm(t);
    unlink_thread(t);
    recs__thread_free(t);
}

/* On the exiting thread, signal blocked: a timer signal already pending
 * would be discarded with the thread, so its expiries are counted lost
 * (unsafe) and in K. */
static void collect_pending(recs__thread *t)
{
    sigset_t set;
    siginfo_t si;
    struct timespec zero = { 0, 0 };
    uint64_t period = atomic_load(&t->period_ns);

    if (recs__g.signo <= 0 || !t->in_session)
        return;
    sigemptyset(&set);
    sigaddset(&set, recs__g.signo);
    while (recs__real_sigtimedwait(&set, &si, &zero) == recs__g.signo) {
        uint64_t n;
        if (!recs__signal_ours(&si) || !(n = recs__signal_periods(t, &si)))
            continue;
        atomic_fetch_add_explicit(&t->expiries, n, memory_order_relaxed);
        /* One lost sample per signal, as the handler counts them; its
         * periods are in the time. */
        recs__thread_add_lost(t, t->sig_blocked ? RECS_LOST_BLOCKED
                                                : RECS_LOST_UNSAFE,
                              1, n * period);
    }
}

/* Called by the exiting thread (key destructor) or at recs_stop for a
 * thread that will not be sampled again. */
void recs__thread_exit(void)
{
    recs__thread *t = recs__self;
    bool was_in = false, blocked;
    sigset_t old;

    if (!t)
        return;
    /* The signal stays blocked: the thread is going away, and a timer
     * signal already pending must not reach a handler after the free. */
    recs__block_signal(&old);
    /* Blocked before we blocked it: a raw rt_sigprocmask (hook-sigmask.c keeps
     * it open otherwise); what is pending or never signalled is that. */
    blocked = recs__g.signo > 0 && sigismember(&old, recs__g.signo) == 1;
    recs__block_async(&old);
    atomic_store(&t->safe, 0);
    pthread_mutex_lock(&recs__g.reg_lock);
    t->sig_blocked = blocked;
    /* A timer signal that was already pending would be discarded with the
     * thread: its CPU time is accounted as lost (teardown is unsafe).
     * Taken before the timer is stopped: re-arming or disarming a timer
     * invalidates its pending signal (Linux >= 6.13 drops it). This is
     * also where the CPU time of a thread that kept the signal blocked is
     * accounted for: one signal, with every expiry in its overrun count. */
    collect_pending(t);
    recs__thread_disarm(t);
    unlink_thread(t);
    recs__self = NULL;
    if (t->in_session) {
        was_in = true;
        t->ended = true;
        t->end_ns = recs__now_ns();
        /* Read after the timer is gone: no expiry can follow it. After a
         * stop the recording's figure is the one read at the pause. */
        t->end_cpu = t->stopped ? t->stop_cpu : recs__thread_cpu_ns(t);
        /* Kernels before 6.13 keep a deleted timer's pending signal. */
        collect_pending(t);
        recs__thread_close_arming(t, t->end_cpu);
        if (prctl(PR_GET_NAME, t->name, 0, 0, 0) != 0)
            t->name[0] = '\0';
        t->next = recs__g.dead;
        recs__g.dead = t;
        /* Exited threads keep their queues until the drain frees them;
         * an idle sampler thread learns of the first at once. */
        if (++recs__g.ndead == RECS_DEAD_WAKE ||
            (atomic_load(&recs__g.idle_nap) && atomic_exchange(&recs__g.idle_nap, 0)))
            sem_post(&recs__g.wake);
    }
    pthread_mutex_unlock(&recs__g.reg_lock);
    recs__restore_mask(&old);
    if (!was_in)
        recs__thread_free(t);
}
