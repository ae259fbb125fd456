/* blocker: one thread blocks SIGPROF for its whole life, another blocks it
 * for half of its work; both burn CPU. Exit 0 when done. */
#include <pthread.h>
#include <signal.h>
#include "hazard.h"

static void *blocked(void *arg)
{
    sigset_t set;
    (void)arg;
    sigemptyset(&set);
    sigaddset(&set, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    hz_burn_ms(200);
    return NULL;
}

static void *half(void *arg)
{
    sigset_t set;
    (void)arg;
    sigemptyset(&set);
    sigaddset(&set, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    hz_burn_ms(100);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    hz_burn_ms(100);
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, blocked, NULL);
    pthread_create(&b, NULL, half, NULL);
    hz_burn_ms(200);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return 0;
}
