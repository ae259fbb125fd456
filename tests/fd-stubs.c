/*
 * tests/fd-stubs.c - for programs built from libsampler's sources without
 * its interposers (hook-fds.c): the shared cache (cache.c) protects the
 * descriptor it writes through from the program's closefrom(); a test or
 * a benchmark has no such program.
 */
#include <config.h>
#include "internal.h"

int recs__fd_own(int fd)
{
    (void)fd;
    return 0;
}

void recs__fd_disown(int fd)
{
    (void)fd;
}
