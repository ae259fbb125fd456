/*
 * tests/workloads/unwind-bad.c - code that runs with a stack pointer the
 * unwinder cannot trust: first pointing into a heap buffer (outside the
 * thread's stack: the sample keeps its leaf alone), then into a region of the real
 * stack filled with random words, with a random rbp (the walk must end
 * short, on no fault). Both stay writable: the kernel pushes the signal
 * frame there. x86-64 only (exits 77 elsewhere).
 * Usage: unwind-bad [SECONDS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define REGION (64 * 1024 / 8)

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
/* Spin iters times with rsp = sp and rbp = bp; no memory access. */
__attribute__((noipa)) static void bad_spin(uint64_t sp, uint64_t bp,
                                            uint64_t iters)
{
    __asm__ volatile(
        "mov %%rsp, %%r12\n\t"
        "mov %%rbp, %%r13\n\t"
        "mov %0, %%rsp\n\t"
        "mov %1, %%rbp\n\t"
        "1: dec %2\n\t"
        "jnz 1b\n\t"
        "mov %%r12, %%rsp\n\t"
        "mov %%r13, %%rbp\n\t"
        : "+r"(sp), "+r"(bp), "+r"(iters)
        :
        : "r12", "r13", "memory", "cc");
}

static void fill(uint64_t *w, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        w[i] = seed ^ (seed >> 29);
    }
}

__attribute__((noipa)) static void bad_heap(uint64_t budget)
{
    uint64_t *heap = malloc(REGION * 8);
    uint64_t end = cpu_ns() + budget;

    if (!heap)
        exit(1);
    while (cpu_ns() < end) {
        fill(heap, REGION, cpu_ns());
        bad_spin((uint64_t)(uintptr_t)&heap[REGION / 2] & ~15ull, heap[7],
                 20000000);
    }
    free(heap);
}

__attribute__((noipa)) static void bad_stack(uint64_t budget)
{
    volatile uint64_t region[REGION];
    uint64_t end = cpu_ns() + budget;

    while (cpu_ns() < end) {
        fill((uint64_t *)region, REGION, cpu_ns());
        bad_spin((uint64_t)(uintptr_t)&region[REGION / 2] & ~15ull,
                 region[9], 20000000);
    }
}

int main(int argc, char **argv)
{
    double s = argc > 1 ? atof(argv[1]) : 0.5;

    if (!(s > 0 && s < 3600)) {
        fprintf(stderr, "usage: unwind-bad [SECONDS]\n");
        return 2;
    }
    bad_heap((uint64_t)(s * 1e9));
    bad_stack((uint64_t)(s * 1e9));
    return 0;
}
#else
int main(void)
{
    return 77;
}
#endif
