/* sigdisp: the program sets its SIGPROF disposition with one of the
 * functions glibc implements past the PLT (sigset, bsd_signal,
 * sysv_signal, ssignal, sigignore, siginterrupt, __sigaction), then burns
 * CPU while rec samples on SIGPROF. Exit 0 if the program's handler got
 * none of rec's timer signals, its own raise(SIGPROF) reached it as the
 * disposition says (mask, SA_NODEFER, SA_RESETHAND), and the disposition
 * reads back as set. "many [N]": the program raises its own SIGPROF N
 * times (20000), each must reach its handler once. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <string.h>
#include "hazard.h"

/* The old interfaces are what this tests. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

int __sigaction(int, const struct sigaction *, struct sigaction *);
sighandler_t bsd_signal(int, sighandler_t);

static atomic_int got;

static void h(int sig)
{
    (void)sig;
    atomic_fetch_add(&got, 1);
}

/* For the mask modes: what the handler saw blocked. */
static atomic_int saw_usr2, saw_prof;

static void hmask(int sig)
{
    sigset_t cur;
    (void)sig;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    atomic_store(&saw_usr2, sigismember(&cur, SIGUSR2));
    atomic_store(&saw_prof, sigismember(&cur, SIGPROF));
    atomic_fetch_add(&got, 1);
}

static sighandler_t cur_handler(int *flags)
{
    struct sigaction sa;
    if (sigaction(SIGPROF, NULL, &sa) != 0)
        return SIG_ERR;
    if (flags)
        *flags = sa.sa_flags;
    return sa.sa_handler;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "sigset";
    int flags = 0;

    if (!strcmp(mode, "sigset")) {
        if (sigset(SIGPROF, h) != SIG_DFL)
            return 10;
    } else if (!strcmp(mode, "bsd")) {
        if (bsd_signal(SIGPROF, h) != SIG_DFL)
            return 10;
    } else if (!strcmp(mode, "sysv")) {
        if (sysv_signal(SIGPROF, h) != SIG_DFL)
            return 10;
    } else if (!strcmp(mode, "ssignal")) {
        if (ssignal(SIGPROF, h) != SIG_DFL)
            return 10;
    } else if (!strcmp(mode, "__sigaction")) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = h;
        if (__sigaction(SIGPROF, &sa, NULL) != 0)
            return 10;
    } else if (!strcmp(mode, "siginterrupt")) {
        signal(SIGPROF, h);
        if (siginterrupt(SIGPROF, 1) != 0 || cur_handler(&flags) != h ||
            (flags & SA_RESTART))
            return 10;
    } else if (!strcmp(mode, "mask") || !strcmp(mode, "nodefer")) {
        /* The handler runs with its sa_mask and, unless SA_NODEFER, the
         * signal itself blocked: as the kernel would run it. */
        struct sigaction sa;
        bool nodefer = !strcmp(mode, "nodefer");
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = hmask;
        sa.sa_flags = nodefer ? SA_NODEFER : 0;
        sigemptyset(&sa.sa_mask);
        sigaddset(&sa.sa_mask, SIGUSR2);
        if (sigaction(SIGPROF, &sa, NULL) != 0)
            return 10;
        hz_burn_ms(300);
        if (atomic_load(&got) != 0)
            return 1;
        raise(SIGPROF);
        if (atomic_load(&got) != 1)
            return 2;
        if (atomic_load(&saw_usr2) != 1 || atomic_load(&saw_prof) != !nodefer)
            return 4;
        return 0;
    } else if (!strcmp(mode, "many")) {
        /* The program's own SIGPROF, raised N times (argv[2], 20000)
         * while rec samples on it: each one reaches the handler once,
         * even the ones sent while one of rec's was pending. */
        int n = (int)hz_arg(argc, argv, 2, 20000);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = h;
        if (sigaction(SIGPROF, &sa, NULL) != 0)
            return 10;
        for (int i = 0; i < n; i++) {
            hz_work(2000);
            if (i % 2)
                raise(SIGPROF);
            else
                pthread_kill(pthread_self(), SIGPROF);
        }
        if (atomic_load(&got) != n)
            fprintf(stderr, "sigdisp many: %d of %d delivered\n", atomic_load(&got), n);
        return atomic_load(&got) == n ? 0 : 12;
    } else if (!strcmp(mode, "sigignore")) {
        if (sigignore(SIGPROF) != 0 || cur_handler(NULL) != SIG_IGN)
            return 10;
        hz_burn_ms(300);
        raise(SIGPROF);          /* ignored, as the program asked */
        return cur_handler(NULL) == SIG_IGN ? 0 : 11;
    } else {
        return 9;
    }
    if (cur_handler(NULL) != h)
        return 11;
    hz_burn_ms(300);             /* ~30 of rec's timer signals */
    if (atomic_load(&got) != 0)
        return 1;                /* rec's signals reached the program */
    raise(SIGPROF);              /* the program's own: forwarded */
    if (atomic_load(&got) != 1)
        return 2;
    if (!strcmp(mode, "sysv")) {
        /* One-shot: the program's action is back to the default. */
        if (cur_handler(NULL) != SIG_DFL)
            return 3;
        hz_burn_ms(100);         /* rec's signals must not kill it now */
    }
    return 0;
}
