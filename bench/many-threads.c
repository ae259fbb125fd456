/*
 * bench/many-threads.c - many threads alive at once, each sampled, for
 * measuring the sampler's memory per thread (bench/sampler-memory.sh).
 *
 *   many-threads [THREADS [SPIN_MS]]   (default 200 threads, 20 ms)
 *
 * Every thread burns SPIN_MS of its own CPU clock (so that the sampler has
 * armed its timer and taken samples from it), then waits until all threads
 * have done so; only then do they all exit. Maximum RSS is therefore reached
 * with THREADS threads alive and known to the sampler. Thread stacks are
 * 64 KiB so the program's own memory per thread stays small next to what a
 * profiler adds. Prints nothing.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_barrier_t all_spun;
static uint64_t spin_ns = 20000000u;
static volatile uint64_t sink;

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *worker(void *arg)
{
    uint64_t x = (uintptr_t)arg, end = thread_cpu_ns() + spin_ns;

    while (thread_cpu_ns() < end)
        for (int i = 0; i < 10000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
    pthread_barrier_wait(&all_spun);
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200;
    double ms = argc > 2 ? atof(argv[2]) : 20;
    pthread_attr_t attr;
    pthread_t *th;

    if (n < 1 || n > 10000 || !(ms >= 0 && ms < 60000)) {
        fprintf(stderr, "usage: many-threads [THREADS [SPIN_MS]]\n");
        return 2;
    }
    spin_ns = (uint64_t)(ms * 1e6);
    th = calloc((size_t)n, sizeof *th);
    if (!th || pthread_barrier_init(&all_spun, NULL, (unsigned)n) != 0) {
        perror("many-threads");
        return 1;
    }
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    for (long i = 0; i < n; i++)
        if (pthread_create(&th[i], &attr, worker, (void *)(uintptr_t)(i + 1)) != 0) {
            perror("many-threads: pthread_create");
            return 1;
        }
    for (long i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    free(th);
    return 0;
}
