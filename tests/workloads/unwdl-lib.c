/*
 * tests/workloads/unwdl-lib.c - the library unwind-dl loads and unloads:
 * half a millisecond of CPU per call, two frames deep, no frame pointers.
 */
#include <stdint.h>
#include <time.h>

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t unwdl_burn(uint64_t x);

__attribute__((noipa)) static uint64_t unwdl_inner(uint64_t x)
{
    uint64_t end = cpu_ns() + 500000;
    while (cpu_ns() < end)
        for (unsigned i = 0; i < 5000; i++)
            x = x * 2862933555777941757ull + 3037000493ull;
    return x;
}

__attribute__((noipa)) uint64_t unwdl_burn(uint64_t x)
{
    return unwdl_inner(x) + 1;
}
