/* sigreenter [MS]: for MS milliseconds (1000) the main thread changes
 * dispositions in a loop (sigaction, signal) while another thread sends
 * it SIGUSR1 as fast as it can; the SIGUSR1 handler changes dispositions
 * too, so it often runs while its thread is inside sigaction(), which
 * POSIX makes async-signal-safe. Exit 0 if the loop ended and the handler
 * ran; a hang is ended by SIGALRM (status 142). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include "hazard.h"

static atomic_int done, handled;

static void nop(int sig)
{
    (void)sig;
}

static void on_usr1(int sig)
{
    struct sigaction sa, old;

    (void)sig;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = nop;
    sigfillset(&sa.sa_mask);              /* wrapped: holds SIGPROF */
    sigaction(SIGUSR2, &sa, &old);
    signal(SIGWINCH, nop);
    atomic_fetch_add(&handled, 1);
}

static void *sender(void *arg)
{
    pthread_t main_thread = *(pthread_t *)arg;

    while (!atomic_load(&done))
        pthread_kill(main_thread, SIGUSR1);
    return NULL;
}

int main(int argc, char **argv)
{
    double ms = hz_arg(argc, argv, 1, 1000);
    uint64_t until = hz_thread_cpu_ns() + (uint64_t)(ms * 1e6);
    pthread_t self = pthread_self(), t;
    struct sigaction sa, old;

    alarm(60);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    if (pthread_create(&t, NULL, sender, &self) != 0)
        return 2;
    while (hz_thread_cpu_ns() < until) {
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = nop;
        sigfillset(&sa.sa_mask);
        sigaction(SIGUSR2, &sa, &old);
        sigaction(SIGWINCH, NULL, &old);
        signal(SIGUSR2, SIG_DFL);
    }
    atomic_store(&done, 1);
    pthread_join(t, NULL);
    return atomic_load(&handled) > 0 ? 0 : 1;
}
