/*
 * bench/unwind-qsort.c - CPU spent in a comparison function that glibc's
 * qsort calls back (a Debian library without frame pointers between two
 * frames of the program), in two threads. Usage: unwind-qsort [SECONDS]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define N 200000

static double budget = 1.0;

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noipa)) static int qs_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    /* Some work per comparison, so that most samples land here. */
    for (int i = 0; i < 8; i++) {
        x = x * 6364136223846793005ull + 1;
        y = y * 6364136223846793005ull + 1;
    }
    return x < y ? -1 : x > y;
}

__attribute__((noipa)) static void *qs_thread(void *arg)
{
    uint64_t *v = malloc(N * sizeof *v), seed = (uintptr_t)arg;
    uint64_t end = cpu_ns() + (uint64_t)(budget * 1e9);

    if (!v)
        return NULL;
    while (cpu_ns() < end) {
        for (int i = 0; i < N; i++) {
            seed = seed * 2862933555777941757ull + 3037000493ull;
            v[i] = seed;
        }
        qsort(v, N, sizeof *v, qs_cmp);
    }
    free(v);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t;

    if (argc > 1)
        budget = atof(argv[1]);
    pthread_create(&t, NULL, qs_thread, (void *)1);
    qs_thread((void *)2);
    pthread_join(t, NULL);
    return 0;
}
