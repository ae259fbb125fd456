/*
 * tests/workloads/fpspin.c - threads that keep a running sum in a vector
 * register for seconds, for rec-start -p: a thread stopped in the middle
 * of the loop must get every register back, the vector ones included.
 *   fpspin [THREADS] [SECONDS]
 * Prints "ok" if every sum is exact, "bad" otherwise; "ready" first.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double seconds = 2;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *spin(void *arg)
{
    long long *bad = arg, n = 0;
    double end = now() + seconds;

    while (now() < end) {
        /* 2^20 exact additions of 1.0 with the sum in a register: the
         * loop has no call, so the sum never leaves it. */
        double x = 0;
        for (int i = 0; i < (1 << 20); i++)
            __asm__ volatile("addsd %1, %0" : "+x"(x) : "x"(1.0));
        if (x != (double)(1 << 20))
            (*bad)++;
        n++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 2;
    pthread_t th[64];
    long long bad[64] = { 0 }, total = 0;

    if (argc > 2)
        seconds = atof(argv[2]);
    if (n < 1 || n > 64)
        return 2;
    for (int i = 0; i < n; i++)
        if (pthread_create(&th[i], NULL, spin, &bad[i]) != 0)
            return 1;
    printf("ready\n");
    fflush(stdout);
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        total += bad[i];
    }
    printf("%s\n", total ? "bad" : "ok");
    return 0;
}
