/* manythreads [N [US]]: create and join N short threads, 4 at a time, each
 * burning US microseconds of CPU; some leave by pthread_exit, some are
 * cancelled. Exit 0 when all were joined. */
#include <pthread.h>
#include <unistd.h>
#include "hazard.h"

static double us;

static void *worker(void *arg)
{
    long i = (long)arg;
    hz_burn_ms(us / 1000.0);
    if (i % 3 == 1)
        pthread_exit(NULL);
    if (i % 3 == 2) {
        for (;;) {
            pthread_testcancel();
            hz_work(1000);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long n = (long)hz_arg(argc, argv, 1, 10000);
    pthread_t t[4];

    us = hz_arg(argc, argv, 2, 200);
    for (long i = 0; i < n; i += 4) {
        long k = n - i < 4 ? n - i : 4;
        for (long j = 0; j < k; j++)
            if (pthread_create(&t[j], NULL, worker, (void *)(i + j)) != 0)
                return 1;
        for (long j = 0; j < k; j++) {
            if ((i + j) % 3 == 2)
                pthread_cancel(t[j]);
            pthread_join(t[j], NULL);
        }
    }
    return 0;
}
