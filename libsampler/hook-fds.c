/*
 * libsampler/hook-fds.c - the file descriptors the sampler owns (the
 * recording, its directory, rec-start's status pipe, event counters) and
 * the interposed calls that close ranges of descriptors: closefrom(),
 * close_range() and the raw close_range system call through syscall().
 *
 * A daemon that "closes every fd" with one of them would end the
 * recording at once. The range is split around the descriptors in the
 * registry; everything else is closed as the program asked. A close()
 * loop is not intercepted: the writer notices that its fd changed
 * identity and stops (librecord's fd_still_ours).
 */
#include <config.h>
#include "internal.h"
#include "unwind-fp.h"   /* RECS_NO_SANITIZE */
#include "engine.h"   /* the perf engine's fds: recs__owned_fds */

#define RECS_FD_BITS (8 * sizeof(unsigned long))

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1u << 1)
#endif

/* fd + 1 per slot, 0 when free: readable from anywhere without a lock. */
static _Atomic int owned[RECS_MAX_OWNED_FDS];

typedef long (*syscall_fn)(long, ...);
typedef void (*closefrom_fn)(int);
static syscall_fn real_syscall_fn;
static closefrom_fn real_closefrom_fn;

RECS_RESOLVER
static void resolve_fds(void)
{
    real_syscall_fn = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
    real_closefrom_fn = (closefrom_fn)dlsym(RTLD_NEXT, "closefrom");
}

int recs__fd_own(int fd)
{
    if (fd < 0)
        return REC_EINVAL;
    for (int i = 0; i < RECS_MAX_OWNED_FDS; i++) {
        int expect = 0;
        if (atomic_load(&owned[i]) == fd + 1)
            return 0;
        if (atomic_compare_exchange_strong(&owned[i], &expect, fd + 1))
            return 0;
    }
    return REC_ENOMEM;
}

void recs__fd_disown(int fd)
{
    for (int i = 0; i < RECS_MAX_OWNED_FDS; i++) {
        int expect = fd + 1;
        atomic_compare_exchange_strong(&owned[i], &expect, 0);
    }
}

bool recs__fd_owned(int fd)
{
    for (int i = 0; i < RECS_MAX_OWNED_FDS; i++)
        if (atomic_load(&owned[i]) == fd + 1)
            return true;
    return recs__owned_fd(fd);
}

/* The lowest owned fd in [from, last], or -1: the registry above and the
 * perf engine's per-thread event fds (a bitmap, engine.h). */
static long next_owned(unsigned from, unsigned last)
{
    long best = -1;

    for (int i = 0; i < RECS_MAX_OWNED_FDS; i++) {
        int v = atomic_load(&owned[i]) - 1;
        if (v >= 0 && (unsigned)v >= from && (unsigned)v <= last &&
            (best < 0 || v < best))
            best = v;
    }
    for (unsigned fd = from; fd <= last && fd < RECS_OWNED_FD_MAX &&
                             (best < 0 || fd < (unsigned)best); ) {
        unsigned long w = atomic_load(&recs__owned_fds[fd / RECS_FD_BITS]) >>
                          (fd % RECS_FD_BITS);
        if (w) {
            fd += (unsigned)__builtin_ctzl(w);
            if (fd <= last && fd < RECS_OWNED_FD_MAX &&
                (best < 0 || fd < (unsigned)best))
                best = fd;
            break;
        }
        fd = (unsigned)((fd / RECS_FD_BITS + 1) * RECS_FD_BITS);   /* next word */
    }
    return best;
}

static long raw_close_range(unsigned first, unsigned last, unsigned flags)
{
    if (real_syscall_fn)
        return real_syscall_fn(SYS_close_range, first, last, flags);
    errno = ENOSYS;
    return -1;
}

/* close_range(first, last, flags) minus the owned fds: one call per gap.
 * With CLOSE_RANGE_UNSHARE only the first call unshares (the others act
 * on the new table). */
long recs__close_around(unsigned first, unsigned last, unsigned flags)
{
    unsigned lo = first;
    long k;

    while ((k = next_owned(lo, last)) >= 0) {
        if ((unsigned)k > lo) {
            if (raw_close_range(lo, (unsigned)k - 1, flags) != 0)
                return -1;
            flags &= ~CLOSE_RANGE_UNSHARE;
        }
        if ((unsigned)k == last)
            return 0;
        lo = (unsigned)k + 1;
    }
    return raw_close_range(lo, last, flags);
}

int close_range(unsigned int first, unsigned int last, int flags)
{
    if (first > last) {
        errno = EINVAL;
        return -1;
    }
    return (int)recs__close_around(first, last, (unsigned)flags);
}

void closefrom(int lowfd)
{
    unsigned lo = lowfd < 0 ? 0 : (unsigned)lowfd;
    long k;

    if (next_owned(lo, ~0u) < 0 && real_closefrom_fn) {
        real_closefrom_fn(lowfd);
        return;
    }
    if (recs__close_around(lo, ~0u, 0) == 0)
        return;
    /* No close_range system call (before Linux 5.9): glibc falls back
     * to closing what /proc/self/fd lists; the gaps one by one, the tail
     * above the last owned fd through glibc. */
    while ((k = next_owned(lo, ~0u)) >= 0) {
        for (unsigned fd = lo; fd < (unsigned)k; fd++)
            close((int)fd);
        lo = (unsigned)k + 1;
    }
    if (real_closefrom_fn)
        real_closefrom_fn((int)lo);
}
