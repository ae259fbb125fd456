/*
 * tests/workloads/unwind-sig.c - CPU burnt inside the program's own signal
 * handler: a sample there must show, below the handler and the signal
 * trampoline, the code the signal interrupted:
 *   usig_burn usig_handler [trampoline] usig_spin main
 * Built without frame pointers. Usage: unwind-sig [SECONDS]
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#define NOIPA __attribute__((noipa))

static volatile uint64_t sink;
static volatile sig_atomic_t handled;

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

NOIPA static uint64_t usig_burn(uint64_t x)
{
    uint64_t end = cpu_ns() + 4000000;     /* 4 ms of CPU per signal */
    while (cpu_ns() < end)
        for (unsigned i = 0; i < 20000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

NOIPA static void usig_handler(int sig)
{
    (void)sig;
    sink = usig_burn(sink) + 1;
    handled++;
}

/* Pure arithmetic between signals (no call: the interrupted pc is here). */
NOIPA static uint64_t usig_spin(uint64_t x, uint64_t budget)
{
    uint64_t start = cpu_ns();
    while (cpu_ns() - start < budget)
        for (unsigned i = 0; i < 100000; i++)
            x = (x ^ (x >> 11)) * 0x9e3779b97f4a7c15ull + i;
    return x;
}

int main(int argc, char **argv)
{
    double s = argc > 1 ? atof(argv[1]) : 1.0;
    struct sigaction sa;
    struct itimerval it;

    if (!(s > 0 && s < 3600)) {
        fprintf(stderr, "usage: unwind-sig [SECONDS]\n");
        return 2;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = usig_handler;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    memset(&it, 0, sizeof it);
    it.it_interval.tv_usec = 10000;
    it.it_value.tv_usec = 10000;
    setitimer(ITIMER_REAL, &it, NULL);
    sink = usig_spin(1, (uint64_t)(s * 1e9));
    memset(&it, 0, sizeof it);
    setitimer(ITIMER_REAL, &it, NULL);
    return handled > 0 ? 0 : 1;
}
