/*
 * libsampler/hook-sigmask.c - keep the sampling signal deliverable whatever mask
 * the program sets, while the program sees exactly the mask it asked for.
 *
 * Many programs block every signal in their worker threads (xz, servers
 * that leave signals to one thread). A blocked CPU-timer signal is never
 * delivered: the thread's CPU time would have no stack at all. So the
 * interposed sigprocmask() and pthread_sigmask() never block the sampling
 * signal for real; whether the program asked for it to be blocked is kept
 * per thread (its "view"), and the old set they return, sigpending() and
 * the waits that take a mask report that view. Our handler only captures
 * a stack, which is harmless where the program thinks the signal blocked.
 * The program's own instances of that signal (rec-start --signal chose one
 * it uses, or it sends SIGPROF itself) must respect its mask: one arriving
 * while the view blocks it is kept aside and sent again when the view
 * unblocks it (or taken by the program's sigwait family).
 *
 * A new thread inherits its creator's view; a thread whose real mask
 * blocks the signal when it starts (an inherited mask after exec, a
 * pthread_attr_setsigmask_np mask) adopts that as its view and unblocks it.
 * Before an exec, the real mask is made the view again, so that the new
 * image starts with the mask the program asked for; a posix_spawn child
 * that would inherit the caller's mask gets the view's.
 *
 * What stays out of reach: a raw rt_sigprocmask system call, or glibc's
 * own internal mask changes (they do not go through the PLT). Such threads
 * are found at drain time (drain.c reads SigBlk) and their expiries are
 * counted lost with reason "blocked".
 *
 * Our own mask changes (internal.h maps pthread_sigmask to
 * recs__real_sigmask) go straight to libc.
 */
#include <config.h>
#include "internal.h"
#include "unwind-fp.h"   /* RECS_NO_SANITIZE */

#undef pthread_sigmask

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);
typedef int (*sigsuspend_fn)(const sigset_t *);
typedef int (*pselect_fn)(int, fd_set *, fd_set *, fd_set *,
                          const struct timespec *, const sigset_t *);
typedef int (*ppoll_fn)(struct pollfd *, nfds_t, const struct timespec *,
                        const sigset_t *);
typedef int (*epoll_pwait_fn)(int, struct epoll_event *, int, int,
                              const sigset_t *);
typedef void (*longjmp_fn)(struct __jmp_buf_tag *, int);
typedef int (*epoll_pwait2_fn)(int, struct epoll_event *, int,
                               const struct timespec *, const sigset_t *);

static sigmask_fn real_psm;
static sigsuspend_fn real_sigsuspend;
static pselect_fn real_pselect;
static ppoll_fn real_ppoll;
static epoll_pwait_fn real_epoll_pwait;
static longjmp_fn real_siglongjmp, real_longjmp_chk;
static epoll_pwait2_fn real_epoll_pwait2;

RECS_RESOLVER
static void sigmask_init(void)
{
    real_psm = (sigmask_fn)dlsym(RTLD_NEXT, "pthread_sigmask");
    real_sigsuspend = (sigsuspend_fn)dlsym(RTLD_NEXT, "sigsuspend");
    real_pselect = (pselect_fn)dlsym(RTLD_NEXT, "pselect");
    real_ppoll = (ppoll_fn)dlsym(RTLD_NEXT, "ppoll");
    real_epoll_pwait = (epoll_pwait_fn)dlsym(RTLD_NEXT, "epoll_pwait");
    real_epoll_pwait2 = (epoll_pwait2_fn)dlsym(RTLD_NEXT, "epoll_pwait2");
    /* Resolved here: siglongjmp runs in signal handlers. */
    real_siglongjmp = (longjmp_fn)dlsym(RTLD_NEXT, "siglongjmp");
    real_longjmp_chk = (longjmp_fn)dlsym(RTLD_NEXT, "__longjmp_chk");
}

/* The program's instances of the sampling signal it has blocked (in its
 * view) on this thread: a standard signal is pending at most once, a
 * real-time one queues (a few are kept; more are dropped, as the kernel
 * drops them past its queue limit). */
#define STASH_MAX 8
static __thread int view_blocked __attribute__((tls_model("initial-exec")));
static __thread int nstash __attribute__((tls_model("initial-exec")));
static __thread siginfo_t stash[STASH_MAX]
    __attribute__((tls_model("initial-exec")));

/* Signal-safe. */
int recs__real_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    if (real_psm)
        return real_psm(how, set, old);
    if (syscall(SYS_rt_sigprocmask, how, set, old, (size_t)(_NSIG / 8)) != 0)
        return errno;
    return 0;
}

static int ours(void)
{
    return recs__g.signo;
}

int recs__sigmask_view(void)
{
    return view_blocked;
}

/* Signal-safe. Called by forward() for a signal that is not one of our
 * timers': true if the program's view blocks it here (kept for later). */
bool recs__sigmask_defer(int sig, const siginfo_t *si)
{
    if (sig != ours() || !view_blocked)
        return false;
    if (sig < SIGRTMIN && nstash > 0)
        return true;                 /* already pending once */
    if (nstash < STASH_MAX)
        stash[nstash++] = *si;
    return true;
}

/* Send the kept signals to this thread again (they reach the program's
 * handler through forward(), or a wait that now admits them). */
static void redeliver(void)
{
    int n = nstash;

    nstash = 0;
    for (int i = 0; i < n; i++)
        syscall(SYS_rt_tgsigqueueinfo, getpid(), recs__gettid(),
                stash[i].si_signo, &stash[i]);
}

/* Signal-safe. A program's handler whose sa_mask holds the sampling signal
 * runs (hook-sigaction.c): the view blocks it meanwhile, as the kernel's mask
 * would have. Returns what recs__sigmask_release puts back when it
 * returns (sigreturn restores the interrupted mask). */
int recs__sigmask_hold(void)
{
    int was = view_blocked;

    view_blocked = 1;
    return was;
}

/* Signal-safe. */
void recs__sigmask_release(int was)
{
    int err = errno;

    view_blocked = was;
    if (!was && nstash)
        redeliver();
    errno = err;
}

/* For the sigwait family: take a kept signal in set, if any. */
int recs__sigmask_take(const sigset_t *set, siginfo_t *info)
{
    int sig;

    if (!nstash || sigismember(set, ours()) != 1)
        return 0;
    sig = stash[0].si_signo;
    if (info)
        *info = stash[0];
    memmove(&stash[0], &stash[1], (size_t)(nstash - 1) * sizeof stash[0]);
    nstash--;
    return sig;
}

/* The calling thread starts (or our handler is installed): a real mask
 * that blocks the sampling signal is what the program asked for; make it
 * the view and unblock the signal. */
void recs__sigmask_adopt(int inherited_view)
{
    sigset_t cur, set;
    int s = ours();

    view_blocked = inherited_view;
    nstash = 0;
    if (s <= 0 || recs__real_sigmask(SIG_BLOCK, NULL, &cur) != 0 ||
        sigismember(&cur, s) != 1)
        return;
    view_blocked = 1;
    sigemptyset(&set);
    sigaddset(&set, s);
    recs__real_sigmask(SIG_UNBLOCK, &set, NULL);
}

/* Before an exec: the real mask becomes the program's (the new image
 * inherits it). Returns what to pass to recs__sigmask_after_exec. */
int recs__sigmask_before_exec(void)
{
    sigset_t set;
    int s = ours();

    if (s <= 0 || !view_blocked)
        return 0;
    sigemptyset(&set);
    sigaddset(&set, s);
    recs__real_sigmask(SIG_BLOCK, &set, NULL);
    return 1;
}

void recs__sigmask_after_exec(int token)
{
    sigset_t set;
    siginfo_t si;
    struct timespec zero = { 0, 0 };
    int s = ours(), err = errno;

    if (!token || s <= 0)
        return;
    sigemptyset(&set);
    sigaddset(&set, s);
    /* Whatever arrived meanwhile is ours to handle or keep. */
    while (syscall(SYS_rt_sigtimedwait, &set, &si, &zero,
                   (size_t)(_NSIG / 8)) == s) {
        if (si.si_code == SI_TIMER && si.si_value.sival_ptr == &recs__timer_cookie)
            continue;       /* expiries of a stopped recording */
        recs__sigmask_defer(s, &si);
    }
    recs__real_sigmask(SIG_UNBLOCK, &set, NULL);
    errno = err;
}

/* The mask change the program asked for, with the sampling signal left
 * out of the real one. Returns 0 or an errno value. */
static int change(int how, const sigset_t *set, sigset_t *old)
{
    sigset_t real_set, real_old;
    int s = ours(), was = view_blocked, now = was, rc;

    if (s <= 0)
        return recs__real_sigmask(how, set, old);
    if (set) {
        if (how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK)
            return EINVAL;
        real_set = *set;
        sigdelset(&real_set, s);
        if (how == SIG_SETMASK)
            now = sigismember(set, s) == 1;
        else if (sigismember(set, s) == 1)
            now = how == SIG_BLOCK;
    }
    /* A vfork child runs on its parent's thread-local view: it changes
     * its own mask for real (it is about to exec), the parent's view
     * stays. */
    if (set && recs__g.pid && getpid() != recs__g.pid) {
        rc = recs__real_sigmask(how, set, &real_old);
        if (rc == 0 && old) {
            *old = real_old;
            if (was)
                sigaddset(old, s);
        }
        return rc;
    }
    rc = recs__real_sigmask(how, set ? &real_set : NULL, &real_old);
    if (rc != 0)
        return rc;
    if (old) {
        /* Blocked for real too inside a handler whose sa_mask holds it. */
        *old = real_old;
        if (was)
            sigaddset(old, s);
    }
    view_blocked = now;
    if (was && !now && nstash)
        redeliver();
    return 0;
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    return change(how, set, old);
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
    int rc = change(how, set, old);

    if (rc != 0) {
        errno = rc;
        return -1;
    }
    return 0;
}

/* Only the program's own pending signals: our timers' never, and the
 * program's instances of our signal only while kept aside for it. */
int sigpending(sigset_t *set)
{
    int s = ours();

    if (syscall(SYS_rt_sigpending, set, (size_t)(_NSIG / 8)) != 0)
        return -1;
    if (s > 0) {
        if (nstash)
            sigaddset(set, s);
        else
            sigdelset(set, s);
    }
    return 0;
}

/* The waits that install a mask for their duration: the mask passes as
 * given (a sleeping thread uses no CPU, so no sample is missed while the
 * sampling signal is blocked), the view follows it, and a signal kept
 * aside that the wait admits is sent again with the signal blocked, so
 * that the wait delivers it atomically. */
typedef struct wait_state {
    int view, token;
} wait_state;

static void wait_enter(const sigset_t *mask, wait_state *w)
{
    int s = ours();

    w->view = view_blocked;
    w->token = 0;
    if (s <= 0 || !mask)
        return;
    view_blocked = sigismember(mask, s) == 1;
    if (!view_blocked && nstash) {
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, s);
        recs__real_sigmask(SIG_BLOCK, &set, NULL);
        redeliver();
        w->token = 1;
    }
}

static void wait_leave(const sigset_t *mask, const wait_state *w)
{
    int err = errno;

    if (ours() > 0 && mask) {
        view_blocked = w->view;
        if (w->token) {
            sigset_t set;
            sigemptyset(&set);
            sigaddset(&set, ours());
            /* Delivered by now if the wait ended because of it; if not
             * (another event ended it), it is kept aside again. */
            recs__real_sigmask(SIG_UNBLOCK, &set, NULL);
        }
    }
    errno = err;
}

int sigsuspend(const sigset_t *mask)
{
    wait_state w;
    int rc;

    if (!real_sigsuspend)
        return (int)syscall(SYS_rt_sigsuspend, mask, (size_t)(_NSIG / 8));
    wait_enter(mask, &w);
    rc = real_sigsuspend(mask);
    wait_leave(mask, &w);
    return rc;
}

int pselect(int n, fd_set *r, fd_set *wr, fd_set *e,
            const struct timespec *timeout, const sigset_t *mask)
{
    wait_state w;
    int rc;

    if (!real_pselect) {
        errno = ENOSYS;
        return -1;
    }
    wait_enter(mask, &w);
    rc = real_pselect(n, r, wr, e, timeout, mask);
    wait_leave(mask, &w);
    return rc;
}

int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout,
          const sigset_t *mask)
{
    wait_state w;
    int rc;

    if (!real_ppoll) {
        errno = ENOSYS;
        return -1;
    }
    wait_enter(mask, &w);
    rc = real_ppoll(fds, nfds, timeout, mask);
    wait_leave(mask, &w);
    return rc;
}

int epoll_pwait(int epfd, struct epoll_event *ev, int maxevents, int timeout,
                const sigset_t *mask)
{
    wait_state w;
    int rc;

    if (!real_epoll_pwait) {
        errno = ENOSYS;
        return -1;
    }
    wait_enter(mask, &w);
    rc = real_epoll_pwait(epfd, ev, maxevents, timeout, mask);
    wait_leave(mask, &w);
    return rc;
}

/* glibc 2.35 and later; declared here for older headers. */
int epoll_pwait2(int epfd, struct epoll_event *ev, int maxevents,
                 const struct timespec *timeout, const sigset_t *mask);
int epoll_pwait2(int epfd, struct epoll_event *ev, int maxevents,
                 const struct timespec *timeout, const sigset_t *mask)
{
    wait_state w;
    int rc;

    if (!real_epoll_pwait2) {
        errno = ENOSYS;
        return -1;
    }
    wait_enter(mask, &w);
    rc = real_epoll_pwait2(epfd, ev, maxevents, timeout, mask);
    wait_leave(mask, &w);
    return rc;
}

/* Whether signal sig is set in the mask line ("SigBlk", "SigPnd") of
 * /proc/self/task/TID/status (hexadecimal, signal n is bit n - 1). Not
 * signal-safe; called outside every lock. */
bool recs__task_signal(pid_t tid, const char *line, int sig)
{
    char path[64], key[16], buf[4096];
    int fd;
    ssize_t n;
    const char *p;
    unsigned long long mask;

    if (sig <= 0 || sig > 64)
        return false;
    snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
    snprintf(key, sizeof key, "\n%s:", line);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return false;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    if (!(p = strstr(buf, key)))
        return false;
    mask = strtoull(p + strlen(key), NULL, 16);
    return (mask >> (sig - 1)) & 1;
}

/* Does thread tid block the sampling signal for real (a raw system call,
 * a thread rec did not start)? For the drain. */
bool recs__tid_blocks_signal(pid_t tid)
{
    return recs__task_signal(tid, "SigBlk", ours());
}

/* posix_spawn (interposed in hook-preload.c): a child that does not set its
 * own mask inherits the caller's real one, where the sampling signal is
 * open; if the program's view blocks it, the child gets the mask the
 * program has in its view. */
int recs__sigmask_spawn(recs__spawn_fn real, pid_t *pid, const char *path,
                        const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *attr, char *const argv[],
                        char *const envp[])
{
    posix_spawnattr_t a;
    short flags = 0;
    sigset_t mask;
    int s = ours();

    if (!real)
        return ENOSYS;
    if (s <= 0 || !view_blocked ||
        (attr && (posix_spawnattr_getflags(attr, &flags) != 0 ||
                  (flags & POSIX_SPAWN_SETSIGMASK))))
        return real(pid, path, fa, attr, argv, envp);
    if (attr)
        memcpy(&a, attr, sizeof a);    /* glibc's is plain data */
    else
        posix_spawnattr_init(&a);
    recs__real_sigmask(SIG_BLOCK, NULL, &mask);
    sigaddset(&mask, s);
    posix_spawnattr_setsigmask(&a, &mask);
    posix_spawnattr_setflags(&a, (short)(flags | POSIX_SPAWN_SETSIGMASK));
    return real(pid, path, fa, &a, argv, envp);
}

/* Signal-safe. The long jumps (longjmp, _longjmp and siglongjmp are one
 * function in glibc; __longjmp_chk is the fortified one). A jump that
 * restores a saved mask does it with glibc's internal sigprocmask: the
 * view becomes the saved mask's (a handler that blocked the sampling
 * signal in the view is left for good), and a saved mask that blocks the
 * sampling signal for real (saved while it was: a raw system call) does
 * not block it again. One that restores no mask leaves the view as it is,
 * as the kernel leaves the mask. */
/* Not instrumented: the sanitizer's own longjmp hook cleans the stack
 * above its frame only, and this one (the copy) lies below it. */
__attribute__((noreturn)) RECS_NO_SANITIZE
static void jump(longjmp_fn real, struct __jmp_buf_tag *env, int val)
{
    int s = ours();

    if (s > 0 && env->__mask_was_saved) {
        int blocked = sigismember(&env->__saved_mask, s) == 1;

        view_blocked = blocked;
        if (blocked) {
            /* A copy without it: the registers saved do not depend on
             * where the buffer is. */
            struct __jmp_buf_tag copy = *env;

            sigdelset(&copy.__saved_mask, s);
            real(&copy, val);
        }
        if (nstash)
            redeliver();
    }
    real(env, val);
    abort();
}

void siglongjmp(sigjmp_buf env, int val)
{
    jump(real_siglongjmp, env, val);
}

void longjmp(jmp_buf env, int val)
{
    jump(real_siglongjmp, env, val);
}

void _longjmp(jmp_buf env, int val)
{
    jump(real_siglongjmp, env, val);
}

void __longjmp_chk(sigjmp_buf env, int val);
void __longjmp_chk(sigjmp_buf env, int val)
{
    jump(real_longjmp_chk ? real_longjmp_chk : real_siglongjmp, env, val);
}
