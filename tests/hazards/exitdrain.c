/* exitdrain OUTPUT: exit() from a signal handler (common, if not
 * async-signal-safe) that interrupted a thread inside the sampler's locked
 * sections: the main thread calls recs_drain() in a loop, another thread
 * sends it SIGUSR1, whose handler calls exit(7). The library's destructor
 * then finishes the recording; it used to wait forever for the lock the
 * interrupted drain held. Exit status 7 expected (bounded by the test's
 * timeout). */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rec/sampler.h>
#include "hazard.h"

static pthread_t main_thread;

static void h(int sig)
{
    (void)sig;
    exit(7);
}

static void *killer(void *arg)
{
    (void)arg;
    usleep(300000);
    for (;;) {
        pthread_kill(main_thread, SIGUSR1);
        usleep(1000);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    recs_options o;
    pthread_t k;

    if (argc < 2)
        return 2;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sigaction(SIGUSR1, &sa, NULL);
    recs_options_init(&o);
    o.output = argv[1];
    o.throttle = "1ms";
    o.overwrite = true;
    if (recs_start(&o) < 0)
        return 1;
    main_thread = pthread_self();
    pthread_create(&k, NULL, killer, NULL);
    for (;;) {
        hz_leaf(2000);
        recs_drain();
    }
}
