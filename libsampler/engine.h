/*
 * libsampler/engine.h - the sources of the sampling signal ("engines").
 *
 *   engine-timer.c  a POSIX CPU-time timer per thread (timer_create on the
 *                   thread's CPU clock, SIGEV_THREAD_ID). Expiries are only
 *                   noticed at a scheduler tick that finds the thread
 *                   running: at most HZ signals per CPU-second.
 *   engine-perf.c   a perf_event per thread (PERF_COUNT_SW_TASK_CLOCK,
 *                   sample period = our period), its overflow delivered as
 *                   our signal to that thread (F_SETOWN_EX F_OWNER_TID,
 *                   F_SETSIG, O_ASYNC). Driven by a high-resolution timer
 *                   on the thread's run time: no tick limit. No ring
 *                   buffer: the handler walks the stack itself.
 *
 * The engine is chosen once per session (recs__engine_resolve): "auto"
 * takes perf where the kernel lets this process open the event
 * (perf_event_paranoid, seccomp), else timers. A thread whose event cannot
 * be created gets a timer instead, for that thread alone.
 *
 * Accounting is the same for both: K counts the periods the handler
 * turned into a sample or a lost count, and the arming's end counts E - K
 * undelivered, E = floor(CPU used since the arming's origin / period). A
 * timer signal stands for 1 + si_overrun periods; a perf signal carries no
 * count, so the handler reads the thread's CPU clock and takes the periods
 * E - K elapsed since the last one (none: a signal of a period an earlier
 * signal already covered, dropped without a sample).
 */
#ifndef RECS_ENGINE_H
#define RECS_ENGINE_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

enum recs__engine {
    RECS_ENGINE_AUTO = 0,        /* configuration only */
    RECS_ENGINE_TIMER,
    RECS_ENGINE_PERF,
};

struct recs__thread;

/* Parse "auto", "perf", "timer"; 0 or REC_EINVAL (-3). */
int recs__engine_parse(const char *s, int *engine);
/* "perf-task-clock" / "cpu-timer" (recordings, messages). */
const char *recs__engine_name(int engine);

/* The session's engine for the request (auto/perf/timer), probing
 * perf_event_open on the calling thread. Writes why perf is not used into
 * note (empty when it is). Returns the engine, or REC_EIO when perf was
 * required and is denied (note says why). */
int recs__engine_resolve(int requested, uint64_t period_ns, char *note,
                         size_t notelen);

/* One engine, as a table of operations (async-profiler's Engine classes).
 * create, settime, pause and destroy: per thread, reg_lock held (t may be
 * another thread); create sets t->engine and t->has_timer, settime arms
 * the first period after first_ns then every period_ns (perf: first_ns is
 * the first period's length when shorter), pause stops the signals and
 * keeps the source. periods and rearm: Signal-safe, called by the handler
 * on t's thread for one of t's signals: the periods it stands for (see
 * above), and what the source needs to signal again. */
typedef struct recs__engine_ops {
    int engine;                    /* RECS_ENGINE_TIMER or _PERF */
    const char *name;              /* in recordings and messages */
    int  (*create)(struct recs__thread *t, uint64_t period_ns);
    int  (*settime)(struct recs__thread *t, uint64_t period_ns,
                    uint64_t first_ns);
    int  (*pause)(struct recs__thread *t);
    void (*destroy)(struct recs__thread *t);
    uint64_t (*periods)(struct recs__thread *t, const siginfo_t *si);
    void (*rearm)(struct recs__thread *t, const siginfo_t *si);
} recs__engine_ops;

__attribute__((visibility("hidden"))) extern const recs__engine_ops recs__timer_ops;
__attribute__((visibility("hidden"))) extern const recs__engine_ops recs__perf_ops;

/* The engine's operations (a timer's for anything but RECS_ENGINE_PERF). */
static inline const recs__engine_ops *recs__engine_ops_of(int engine)
{
    return engine == RECS_ENGINE_PERF ? &recs__perf_ops : &recs__timer_ops;
}

/* Per thread, through t's engine. create: the session's engine, else a
 * timer (*fallback set, warned once); 0 or a negative error with errno
 * set. */
int  recs__engine_create(struct recs__thread *t, uint64_t period_ns,
                         bool *fallback);
int  recs__engine_settime(struct recs__thread *t, uint64_t period_ns,
                          uint64_t first_ns);
int  recs__engine_pause(struct recs__thread *t);
void recs__engine_destroy(struct recs__thread *t);

/* Fork child: the parent's events are not ours; their fds are closed. */
void recs__perf_forget_all(void);

/* File descriptors the sampler owns (its perf events), to be left open by
 * closefrom/close_range emulations. A bitmap: async-signal-safe, no lock,
 * valid in a fork child. fds >= RECS_OWNED_FD_MAX are never created. */
#define RECS_OWNED_FD_MAX 65536
extern _Atomic unsigned long recs__owned_fds[RECS_OWNED_FD_MAX /
                                              (8 * sizeof(unsigned long))];
bool recs__owned_fd(int fd);

/* Every fd number a perf event of ours ever had (never cleared): a
 * signal of an event already closed, still pending, is still ours. */
extern _Atomic unsigned long recs__perf_fds_seen[RECS_OWNED_FD_MAX /
                                                 (8 * sizeof(unsigned long))];

/* Signal-safe. Inline: the handler must not call through the PLT. */
static inline bool recs__fd_in(_Atomic unsigned long *map, int fd)
{
    const unsigned bits = 8 * sizeof(unsigned long);

    if (fd < 0 || fd >= RECS_OWNED_FD_MAX)
        return false;
    return (atomic_load_explicit(&map[(unsigned)fd / bits],
                                 memory_order_relaxed) >>
            ((unsigned)fd % bits)) & 1;
}

#endif
