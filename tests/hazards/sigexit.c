/* sigexit [MS [exec]]: the main thread allocates and frees in a loop (it
 * is nearly always inside malloc or free, holding its arena's lock) while
 * another thread burns CPU; after MS ms (200) of the main thread's CPU
 * time a SIGTERM interrupts it, and its handler, as a daemon's would,
 * calls _exit(3), or with "exec" re-executes the program ("child": burns
 * 100 ms, exits 5). The recording must be finished all the same, with no
 * wait on a lock the interrupted thread holds (the exec's environment
 * included: 200 variables more, as a build's). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "hazard.h"

static char *self_exe[] = { (char *)"sigexit", (char *)"child", NULL };
static int reexec;

static void on_term(int sig)
{
    (void)sig;
    if (reexec)
        execv("/proc/self/exe", self_exe);
    _exit(3);
}

static pthread_t main_thread;
static uint64_t term_at_ns;

static uint64_t main_cpu_ns(void)
{
    clockid_t c;
    struct timespec ts;

    if (pthread_getcpuclockid(main_thread, &c) != 0 ||
        clock_gettime(c, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Burns CPU; sends the SIGTERM at a moment the main thread did not choose
 * (nearly always inside the allocator), and again if it was missed. */
static void *spin(void *arg)
{
    (void)arg;
    for (;;) {
        hz_burn_ms(2);
        if (main_cpu_ns() >= term_at_ns)
            pthread_kill(main_thread, SIGTERM);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    double ms = hz_arg(argc, argv, 1, 200);
    struct sigaction sa;
    void *keep[64] = { 0 };
    unsigned i = 0;
    pthread_t t;

    if (argc > 1 && !strcmp(argv[1], "child")) {
        hz_burn_ms(100);
        return 5;
    }
    reexec = argc > 2 && !strcmp(argv[2], "exec");
    /* An environment as large as a build's: an array of it no longer fits
     * the allocator's per-thread cache, so any allocation of the exec
     * path would wait for the arena lock the interrupted thread holds. */
    for (int k = 0; reexec && k < 200; k++) {
        char name[32];
        snprintf(name, sizeof name, "HZ_PAD_%d", k);
        setenv(name, "x", 1);
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    main_thread = pthread_self();
    term_at_ns = hz_thread_cpu_ns() + (uint64_t)(ms * 1e6);
    if (pthread_create(&t, NULL, spin, NULL) != 0)
        return 2;
    for (;; i++) {
        /* Several sizes, some kept a while: the allocator's slow paths. */
        free(keep[i % 64]);
        keep[i % 64] = malloc(16 + (i * 7919u) % 4000);
        free(malloc(64 + i % 512));
    }
}
