/* sigblock: worker threads that block every signal, as xz's do, and burn
 * CPU; the main thread joins them and prints what they computed.
 *   sigblock [mask|raw] [THREADS] [MS]
 * mask: pthread_sigmask (what programs do); raw: a raw rt_sigprocmask
 * system call for the first worker (out of rec's reach). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double ms = 200;
static int raw;

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static uint64_t mix(uint64_t x, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

static void *worker(void *arg)
{
    uintptr_t id = (uintptr_t)arg;
    uint64_t until, x = id, rounds = 0;
    sigset_t all;

    sigfillset(&all);
    if (raw && id == 0)
        syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, (size_t)(_NSIG / 8));
    else
        pthread_sigmask(SIG_BLOCK, &all, NULL);
    until = cpu_ns() + (uint64_t)(ms * 1e6);
    while (cpu_ns() < until) {
        x = mix(x, 10000);
        rounds++;
    }
    return (void *)(uintptr_t)(rounds > 0);
}

int main(int argc, char **argv)
{
    int n = argc > 2 ? atoi(argv[2]) : 2, done = 0;
    pthread_t *t;

    raw = argc > 1 && !strcmp(argv[1], "raw");
    if (argc > 3)
        ms = atof(argv[3]);
    if (n < 1 || !(t = calloc((size_t)n, sizeof *t)))
        return 2;
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
    for (int i = 0; i < n; i++) {
        void *r;
        pthread_join(t[i], &r);
        done += r != NULL;
    }
    printf("%d of %d workers done\n", done, n);
    free(t);
    return done == n ? 0 : 1;
}
