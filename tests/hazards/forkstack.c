/* forkstack [THREADS]: THREADS threads (4) park deep in frames full of
 * small arrays, then main forks a child that burns CPU for 300 ms and
 * exits 5; exit 0 if it did.
 *
 * In the child the C library hands the parked threads' stacks to the next
 * threads created there, and a sampler recording the child (followed
 * children) starts its own thread there. Under AddressSanitizer each
 * parked frame left its arrays' redzones poisoned in the shadow memory: a
 * thread the sanitizer's runtime knows has its stack's shadow cleared when
 * it starts; one created behind its back reads its own locals as
 * "stack-buffer-underflow" and the child dies with the report. Without a
 * sanitizer this is an ordinary fork of a threaded process. */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>
#include "hazard.h"

static atomic_int parked;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

/* Each frame holds arrays whose addresses escape: the instrumented code
 * poisons the redzones around them for as long as the frame lives. */
__attribute__((noinline)) static void deep(int n)
{
    volatile char a[3], b[5], c[7];

    a[0] = b[0] = c[0] = (char)n;
    if (n > 0) {
        deep(n - 1);
    } else {
        pthread_mutex_lock(&mu);
        atomic_fetch_add(&parked, 1);
        pthread_cond_broadcast(&cv);
        for (;;)
            pthread_cond_wait(&cv, &mu);   /* until the process exits */
    }
    hz_sink += (uint64_t)(a[0] + b[0] + c[0]);
}

static void *park(void *arg)
{
    (void)arg;
    deep(400);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = (int)hz_arg(argc, argv, 1, 4), st;
    pthread_t t;
    pid_t pid;

    for (int i = 0; i < threads; i++)
        if (pthread_create(&t, NULL, park, NULL) != 0)
            return 2;
    pthread_mutex_lock(&mu);
    while (atomic_load(&parked) < threads)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    if ((pid = fork()) < 0)
        return 3;
    if (pid == 0) {
        hz_burn_ms(300);
        _exit(5);
    }
    if (waitpid(pid, &st, 0) != pid)
        return 4;
    return WIFEXITED(st) && WEXITSTATUS(st) == 5 ? 0 : 1;
}
