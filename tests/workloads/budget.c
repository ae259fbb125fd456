/*
 * tests/workloads/budget.c - threads with known CPU budgets, for checking
 * that a recording reconstructs each thread's CPU time.
 *
 *   "budget-2000", "budget-1000", "budget-500", "budget-250": busy loops
 *       until their own CPU clock (CLOCK_THREAD_CPUTIME_ID) reaches 2 s,
 *       1 s, 0.5 s, 0.25 s (times the scale);
 *   "bursty": 0.2 ms bursts separated by 5 ms sleeps, until the others end.
 * The main thread only waits.
 *
 * Usage: budget [-v] [-s SCALE] [-n NAME]
 *   -s SCALE  multiply the budgets (default 1; e.g. 0.2 for a quick run)
 *   -n NAME   name the first thread NAME instead (any bytes the kernel
 *             keeps: up to 15, a newline included)
 *   -v        print "name tid cpu_ns" per thread on stdout at the end
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define NBUSY 4

struct worker {
    const char *name;
    uint64_t budget_ns;
    pthread_t th;
    pid_t tid;
    uint64_t cpu_ns;          /* at the end, as the kernel reports it */
};

static atomic_int busy_left = NBUSY;
static volatile uint64_t sink;

static uint64_t cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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

static void *busy_main(void *arg)
{
    struct worker *w = arg;
    uint64_t x = w->budget_ns;

    pthread_setname_np(pthread_self(), w->name);
    w->tid = gettid();
    while (cpu_now() < w->budget_ns)
        x = spin(x, 20000);
    sink = x;
    w->cpu_ns = cpu_now();
    atomic_fetch_sub(&busy_left, 1);
    return NULL;
}

/* Bursts of wall time are approximately CPU time while the thread runs; the
 * point is many short runs between sleeps, not their exact length. */
static void *bursty_main(void *arg)
{
    struct worker *w = arg;
    struct timespec pause = { 0, 5000000 };
    uint64_t x = 1;

    pthread_setname_np(pthread_self(), w->name);
    w->tid = gettid();
    while (atomic_load(&busy_left) > 0) {
        uint64_t end = mono_now() + 200000;
        while (mono_now() < end)
            x = spin(x, 2000);
        nanosleep(&pause, NULL);
    }
    sink = x;
    w->cpu_ns = cpu_now();
    return NULL;
}

int main(int argc, char **argv)
{
    struct worker w[NBUSY + 1] = {
        { "budget-2000", 2000000000ull, 0, 0, 0 },
        { "budget-1000", 1000000000ull, 0, 0, 0 },
        { "budget-500", 500000000ull, 0, 0, 0 },
        { "budget-250", 250000000ull, 0, 0, 0 },
        { "bursty", 0, 0, 0, 0 },
    };
    double scale = 1;
    int verbose = 0, c;

    while ((c = getopt(argc, argv, "vs:n:")) != -1) {
        switch (c) {
        case 'v': verbose = 1; break;
        case 'n': w[0].name = optarg; break;
        case 's':
            scale = atof(optarg);
            if (!(scale > 0 && scale <= 100)) {
                fprintf(stderr, "budget: bad scale: %s\n", optarg);
                return 2;
            }
            break;
        default:
            fprintf(stderr, "usage: budget [-v] [-s SCALE] [-n NAME]\n");
            return 2;
        }
    }
    for (int i = 0; i < NBUSY; i++)
        w[i].budget_ns = (uint64_t)((double)w[i].budget_ns * scale);
    for (int i = 0; i <= NBUSY; i++) {
        if (pthread_create(&w[i].th, NULL, i < NBUSY ? busy_main : bursty_main, &w[i])) {
            perror("budget: pthread_create");
            return 1;
        }
    }
    for (int i = 0; i <= NBUSY; i++)
        pthread_join(w[i].th, NULL);
    if (verbose)
        for (int i = 0; i <= NBUSY; i++)
            printf("%s %d %llu\n", w[i].name, (int)w[i].tid,
                   (unsigned long long)w[i].cpu_ns);
    return 0;
}
