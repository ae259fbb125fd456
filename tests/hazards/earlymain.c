/* earlymain: joins the thread its library's constructor started before
 * the sampler could follow it. Its CPU time must be in the recording
 * (lost, "untracked"). Exit 0. */
#include <pthread.h>
#include "hazard.h"

extern pthread_t hz_early_thread;

int main(void)
{
    hz_burn_ms(50);
    pthread_join(hz_early_thread, NULL);
    return 0;
}
