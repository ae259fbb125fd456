/*
 * libsampler/hook-sigaction.c - the program's view of signal dispositions:
 * sigaction() and every other way glibc offers to set one (signal, sigset,
 * bsd_signal, sysv_signal, sigignore, siginterrupt...). For the sampling
 * signal the program's action is kept aside (handler.c forwards to it the
 * signals rec did not send) and reported back as if installed; for the
 * signals whose default action rec replaced to finish the recording, the
 * default is reported until the program sets its own.
 *
 * A program's handler whose sa_mask holds the sampling signal (a full set
 * is common) would block it while the handler runs: that CPU time would be
 * lost as "blocked". Such a handler is installed behind wrap_handler,
 * which unblocks the sampling signal as it begins; the wrapper makes the
 * program's view of its mask block it meanwhile (hook-sigmask.c), as the
 * kernel would have, and sigaction() reports the action as the program
 * set it. A handler of a signal rec-start forwards (TERM, HUP, USR1,
 * USR2) is installed behind copy_handler, which drops rec-start's copy of
 * a signal the process got itself: sent to the whole process group, it
 * reaches the program once, as without rec. Every entry is async-signal-safe and re-entrant, as POSIX
 * makes sigaction(): a program's handler may call one while its thread is
 * inside another (no mutex, no allocation; see wlock).
 */
#include <config.h>
#include "internal.h"

#include <errno.h>
#include <sched.h>
#include <string.h>

/* The wrapped handlers, two slots per signal: sigaction() fills the one
 * not in use, then publishes it, so that a wrapper running meanwhile (on
 * this thread too) reads a whole entry. */
typedef struct wrapped {
    void (*fn)(int, siginfo_t *, void *);
    bool siginfo;
} wrapped;
static wrapped wslot[NSIG][2];
static _Atomic int wcur[NSIG];
/* What the program set, reported back while the wrapper is installed. */
static struct sigaction wset[NSIG];
/* sigaction() is async-signal-safe: a handler may call it while its
 * thread is inside it. The section below runs with every signal but the
 * faults blocked for real (no handler can enter it on this thread) and
 * excludes the other threads with a spin lock (it is one system call
 * long): never a mutex, which the handler's own thread may hold. */
static atomic_flag wlock = ATOMIC_FLAG_INIT;

/* Signal-safe. */
static void wlock_take(sigset_t *old)
{
    recs__block_async(old);
    while (atomic_flag_test_and_set_explicit(&wlock, memory_order_acquire))
        sched_yield();
}

/* Signal-safe. */
static void wlock_drop(const sigset_t *old)
{
    atomic_flag_clear_explicit(&wlock, memory_order_release);
    recs__restore_mask(old);
}

/* The context a wrapped signal interrupted, while the wrapper takes the
 * sampling signals that were pending at its delivery (handler.c walks
 * from it). */
__thread const void *recs__wrap_uc __attribute__((tls_model("initial-exec")));

/* Signal-safe. Entered with the sampling signal blocked (the kernel's
 * sa_mask): one pending when this signal was delivered (a CPU timer's
 * expiry noticed at the same return to user space, as a runtime's
 * preemption signal often is) stands for CPU time of the interrupted
 * code, not of this wrapper; it is taken at the unblock below and walked
 * from uc. Unblocked before the program's handler runs, whose CPU time is
 * its own. */
static bool forwardable(int sig)
{
    return sig == SIGTERM || sig == SIGHUP || sig == SIGUSR1 || sig == SIGUSR2;
}

static void call_program(const wrapped *w, int sig, siginfo_t *si, void *uc)
{
    if (w->siginfo)
        w->fn(sig, si, uc);
    else
        ((void (*)(int))(void (*)(void))w->fn)(sig);
}

/* Signal-safe. */
static void copy_handler(int sig, siginfo_t *si, void *uc)
{
    const wrapped *w = &wslot[sig][atomic_load(&wcur[sig])];

    if (!recs__forwarded_copy(sig, si))
        call_program(w, sig, si, uc);
}

/* Signal-safe. */
static void wrap_handler(int sig, siginfo_t *si, void *uc)
{
    const wrapped *w = &wslot[sig][atomic_load(&wcur[sig])];
    const void *outer;
    int view;
    sigset_t ours;

    if (forwardable(sig) && recs__forwarded_copy(sig, si))
        return;
    outer = recs__wrap_uc;
    view = recs__sigmask_hold();

    recs__wrap_uc = uc;
    sigemptyset(&ours);
    sigaddset(&ours, recs__g.signo);
    recs__real_sigmask(SIG_UNBLOCK, &ours, NULL);
    recs__wrap_uc = outer;
    call_program(w, sig, si, uc);
    recs__sigmask_release(view);
}

static bool needs_wrap(int sig, const struct sigaction *act)
{
    int s = recs__g.signo;

    return act && s > 0 && sig > 0 && sig < NSIG && sig != s &&
           recs__is_handler(act) && sigismember(&act->sa_mask, s) == 1;
}

/* Signal-safe. libc's sigaction for a signal that is not the sampling
 * one, a handler that blocks the sampling signal behind wrap_handler. */
static int prog_sigaction(int sig, const struct sigaction *act,
                          struct sigaction *oldact)
{
    struct sigaction k, prev;
    const struct sigaction *use = act;
    sigset_t mask;
    int rc, err;

    if (sig <= 0 || sig >= NSIG)
        return recs__real_sigaction(sig, act, oldact);
    wlock_take(&mask);
    bool wrap = needs_wrap(sig, act);
    if (wrap || (act && forwardable(sig) && recs__is_handler(act))) {
        int next = !atomic_load(&wcur[sig]);

        wslot[sig][next].siginfo = (act->sa_flags & SA_SIGINFO) != 0;
        wslot[sig][next].fn = (act->sa_flags & SA_SIGINFO) ? act->sa_sigaction
            : (void (*)(int, siginfo_t *, void *))(void (*)(void))act->sa_handler;
        atomic_store(&wcur[sig], next);
        k = *act;
        if (wrap)
            sigaddset(&k.sa_mask, recs__g.signo);     /* until wrap_handler */
        k.sa_flags |= SA_SIGINFO;
        k.sa_sigaction = wrap ? wrap_handler : copy_handler;
        use = &k;
    }
    rc = recs__real_sigaction(sig, use, &prev);
    if (rc == 0) {
        /* SA_RESETHAND may have put the default back meanwhile: the
         * kernel's action is the truth unless it is the wrapper. */
        if (oldact) {
            *oldact = prev;
            if ((prev.sa_flags & SA_SIGINFO) &&
                (prev.sa_sigaction == wrap_handler ||
                 prev.sa_sigaction == copy_handler)) {
                /* As the kernel reports it (SA_RESTORER, no SIGKILL in
                 * the mask), with the program's handler and signal. */
                const struct sigaction *p = &wset[sig];
                oldact->sa_flags = (prev.sa_flags & ~SA_SIGINFO) |
                                   (p->sa_flags & SA_SIGINFO);
                if (p->sa_flags & SA_SIGINFO)
                    oldact->sa_sigaction = p->sa_sigaction;
                else
                    oldact->sa_handler = p->sa_handler;
                if (prev.sa_sigaction == wrap_handler)
                    sigaddset(&oldact->sa_mask, recs__g.signo);
            }
        }
        if (use == &k)
            wset[sig] = *act;
    }
    err = errno;
    wlock_drop(&mask);
    errno = err;
    return rc;
}

/* Interposed: the program's view of the signals rec uses. */
int sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
    recs__sigaction_early();
    if (sig > 0 && sig == recs__g.signo) {
        /* Said when the handler first gets a signal (handler.c): many
         * programs catch every signal and never see this one (GNU sort's
         * cleanup, Go's runtime). */
        recs__prog_store(act, oldact, NULL);
        return 0;
    }
    if (recs__fatal_is_ours(sig)) {
        int rc;
        if (!act) {
            rc = recs__real_sigaction(sig, NULL, oldact);
            if (rc == 0 && oldact) {
                memset(oldact, 0, sizeof *oldact);
                oldact->sa_handler = SIG_DFL;
            }
            return rc;
        }
        rc = prog_sigaction(sig, act, oldact);
        if (rc == 0) {
            recs__fatal_disown(sig);
            if (oldact) {
                memset(oldact, 0, sizeof *oldact);
                oldact->sa_handler = SIG_DFL;
            }
        }
        return rc;
    }
    return prog_sigaction(sig, act, oldact);
}

/* Interposed: glibc's signal() calls sigaction internally, past the PLT. */
sighandler_t signal(int sig, sighandler_t handler)
{
    struct sigaction sa, old;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;   /* BSD semantics, as glibc's signal() */
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, sig > 0 && sig < NSIG ? sig : 1);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}

/* The other ways to set a disposition. glibc implements them with its
 * internal sigaction, past the PLT, so each is routed through ours here
 * with glibc's own semantics. (-std=c11 turns signal() into __sysv_signal.) */
int __sigaction(int sig, const struct sigaction *act, struct sigaction *oldact);
int __sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
    return sigaction(sig, act, oldact);
}

sighandler_t bsd_signal(int sig, sighandler_t handler);
sighandler_t bsd_signal(int sig, sighandler_t handler)
{
    return signal(sig, handler);
}

sighandler_t ssignal(int sig, sighandler_t handler)
{
    return signal(sig, handler);
}

/* System V: one-shot, not masked during the handler, no restart. */
sighandler_t __sysv_signal(int sig, sighandler_t handler)
{
    struct sigaction sa, old;

    if (handler == SIG_ERR || sig < 1 || sig >= NSIG) {
        errno = EINVAL;
        return SIG_ERR;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}

sighandler_t sysv_signal(int sig, sighandler_t handler)
{
    return __sysv_signal(sig, handler);
}

sighandler_t sigset(int sig, sighandler_t disp)
{
    struct sigaction sa, old;
    sigset_t set, oset;

    if (disp == SIG_ERR || sig < 1 || sig >= NSIG) {
        errno = EINVAL;
        return SIG_ERR;
    }
    sigemptyset(&set);
    sigaddset(&set, sig);
    if (disp == SIG_HOLD) {
        if (sigprocmask(SIG_BLOCK, &set, &oset) < 0)
            return SIG_ERR;
        if (sigismember(&oset, sig))
            return SIG_HOLD;
        if (sigaction(sig, NULL, &old) < 0)
            return SIG_ERR;
        return old.sa_handler;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = disp;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &old) < 0 ||
        sigprocmask(SIG_UNBLOCK, &set, &oset) < 0)
        return SIG_ERR;
    return sigismember(&oset, sig) ? SIG_HOLD : old.sa_handler;
}

int sigignore(int sig)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigemptyset(&sa.sa_mask);
    return sigaction(sig, &sa, NULL);
}

int siginterrupt(int sig, int interrupt)
{
    struct sigaction sa;

    if (sigaction(sig, NULL, &sa) < 0)
        return -1;
    if (interrupt)
        sa.sa_flags &= ~SA_RESTART;
    else
        sa.sa_flags |= SA_RESTART;
    return sigaction(sig, &sa, NULL);
}
