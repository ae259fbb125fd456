/* tests/hazards/hazard.h - helpers for the programs the sampler tests run
 * under LD_PRELOAD=libsampler.so. They print nothing on stdout (the
 * tests compare it) and report through their exit status. */
#ifndef REC_HAZARD_H
#define REC_HAZARD_H
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
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

/* The sampler thread's id (named "rec-sampler"), 0 if there is none. */
__attribute__((unused)) static pid_t hz_sampler_tid(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    pid_t tid = 0;

    while (d && (e = readdir(d))) {
        char path[300], comm[32] = "";
        FILE *f;
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        if (e->d_name[0] == '.' || !(f = fopen(path, "re")))
            continue;
        if (fgets(comm, sizeof comm, f) && !strncmp(comm, "rec-sampler", 11))
            tid = (pid_t)atoi(e->d_name);
        fclose(f);
    }
    if (d)
        closedir(d);
    return tid;
}

static inline double hz_arg(int argc, char **argv, int i, double dflt)
{
    return argc > i ? atof(argv[i]) : dflt;
}
#endif
