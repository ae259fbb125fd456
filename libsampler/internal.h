/*
 * libsampler/internal.h - state shared by the sampler's files. Nothing here
 * is exported (libsampler.map); internal functions are recs__*.
 *
 * The files, by prefix. "S" marks the ones that run in signal context
 * (code a timer signal, or a program's handler calling an async-signal-
 * safe function, may run): their functions that do are tagged
 * "Signal-safe.".
 *
 * The handler (S):
 *   handler.c        the sampling handler, the forwarding of the program's
 *                    signals, the fatal-signal path
 *   queue.h          the per-thread request queue and its tri-state lock
 * hook-: the interposers, what the program calls and we see first
 * (reached only when the library is preloaded or linked, not attached):
 *   hook-preload.c   S: the constructor (REC_* from the environment),
 *                    pthread_create, fork, exec and spawn (the exec family
 *                    up to the exec is S: the next image's environment,
 *                    the stop handed over)
 *   hook-sigaction.c S: sigaction & co.: the dispositions the program sets
 *                    and sees for rec's signals; the wrapper of handlers
 *                    whose sa_mask holds the sampling signal, and of the
 *                    handlers of the signals rec-start forwards
 *   hook-sigmask.c   S: the sampling signal kept open, the program's view
 *                    of its mask kept per thread (waits with a mask, the
 *                    long jumps)
 *   hook-sigwait.c   S: our signals kept from the program's waits;
 *                    raise/pthread_kill of the sampling signal to oneself
 *                    delivered exactly once
 *   hook-exit.c      S: _exit, _Exit, exit_group: the sampler thread
 *                    finishes the recording while the exiting thread waits
 *                    (recs__finish_by_sampler in session.c)
 *   hook-fds.c       the descriptors rec owns; closefrom/close_range
 *   hook-names.c     thread renames, so that names are read again
 *   hook-env.c       the environment a process that is not recorded
 *                    passes on
 * engine-: the signal's source per thread, one table of operations each
 * (engine.h):
 *   engine.c         the dispatch to the session's engine
 *   engine-timer.c   S (periods, rearm): a CPU-time POSIX timer
 *   engine-perf.c    S (periods, rearm): a perf_event task clock
 * unwind-: the stack walk and the tables it reads (unwind.h):
 *   unwind-walk.c    S: the CFI walk over the current unwind set
 *   unwind-fp.c      S: the bounds-checked frame-pointer walk, and the walk
 *                    of a stack that is not the thread's (a goroutine's)
 *                    through process_vm_readv (recs__read_self)
 *   unwind-python.c  S: the walk of the thread's Python frames
 *                    (recs__py_walk); the interpreter found
 *                    (recs__py_detect) (unwind-python.h,
 *                    unwind-py-layouts.h)
 *   unwind-mods.c    the module registry: the one walk of the loader's
 *                    list (under uw_lock, which a fork waits for), the set
 *                    the handler's walk reads, JIT code's ranges included,
 *                    its tables built when a walk first needs one; the
 *                    symbolizer's modules come from it
 *   unwind-modinfo.c what a loaded module's program headers say (build-id)
 *   unwind-build.c   .eh_frame and .debug_frame -> a table
 *   unwind-cache.c, cache.c   tables shared across processes by build-id
 *                    (cache.h)
 * sym-: naming frames, on the sampler thread (sym.h, sym-internal.h):
 *   sym-map.c        the registry's modules named, the pc -> Frame cache
 *   sym-elf.c, sym-table.c, sym-dwarf.c, sym-cfi.c   a module's files and
 *                    debug files, ELF symbol tables, DWARF lines and
 *                    inlines, the CFI leaf rule
 *   sym-dwload.c     libdw, libelf, liblzma loaded on first use
 *   sym-jit.c        code of no module: perf maps and jitdump files, names
 *                    as they were at each sample's time (sym-jit.h)
 *   sym-python.c, sym-py-lines.c   a Python frame named from its code
 *                    object, its line from the line table
 * session: a recording, its threads and its settings:
 *   session.c        start/stop of a recording, the sampler thread
 *   session-thread.c per-thread state, registration, armings, teardown
 *   session-attach.c rec-start -p: the process entered late, its threads
 *                    adopted from /proc, the detach
 *   session-config.c a session's options: recs_options or REC_* lines
 *   session-throttle.c the period grammar ("10ms", "500/s") and the rate
 *                    rule (also rec-start's)
 *   session-output.c recording files: exclusive, 0600, relative to a dir
 *   session-status.c S (recs__write_quiet, recs__warn_safe,
 *                    recs__put_u64); one-line messages, rec-start's status
 *                    pipe, a failed write said at once
 *   recenv.h         the REC_* settings shared with rec-start
 * drain-: requests into events (sampler thread, drain_lock held):
 *   drain.c          queues and lost counters -> ThreadStart,
 *                    CPUTimeSample, CPUTimeSampleLost, ThreadEnd
 *   drain-stacks.c   request -> StackTrace (leaf correction, dedup cache)
 *   drain-emit.c     events that describe the recording (settings,
 *                    process, CPU)
 *   drain-untracked.c threads the library never knew, read from /proc
 */
#ifndef RECS_INTERNAL_H
#define RECS_INTERNAL_H

#include <linux/perf_event.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <rec/record.h>
#include "rec/sampler.h"
#include "queue.h"
#include "session-throttle.h"
#include "engine.h"

#define RECS_DEFAULT_DEPTH   64
#define RECS_MAX_DEPTH       1024
/* The sampler thread sleeps up to RECS_DRAIN_MAX_NS when nothing arrives,
 * and up to RECS_BUSY_MAX_NS while samples do (see RECS_BUSY_BATCH): each
 * wake-up costs it ~20 us of CPU (scheduler, futex, timer, IRQ time
 * charged to it) whatever it finds, and a flush ~35 us more, much more
 * than a sample. The queues hold the signals of RECS_BUSY_MAX_NS twice
 * over where RECS_THREAD_BYTES allows (at 10 ms, 114 requests of the full
 * 64 frames; of the 5 to 10 frames most stacks have, 400 to 650: the
 * whole 2 s). A handler that fills half of a queue,
 * and a thread exit that leaves RECS_DEAD_WAKE threads to free, wake it
 * sooner. */
#ifndef RECS_DRAIN_MAX_NS
#define RECS_DRAIN_MAX_NS    100000000ull
#endif
#define RECS_DEAD_WAKE       32
/* What a SIGKILL can cost: the samples since the last flush. With the
 * default (no flush interval asked for: flush_auto), a wake-up that found
 * samples is followed by another that flushes what it finds, timed so that
 * it should find about RECS_BUSY_BATCH items at the rate just seen, between
 * RECS_BUSY_NS and RECS_BUSY_MAX_NS later. A wake-up and its flush cost
 * about 100 us on a VM (the futex and timer, about 55; the writes' inode
 * updates, 40): spread over the 100 samples a thread sampled every 10 ms
 * takes in RECS_BUSY_MAX_NS, 1 us each (bench/sampler-selfcost.sh; at
 * 500 ms such a thread paid 2, at 250 ms 4). A SIGKILL then costs each
 * busy thread up to RECS_BUSY_MAX_NS of samples, which rec-start counts
 * lost when it seals the recording: the flush interval of JFR's own
 * streams, 1 s. A Go program, which always
 * ends that way (a raw exit_group), naps at most 1/RECS_GO_AGE_PART of
 * the session's age: a short run loses a small part of itself, a long
 * one still reaches the long naps. An idle process (nothing new) goes
 * back to the long nap, from which its next sample wakes the sampler
 * thread. */
#define RECS_FLUSH_DEFAULT_NS 100000000ull
#ifndef RECS_BUSY_NS
#define RECS_BUSY_NS         10000000ull
#endif
#define RECS_BUSY_MAX_NS     1000000000ull
#define RECS_BUSY_BATCH      128
#define RECS_GO_AGE_PART     32
/* With the default cadence, each wake-up in a row that finds nothing
 * doubles the nap, up to RECS_IDLE_MAX_NS: an idle process costs about one
 * wake-up a second. The first sample, or a thread's exit, wakes the
 * sampler thread at once (recs__g.idle_nap). */
#define RECS_IDLE_MAX_NS     1000000000ull
#define RECS_REEVAL_NS       100000000ull    /* rate re-evaluation */
#define RECS_THREAD_BYTES    (64u << 10)     /* per-thread memory budget */
#define RECS_STOP_WAIT_NS    2000000000ull   /* bounded stop: exit, exec */

enum recs__lost_reason {
    RECS_LOST_FULL,      /* queue-full */
    RECS_LOST_BUSY,      /* queue-busy */
    RECS_LOST_UNSAFE,    /* unsafe: registration, teardown, own drain, fork */
    RECS_LOST_TIMER,     /* timer-failed: the thread had no timer */
    RECS_LOST_UNDELIVERED, /* undelivered: expired, never signalled */
    RECS_LOST_BLOCKED,   /* blocked: the thread blocks the signal for real */
    RECS_LOST_NREASONS
};
extern const char *const recs__lost_names[RECS_LOST_NREASONS];

typedef struct recs__lost {
    _Atomic uint64_t count, ns;
} recs__lost;

typedef struct recs__thread {
    /* Used by the handler (on this thread only). */
    recs__queue q;
    _Atomic int safe;              /* sampling allowed */
    _Atomic uint64_t period_ns;    /* period of the armed timer */
    uint64_t stack_lo, stack_hi;
    recs__lost lost[RECS_LOST_NREASONS];
    /* K: expiries accounted since the timer was armed (sum of overrun + 1
     * over the signals that became a sample or a lost count). Written by
     * the handler on this thread and by this thread's exit path, read (and
     * reset) under reg_lock; see session-thread.c for the ordering relied on. */
    _Atomic uint64_t expiries;
    /* perf engine: the arming's origin (arm_cpu, for the handler) and the
     * fd its signals carry in si_fd (kept after the close, for a signal
     * still pending). */
    _Atomic uint64_t origin_cpu;
    _Atomic int perf_sig_fd;
    _Atomic int perf_first;        /* the event's period is the short
                                      first one until its first signal */
    uint64_t py_seen[3];           /* Python's thread state and data stack
                                      chunk (start, end) the kernel last
                                      read (unwind-python.c) */
    _Atomic uint64_t seen_cpu;     /* adopted thread: its CPU clock at its
                                      last signal (its end, within a period,
                                      if it ends between two looks) */
    _Atomic uint64_t seen_sp;      /* adopted thread without stack bounds:
                                      a stack pointer its handler saw, for
                                      the sampler thread to find them */

    /* Registration, under recs__g.reg_lock. */
    struct recs__thread *prev, *next;
    pid_t tid, parent_tid;
    pthread_t self;
    clockid_t cpuclock;
    timer_t timer;
    int engine;                    /* RECS_ENGINE_TIMER or _PERF */
    bool fell_back;                /* perf failed: a timer instead */
    int perf_fd;                   /* the event, -1 if none */
    uint64_t perf_id, perf_period;
    bool perf_armed;               /* refreshed once: the handler goes on */
    bool has_timer, timer_failed;  /* has a source (timer or event) */
    bool in_session;               /* ThreadStart due or written this session */
    bool start_pending;            /* ThreadStart not written yet */
    uint64_t start_ns, start_cpu;  /* when sampling began */
    /* The current arming: CPU clock read just before timer_settime and
     * the period armed, and how much sooner than a period after it the
     * first expiry was set (arm_phase): expiries = floor((cpu - arm_cpu +
     * arm_phase) / arm_period). */
    bool armed;
    uint64_t arm_cpu, arm_period, arm_phase;
    bool stopped;                  /* timer paused at recs_stop ... */
    uint64_t stop_cpu;             /* ... when the CPU clock read this */
    bool sig_blocked;              /* blocks the signal for real (raw
                                      rt_sigprocmask): expiries it never
                                      took are lost "blocked" */
    bool ended;                    /* exited; on the dead list */
    uint64_t end_ns, end_cpu;
    char name[16];                 /* at exit (prctl PR_GET_NAME) */
    /* Adopted (session-attach.c): a thread that was running when the sampler was
     * attached, or that started without our pthread_create; known by its
     * tid and its start time in clock ticks (/proc, field 22), reaped when
     * /proc no longer lists it. */
    bool adopted;
    uint64_t adopt_start;
    uint64_t last_cpu;             /* its CPU clock at the last look */
    unsigned stack_tries;          /* looks for its stack in the maps */

    /* Sampler-owned (under recs__g.drain_lock). */
    rec_id ref;                    /* Thread pool entry */
    uint64_t ref_checked_ns;       /* when the name was last read */
    uint64_t ref_every_ns;         /* and how long until the next read */
    uint32_t ref_epoch;            /* recs__names_epoch at that read */
    char ref_name[16];

    /* The look for a blocked signal (drain.c), under reg_lock: signals
     * taken and the CPU clock since the last look. */
    uint64_t scan_signals, scan_cpu;
} recs__thread;

/* The thread's own state, reached from the handler without a function call
 * (initial-exec: no lazy TLS allocation inside a signal handler). */
extern __thread recs__thread *recs__self __attribute__((tls_model("initial-exec")));

typedef struct recs__config {
    char *output;
    char *throttle_text;
    recs__throttle throttle;
    unsigned depth;
    uint64_t max_chunk_bytes;
    uint64_t max_chunk_age_ns;  /* REC_MAX_CHUNK_AGE, 0: none */
    uint64_t flush_ns;
    bool flush_auto;               /* no interval asked for: a cadence
                                      that follows the sample rate */
    int signo;
    unsigned queue_capacity;       /* 0: from the period */
    int engine;                    /* requested: RECS_ENGINE_* */
    bool append, overwrite;
    char run_id[33];               /* REC_RUN_ID, "" if none */
    bool no_command_line;          /* REC_NO_COMMAND_LINE: argv[0] only */
    bool no_python;                /* REC_PYTHON=0: no Python frames */
    bool fp_walker;                /* --stack-walker fp (else CFI) */
    char *cache_dir;               /* REC_CACHE_DIR, NULL if unset */
    int output_fd;                 /* created by rec-start, or -1 */
    bool has_id;                   /* append only to this file (exec) */
    dev_t out_dev;
    ino_t out_ino;
} recs__config;

typedef struct recs__global {
    /* Read by the handler. */
    _Atomic int running;           /* a session is active */
    _Atomic int inflight;          /* handlers inside the sampling path */
    _Atomic uint64_t lost_nostate; /* signals on threads without state */
    int signo;                     /* installed signal, 0 if none yet */
    bool hijacked;                 /* our handler was replaced: no timers
                                      (reg_lock) */

    pthread_mutex_t ctl_lock;      /* start/stop/set_throttle */
    pthread_mutex_t reg_lock;      /* the thread lists */
    pthread_mutex_t drain_lock;    /* the writer, stream, symbols */
    recs__thread *threads;          /* registered, alive */
    recs__thread *dead;             /* exited during a session, to drain */
    unsigned ndead;                /* on the dead list */
    bool registry;                 /* maintain the registry (not dormant) */

    /* Session (under drain_lock unless noted). */
    recs__config cfg;
    uint64_t period_ns;            /* effective period (reg_lock to change) */
    int engine;                    /* the session's: RECS_ENGINE_TIMER/PERF */
    char engine_note[256];         /* why not perf, or its limits */
    unsigned ncpus;
    uint32_t capacity;             /* queue slots for new threads */
    rec_writer *w;
    rec_stream *st;
    struct recs__symbols *sym;
    uint32_t modules_chunk;        /* chunk the ModuleLoad events were last
                                      written for (all of them) */
    pid_t pid;                     /* process that owns the session */
    pthread_t sampler;
    bool sampler_started;
    /* The sampler thread's CPU clock at its last wake-up: it may be
     * joined before ProcessUsage is written. */
    _Atomic uint64_t sampler_cpu_ns;
    uint64_t start_cpu_ns;         /* the start, on the thread that called it */
    _Atomic int quit;
    _Atomic int idle_nap;          /* the sampler thread naps long: the
                                      next sample wakes it (handler.c) */
    bool preloaded;                /* by rec-start (LD_PRELOAD, REC_OUTPUT):
                                      names our messages */
    bool exiting;                  /* the session ends with the process:
                                      its threads end, no snapshot */
    sem_t wake;
    uint64_t last_flush_ns, last_reeval_ns;
    uint64_t chunk_born_ns;        /* when the current chunk began */
    uint64_t chunk_news;           /* samples, losses, thread starts and
                                      ends drained into it */
    unsigned char *batch;          /* drain copy buffer */
    size_t batch_size;
    recs_stats stats;
    uint64_t early_stacks;         /* samples whose walk stopped early */
    _Atomic uint64_t timer_failures;
    _Atomic uint64_t threads_seen;
    int out_fd;                    /* the writer's fd, or -1 */
    dev_t out_dev;                 /* the recording file being written */
    ino_t out_ino;
    int dir_fd;                    /* directory of cfg.output, or -1 */
    struct rusage usage_base;      /* attached: the process's usage at the
                                      attach, taken from ProcessUsage's */
    bool attached;                 /* loaded into a running process by
                                      rec-start -p (session-attach.c) */
    int ctl_fd;                    /* attached: rec-start's control FIFO,
                                      whose end ends the session, or -1 */
    _Atomic pid_t sampler_tid;
    int status_fd;                 /* REC_STATUS_FD or -1 */
    dev_t status_dev;              /* what status_fd named at startup */
    ino_t status_ino;
} recs__global;

extern recs__global recs__g;
/* Its initial state (session.c; the tests that link parts of the library
 * without it define their own). */
#define RECS_GLOBAL_INIT {                                                   \
    .ctl_lock = PTHREAD_MUTEX_INITIALIZER,                                  \
    .reg_lock = PTHREAD_MUTEX_INITIALIZER,                                  \
    .drain_lock = PTHREAD_MUTEX_INITIALIZER,                                \
    .status_fd = -1,                                                        \
    .ctl_fd = -1,                                                           \
    .out_fd = -1,                                                           \
    .dir_fd = -1,                                                           \
}
extern char recs__timer_cookie;   /* si_value of our timers' signals */

/* session-attach.c */
recs__thread *recs__adopted(pid_t tid);            /* Signal-safe. */
bool recs__attach_poll(void);                      /* sampler thread */
void recs__attach_release(void);                   /* sampler thread */

/* session-thread.c */
recs__thread *recs__thread_new(pid_t parent_tid);   /* caller thread */
void recs__thread_register(recs__thread *t);        /* link + arm if running */
void recs__thread_exit(void);                      /* caller thread */
void recs__thread_free(recs__thread *t);
recs__thread *recs__thread_adopt(pid_t tid, uint64_t start);  /* session-attach.c */
void recs__thread_link_adopted(recs__thread *t);   /* reg_lock held */
void recs__thread_reap(recs__thread *t);           /* reg_lock held */
void recs__thread_forget(recs__thread *t);         /* reg_lock held */
int  recs__thread_arm(recs__thread *t, uint64_t period_ns);  /* reg_lock held */
void recs__thread_disarm(recs__thread *t);                   /* reg_lock held */
void recs__thread_pause_timer(recs__thread *t);
void recs__thread_close_arming(recs__thread *t, uint64_t cpu_ns);  /* reg_lock */
uint64_t recs__thread_cpu_ns(const recs__thread *t);
uint32_t recs__queue_capacity(uint64_t period_ns, unsigned depth);
pid_t recs__gettid(void);
int recs__block_signal(sigset_t *old);              /* the sampling signal */
void recs__block_async(sigset_t *old);   /* all but faults; Signal-safe. */
void recs__restore_mask(const sigset_t *old);        /* Signal-safe. */
void recs__thread_key_init(void);

/* Signal-safe. Inline: the handler must not call through the PLT. */
static inline void recs__thread_add_lost(recs__thread *t, int reason,
                                         uint64_t n, uint64_t ns)
{
    atomic_fetch_add_explicit(&t->lost[reason].count, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&t->lost[reason].ns, ns, memory_order_relaxed);
}

/* Signal-safe. Is si one of our sampling signals (a timer's, with our
 * cookie, or the overflow of this thread's perf event)? */
static inline bool recs__signal_ours(const siginfo_t *si)
{
    recs__thread *t;

    if (si->si_code == SI_TIMER)
        return si->si_value.sival_ptr == &recs__timer_cookie;
    if (si->si_code != POLL_IN && si->si_code != POLL_HUP)
        return false;
    t = recs__self;
    return (t && si->si_fd == atomic_load_explicit(&t->perf_sig_fd,
                                                   memory_order_relaxed)) ||
           recs__fd_in(recs__perf_fds_seen, si->si_fd);
}

/* Signal-safe. The periods one of our signals stands for, to add to K,
 * and what its source needs to signal again: the engine that sent it (a
 * timer's signal says SI_TIMER). */
static inline uint64_t recs__signal_periods(recs__thread *t,
                                            const siginfo_t *si)
{
    return (si->si_code == SI_TIMER ? &recs__timer_ops : &recs__perf_ops)
        ->periods(t, si);
}

static inline void recs__signal_rearm(recs__thread *t, const siginfo_t *si)
{
    if (t)
        (si->si_code == SI_TIMER ? &recs__timer_ops : &recs__perf_ops)
            ->rearm(t, si);
}

/* The constructors that resolve libc's functions behind our interposers
 * run before every other constructor of ours (priority 101): nothing can
 * reach an unresolved one, and so dlsym, from a signal handler. */
#define RECS_RESOLVER __attribute__((constructor(101)))

/* hook-sigaction.c: the context a wrapped handler's signal interrupted,
 * while the wrapper takes the sampling signals pending at its entry. */
extern __thread const void *recs__wrap_uc
    __attribute__((tls_model("initial-exec")));

/* sigmask.c. Our own mask changes bypass the interposed pthread_sigmask
 * (the program's view of its mask is kept there). */
int  recs__real_sigmask(int how, const sigset_t *set, sigset_t *old);
#define pthread_sigmask(h, s, o) recs__real_sigmask(h, s, o)
int  recs__sigmask_view(void);
int  recs__sigmask_hold(void);             /* Signal-safe. */
void recs__sigmask_release(int was);       /* Signal-safe. */
bool recs__sigmask_defer(int sig, const siginfo_t *si);
int  recs__sigmask_take(const sigset_t *set, siginfo_t *info);
void recs__sigmask_adopt(int inherited_view);
int  recs__sigmask_before_exec(void);
void recs__sigmask_after_exec(int token);
bool recs__tid_blocks_signal(pid_t tid);
/* sig set in a mask line ("SigBlk", "SigPnd") of the thread's status. */
bool recs__task_signal(pid_t tid, const char *line, int sig);

/* exit.c. Our own system calls bypass the interposed syscall(). */
void recs__exit_finish(void);
long recs__real_syscall(long number, ...);
#define syscall recs__real_syscall

/* handler.c */
int  recs__real_sigaction(int sig, const struct sigaction *act,
                          struct sigaction *old);     /* libc's */
bool recs__is_handler(const struct sigaction *sa);     /* not DFL/IGN */
void recs__sigaction_early(void);      /* before our constructors */
void recs__forward(int sig, siginfo_t *si, void *uc);     /* Signal-safe. */
/* Signal-safe. Replace the program's action for the sampling signal. */
void recs__prog_store(const struct sigaction *act, struct sigaction *old,
                      sighandler_t expect);
bool recs__fatal_is_ours(int sig);     /* rec's SIGTERM/INT/HUP handler */
void recs__fatal_disown(int sig);      /* the program set its own */
int  recs__install_handler(int signo);
void recs__install_fatal_handlers(void);
bool recs__handler_replaced(void);
/* Signal-safe. True for the copy of sig that rec-start forwarded when the
 * process got sig itself (a signal to the whole process group): to be
 * dropped. Otherwise remembers sig's arrival, and makes a forwarded copy
 * look as rec-start's plain kill() would. */
bool recs__forwarded_copy(int sig, siginfo_t *si);

/* drain.c */
uint64_t recs__drain_locked(bool final);
/* At the end: what the names of JIT code lack, said once each. */
void recs__jit_warnings(void);
void recs__chunk_modules(void);

/* session.c */
int  recs__start_config(const recs__config *cfg);
int  recs__stop(bool from_sampler, bool bounded);
int  recs__finish_by_sampler(void);                /* Signal-safe. */
void recs__session_reclaim(void);
uint64_t recs__now_ns(void);

/* session-config.c */
void recs__config_free(recs__config *cfg);
int  recs__config_from_env(recs__config *cfg, char *err, size_t errlen);
int  recs__config_from_vars(recs__config *cfg,
                            const char *(*get)(void *ctx, const char *name),
                            void *ctx, char *err, size_t errlen);
int  recs__config_from_options(recs__config *cfg, const recs_options *o);
int  recs__config_copy(recs__config *dst, const recs__config *src);

/* hook-fds.c: descriptors the sampler owns survive the program's closefrom()
 * and close_range(). */
#define RECS_MAX_OWNED_FDS 16
int  recs__fd_own(int fd);
void recs__fd_disown(int fd);
bool recs__fd_owned(int fd);
/* hook-sigmask.c: posix_spawn with the child's mask as the program sees its
 * own (hook-preload.c's posix_spawn interposers call it). */
#include <spawn.h>
typedef int (*recs__spawn_fn)(pid_t *, const char *,
                              const posix_spawn_file_actions_t *,
                              const posix_spawnattr_t *, char *const[],
                              char *const[]);
int recs__sigmask_spawn(recs__spawn_fn real, pid_t *pid, const char *path,
                        const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *attr, char *const argv[],
                        char *const envp[]);
/* close_range(first, last, flags) around every fd the sampler owns. */
long recs__close_around(unsigned first, unsigned last, unsigned flags);

/* session-output.c */
int  recs__output_open(const recs__config *cfg, int *fd);
void recs__output_discard(const recs__config *cfg, dev_t dev, ino_t ino);
int  recs__parse_fd_id(const char *v, int *fd, dev_t *dev, ino_t *ino);

/* session-status.c */
void recs__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void recs__warn_safe(const char *msg);                    /* Signal-safe. */
/* v in decimal at p, NUL-terminated (24 bytes hold any); the end. */
char *recs__put_u64(char *p, uint64_t v);                 /* Signal-safe. */
extern _Atomic int recs__write_errno;
void recs__status_send(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
void recs__write_failed(int err);
ssize_t recs__write_quiet(int fd, const void *buf, size_t n);  /* Signal-safe. */
bool recs__xfsz_pending(void);
void recs__xfsz_take(bool was_pending);

/* hook-env.c */
size_t recs__env_strip_size(char *const envp[]);
char **recs__env_strip(char *const envp[], void *mem);

/* hook-sigwait.c: libc's sigtimedwait, past our interposer. */
int recs__real_sigtimedwait(const sigset_t *set, siginfo_t *si,
                            const struct timespec *timeout);

/* hook-preload.c */
void recs__hooks_once(void);                        /* pthread_atfork */
int  recs__real_pthread_create(pthread_t *th, const pthread_attr_t *attr,
                               void *(*fn)(void *), void *arg);
/* The sampler's thread, created through the first pthread_create. */
int  recs__own_pthread_create(pthread_t *th, void *(*fn)(void *), void *arg);

/* drain-untracked.c (drain_lock held) */
void recs__untracked_scan(void);
void recs__untracked_poll(void);
void recs__untracked_emit(void);
void recs__untracked_reset(void);
/* drain-untracked.c, on a thread created before the registry existed */
void recs__untracked_early_thread(void);

/* drain-emit.c */
void recs__emit_settings(void);
void recs__emit_process(void);
/* hook-names.c: bumped by every rename rec sees. */
extern _Atomic uint32_t recs__names_epoch;
rec_id recs__thread_ref(recs__thread *t, bool ended, const char *name,
                        bool refresh);
rec_id recs__thread_ref_tid(pid_t tid, const char *name);

/* drain-stacks.c */
int  recs__stacks_init(void);
void recs__stacks_free(void);
void recs__stacks_abandon(void);                    /* fork child */
/* Stack id for a request (0 when failed), *biased set. */
rec_id recs__stack_for(const recs__request *r, bool *biased);

#endif
