/*
 * libsampler/fds.c - the file descriptors the sampler owns (the
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
#include "fpwalk.h"   /* RECS_NO_SANITIZE */

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

__attribute__((constructor))
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
    return false;
}

/* The owned fds within [first, last], sorted; their number. */
static int owned_in(unsigned first, unsigned last, unsigned *out)
{
    int n = 0;

    for (int i = 0; i < RECS_MAX_OWNED_FDS; i++) {
        int v = atomic_load(&owned[i]) - 1;
        if (v >= 0 && (unsigned)v >= first && (unsigned)v <= last) {
            int k = n++;
            while (k > 0 && out[k - 1] > (unsigned)v) {
                out[k] = out[k - 1];
                k--;
            }
            out[k] = (unsigned)v;
        }
    }
    return n;
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
static long close_around(unsigned first, unsigned last, unsigned flags)
{
    unsigned keep[RECS_MAX_OWNED_FDS];
    int n = owned_in(first, last, keep);
    unsigned lo = first;

    if (n == 0)
        return raw_close_range(first, last, flags);
    for (int i = 0; i <= n; i++) {
        unsigned hi;
        if (i < n) {
            if (keep[i] == lo) {
                lo++;
                continue;
            }
            hi = keep[i] - 1;
        } else {
            if (lo > last || lo == 0)   /* lo == 0: wrapped past UINT_MAX */
                break;
            hi = last;
        }
        if (raw_close_range(lo, hi, flags) != 0)
            return -1;
        flags &= ~CLOSE_RANGE_UNSHARE;
        if (i < n)
            lo = keep[i] + 1;
    }
    return 0;
}

int close_range(unsigned int first, unsigned int last, int flags)
{
    if (first > last) {
        errno = EINVAL;
        return -1;
    }
    return (int)close_around(first, last, (unsigned)flags);
}

void closefrom(int lowfd)
{
    unsigned keep[RECS_MAX_OWNED_FDS];
    unsigned lo = lowfd < 0 ? 0 : (unsigned)lowfd;
    int n = owned_in(lo, ~0u, keep);

    if (n == 0 && real_closefrom_fn) {
        real_closefrom_fn(lowfd);
        return;
    }
    if (close_around(lo, ~0u, 0) == 0)
        return;
    /* No close_range system call (before Linux 5.9): glibc falls back
     * to closing what /proc/self/fd lists; the gaps one by one, the tail
     * above the last owned fd through glibc. */
    for (int i = 0; i < n; i++) {
        for (unsigned fd = lo; fd < keep[i]; fd++)
            close((int)fd);
        lo = keep[i] + 1;
    }
    if (real_closefrom_fn)
        real_closefrom_fn((int)lo);
}

/* The raw system call, as some programs and libraries issue it. Every
 * other number passes through with its six argument registers. */
RECS_NO_SANITIZE long syscall(long number, ...)
{
    long a[6];
    va_list ap;

    va_start(ap, number);
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (number == SYS_close_range) {
        if ((unsigned)a[0] > (unsigned)a[1]) {
            errno = EINVAL;
            return -1;
        }
        return close_around((unsigned)a[0], (unsigned)a[1], (unsigned)a[2]);
    }
    if (!real_syscall_fn &&
        !(real_syscall_fn = (syscall_fn)dlsym(RTLD_NEXT, "syscall"))) {
        errno = ENOSYS;
        return -1;
    }
    return real_syscall_fn(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
