/* killed SIG [MS]: burn in two threads for MS ms of wall time, then raise
 * SIG (SIGKILL: no chance to finish; SIGTERM: default action, which the
 * sampler intercepts to finish the file first). */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include "hazard.h"

static void *spin(void *arg)
{
    (void)arg;
    for (;;)
        hz_work(20000);
    return NULL;
}

int main(int argc, char **argv)
{
    int sig = (int)hz_arg(argc, argv, 1, SIGKILL);
    double ms = hz_arg(argc, argv, 2, 600);
    struct timespec t0, t;
    pthread_t a;

    pthread_create(&a, NULL, spin, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        hz_work(20000);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1e3 + (t.tv_nsec - t0.tv_nsec) / 1e6 < ms);
    raise(sig);
    return 9;
}
