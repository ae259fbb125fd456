/*
 * bench/peer-burn.c - the CPU-bound workload bench/peers.sh profiles with
 * rec and with other profilers. Built by the script (cc -O2
 * -fno-omit-frame-pointer), not by make.
 *
 *   peer-burn [THREADS [WORK]]   (WORK 1500: about 2.5 s per thread here)
 *
 * Each thread runs a fixed amount of work through a few call levels (so
 * stacks have depth) and the program prints the CPU time the workers used,
 * as the kernel counts it, so profilers can be checked against it:
 *   workers_cpu_ns=<sum of CLOCK_THREAD_CPUTIME_ID of the workers>
 *   process_cpu_ns=<CLOCK_PROCESS_CPUTIME_ID at exit: profiler threads too>
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long millions = 1500;

static uint64_t ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static uint64_t leaf(uint64_t x)
{
    /* xorshift: cheap, not foldable */
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
}

__attribute__((noinline)) static uint64_t mid(uint64_t x, int n)
{
    for (int i = 0; i < n; i++)
        x = leaf(x);
    return x;
}

__attribute__((noinline)) static uint64_t top(uint64_t x, long iters)
{
    for (long i = 0; i < iters; i++)
        x = mid(x, (i & 1) ? 1000 : 3000) + (uint64_t)i;
    return x;
}

static void *worker(void *arg)
{
    uint64_t *cpu = arg;
    volatile uint64_t sink = top((uint64_t)(uintptr_t)arg | 1, millions * 500);
    (void)sink;
    *cpu = ns(CLOCK_THREAD_CPUTIME_ID);
    return NULL;
}

int main(int argc, char **argv)
{
    int nthreads = argc > 1 ? atoi(argv[1]) : 2;
    if (argc > 2)
        millions = atol(argv[2]);
    if (nthreads < 1 || nthreads > 64 || millions < 1) {
        fprintf(stderr, "usage: peer-burn [THREADS [WORK]]\n");
        return 2;
    }
    pthread_t t[64];
    uint64_t cpu[64] = { 0 }, sum = 0;
    for (int i = 0; i < nthreads; i++)
        if (pthread_create(&t[i], NULL, worker, &cpu[i]) != 0)
            return 1;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(t[i], NULL);
        sum += cpu[i];
    }
    printf("workers_cpu_ns=%llu\nprocess_cpu_ns=%llu\n",
           (unsigned long long)sum,
           (unsigned long long)ns(CLOCK_PROCESS_CPUTIME_ID));
    return 0;
}
