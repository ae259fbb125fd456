/*
 * tests/workloads/stacks.c - known call chains for the stack-walk tests.
 *
 * Every function is noipa (no inlining, cloning or interprocedural
 * shortcuts) and has a distinct name, so a test can demand the exact chain,
 * innermost first:
 *   thread "stk-main":  stk_c stk_b stk_a main
 *   thread "stk-leaf":  stk_leaf stk_leaf_parent stk_leaf_thread
 *                       (stk_leaf has no frame pointer: a plain
 *                        frame-pointer walk skips stk_leaf_parent)
 *   thread "stk-rec":   stk_rec_bottom stk_rec x (DEPTH + 1) stk_rec_thread
 * Each thread burns the given CPU time (default 1 s) of its own clock.
 * Usage: stacks [SECONDS [fork]]   Prints nothing. With "fork", a child
 * (forked before any thread, no exec) runs it all while the parent waits.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STK_REC_DEPTH 7
/* clang has no noipa: noinline is the closest it offers. */
#ifdef __clang__
#define NOIPA __attribute__((noinline))
#else
#define NOIPA __attribute__((noipa))
#endif

static volatile uint64_t sink;
static uint64_t budget_ns = 1000000000ull;

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A slice of pure arithmetic; the callers check the clock between slices so
 * that almost every sample lands in the innermost function. */
#define SLICE 2000000u

NOIPA static uint64_t stk_c(uint64_t x)
{
    for (unsigned i = 0; i < SLICE; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

NOIPA static uint64_t stk_b(uint64_t x)
{
    uint64_t end = thread_cpu_ns() + budget_ns;
    while (thread_cpu_ns() < end)
        x = stk_c(x);
    return x + 1;
}

NOIPA static uint64_t stk_a(uint64_t x)
{
    return stk_b(x) + 1;
}

/* Frameless: no push rbp / mov rsp,rbp, and no stack use, so that for its
 * whole body the return address sits at rsp. */
#ifdef __clang__
NOIPA
#else
__attribute__((noipa, optimize("omit-frame-pointer")))
#endif
static uint64_t stk_leaf(uint64_t x)
{
    for (unsigned i = 0; i < SLICE; i++)
        x = (x ^ (x >> 7)) * 0x9e3779b97f4a7c15ull + i;
    return x;
}

NOIPA static uint64_t stk_leaf_parent(uint64_t x)
{
    uint64_t end = thread_cpu_ns() + budget_ns;
    while (thread_cpu_ns() < end)
        x = stk_leaf(x);
    return x + 1;
}

NOIPA static void *stk_leaf_thread(void *arg)
{
    sink = stk_leaf_parent((uintptr_t)arg) + 1;
    return NULL;
}

NOIPA static uint64_t stk_rec_bottom(uint64_t x)
{
    uint64_t end = thread_cpu_ns() + budget_ns;
    while (thread_cpu_ns() < end)
        for (unsigned i = 0; i < SLICE; i++)
            x = x * 2862933555777941757ull + 3037000493ull;
    return x;
}

NOIPA static uint64_t stk_rec(int depth, uint64_t x)
{
    if (depth == 0)
        return stk_rec_bottom(x) + 1;
    return stk_rec(depth - 1, x + 1) + 1;   /* not a tail call */
}

NOIPA static void *stk_rec_thread(void *arg)
{
    sink = stk_rec(STK_REC_DEPTH, (uintptr_t)arg) + 1;
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t leaf, rec;

    if (argc > 1) {
        double s = atof(argv[1]);
        if (!(s > 0 && s < 3600)) {
            fprintf(stderr, "usage: stacks [SECONDS]\n");
            return 2;
        }
        budget_ns = (uint64_t)(s * 1e9);
    }
    if (argc > 2 && strcmp(argv[2], "fork") == 0) {
        int st;
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        if (pid > 0)
            return waitpid(pid, &st, 0) == pid && WIFEXITED(st)
                   ? WEXITSTATUS(st) : 1;
    }
    pthread_setname_np(pthread_self(), "stk-main");
    if (pthread_create(&leaf, NULL, stk_leaf_thread, (void *)1) ||
        pthread_create(&rec, NULL, stk_rec_thread, (void *)2)) {
        perror("pthread_create");
        return 1;
    }
    pthread_setname_np(leaf, "stk-leaf");
    pthread_setname_np(rec, "stk-rec");
    sink = stk_a(3) + 1;
    pthread_join(leaf, NULL);
    pthread_join(rec, NULL);
    return 0;
}
