/*
 * libsampler/engine-perf.c - the perf_event engine: per thread, a software
 * task-clock event (the thread's own CPU time) whose overflow, every
 * period, sends our signal to that thread. The event is driven by a
 * high-resolution timer on the thread's run time, so signals are not tied
 * to the scheduler tick as CPU-time timers are. No ring buffer is mapped:
 * the overflow only raises the signal (O_ASYNC, F_SETSIG) and the handler
 * walks the stack as for a timer signal. Per-thread calls with reg_lock
 * held; the probe with ctl_lock held.
 *
 * The events' fds are kept out of the program's way as the recording's
 * is: moved high (F_DUPFD_CLOEXEC near the soft fd limit, under 4096),
 * close-on-exec, listed in a bitmap (recs__owned_fd) for closefrom-style
 * emulations, and checked by event id before we close one (a program that
 * closed every fd may have reused the number).
 */
#include <config.h>

#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

_Atomic unsigned long recs__owned_fds[RECS_OWNED_FD_MAX /
                                      (8 * sizeof(unsigned long))];
_Atomic unsigned long recs__perf_fds_seen[RECS_OWNED_FD_MAX /
                                          (8 * sizeof(unsigned long))];

/* The session's events count user time only (perf_event_paranoid 2 for
 * an unprivileged user: kernel-mode overflows are then not signalled and
 * end up counted undelivered). */
static bool user_only;

#define BITS (8 * sizeof(unsigned long))

/* close() is a cancellation point: a thread cancelled before its start
 * routine runs would unwind out of registration holding reg_lock. The
 * system call is not. */
static void close_fd(int fd)
{
    syscall(SYS_close, fd);
}

bool recs__owned_fd(int fd)
{
    return recs__fd_in(recs__owned_fds, fd);
}

static void own(int fd)
{
    atomic_fetch_or(&recs__owned_fds[(unsigned)fd / BITS],
                    1ul << ((unsigned)fd % BITS));
    atomic_fetch_or(&recs__perf_fds_seen[(unsigned)fd / BITS],
                    1ul << ((unsigned)fd % BITS));
}

static void disown(int fd)
{
    atomic_fetch_and(&recs__owned_fds[(unsigned)fd / BITS],
                     ~(1ul << ((unsigned)fd % BITS)));
}

static int open_event(pid_t tid, uint64_t period_ns, bool exclude_kernel)
{
    struct perf_event_attr a;

    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_SOFTWARE;
    a.size = sizeof a;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = period_ns;
    a.disabled = 1;
    a.wakeup_events = 1;
    a.exclude_kernel = exclude_kernel;
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1,
                        PERF_FLAG_FD_CLOEXEC);
}

/* Where the recording's fd goes too (librecord's writer): just under the
 * soft limit, never above 4096 (the kernel sizes every fork's fd table
 * to the highest fd). */
static int fd_floor(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 128)
        return (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 4096 ?
                4096 : (int)rl.rlim_cur) - 64;
    return 0;
}

/* fd moved high when there is room; where it is otherwise. */
static int move_high(int fd)
{
    int lo = fd_floor(), nfd;

    if (lo <= fd)
        return fd;
    nfd = fcntl(fd, F_DUPFD_CLOEXEC, lo);
    if (nfd < 0)
        return fd;
    close_fd(fd);
    return nfd;
}

static bool still_ours(const recs__thread *t)
{
    uint64_t id = 0;

    return t->perf_fd >= 0 &&
           ioctl(t->perf_fd, PERF_EVENT_IOC_ID, &id) == 0 && id == t->perf_id;
}

static int perf_create(recs__thread *t, uint64_t period_ns)
{
    struct f_owner_ex owner = { F_OWNER_TID, t->tid };
    uint64_t id = 0;
    int fd, err;

    fd = open_event(t->tid, period_ns, user_only);
    if (fd < 0)
        return REC_EIO;
    /* Before O_ASYNC: the signal carries the fd number it was set on. */
    fd = move_high(fd);
    if (fd >= RECS_OWNED_FD_MAX) {
        close_fd(fd);
        errno = EMFILE;
        return REC_EIO;
    }
    if (fcntl(fd, F_SETOWN_EX, &owner) != 0 ||
        fcntl(fd, F_SETSIG, recs__g.signo) != 0 ||
        fcntl(fd, F_SETFL, O_ASYNC | O_NONBLOCK) != 0 ||
        ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0) {
        err = errno;
        close_fd(fd);
        errno = err;
        return REC_EIO;
    }
    own(fd);
    t->perf_fd = t->perf_sig_fd = fd;
    t->perf_id = id;
    t->perf_period = period_ns;
    t->perf_armed = false;
    atomic_store(&t->perf_first, 0);
    t->engine = RECS_ENGINE_PERF;
    t->has_timer = true;
    return 0;
}

/* The first call arms the event for one overflow (the handler re-arms
 * it, see perf_rearm); later ones change its period (the next
 * overflow is then a whole period away: what was run of the old one is
 * carried by the arming's origin, see session-thread.c). */
static int perf_set_period(recs__thread *t, uint64_t period_ns,
                           uint64_t first_ns)
{
    if (!still_ours(t))
        return REC_EIO;
    if (!t->perf_armed && first_ns && first_ns < period_ns) {
        /* The first arming: a random first phase, as for a timer (see
         * session-thread.c first_phase); the first signal sets the whole period
         * (perf_rearm). */
        uint64_t p = first_ns;
        if (ioctl(t->perf_fd, PERF_EVENT_IOC_PERIOD, &p) != 0)
            return REC_EIO;
        t->perf_period = period_ns;
        atomic_store(&t->perf_first, 1);
    } else if (period_ns != t->perf_period ||
               atomic_exchange(&t->perf_first, 0)) {
        uint64_t p = period_ns;
        if (ioctl(t->perf_fd, PERF_EVENT_IOC_PERIOD, &p) != 0)
            return REC_EIO;
        t->perf_period = period_ns;
    }
    if (t->perf_armed)
        return 0;
    t->perf_armed = true;
    return ioctl(t->perf_fd, PERF_EVENT_IOC_REFRESH, 1) == 0 ? 0 : REC_EIO;
}

static int perf_pause(recs__thread *t)
{
    if (!still_ours(t))
        return REC_EIO;
    return ioctl(t->perf_fd, PERF_EVENT_IOC_DISABLE, 0) == 0 ? 0 : REC_EIO;
}

/* A program that closed every fd took the event with it (no more signals:
 * its CPU time is counted undelivered); the number may now be one of its
 * own files, which stays open. */
static void perf_close(recs__thread *t)
{
    if (t->perf_fd < 0)
        return;
    if (still_ours(t))
        close_fd(t->perf_fd);
    disown(t->perf_fd);
    t->perf_fd = -1;
}

/* Signal-safe. A perf signal carries no count: the whole periods of CPU
 * time since the arming's origin not yet in K (0: an earlier signal
 * already covered them). */
static uint64_t perf_periods(recs__thread *t, const siginfo_t *si)
{
    struct timespec ts;
    uint64_t cpu, origin, period, e, k;

    (void)si;
    period = atomic_load_explicit(&t->period_ns, memory_order_relaxed);
    origin = atomic_load_explicit(&t->origin_cpu, memory_order_relaxed);
    if (!period || clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
        return 1;
    cpu = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    /* origin may lie before the thread's start (its first phase):
     * modular arithmetic, as the clock's reading minus the origin. */
    e = (int64_t)(cpu - origin) > 0 ? (cpu - origin) / period : 0;
    k = atomic_load_explicit(&t->expiries, memory_order_relaxed);
    return e > k ? e - k : 0;
}

/* Signal-safe. The event is armed for one overflow at a time
 * (PERF_EVENT_IOC_REFRESH 1): a thread that keeps the signal blocked has
 * at most one pending (a real-time signal would otherwise queue one per
 * period). Its signal, once taken, re-arms it; the first sets the whole
 * period after the first phase. */
static void perf_rearm(recs__thread *t, const siginfo_t *si)
{
    if (t->perf_fd >= 0 && si->si_fd == t->perf_fd &&
        atomic_load(&recs__g.running)) {
        if (atomic_load_explicit(&t->perf_first, memory_order_relaxed) &&
            atomic_exchange(&t->perf_first, 0)) {
            uint64_t p = atomic_load_explicit(&t->period_ns,
                                              memory_order_relaxed);
            ioctl(t->perf_fd, PERF_EVENT_IOC_PERIOD, &p);
        }
        ioctl(t->perf_fd, PERF_EVENT_IOC_REFRESH, 1);
    }
}

const recs__engine_ops recs__perf_ops = {
    .engine = RECS_ENGINE_PERF,
    .name = "perf-task-clock",
    .create = perf_create,
    .settime = perf_set_period,
    .pause = perf_pause,
    .destroy = perf_close,
    .periods = perf_periods,
    .rearm = perf_rearm,
};

void recs__perf_forget_all(void)
{
    for (unsigned w = 0; w < RECS_OWNED_FD_MAX / BITS; w++) {
        unsigned long m = atomic_exchange(&recs__owned_fds[w], 0);
        for (unsigned b = 0; m; b++, m >>= 1)
            if (m & 1)
                close_fd((int)(w * BITS + b));
    }
}

static const char *errno_name(int e)
{
    switch (e) {
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case ENOSYS: return "ENOSYS";
    case ENOENT: return "ENOENT";
    case EINVAL: return "EINVAL";
    case EMFILE: return "EMFILE";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    default: return "error";
    }
}

/* Why the kernel may have said no: the usual two causes, as found. */
static void denial_cause(char *buf, size_t len)
{
    char s[4096];
    int paranoid = -99, seccomp = 0;
    FILE *f;

    buf[0] = '\0';
    if ((f = fopen("/proc/sys/kernel/perf_event_paranoid", "re"))) {
        if (fscanf(f, "%d", &paranoid) != 1)
            paranoid = -99;
        fclose(f);
    }
    if ((f = fopen("/proc/self/status", "re"))) {
        while (fgets(s, sizeof s, f))
            if (!strncmp(s, "Seccomp:", 8))
                seccomp = atoi(s + 8);
        fclose(f);
    }
    if (seccomp == 2 && paranoid != -99)
        snprintf(buf, len, "; seccomp filter active, perf_event_paranoid=%d",
                 paranoid);
    else if (seccomp == 2)
        snprintf(buf, len, "; seccomp filter active");
    else if (paranoid != -99)
        snprintf(buf, len, "; perf_event_paranoid=%d", paranoid);
}

static int resolve(int requested, uint64_t period_ns, char *note,
                   size_t notelen);

int recs__engine_resolve(int requested, uint64_t period_ns, char *note,
                         size_t notelen)
{
    int cs, fd;


    /* fopen/fgets are cancellation points; ctl_lock is held. */
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
    fd = resolve(requested, period_ns, note, notelen);
    pthread_setcancelstate(cs, NULL);
    return fd;
}

static int resolve(int requested, uint64_t period_ns, char *note,
                   size_t notelen)
{
    char cause[128];
    int fd, e;

    note[0] = '\0';
    user_only = false;
    if (requested == RECS_ENGINE_TIMER)
        return RECS_ENGINE_TIMER;
    fd = open_event(0, period_ns, false);
    if (fd < 0 && (errno == EACCES || errno == EPERM)) {
        e = errno;
        fd = open_event(0, period_ns, true);
        if (fd >= 0) {
            user_only = true;
            denial_cause(cause, sizeof cause);
            snprintf(note, notelen, "user time only: kernel-mode sampling "
                     "denied (%s%s)", errno_name(e), cause);
        } else {
            errno = e;
        }
    }
    if (fd >= 0) {
        close_fd(fd);
        return RECS_ENGINE_PERF;
    }
    e = errno;
    denial_cause(cause, sizeof cause);
    snprintf(note, notelen, "perf_event %s: %s, %s%s",
             e == EACCES || e == EPERM ? "denied" : "unavailable",
             errno_name(e), strerror(e), cause);
    return requested == RECS_ENGINE_PERF ? REC_EIO : RECS_ENGINE_TIMER;
}
