/*
 * bench/short-threads.c - many short threads, a few alive at a time, for
 * the share of their CPU time that gets stacks (bench/sampler-short.sh).
 *
 *   short-threads [TOTAL [ALIVE [MS]]]   (default 2000 threads, 50 alive,
 *                                         20 ms of CPU each)
 *
 * Every thread burns MS of its own CPU clock in a call chain with frame
 * pointers and exits; a new one starts as one ends. Prints nothing.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static uint64_t spin_ns = 20000000u;
static sem_t slots;
static volatile uint64_t sink;

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void leaf(void)
{
    for (int i = 0; i < 2000; i++)
        sink += (uint64_t)i * (uint64_t)i;
}

__attribute__((noinline)) static void *worker(void *arg)
{
    uint64_t until = thread_cpu_ns() + spin_ns;
    (void)arg;
    while (thread_cpu_ns() < until)
        leaf();
    sem_post(&slots);
    return NULL;
}

int main(int argc, char **argv)
{
    int total = argc > 1 ? atoi(argv[1]) : 2000;
    int alive = argc > 2 ? atoi(argv[2]) : 50;
    pthread_attr_t attr;

    if (argc > 3)
        spin_ns = (uint64_t)(atof(argv[3]) * 1e6);
    if (total < 1 || alive < 1)
        return 2;
    sem_init(&slots, 0, (unsigned)alive);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 64 << 10);
    for (int i = 0; i < total; i++) {
        pthread_t t;
        sem_wait(&slots);
        if (pthread_create(&t, &attr, worker, NULL) != 0)
            return 1;
    }
    for (int i = 0; i < alive; i++)
        sem_wait(&slots);
    return 0;
}
