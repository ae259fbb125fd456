/*
 * tests/workloads/rename.c - threads renamed while they run, each a
 * different way: by another thread's pthread_setname_np(), by its own
 * prctl(PR_SET_NAME), and by syscall(SYS_prctl, PR_SET_NAME). Each thread
 * burns CPU under its first name for 2 s (wall: past the sampler's first
 * reads of a new thread's name), is renamed, burns MS more (default 1500),
 * then sleeps while the process lives 1 s more: every sample is drained
 * while its thread is alive, so under its name as the sampler last read
 * it.
 *
 * Usage: rename [MS]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t after_ns = 1500000000u;
static atomic_int renamed, done;

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void burn(uint64_t ns)
{
    volatile uint64_t x = 0;
    uint64_t t0 = cpu_ns();

    while (cpu_ns() - t0 < ns)
        for (int i = 0; i < 100000; i++)
            x += (uint64_t)i;
}

static void *worker(void *arg)
{
    long how = (long)arg;

    while (!atomic_load(&renamed))
        burn(1000000u);
    if (how == 1)
        prctl(PR_SET_NAME, "by-prctl", 0, 0, 0);
    else if (how == 2)
        syscall(SYS_prctl, PR_SET_NAME, "by-syscall", 0, 0, 0);
    burn(after_ns);
    atomic_fetch_add(&done, 1);
    while (atomic_load(&done) >= 0)
        pause();
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t[3];
    struct timespec second = { 1, 0 }, two = { 2, 0 }, tick = { 0, 10000000 };

    if (argc > 1)
        after_ns = (uint64_t)atol(argv[1]) * 1000000u;
    for (long i = 0; i < 3; i++) {
        if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
            return 1;
        pthread_setname_np(t[i], i == 0 ? "before-setname" :
                                 i == 1 ? "before-prctl" : "before-syscall");
    }
    nanosleep(&two, NULL);
    pthread_setname_np(t[0], "by-setname");   /* the others rename themselves */
    atomic_store(&renamed, 1);
    while (atomic_load(&done) < 3)
        nanosleep(&tick, NULL);
    nanosleep(&second, NULL);
    return 0;
}
