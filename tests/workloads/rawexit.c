/*
 * tests/workloads/rawexit.c - leaves the way a Go program does: two
 * threads burn CPU (MS ms each, default 300), then the process ends by the
 * exit_group system call itself, past libc and every exit hook the
 * sampler could interpose. Its status is 7.
 *
 * Usage: rawexit [MS]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t budget_ns = 300000000u;

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *burn(void *arg)
{
    volatile uint64_t x = 0;
    uint64_t t0 = cpu_ns();

    (void)arg;
    while (cpu_ns() - t0 < budget_ns)
        for (int i = 0; i < 100000; i++)
            x += (uint64_t)i;
    return NULL;
}

static void raw_exit_group(int status)
{
#if defined(__x86_64__)
    __asm__ volatile("syscall" : : "a"(SYS_exit_group), "D"(status)
                     : "rcx", "r11", "memory");
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = SYS_exit_group;
    register long x0 __asm__("x0") = status;
    __asm__ volatile("svc 0" : : "r"(x8), "r"(x0) : "memory");
#endif
    abort();    /* elsewhere: not this test's case */
}

int main(int argc, char **argv)
{
    pthread_t t;

    if (argc > 1)
        budget_ns = (uint64_t)atol(argv[1]) * 1000000u;
    if (pthread_create(&t, NULL, burn, NULL) != 0)
        return 1;
    burn(NULL);
    pthread_join(t, NULL);
    raw_exit_group(7);
    return 0;
}
