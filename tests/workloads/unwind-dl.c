/*
 * tests/workloads/unwind-dl.c - a library loaded and unloaded in a loop
 * while it burns CPU: the sampler's unwind tables change under the
 * handler. Samples in the library show
 *   unwdl_inner unwdl_burn unwdl_loop main
 * Usage: unwind-dl LIBRARY.so ITERATIONS
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static volatile uint64_t sink;

__attribute__((noipa)) static int unwdl_loop(const char *lib, long n)
{
    for (long i = 0; i < n; i++) {
        void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        uint64_t (*burn)(uint64_t);
        if (!h) {
            fprintf(stderr, "unwind-dl: %s\n", dlerror());
            return 1;
        }
        burn = (uint64_t (*)(uint64_t))dlsym(h, "unwdl_burn");
        if (!burn)
            return 1;
        sink = burn(sink);
        dlclose(h);
    }
    return 0;
}

int main(int argc, char **argv)
{
    long n = argc > 2 ? atol(argv[2]) : 0;

    if (argc != 3 || n <= 0) {
        fprintf(stderr, "usage: unwind-dl LIBRARY.so ITERATIONS\n");
        return 2;
    }
    return unwdl_loop(argv[1], n);
}
