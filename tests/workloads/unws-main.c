/*
 * tests/workloads/unws-main.c - dlopen LIBRARY and run its unws_run(SECONDS)
 * (the stripped-library naming test). Usage: unws-main LIBRARY.so SECONDS
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    void *h;
    void (*run)(double);

    if (argc != 3) {
        fprintf(stderr, "usage: unws-main LIBRARY.so SECONDS\n");
        return 2;
    }
    if (!(h = dlopen(argv[1], RTLD_NOW))) {
        fprintf(stderr, "unws-main: %s\n", dlerror());
        return 1;
    }
    run = (void (*)(double))dlsym(h, "unws_run");
    if (!run)
        return 1;
    run(atof(argv[2]));
    return 0;
}
