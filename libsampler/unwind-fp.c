/*
 * libsampler/unwind-fp.c - bounds-checked frame-pointer walk (see unwind-fp.h).
 */
#include <config.h>
#include "unwind-fp.h"

#include <errno.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* Signal-safe. One frame (its saved fp NEXT and return address RET) of a
 * chain at *fp: false when the walk ends there. A zero return address ends
 * the chain (thread entry points clear it); so does a saved fp of 0 (_start
 * and clone clear rbp); one that does not go up the stack cuts it. */
static inline bool step(uint64_t next, uint64_t ret, uint64_t *fp,
                        uint64_t *out, unsigned *n, unsigned max,
                        unsigned *stop)
{
    if (ret == 0)
        return false;
    if (*n == max) {
        *stop = RECS_STOP_DEPTH;
        return false;
    }
    out[(*n)++] = ret;
    if (next && next <= *fp) {
        *stop = RECS_STOP_BAD_CFA;
        return false;
    }
    *fp = next;
    return next != 0;
}

/* Signal-safe. */
RECS_NO_SANITIZE unsigned recs__fp_walk(uint64_t fp, uint64_t lo, uint64_t hi,
                      uint64_t *out, unsigned max, unsigned *stop)
{
    unsigned n = 0;

    *stop = RECS_STOP_ROOT;
    while (fp) {
        const uint64_t *frame = (const uint64_t *)(uintptr_t)fp;
        if ((fp & 7) || !recs__in_stack(fp, 16, lo, hi)) {
            *stop = (fp & 7) ? RECS_STOP_BAD_CFA : RECS_STOP_STACK_BOUND;
            break;
        }
        if (!step(frame[0], frame[1], &fp, out, &n, max, stop))
            break;
    }
    return n;
}

/* Words read at a time: on the signal stack (a Go thread's is 32 KiB). */
#define CHUNK_WORDS 128

/* Signal-safe. */
long recs__read_self(void *dst, uint64_t addr, size_t bytes)
{
    struct iovec local = { dst, bytes };
    struct iovec remote = { (void *)(uintptr_t)addr, bytes };
    int saved = errno;
    long r = syscall(SYS_process_vm_readv, (long)syscall(SYS_getpid), &local,
                     1L, &remote, 1L, 0L);

    if (r < 0)
        r = errno == EFAULT || errno == ESRCH ? 0 : -1;
    errno = saved;
    return r;
}

/* Signal-safe. Up to n words at addr into dst; the words read (a fault
 * stops the copy), or -1 if the kernel refuses. */
static long read_self(uint64_t *dst, uint64_t addr, unsigned n)
{
    long r = recs__read_self(dst, addr, (size_t)n * 8);
    return r < 0 ? -1 : r / 8;
}

/* Signal-safe. */
int recs__fp_walk_foreign(uint64_t fp, uint64_t sp, uint64_t *out,
                          unsigned max, unsigned *stop, uint64_t *window,
                          unsigned nwindow, unsigned *got)
{
    uint64_t buf[CHUNK_WORDS], base = sp;
    long len;
    unsigned n = 0, reads = 1;

    *stop = RECS_STOP_ROOT;
    *got = 0;
    if (sp & 7)
        return 0;
    if ((len = read_self(buf, sp, CHUNK_WORDS)) < 0)
        return -1;
    for (unsigned i = 0; i < nwindow && i < (unsigned)len; i++)
        window[(*got)++] = buf[i];
    while (fp) {
        if ((fp & 7) || fp < base) {
            *stop = RECS_STOP_BAD_CFA;
            break;
        }
        if (len < 2 || fp - base > (uint64_t)(len - 2) * 8) {
            /* The frame lies beyond what was read: read from it. */
            if (reads == RECS_FOREIGN_READS) {
                *stop = RECS_STOP_DEPTH;
                break;
            }
            reads++;
            base = fp;
            if ((len = read_self(buf, base, CHUNK_WORDS)) < 2) {
                *stop = RECS_STOP_FOREIGN;
                break;
            }
        }
        if (!step(buf[(fp - base) / 8], buf[(fp - base) / 8 + 1], &fp, out,
                  &n, max, stop))
            break;
    }
    return (int)n;
}
