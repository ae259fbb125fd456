/*
 * libsampler/hook-exit.c - the exits that skip exit(): _exit(), _Exit() and
 * syscall(SYS_exit_group) end the recording the way exit() does (final
 * drain, a ThreadEnd with the kernel's CPU figure for every live thread,
 * the chunk finished), in bounded time (recs__stop's limit). The sampler
 * thread does that work while the exiting thread waits: the exit may come
 * from a handler that interrupted the thread anywhere.
 *
 * dash runs every "sh -c" and script that way, Python's os._exit() and
 * multiprocessing workers too, and so do the SIGTERM handlers that call
 * _exit(). The fatal signals go through handler.c; abort() raises SIGABRT,
 * one of them. What no hook sees (SIGKILL, a raw exit_group) loses at most
 * what came after the last flush (the flush interval).
 */
#include <config.h>
#include "internal.h"
#include "unwind-fp.h"

#undef syscall

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/prctl.h>

typedef void (*exit_fn)(int);
typedef long (*syscall_fn)(long, ...);

static exit_fn real__exit, real__Exit;
static syscall_fn real_syscall;

/* Resolved at load: _exit is called from vfork children and handlers. */
RECS_RESOLVER
static void exit_init(void)
{
    real__exit = (exit_fn)dlsym(RTLD_NEXT, "_exit");
    real__Exit = (exit_fn)dlsym(RTLD_NEXT, "_Exit");
    real_syscall = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
}

/* Signal-safe, with a sampler thread. Finish the recording if this
 * process owns it (not in a vfork child, which shares our memory): by the
 * sampler thread, as these exits are made from signal handlers too. */
void recs__exit_finish(void)
{
    if (atomic_load(&recs__g.running) && recs__g.pid == getpid() &&
        recs__finish_by_sampler() < 0)
        recs__stop(false, true);
}

/* The interposed entries alone, called before our constructors ran (by
 * another library's), resolve what they need then: never a handler of
 * ours, which does not exist yet. */
static void resolve_early(void)
{
    if (!real_syscall)
        exit_init();
}

void _exit(int status)
{
    resolve_early();
    recs__exit_finish();
    if (real__exit)
        real__exit(status);
    for (;;)
        recs__real_syscall(SYS_exit_group, status);
}

void _Exit(int status)
{
    resolve_early();
    recs__exit_finish();
    if (real__Exit)
        real__Exit(status);
    for (;;)
        recs__real_syscall(SYS_exit_group, status);
}

/* The variadic system call entry: six words are passed on whatever the
 * call (as glibc's own syscall() reads them). Signal-safe: resolved by
 * a RECS_RESOLVER constructor. */
#define SIX_ARGS(number, a)                          \
    do {                                             \
        va_list ap_;                                 \
        va_start(ap_, number);                       \
        for (int i_ = 0; i_ < 6; i_++)               \
            (a)[i_] = va_arg(ap_, long);             \
        va_end(ap_);                                 \
    } while (0)

static long call_real(long number, const long *a)
{
    syscall_fn f = real_syscall;

    if (!f) {                          /* not resolved: no dlsym here */
        errno = ENOSYS;
        return -1;
    }
    return f(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* The unused words may lie past the caller's arguments, in its frame:
 * not a bug the sanitizer should report. */
RECS_NO_SANITIZE long recs__real_syscall(long number, ...)
{
    long a[6];

    SIX_ARGS(number, a);
    return call_real(number, a);
}

RECS_NO_SANITIZE long syscall(long number, ...)
{
    long a[6];

    SIX_ARGS(number, a);
    resolve_early();
    if (number == SYS_exit_group)
        recs__exit_finish();
    if (number == SYS_close_range) {    /* the sampler's fds stay open */
        if ((unsigned)a[0] > (unsigned)a[1]) {
            errno = EINVAL;
            return -1;
        }
        return recs__close_around((unsigned)a[0], (unsigned)a[1],
                                  (unsigned)a[2]);
    }
    if (number == SYS_prctl && a[0] == PR_SET_NAME) {
        long rc = call_real(number, a);
        int e = errno;
        atomic_fetch_add(&recs__names_epoch, 1);   /* see hook-names.c */
        errno = e;
        return rc;
    }
    return call_real(number, a);
}
