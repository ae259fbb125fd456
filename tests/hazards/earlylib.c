/* libhzearly: a library whose constructor starts a thread, before the
 * preloaded sampler's constructor runs (DT_NEEDED libraries are
 * initialized first). The thread burns 300 ms of CPU once the sampler
 * thread exists (at most 5 s later): the sampler has found it by then, so
 * all of that time is the sampler's to report, however slowly the sampler
 * started. */
#include <pthread.h>
#include <time.h>
#include "hazard.h"

pthread_t hz_early_thread;

static void *early(void *arg)
{
    struct timespec nap = { 0, 1000000 };

    (void)arg;
    for (int i = 0; i < 5000 && hz_sampler_tid() == 0; i++)
        nanosleep(&nap, NULL);
    hz_burn_ms(300);
    return NULL;
}

__attribute__((constructor)) static void early_init(void)
{
    pthread_create(&hz_early_thread, NULL, early, NULL);
}
