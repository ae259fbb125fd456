/*
 * librecord/sized.h - structs that cross the API with their size, in the
 * manner of perf_event_attr.size: a caller built against older headers
 * passes a smaller struct, one built against newer headers a larger one,
 * and the library touches neither past the size it was given. Shared by
 * librecord and libsampler (header only: neither exports it).
 */
#ifndef REC_SIZED_H
#define REC_SIZED_H

#include <stddef.h>
#include <string.h>
#include "rec/record.h"

/* Bytes up to the end of member m: the size of a struct version whose
 * last member was m. */
#define REC__SIZE_TO(type, m) (offsetof(type, m) + sizeof(((type *)0)->m))

/* Copy the caller's `size` bytes at src into dst, a struct of `full`
 * bytes that this library knows, zeroing the members the caller's version
 * did not have (an appended member's zero is its default or its null).
 * REC_EINVAL: smaller than the first version (`min`), 0 included.
 * REC_ETOOBIG: larger than this library knows, with one of the bytes past
 * `full` set: a member the library cannot honour (it is not ignored). */
static inline int rec__sized_in(void *dst, size_t full, const void *src,
                                size_t size, size_t min)
{
    if (!src || size < min)
        return REC_EINVAL;
    if (size > full) {
        const unsigned char *p = (const unsigned char *)src;
        for (size_t i = full; i < size; i++)
            if (p[i])
                return REC_ETOOBIG;
        size = full;
    }
    memset(dst, 0, full);
    memcpy(dst, src, size);
    return 0;
}

/* Fill the caller's struct of `size` bytes at dst from src, `full` bytes
 * this library knows: no byte past `size` is written. A larger caller's
 * members this library does not know are zeroed. Returns the number of
 * bytes filled from src (to store in the struct's size member), or
 * REC_EINVAL for a size below the first version's (`min`). */
static inline long rec__sized_out(void *dst, size_t size, const void *src,
                                  size_t full, size_t min)
{
    if (!dst || size < min)
        return REC_EINVAL;
    if (size > full) {
        memset((unsigned char *)dst + full, 0, size - full);
        size = full;
    }
    memcpy(dst, src, size);
    return (long)size;
}

#endif
