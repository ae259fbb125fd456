/*
 * bench/timer-floor.c - the accuracy floor of per-thread CPU-time timers,
 * without any profiler: the threads of tests/workloads/budget (2, 1, 0.5,
 * 0.25 s of CPU times SCALE, and a bursty thread of 0.2 ms bursts between
 * 5 ms sleeps), each with its own timer_create(CLOCK_THREAD_CPUTIME_ID)
 * timer and a SIGPROF handler that only adds period * (si_overrun + 1).
 * At the end each thread blocks the signal, collects a pending one, and
 * prints on stdout
 *     name tid accounted_ns cpu_ns
 * so that bench/sampler-accuracy.sh can show how close the kernel's own
 * signals come to the kernel's CPU figure (what any timer-based sampler can
 * at best reach).
 *
 *   timer-floor [PERIOD_US [SCALE]]   (default 1000 us, scale 1)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NBUSY 4

static uint64_t period_ns = 1000000;
static atomic_int busy_left = NBUSY;
static __thread volatile uint64_t accounted;
static volatile uint64_t sink;

static uint64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_prof(int sig, siginfo_t *si, void *uc)
{
    (void)sig; (void)uc;
    accounted += period_ns * (1 + (uint64_t)(si->si_overrun > 0 ? si->si_overrun : 0));
}

#ifdef __clang__
__attribute__((noinline))
#else
__attribute__((noipa))
#endif
static uint64_t spin(uint64_t x, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

struct worker { const char *name; uint64_t budget_ns; pthread_t th; };

static void *run(void *arg)
{
    struct worker *w = arg;
    struct sigevent sev = { 0 };
    struct itimerspec its = { { 0, 0 }, { 0, 0 } };
    timer_t tm;
    clockid_t cid;
    sigset_t set;
    siginfo_t si;
    struct timespec zero = { 0, 0 }, pause = { 0, 5000000 };
    uint64_t x = 1, c0;

    pthread_setname_np(pthread_self(), w->name);
    pthread_getcpuclockid(pthread_self(), &cid);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev._sigev_un._tid = gettid();
    c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    if (timer_create(cid, &sev, &tm) != 0) {
        perror("timer_create");
        exit(1);
    }
    its.it_interval.tv_sec = (time_t)(period_ns / 1000000000u);
    its.it_interval.tv_nsec = (long)(period_ns % 1000000000u);
    its.it_value = its.it_interval;
    timer_settime(tm, 0, &its, NULL);
    if (w->budget_ns) {
        while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < w->budget_ns)
            x = spin(x, 20000);
        atomic_fetch_sub(&busy_left, 1);
    } else {
        while (atomic_load(&busy_left) > 0) {
            uint64_t end = clock_ns(CLOCK_MONOTONIC) + 200000;
            while (clock_ns(CLOCK_MONOTONIC) < end)
                x = spin(x, 2000);
            nanosleep(&pause, NULL);
        }
    }
    sink = x;
    /* Collect a signal still pending before the timer goes (deleting or
     * re-arming it would invalidate the pending signal). */
    sigemptyset(&set);
    sigaddset(&set, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    while (sigtimedwait(&set, &si, &zero) == SIGPROF)
        accounted += period_ns * (1 + (uint64_t)(si.si_overrun > 0 ? si.si_overrun : 0));
    timer_delete(tm);
    printf("%s %d %llu %llu\n", w->name, (int)gettid(), (unsigned long long)accounted,
           (unsigned long long)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0));
    return NULL;
}

int main(int argc, char **argv)
{
    struct worker w[NBUSY + 1] = {
        { "budget-2000", 2000000000u, 0 }, { "budget-1000", 1000000000u, 0 },
        { "budget-500", 500000000u, 0 }, { "budget-250", 250000000u, 0 },
        { "bursty", 0, 0 },
    };
    struct sigaction sa = { 0 };
    double scale = argc > 2 ? atof(argv[2]) : 1;

    if (argc > 1)
        period_ns = (uint64_t)atol(argv[1]) * 1000u;
    if (period_ns < 1000 || !(scale > 0 && scale <= 100)) {
        fprintf(stderr, "usage: timer-floor [PERIOD_US [SCALE]]\n");
        return 2;
    }
    sa.sa_sigaction = on_prof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (int i = 0; i < NBUSY; i++)
        w[i].budget_ns = (uint64_t)((double)w[i].budget_ns * scale);
    for (int i = 0; i <= NBUSY; i++)
        pthread_create(&w[i].th, NULL, run, &w[i]);
    for (int i = 0; i <= NBUSY; i++)
        pthread_join(w[i].th, NULL);
    return 0;
}
