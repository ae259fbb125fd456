/* libhzearly: a library whose constructor starts a thread, before the
 * preloaded sampler's constructor runs (DT_NEEDED libraries are
 * initialized first). The thread burns 300 ms of CPU. */
#include <pthread.h>
#include "hazard.h"

pthread_t hz_early_thread;

static void *early(void *arg)
{
    (void)arg;
    hz_burn_ms(300);
    return NULL;
}

__attribute__((constructor)) static void early_init(void)
{
    pthread_create(&hz_early_thread, NULL, early, NULL);
}
