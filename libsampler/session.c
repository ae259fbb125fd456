/*
 * libsampler/session.c - recording sessions: start, stop, and the sampler
 * thread that drains (drain.c) and flushes periodically. Their options:
 * config.c.
 *
 * Locks, outermost first: ctl_lock (start/stop/throttle), drain_lock (the
 * writer, the stream, the symbol tables: every event is written under it),
 * reg_lock (the thread lists; short sections only, never held while
 * symbolizing). The signal handler takes none of them.
 */
#include <config.h>
#include "internal.h"
#include "unwind-python.h"
#include "recenv.h"
#include "sized.h"
#include "sym.h"
#include "unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/stat.h>
#include <unistd.h>

recs__global recs__g = RECS_GLOBAL_INIT;

/* A thread about to end the process (an exit that skips exit(), a fatal
 * signal) asks the sampler thread to finish the recording, and waits for
 * finish_done (recs__finish_by_sampler). */
static _Atomic int finish_req;
static sem_t finish_done;

uint64_t recs__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* Period                                                              */
/* ------------------------------------------------------------------ */

static unsigned online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

/* Apply a new period to every thread (ctl_lock held, session running). */
static void set_period(uint64_t period)
{
    pthread_mutex_lock(&recs__g.reg_lock);
    recs__g.period_ns = period;
    recs__g.stats.period_ns = period;
    for (recs__thread *t = recs__g.threads; t; t = t->next)
        if (t->in_session)
            recs__thread_arm(t, period);
    pthread_mutex_unlock(&recs__g.reg_lock);
}

static void reevaluate(void)
{
    unsigned n;
    uint64_t p;

    if (!recs__g.cfg.throttle.is_rate)
        return;
    n = online_cpus();
    if (n == recs__g.ncpus)
        return;
    recs__g.ncpus = n;
    p = recs__throttle_period(&recs__g.cfg.throttle, n);
    if (p == recs__g.period_ns)
        return;
    set_period(p);
    recs__emit_settings();
}

/* ------------------------------------------------------------------ */
/* The sampler thread                                                  */
/* ------------------------------------------------------------------ */

/* Our handler was replaced: stop every source before one of its signals
 * reaches whatever is installed now. The armings stay open, so the CPU
 * time that follows is counted lost (undelivered) when they end; threads
 * that start later get no timer (timer-failed). */
static void stop_timers_hijacked(void)
{
    pthread_mutex_lock(&recs__g.reg_lock);
    recs__g.hijacked = true;
    for (recs__thread *t = recs__g.threads; t; t = t->next)
        if (t->in_session && t->has_timer)
            recs__engine_pause(t);
    pthread_mutex_unlock(&recs__g.reg_lock);
}

static uint64_t own_cpu_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The next busy nap: long enough that the drain should find about
 * RECS_BUSY_BATCH items at the rate just seen (ELAPSED ns for NEWS). A Go
 * program ends by a raw exit_group, never through an exit rec sees, and
 * loses the samples since the last flush of each of its threads: for it,
 * the nap is also at most 1/RECS_GO_AGE_PART of the session's AGE. A
 * Python program frees code objects (a script's own as soon as it ends):
 * its samples are named within RECS_PY_NAP_NS, or 1/RECS_PY_AGE_PART of
 * its age if longer, while most still live (a long run naps long: a code
 * object named once keeps its name). */
static uint64_t busy_cadence(uint64_t elapsed, uint64_t news, uint64_t age,
                             bool go)
{
    uint64_t nap = news ? elapsed / news * RECS_BUSY_BATCH : RECS_BUSY_MAX_NS;

    if (nap > RECS_BUSY_MAX_NS)
        nap = RECS_BUSY_MAX_NS;
    if (go && nap > age / RECS_GO_AGE_PART)
        nap = age / RECS_GO_AGE_PART;
    if (atomic_load(&recs__py.on)) {
        uint64_t cap = age / RECS_PY_AGE_PART > RECS_PY_NAP_NS
                       ? age / RECS_PY_AGE_PART : RECS_PY_NAP_NS;
        if (nap > cap)
            nap = cap;
    }
    return nap < RECS_BUSY_NS ? RECS_BUSY_NS : nap;
}

static void module_is_go(const struct recs__uw_modinfo *m, void *arg)
{
    if (m->main)
        *(bool *)arg = m->go;
}

/* Posted by the sampler thread once it runs (start_sampler_thread). */
static sem_t sampler_running;

/* Whether the program is Go's (from the module registry, by the thread
 * that starts the sampler thread). */
static bool program_is_go;

static void *sampler_main(void *arg)
{
    bool busy = recs__g.cfg.flush_auto;   /* the start is busy */
    unsigned idle = 0;                    /* wake-ups in a row with nothing */
    uint64_t busy_nap = RECS_BUSY_NS, born = recs__now_ns(), last_drain = born;
    bool go = program_is_go;

    (void)arg;
    atomic_store(&recs__g.sampler_tid, recs__gettid());
    sem_post(&sampler_running);
    while (!atomic_load(&recs__g.quit)) {
        struct timespec until;
        uint64_t now, news;

        /* A flush interval shorter than the nap is honoured. */
        uint64_t nap = recs__g.cfg.flush_ns && recs__g.cfg.flush_ns < RECS_DRAIN_MAX_NS ?
                       recs__g.cfg.flush_ns : RECS_DRAIN_MAX_NS;
        if (busy)
            nap = busy_nap;
        else if (recs__g.cfg.flush_auto && idle)
            nap = nap << idle < RECS_IDLE_MAX_NS ? nap << idle : RECS_IDLE_MAX_NS;
        /* Attached, new threads are found and rec-start's end of the
         * control FIFO seen (the detach) by looking: no long naps. */
        if (recs__g.attached && nap > RECS_DRAIN_MAX_NS)
            nap = RECS_DRAIN_MAX_NS;
        atomic_store(&recs__g.idle_nap, recs__g.cfg.flush_auto && !busy);

        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += (long)nap;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        while (sem_clockwait(&recs__g.wake, CLOCK_MONOTONIC, &until) != 0 &&
               errno == EINTR)
            ;
        /* Several handlers may have asked at once: one drain serves all.
         * (quit and the fatal signal are flags, read below.) */
        atomic_store(&recs__g.idle_nap, 0);
        while (sem_trywait(&recs__g.wake) == 0)
            ;
        if (atomic_load(&finish_req)) {
            recs__stop(true, true);
            sem_post(&finish_done);
            return NULL;
        }
        if (atomic_load(&recs__g.quit))
            break;
        if (recs__attach_poll()) {
            /* rec-start let go: stop, and leave the library dormant. */
            recs__stop(true, true);
            recs__attach_release();
            return NULL;
        }
        now = recs__now_ns();
        if (!recs__g.hijacked && recs__handler_replaced())
            stop_timers_hijacked();
        if (recs__g.cfg.throttle.is_rate &&
            now - recs__g.last_reeval_ns >= RECS_REEVAL_NS &&
            pthread_mutex_trylock(&recs__g.ctl_lock) == 0) {
            recs__g.last_reeval_ns = now;
            pthread_mutex_lock(&recs__g.drain_lock);
            if (atomic_load(&recs__g.running))
                reevaluate();
            pthread_mutex_unlock(&recs__g.drain_lock);
            pthread_mutex_unlock(&recs__g.ctl_lock);
        }
        /* Outside drain_lock: it takes the loader's lock, which a dlopen
         * constructor calling into the sampler would hold. Before the
         * drain: the samples that flagged new code get names from the new
         * tables. */
        recs__uw_reclaim();
        pthread_mutex_lock(&recs__g.drain_lock);
        news = recs__drain_locked(false);
        if (!recs__g.attached)
            recs__untracked_poll();
        busy = recs__g.cfg.flush_auto && news;
        idle = news ? 0 : idle < 4 ? idle + 1 : idle;
        if (busy)
            busy_nap = busy_cadence(now - last_drain, news, now - born, go);
        last_drain = now;
        recs__g.chunk_news += news;
        if (recs__g.w && (busy ||
                          now - recs__g.last_flush_ns >= recs__g.cfg.flush_ns)) {
            uint64_t age = recs__g.cfg.max_chunk_age_ns;
            recs__g.last_flush_ns = now;
            if (age && now - recs__g.chunk_born_ns >= age && recs__g.chunk_news) {
                recs__g.chunk_born_ns = now;
                recs__g.chunk_news = 0;
                if (rec_writer_rotate(recs__g.w) < 0)
                    recs__write_failed(errno);
            } else if (rec_writer_flush(recs__g.w) < 0) {
                recs__write_failed(errno);
            }
        }
        pthread_mutex_unlock(&recs__g.drain_lock);
        /* The drain's symbolizer met a module whose table is pending: build
         * it now, not a busy nap later (its samples are early until then). */
        if (recs__uw_stale())
            recs__uw_reclaim();
        if (atomic_load(&recs__write_errno)) {
            /* A full disk, a size limit: stop with what fit. */
            recs__stop(true, true);
            if (recs__g.attached)
                recs__attach_release();
            return NULL;
        }
        atomic_store(&recs__g.sampler_cpu_ns, own_cpu_ns());
    }
    /* A stop from another thread joins us next: our last reading. */
    atomic_store(&recs__g.sampler_cpu_ns, own_cpu_ns());
    return NULL;
}

static int start_sampler_thread(void)
{
    sigset_t all, old;
    int rc;

    program_is_go = false;
    recs__uw_modules(module_is_go, &program_is_go);
    /* The sampler thread takes no signal: process-directed ones go to the
     * program's threads as before. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    atomic_store(&recs__g.quit, 0);
    sem_init(&sampler_running, 0, 0);
    rc = recs__own_pthread_create(&recs__g.sampler, sampler_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0)
        return REC_EIO;
    /* Until the new thread runs: its start (the C library's, a
     * sanitizer's runtime's) allocates outside every lock of ours, and a
     * fork meanwhile (a program that forks first thing in main) would
     * leave a child whose allocator a thread that no longer exists holds.
     * Bounded: a start delayed that long is not worth a stall. */
    {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += 1;
        while (sem_clockwait(&sampler_running, CLOCK_MONOTONIC, &until) != 0 &&
               errno == EINTR)
            ;
    }
    pthread_setname_np(recs__g.sampler, "rec-sampler");
    recs__g.sampler_started = true;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Start and stop                                                      */
/* ------------------------------------------------------------------ */

/* What an ending stop left unfreed, for recs__session_reclaim. */
static rec_writer *retired_w;
static struct recs__symbols *retired_sym;
static bool retired_stacks;

/* ending: the process (or its image: an exec) ends with this stop, and
 * the thread that ends it may have been interrupted inside the allocator:
 * the file is finished first, and nothing is freed (a free() of memory
 * another thread allocated can wait for that thread's arena lock). */
static void session_close(bool ending)
{
    if (recs__g.st && !ending)
        rec_stream_close(recs__g.st);
    recs__g.st = NULL;
    if (recs__g.w) {
        int rc;
        recs__fd_disown(recs__g.out_fd);
        recs__g.out_fd = -1;
        rc = ending ? rec_writer_finish(recs__g.w)
                    : rec_writer_close(recs__g.w);
        if (rc < 0 && errno == EBADF)
            recs__warn("%s: the program closed or replaced the recording's "
                       "file descriptor; the recording ends at the last "
                       "write before that", recs__g.cfg.output);
        else if (rc < 0 && !atomic_load(&recs__write_errno))
            recs__write_failed(errno);
        if (ending)
            retired_w = recs__g.w;
        recs__g.w = NULL;
    }
    if (ending) {
        retired_sym = recs__g.sym;
        retired_stacks = true;
        recs__g.sym = NULL;
        return;
    }
    recs__stacks_free();
    if (recs__g.sym) {
        recs__symbols_destroy(recs__g.sym);
        recs__g.sym = NULL;
    }
}

/* The process goes on after an ending stop (its exec failed): free what
 * that stop left, before a new session starts (its stack cache must not
 * hold the old writer's ids). Only once the stop is over. */
void recs__session_reclaim(void)
{
    if (retired_w) {
        rec_writer_close(retired_w);      /* finished: frees only */
        retired_w = NULL;
    }
    if (retired_sym) {
        recs__symbols_destroy(retired_sym);
        retired_sym = NULL;
    }
    if (retired_stacks) {
        recs__stacks_free();
        retired_stacks = false;
    }
}

static int start_config(const recs__config *cfg);

/* SIGXFSZ blocked: a write beyond RLIMIT_FSIZE raises it in this thread,
 * the program's; taken back before the mask is restored. Only SIGXFSZ:
 * installing the handler reads this thread's mask as the program's
 * (hook-sigmask.c), so the sampling signal must not be blocked here. */
int recs__start_config(const recs__config *cfg)
{
    sigset_t old, xfsz;
    bool xf;
    int rc;

    uint64_t t0 = own_cpu_ns();

    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    recs__real_sigmask(SIG_BLOCK, &xfsz, &old);
    xf = recs__xfsz_pending();
    rc = start_config(cfg);
    recs__xfsz_take(xf);
    recs__restore_mask(&old);
    /* The start's own CPU time, on the calling thread before its timer:
     * the sampler's, counted with its thread's (ProcessUsage). */
    recs__g.start_cpu_ns = rc == 0 ? own_cpu_ns() - t0 : 0;
    return rc;
}

static int start_config(const recs__config *cfg)
{
    rec_writer_options wo;
    recs__config copy;
    int rc;

    if ((rc = recs__config_copy(&copy, cfg)) < 0)
        return rc;
    pthread_mutex_lock(&recs__g.ctl_lock);
    if (atomic_load(&recs__g.running)) {
        rc = REC_EINVAL;
        goto out_unlock;
    }
    if ((rc = recs__install_handler(copy.signo)) < 0)
        goto out_unlock;
    pthread_mutex_lock(&recs__g.drain_lock);
    recs__config_free(&recs__g.cfg);
    recs__g.cfg = copy;
    copy.output = copy.throttle_text = copy.cache_dir = NULL;
    recs__g.ncpus = online_cpus();
    recs__g.period_ns = recs__throttle_period(&recs__g.cfg.throttle, recs__g.ncpus);
    rc = recs__engine_resolve(recs__g.cfg.engine, recs__g.period_ns,
                              recs__g.engine_note, sizeof recs__g.engine_note);
    if (rc < 0) {
        recs__warn("the perf engine is not available to this process (%s); "
                   "not recording (rec-start --engine auto or timer)",
                   recs__g.engine_note);
        goto out_drain;
    }
    recs__g.engine = rc;
    recs__g.capacity = recs__queue_capacity(recs__g.period_ns, recs__g.cfg.depth);
    memset(&recs__g.stats, 0, sizeof recs__g.stats);
    recs__g.early_stacks = 0;
    atomic_store(&recs__write_errno, 0);
    recs__g.stats.period_ns = recs__g.period_ns;
    atomic_store(&recs__g.timer_failures, 0);
    atomic_store(&recs__g.threads_seen, 0);
    recs__g.pid = getpid();
    if (recs__g.attached)
        getrusage(RUSAGE_SELF, &recs__g.usage_base);

    rec_writer_options_init(&wo);
    wo.max_chunk_bytes = recs__g.cfg.max_chunk_bytes;
    /* Chunks rotate by age here (sampler_main), and only when they hold
     * something: an idle program's chunk is not repeated every age. */
    wo.max_chunk_age_ns = 0;
    wo.append = recs__g.cfg.append;
    {
        int fd;
        struct stat st;
        if ((rc = recs__output_open(&recs__g.cfg, &fd)) < 0) {
            recs__warn("cannot %s %s: %s; this process is not recorded",
                       recs__g.cfg.append ? "open" : "create",
                       recs__g.cfg.output, strerror(errno));
            recs__g.w = NULL;
            goto out_drain;
        }
        /* rec-start's descriptor is used once (a failed exec reopens). */
        recs__g.cfg.output_fd = -1;
        if (fstat(fd, &st) != 0) {
            rc = REC_EIO;
            close(fd);
            goto out_drain;
        }
        if ((rc = rec_writer_open_fd(&recs__g.w, fd, &wo)) < 0) {
            recs__write_failed(errno);
            recs__output_discard(&recs__g.cfg, st.st_dev, st.st_ino);
            recs__g.w = NULL;
            goto out_drain;
        }
        recs__g.out_dev = st.st_dev;
        recs__g.out_ino = st.st_ino;
        recs__g.out_fd = rec_writer_fd(recs__g.w);
        recs__fd_own(recs__g.out_fd);
    }
    if ((rc = rec_stream_open(recs__g.w, &recs__g.st)) < 0 ||
        (rc = recs__symbols_create(&recs__g.sym, recs__g.w)) < 0 ||
        (rc = recs__stacks_init()) < 0) {
        session_close(false);
        goto out_drain;
    }
    recs__symbols_scan(recs__g.sym);
    recs__py_detect();
    /* Tables are built on the sampler thread, when walks need them. */
    recs__uw_configure(recs__g.cfg.cache_dir);
    recs__uw_refresh();
    sem_destroy(&recs__g.wake);
    sem_init(&recs__g.wake, 0, 0);
    sem_init(&finish_done, 0, 0);
    atomic_store(&finish_req, 0);

    recs__emit_settings();
    recs__emit_process();
    recs__symbols_emit_modules(recs__g.sym, recs__g.st, true);
    recs__g.modules_chunk = rec_writer_chunk_index(recs__g.w);
    recs__g.chunk_born_ns = recs__now_ns();
    recs__g.chunk_news = 0;

    /* The calling thread is sampled too (the main thread under preload;
     * a program's thread that calls recs_start). */
    if (!recs__self && !recs__g.attached) {
        recs__thread *t = recs__thread_new(0);
        if (t)
            recs__thread_register(t);
    }
    pthread_mutex_lock(&recs__g.reg_lock);
    atomic_store(&recs__g.running, 1);
    for (recs__thread *t = recs__g.threads; t; t = t->next)
        recs__thread_arm(t, recs__g.period_ns);
    pthread_mutex_unlock(&recs__g.reg_lock);
    if (!recs__g.attached)
        recs__untracked_scan();
    recs__g.last_flush_ns = recs__g.last_reeval_ns = recs__now_ns();
    /* Said here, with this write's errno: a later failing flush on the
     * sampler thread only repeats the writer's error, and its errno is
     * that thread's. */
    if (rec_writer_flush(recs__g.w) < 0)
        recs__write_failed(errno);
    pthread_mutex_unlock(&recs__g.drain_lock);

    if ((rc = start_sampler_thread()) < 0) {
        pthread_mutex_unlock(&recs__g.ctl_lock);
        recs__stop(false, false);
        return rc;
    }
    pthread_mutex_unlock(&recs__g.ctl_lock);
    return 0;

out_drain:
    pthread_mutex_unlock(&recs__g.drain_lock);
out_unlock:
    pthread_mutex_unlock(&recs__g.ctl_lock);
    recs__config_free(&copy);
    return rc;
}

static void write_status(void)
{
    struct stat st;

    if (recs__g.status_fd < 0)
        return;
    if (fstat(recs__g.status_fd, &st) != 0 || st.st_dev != recs__g.status_dev ||
        st.st_ino != recs__g.status_ino) {
        recs__warn("REC_STATUS_FD %d no longer names rec-start's pipe (the "
                   "program closed it); no summary line", recs__g.status_fd);
        recs__g.status_fd = -1;
        return;
    }
    recs__status_send("samples=%llu lost=%llu",
                      (unsigned long long)recs__g.stats.samples,
                      (unsigned long long)recs__g.stats.lost);
}

static void emit_usage(void)
{
    struct rusage ru;
    struct rec_ProcessUsage ev;

    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return;
    if (recs__g.attached) {
        /* The window's: what the process used before us is not in the
         * recording. */
        const struct rusage *b = &recs__g.usage_base;
        timersub(&ru.ru_utime, &b->ru_utime, &ru.ru_utime);
        timersub(&ru.ru_stime, &b->ru_stime, &ru.ru_stime);
        ru.ru_nvcsw -= b->ru_nvcsw;
        ru.ru_nivcsw -= b->ru_nivcsw;
    }
    memset(&ev, 0, sizeof ev);
    ev.userTime = (uint64_t)ru.ru_utime.tv_sec * 1000000000u +
                  (uint64_t)ru.ru_utime.tv_usec * 1000u;
    ev.systemTime = (uint64_t)ru.ru_stime.tv_sec * 1000000000u +
                    (uint64_t)ru.ru_stime.tv_usec * 1000u;
    ev.maxRss = (uint64_t)ru.ru_maxrss * 1024u;
    ev.voluntarySwitches = (uint64_t)ru.ru_nvcsw;
    ev.involuntarySwitches = (uint64_t)ru.ru_nivcsw;
    ev.startTime = recs__now_ns();
    /* On the sampler thread (a fatal signal, a full disk) its clock now;
     * else its last reading, taken at each of its wake-ups. */
    ev.samplerCpuTime = (pthread_equal(pthread_self(), recs__g.sampler)
                         ? own_cpu_ns() : atomic_load(&recs__g.sampler_cpu_ns)) +
                        recs__g.start_cpu_ns;
    ev.earlyStacks = recs__g.early_stacks;
    rec_emit_ProcessUsage(recs__g.st, &ev);
}

/* True if the sampling signal is pending for thread tid. */
static bool signal_pending(pid_t tid)
{
    return recs__task_signal(tid, "SigPnd", recs__g.signo);
}

/* Stop the timers, giving a signal already pending in a thread a moment
 * to be delivered first (bounded: 50 ms in all): stopping a timer
 * invalidates its pending signal. reg_lock held. */
static void wait_pending(void)
{
    pid_t me = recs__gettid();
    uint64_t until = recs__now_ns() + 50000000ull;

    for (recs__thread *t = recs__g.threads; t; t = t->next) {
        if (!t->in_session || !t->has_timer)
            continue;
        while (t->tid != me && signal_pending(t->tid) && recs__now_ns() < until)
            sched_yield();
        recs__thread_pause_timer(t);
    }
}

/* Take m; when bounded, give up at the deadline (CLOCK_MONOTONIC ns). */
static bool lock_until(pthread_mutex_t *m, bool bounded, uint64_t deadline)
{
    struct timespec ts;

    if (!bounded)
        return pthread_mutex_lock(m) == 0;
    ts.tv_sec = (time_t)(deadline / 1000000000u);
    ts.tv_nsec = (long)(deadline % 1000000000u);
    return pthread_mutex_clocklock(m, CLOCK_MONOTONIC, &ts) == 0;
}

static void gave_up(const char *what)
{
    recs__warn("could not finish the recording (%s); it ends at its last "
               "flush", what);
}

/* Signal-safe. The end of the process (or of its image: an exec), from
 * any thread at any instruction (a handler that called _exit() may have
 * interrupted a thread inside malloc or holding one of our locks): the
 * sampler thread, which owns none of them, finishes the recording while
 * this thread waits, at most RECS_STOP_WAIT_NS; nothing here allocates or
 * locks. Returns 1 when the recording is finished, 0 when the wait gave
 * up, -1 if there is no sampler thread to ask (or a stop is under way):
 * the caller then stops on its own thread. */
int recs__finish_by_sampler(void)
{
    uint64_t deadline = recs__now_ns() + RECS_STOP_WAIT_NS;
    struct timespec until = {
        .tv_sec = (time_t)(deadline / 1000000000u),
        .tv_nsec = (long)(deadline % 1000000000u) };
    int err = errno, rc;

    if (recs__g.pid != getpid())
        return -1;
    /* Asked already, by another thread (a second fatal signal, sent to
     * the process, lands on another thread while the first one's finish
     * runs): that finish is waited for too, instead of ending the process
     * in the middle of it (running and quit change during it). */
    if (!atomic_load(&finish_req)) {
        if (!atomic_load(&recs__g.running) || !recs__g.sampler_started ||
            atomic_load(&recs__g.quit))
            return -1;
        atomic_store(&finish_req, 1);
        sem_post(&recs__g.wake);
    }
    while ((rc = sem_clockwait(&finish_done, CLOCK_MONOTONIC, &until)) != 0 &&
           errno == EINTR)
        ;
    if (rc == 0)
        sem_post(&finish_done);     /* for another thread ending it too */
    else
        recs__warn_safe("could not finish the recording (the sampler "
                        "thread is stuck); it ends at its last flush");
    errno = err;
    return rc == 0;
}

/* bounded: the exit, exec and fatal-signal paths. A lock held by a thread
 * that will never release it (interrupted by a handler that called exit(),
 * say) must not hang the process: after RECS_STOP_WAIT_NS in all, what
 * could not be done is left undone, as after a crash. */

int recs__stop(bool from_sampler, bool bounded)
{
    uint64_t deadline = recs__now_ns() + RECS_STOP_WAIT_NS;
    sigset_t old;
    bool xf;

    /* A vfork child shares our memory and locks: nothing here is its. */
    if (recs__g.pid != getpid())
        return 0;
    recs__block_async(&old);
    if (!lock_until(&recs__g.ctl_lock, bounded, deadline)) {
        gave_up("the control lock is held");
        recs__restore_mask(&old);
        return REC_EIO;
    }
    if (!atomic_load(&recs__g.running) || recs__g.pid != getpid()) {
        pthread_mutex_unlock(&recs__g.ctl_lock);
        recs__restore_mask(&old);
        return 0;
    }
    if (recs__g.sampler_started) {
        atomic_store(&recs__g.quit, 1);
        sem_post(&recs__g.wake);
        if (from_sampler) {
            pthread_detach(recs__g.sampler);
        } else if (bounded) {
            struct timespec ts = {
                .tv_sec = (time_t)(deadline / 1000000000u),
                .tv_nsec = (long)(deadline % 1000000000u) };
            if (pthread_clockjoin_np(recs__g.sampler, NULL, CLOCK_MONOTONIC,
                                     &ts) != 0) {
                gave_up("the sampler thread is stuck");
                pthread_mutex_unlock(&recs__g.ctl_lock);
                recs__restore_mask(&old);
                return REC_EIO;
            }
        } else {
            pthread_join(recs__g.sampler, NULL);
        }
        recs__g.sampler_started = false;
    }
    /* A handler replaced since the sampler thread last looked (a short
     * program, a long nap): said now. */
    if (!recs__g.hijacked && recs__handler_replaced())
        recs__g.hijacked = true;
    /* Stop the timers first, handlers still enqueueing, so that signals
     * already pending are recorded. */
    if (!lock_until(&recs__g.reg_lock, bounded, deadline)) {
        gave_up("the thread registry is locked");
        pthread_mutex_unlock(&recs__g.ctl_lock);
        recs__restore_mask(&old);
        return REC_EIO;
    }
    wait_pending();
    atomic_store(&recs__g.running, 0);
    /* Handlers that saw running == 1 are still copying, and may re-arm
     * their thread's perf event: let them finish before the events' fds
     * are closed (a closed number may be reused by the program at once)
     * and the queues are read for the last time. */
    for (int i = 0; atomic_load(&recs__g.inflight) && i < 100000; i++)
        sched_yield();
    for (recs__thread *t = recs__g.threads; t; t = t->next)
        recs__thread_disarm(t);
    pthread_mutex_unlock(&recs__g.reg_lock);

    if (!lock_until(&recs__g.drain_lock, bounded, deadline)) {
        gave_up("the writer is locked");
        pthread_mutex_unlock(&recs__g.ctl_lock);
        recs__restore_mask(&old);
        return REC_EIO;
    }
    xf = recs__xfsz_pending();
    recs__drain_locked(true);
    recs__untracked_emit();
    recs__jit_warnings();
    emit_usage();
    recs__g.stats.timer_failures = atomic_load(&recs__g.timer_failures);
    recs__g.stats.threads = atomic_load(&recs__g.threads_seen);
    /* exit() ends the process too: its memory and mappings go with it,
     * faster than freed here one by one. */
    session_close(atomic_load(&finish_req) != 0 || recs__g.exiting);
    write_status();
    recs__xfsz_take(xf);
    pthread_mutex_unlock(&recs__g.drain_lock);
    pthread_mutex_unlock(&recs__g.ctl_lock);
    recs__restore_mask(&old);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Public API                                                          */
/* ------------------------------------------------------------------ */

int recs_start(const recs_options *opt)
{
    recs__config cfg;
    int rc;

    if (!opt)
        return REC_EINVAL;
    if ((rc = recs__config_from_options(&cfg, opt)) < 0)
        return rc;
    recs__g.registry = true;
    recs__thread_key_init();
    recs__hooks_once();
    {
        sigset_t old;
        recs__block_async(&old);
        rc = recs__start_config(&cfg);
        recs__restore_mask(&old);
    }
    recs__config_free(&cfg);
    return rc;
}

int recs_stop(void)
{
    return recs__stop(false, false);
}

int recs_set_throttle(const char *throttle)
{
    recs__throttle t;
    sigset_t old;
    char *text;

    if (recs__parse_throttle(throttle, &t) < 0)
        return REC_EINVAL;
    if (!(text = strdup(throttle)))
        return REC_ENOMEM;
    recs__block_async(&old);
    pthread_mutex_lock(&recs__g.ctl_lock);
    if (!atomic_load(&recs__g.running)) {
        pthread_mutex_unlock(&recs__g.ctl_lock);
        recs__restore_mask(&old);
        free(text);
        return REC_EINVAL;
    }
    pthread_mutex_lock(&recs__g.drain_lock);
    free(recs__g.cfg.throttle_text);
    recs__g.cfg.throttle_text = text;
    recs__g.cfg.throttle = t;
    recs__g.ncpus = online_cpus();
    set_period(recs__throttle_period(&t, recs__g.ncpus));
    recs__emit_settings();
    pthread_mutex_unlock(&recs__g.drain_lock);
    pthread_mutex_unlock(&recs__g.ctl_lock);
    recs__restore_mask(&old);
    return 0;
}

int recs_drain(void)
{
    recs__thread *self = recs__self;
    int was_safe = 0, rc = 0;
    sigset_t old;

    if (!atomic_load(&recs__g.running))
        return 0;
    /* A program handler that calls exit() must not find drain_lock held
     * by the thread it interrupted. */
    recs__block_async(&old);
    /* Our own signals during the drain are counted lost (unsafe). */
    if (self)
        was_safe = atomic_exchange(&self->safe, 0);
    pthread_mutex_lock(&recs__g.drain_lock);
    if (recs__g.w) {
        bool xf = recs__xfsz_pending();
        recs__drain_locked(false);
        rc = rec_writer_flush(recs__g.w);
        if (rc < 0) {
            recs__write_failed(errno);
            sem_post(&recs__g.wake);     /* the sampler thread stops */
        }
        recs__xfsz_take(xf);
        recs__g.last_flush_ns = recs__now_ns();
    }
    pthread_mutex_unlock(&recs__g.drain_lock);
    if (self && was_safe)
        atomic_store(&self->safe, 1);
    recs__restore_mask(&old);
    return rc < 0 ? rc : 0;
}

/* The first version of recs_stats ended with period_ns. */
#define STATS_SIZE_V1 REC__SIZE_TO(recs_stats, period_ns)

int recs_get_stats_sized(recs_stats *st, size_t size)
{
    recs_stats s;
    long n;

    if (!st || size < STATS_SIZE_V1)
        return REC_EINVAL;
    pthread_mutex_lock(&recs__g.drain_lock);
    s = recs__g.stats;
    pthread_mutex_unlock(&recs__g.drain_lock);
    s.timer_failures = atomic_load(&recs__g.timer_failures);
    s.threads = atomic_load(&recs__g.threads_seen);
    n = rec__sized_out(st, size, &s, sizeof s, STATS_SIZE_V1);
    st->size = (size_t)n;
    return 0;
}
