/*
 * libsampler/disposition.c - the program's view of signal dispositions:
 * sigaction() and every other way glibc offers to set one (signal, sigset,
 * bsd_signal, sysv_signal, sigignore, siginterrupt...). For the sampling
 * signal the program's action is kept aside (handler.c forwards to it the
 * signals rec did not send) and reported back as if installed; for the
 * signals whose default action rec replaced to finish the recording, the
 * default is reported until the program sets its own. Not signal context.
 */
#include <config.h>
#include "internal.h"

#include <errno.h>
#include <string.h>

/* Interposed: the program's view of the signals rec uses. */
int sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
    if (sig > 0 && sig == recs__g.signo) {
        recs__prog_store(act, oldact, NULL);
        if (act) {
            if (recs__is_handler(act) && recs__prog_warn_once())
                recs__warn("the program installs its own handler for signal "
                           "%d (%s); rec keeps sampling on it and passes the "
                           "program only the signals rec's timers did not "
                           "send. Use rec-start --signal to pick a free "
                           "signal.", sig, strsignal(sig));
        }
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
        rc = recs__real_sigaction(sig, act, oldact);
        if (rc == 0) {
            recs__fatal_disown(sig);
            if (oldact) {
                memset(oldact, 0, sizeof *oldact);
                oldact->sa_handler = SIG_DFL;
            }
        }
        return rc;
    }
    return recs__real_sigaction(sig, act, oldact);
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
