/*
 * tests/workloads/unws-lib.c - a library whose busy functions have no
 * symbol once stripped (static): the sampler names them module+0xSTART
 * from their FDEs, and rec-dump --debug-dir names them again from a debug
 * file. Exported: unws_run(seconds).
 */
#include <stdint.h>
#include <time.h>

void unws_run(double seconds);

static volatile uint64_t unws_sink;

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((noipa)) static uint64_t unws_leaf(uint64_t x)
{
    for (unsigned i = 0; i < 200000; i++)
        x = (x ^ (x >> 9)) * 0x9e3779b97f4a7c15ull + i;
    return x;
}

__attribute__((noipa)) static uint64_t unws_mid(uint64_t x, uint64_t ns)
{
    uint64_t end = cpu_ns() + ns;
    while (cpu_ns() < end)
        x = unws_leaf(x);
    return x + 1;
}

__attribute__((noipa)) void unws_run(double seconds)
{
    unws_sink = unws_mid(unws_sink, (uint64_t)(seconds * 1e9)) + 1;
}
