/* tests/hazards/hazard.h - helpers for the programs the sampler tests run
 * under LD_PRELOAD=libsampler.so. They print nothing on stdout (the
 * tests compare it) and report through their exit status. */
#ifndef REC_HAZARD_H
#define REC_HAZARD_H
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t hz_sink;

static inline uint64_t hz_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void hz_leaf(unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        hz_sink += i * (uint64_t)i;
}

__attribute__((noinline, unused)) static void hz_work(unsigned n)
{
    hz_leaf(n);
    __asm__ volatile("" ::: "memory");   /* not a tail call */
}

/* Burn ms milliseconds of this thread's CPU time. */
__attribute__((noinline, unused)) static void hz_burn_ms(double ms)
{
    uint64_t until = hz_thread_cpu_ns() + (uint64_t)(ms * 1e6);
    while (hz_thread_cpu_ns() < until)
        hz_work(20000);
    __asm__ volatile("" ::: "memory");
}

static inline double hz_arg(int argc, char **argv, int i, double dflt)
{
    return argc > i ? atof(argv[i]) : dflt;
}
#endif
