/*
 * tests/session-stubs.c - the session's state (session.c) for programs
 * built from the symbolizer and the module registry without the rest of
 * the library: no handler runs, so none is ever in flight, and nobody
 * waits for a wake-up.
 */
#include <config.h>
#include "internal.h"

recs__global recs__g = RECS_GLOBAL_INIT;

uint64_t recs__now_ns(void)
{
    return rec_now_ns();
}
