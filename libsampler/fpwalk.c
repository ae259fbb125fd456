/*
 * libsampler/fpwalk.c - bounds-checked frame-pointer walk (see fpwalk.h).
 */
#include <config.h>
#include "fpwalk.h"

/* Signal-safe. */
RECS_NO_SANITIZE unsigned recs__fp_walk(uint64_t fp, uint64_t lo, uint64_t hi,
                      uint64_t *out, unsigned max, bool *truncated)
{
    unsigned n = 0;

    *truncated = false;
    while (fp && (fp & 7) == 0 && recs__in_stack(fp, 16, lo, hi)) {
        const uint64_t *frame = (const uint64_t *)(uintptr_t)fp;
        uint64_t next = frame[0], ret = frame[1];

        /* A zero return address ends the chain (thread entry points clear
         * it); so does a saved fp of 0 (_start and clone clear rbp). */
        if (ret == 0)
            break;
        if (n == max) {
            *truncated = true;
            break;
        }
        out[n++] = ret;
        if (next <= fp)
            break;
        fp = next;
    }
    return n;
}
