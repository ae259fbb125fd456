/*
 * libsampler/hook-sigwait.c - keep rec's timer signals out of the program's
 * synchronous signal waits.
 *
 * A program that blocks every signal and takes them with sigwait() (the
 * classic daemon pattern), sigwaitinfo(), sigtimedwait() or a signalfd
 * would otherwise receive rec's timer signals, which it never asked for.
 * The sigwait family is interposed: a signal that carries our timer cookie
 * is swallowed (its expiries counted lost, reason "unsafe": a sample taken
 * here has no interrupted context) and the wait goes on with what remains
 * of the timeout. sigwait() and sigwaitinfo() are implemented on top of
 * sigtimedwait(), since glibc calls its internal one past the PLT. A
 * signalfd never sees the sampling signal: it is removed from the mask
 * (warned once); the signal stays pending in the thread that blocks it,
 * and is accounted when that thread ends or the recording stops. A
 * program that raises the sampling signal itself gets it delivered even
 * when one of our timer's was pending at that instant (send_own).
 */
#include <config.h>
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <ucontext.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*sigtimedwait_fn)(const sigset_t *, siginfo_t *,
                               const struct timespec *);
static _Atomic(sigtimedwait_fn) real_stw;
static _Atomic int signalfd_warned;

/* Signal-safe. The library's
 * own waits (a thread's exit, an exec) use this one, never the interposer
 * below, which would count our signals as lost a second time. */
int recs__real_sigtimedwait(const sigset_t *set, siginfo_t *si,
                             const struct timespec *timeout)
{
    sigtimedwait_fn f = atomic_load(&real_stw);

    if (!f)                            /* not resolved: no dlsym here */
        return (int)syscall(SYS_rt_sigtimedwait, set, si, timeout,
                            (size_t)(_NSIG / 8));
    return f(set, si, timeout);
}

typedef int (*raise_fn)(int);
typedef int (*pthread_kill_fn)(pthread_t, int);
static raise_fn real_raise;
static pthread_kill_fn real_pthread_kill;

RECS_RESOLVER
static void sigwait_init(void)
{
    atomic_store(&real_stw, (sigtimedwait_fn)dlsym(RTLD_NEXT, "sigtimedwait"));
    real_raise = (raise_fn)dlsym(RTLD_NEXT, "raise");
    real_pthread_kill = (pthread_kill_fn)dlsym(RTLD_NEXT, "pthread_kill");
}

/* Signal-safe. If si is one of our timer signals, account it as the
 * handler accounts a signal it cannot sample, and say so. */
static bool swallow(const siginfo_t *si)
{
    recs__thread *t;

    if (recs__g.signo <= 0 || si->si_signo != recs__g.signo ||
        !recs__signal_ours(si))
        return false;
    atomic_fetch_add(&recs__g.inflight, 1);
    t = recs__self;
    if (t && atomic_load(&recs__g.running)) {
        uint64_t n = recs__signal_periods(t, si);
        recs__signal_rearm(t, si);
        uint64_t period = atomic_load_explicit(&t->period_ns,
                                               memory_order_relaxed);
        atomic_fetch_add_explicit(&t->expiries, n, memory_order_relaxed);
        /* A thread that blocks it for real takes it only here. */
        recs__thread_add_lost(t, t->sig_blocked ? RECS_LOST_BLOCKED
                                                : RECS_LOST_UNSAFE,
                              1, n * period);
    }
    atomic_fetch_sub(&recs__g.inflight, 1);
    return true;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int sigtimedwait(const sigset_t *set, siginfo_t *info,
                 const struct timespec *timeout)
{
    uint64_t deadline = 0;
    siginfo_t si;
    int kept;

    if (recs__g.signo <= 0 || sigismember(set, recs__g.signo) != 1)
        return recs__real_sigtimedwait(set, info, timeout);
    /* The program's own instance, kept while its mask blocked it. */
    if ((kept = recs__sigmask_take(set, info)) > 0)
        return kept;
    if (timeout) {
        if (timeout->tv_sec < 0 || timeout->tv_nsec < 0 ||
            timeout->tv_nsec >= 1000000000L) {
            errno = EINVAL;
            return -1;
        }
        deadline = mono_ns() + (uint64_t)timeout->tv_sec * 1000000000u +
                   (uint64_t)timeout->tv_nsec;
    }
    for (;;) {
        struct timespec rem, *tp = NULL;
        int rc;

        if (timeout) {
            uint64_t now = mono_ns(), left = now < deadline ? deadline - now : 0;
            rem.tv_sec = (time_t)(left / 1000000000u);
            rem.tv_nsec = (long)(left % 1000000000u);
            tp = &rem;
        }
        rc = recs__real_sigtimedwait(set, &si, tp);
        if (rc < 0)
            return rc;
        if (!swallow(&si)) {
            if (info)
                *info = si;
            return rc;
        }
        /* Ours: wait on for the rest of the timeout (a zero timeout polls
         * once more, then fails with EAGAIN). */
    }
}

int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
    return sigtimedwait(set, info, NULL);
}

int sigwait(const sigset_t *set, int *sig)
{
    for (;;) {
        int rc = sigtimedwait(set, NULL, NULL);
        if (rc > 0) {
            *sig = rc;
            return 0;
        }
        if (errno != EINTR)
            return errno;
    }
}

/* What deliver() hands to the alternate stack. */
static __thread int alt_sig;
static __thread siginfo_t *alt_si;
static __thread ucontext_t *alt_uc;

static void on_alt_stack(void)
{
    recs__forward(alt_sig, alt_si, alt_uc);
}

/* Signal-safe. Run the program's handler for its own instance si as the
 * kernel would: with SA_ONSTACK, on its alternate signal stack (unless
 * already there). The ucontext functions, obsolescent in POSIX, are what
 * glibc offers to run a function on another stack, and the context the
 * handler receives is one. */
static void deliver(int sig, siginfo_t *si)
{
    ucontext_t uc, alt;
    struct sigaction pa;
    stack_t ss;
    bool onstack;

    getcontext(&uc);
    onstack = sigaction(sig, NULL, &pa) == 0 && (pa.sa_flags & SA_ONSTACK) &&
              recs__is_handler(&pa) && sigaltstack(NULL, &ss) == 0 &&
              !(ss.ss_flags & (SS_DISABLE | SS_ONSTACK));
    if (onstack && getcontext(&alt) == 0) {
        alt.uc_stack.ss_sp = ss.ss_sp;
        alt.uc_stack.ss_size = ss.ss_size;
        alt.uc_stack.ss_flags = 0;
        alt.uc_link = &uc;
        alt_sig = sig;
        alt_si = si;
        alt_uc = &uc;
        makecontext(&alt, on_alt_stack, 0);
        /* Back here when on_alt_stack returns (uc_link), through the
         * context saved by swapcontext into uc. */
        swapcontext(&uc, &alt);
        return;
    }
    recs__forward(sig, si, &uc);
}

/* Signal-safe. Take every pending instance of sig (blocked): ours as
 * the waits take them, the program's into *own. True if one was the
 * program's. */
static bool take_pending(const sigset_t *set, int sig, siginfo_t *own)
{
    struct timespec zero = { 0, 0 };
    siginfo_t si;
    bool have = false;

    while (recs__real_sigtimedwait(set, &si, &zero) == sig)
        if (!swallow(&si) && !have) {
            *own = si;
            have = true;
        }
    return have;
}

/* Signal-safe. The program sends the sampling signal to its own thread
 * (raise, pthread_kill of itself). A standard signal is pending at most
 * once, and the kernel drops a second instance sent while one is queued:
 * one of our timer's, generated in the same instant, would take the
 * program's place, and the program's handler would never run. So it is
 * sent with the signal blocked, the pending instances are taken (ours as
 * the waits take them) until the program's is among them, and that one
 * is delivered here, as the kernel would have, before raise() returns. */
static int send_own(int sig)
{
    sigset_t set, old;
    siginfo_t own;
    pid_t pid = getpid(), tid = recs__gettid();
    bool have;
    int rc = 0, err;

    sigemptyset(&set);
    sigaddset(&set, sig);
    recs__real_sigmask(SIG_BLOCK, &set, &old);
    /* One of the program's already pending takes the new one in, as
     * without rec: then nothing is sent. */
    have = take_pending(&set, sig, &own);
    for (int tries = 0; !have && tries < 16; tries++) {
        if ((rc = (int)syscall(SYS_tgkill, pid, tid, sig)) != 0)
            break;
        have = take_pending(&set, sig, &own);
    }
    err = errno;
    recs__real_sigmask(SIG_SETMASK, &old, NULL);
    if (have)
        deliver(sig, &own);
    errno = err;
    return rc;
}

int raise(int sig)
{
    if (recs__g.signo > 0 && sig == recs__g.signo)
        return send_own(sig);
    if (!real_raise)                  /* before our constructors */
        sigwait_init();
    return real_raise ? real_raise(sig)
                      : (int)syscall(SYS_tgkill, getpid(), recs__gettid(), sig);
}

int gsignal(int sig);
int gsignal(int sig)
{
    return raise(sig);
}

int pthread_kill(pthread_t th, int sig)
{
    if (recs__g.signo > 0 && sig == recs__g.signo &&
        pthread_equal(th, pthread_self()))
        return send_own(sig) == 0 ? 0 : errno;
    if (!real_pthread_kill)           /* before our constructors */
        sigwait_init();
    return real_pthread_kill ? real_pthread_kill(th, sig) : ENOSYS;
}

int signalfd(int fd, const sigset_t *mask, int flags)
{
    sigset_t m;

    if (recs__g.signo > 0 && sigismember(mask, recs__g.signo) == 1) {
        m = *mask;
        sigdelset(&m, recs__g.signo);
        mask = &m;
        if (!atomic_exchange(&signalfd_warned, 1))
            recs__warn("the program reads signal %d (%s) through a signalfd; "
                       "rec samples with it, so it is left out of that "
                       "signalfd. Use rec-start --signal to pick a free "
                       "signal.", recs__g.signo, strsignal(recs__g.signo));
    }
    return (int)syscall(SYS_signalfd4, fd, mask, (size_t)(_NSIG / 8), flags);
}
