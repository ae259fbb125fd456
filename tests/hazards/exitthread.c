/* exitthread: a non-main thread calls exit(3) while main and another thread
 * burn CPU. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>
#include "hazard.h"

static void *spin(void *arg)
{
    (void)arg;
    for (;;)
        hz_work(20000);
    return NULL;
}

static void *leaver(void *arg)
{
    (void)arg;
    hz_burn_ms(150);
    exit(3);
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, spin, NULL);
    pthread_create(&b, NULL, leaver, NULL);
    for (;;)
        hz_work(20000);
}
