/* sigwaiter: the daemon pattern. The main thread blocks every signal,
 * works, then takes its signals synchronously (argv[1]: sigwait,
 * sigwaitinfo, sigtimedwait or signalfd); another thread sends SIGTERM.
 * rec's timer signals, pending in the main thread meanwhile, must not be
 * what the wait returns. Exit 0 if the program got SIGTERM (and, first, a
 * zero-timeout poll found nothing). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>
#include "hazard.h"

static void *worker(void *arg)
{
    (void)arg;
    usleep(200000);
    kill(getpid(), SIGTERM);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "sigwait";
    struct timespec zero = { 0, 0 }, ten = { 10, 0 };
    sigset_t all;
    siginfo_t si;
    pthread_t t;
    int sig = 0;

    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    hz_burn_ms(150);             /* rec's timer signal is now pending */
    /* Nothing of the program's own is pending yet. */
    if (sigtimedwait(&all, &si, &zero) != -1 || errno != EAGAIN)
        return 1;
    hz_burn_ms(100);
    pthread_create(&t, NULL, worker, NULL);
    if (!strcmp(mode, "sigwait")) {
        if (sigwait(&all, &sig) != 0)
            return 2;
    } else if (!strcmp(mode, "sigwaitinfo")) {
        sig = sigwaitinfo(&all, &si);
    } else if (!strcmp(mode, "sigtimedwait")) {
        sig = sigtimedwait(&all, &si, &ten);
    } else if (!strcmp(mode, "signalfd")) {
        struct signalfd_siginfo fi;
        int fd = signalfd(-1, &all, SFD_CLOEXEC);
        if (fd < 0 || read(fd, &fi, sizeof fi) != (ssize_t)sizeof fi)
            return 2;
        sig = (int)fi.ssi_signo;
        close(fd);
    } else {
        return 9;
    }
    pthread_join(t, NULL);
    return sig == SIGTERM ? 0 : 3;
}
