/* jumper: a SIGUSR1 handler that leaves by siglongjmp, sent every 20 us
 * by a wall-clock timer to the main thread, which works in deep stacks
 * while rec samples it at a 1 ms period. If the program's handler could interrupt rec's handler,
 * the jump would abandon rec's queue lock: every later sample of the main
 * thread lost as queue-busy, and the interrupted one's CPU time gone.
 * Exit 0 when done (argv[1]: seconds of CPU). */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "hazard.h"

static sigjmp_buf jb;
static volatile sig_atomic_t armed;

static void h(int sig)
{
    (void)sig;
    if (armed) {
        armed = 0;
        siglongjmp(jb, 1);
    }
}

__attribute__((noinline)) static void deep(int d)
{
    if (d)
        deep(d - 1);
    else
        hz_leaf(2000);
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
    uint64_t until = hz_thread_cpu_ns() + (uint64_t)(hz_arg(argc, argv, 1, 1) * 1e9);
    struct sigaction sa;
    struct sigevent sev;
    struct itimerspec its = { { 0, 20000 }, { 0, 20000 } };
    timer_t tm;

    sa.sa_handler = h;
    sa.sa_flags = 0;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGUSR1;
    sev._sigev_un._tid = gettid();
    if (timer_create(CLOCK_MONOTONIC, &sev, &tm) != 0 ||
        timer_settime(tm, 0, &its, NULL) != 0)
        return 9;
    while (hz_thread_cpu_ns() < until) {
        sigsetjmp(jb, 1);
        armed = 1;
        deep(1000);
    }
    armed = 0;
    timer_delete(tm);
    return 0;
}
