/* ownprof: the program profiles itself with setitimer(ITIMER_PROF) and its
 * own SIGPROF handler, installed after the sampler started. Exit 0 if its
 * handler still ran, and sigaction() reports the program's own handler. */
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/time.h>
#include "hazard.h"

static atomic_int hits;

static void on_prof(int sig)
{
    (void)sig;
    atomic_fetch_add(&hits, 1);
}

int main(void)
{
    struct sigaction sa, cur;
    struct itimerval it = { { 0, 5000 }, { 0, 5000 } };

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    sa.sa_flags = SA_RESTART;
    if (sigaction(SIGPROF, &sa, NULL) != 0)
        return 2;
    if (sigaction(SIGPROF, NULL, &cur) != 0 || cur.sa_handler != on_prof)
        return 3;
    setitimer(ITIMER_PROF, &it, NULL);
    hz_burn_ms(300);
    memset(&it, 0, sizeof it);
    setitimer(ITIMER_PROF, &it, NULL);
    return atomic_load(&hits) > 0 ? 0 : 1;
}
