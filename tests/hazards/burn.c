/* burn [THREADS [MS]]: THREADS extra threads and main burn MS ms of CPU. */
#include <pthread.h>
#include "hazard.h"

static double ms;

static void *worker(void *arg)
{
    (void)arg;
    hz_burn_ms(ms);
    return NULL;
}

int main(int argc, char **argv)
{
    int n = (int)hz_arg(argc, argv, 1, 2);
    pthread_t t[64];

    ms = hz_arg(argc, argv, 2, 300);
    if (n > 64)
        n = 64;
    for (int i = 0; i < n; i++)
        if (pthread_create(&t[i], NULL, worker, NULL) != 0)
            return 1;
    hz_burn_ms(ms);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    return 0;
}
