/*
 * libsampler/hook-names.c - the calls that rename threads: pthread_setname_np()
 * (any thread: glibc writes /proc/self/task/N/comm for another) and
 * prctl(PR_SET_NAME) (the caller; also through syscall(), hook-exit.c). Each
 * bumps recs__names_epoch once the name is in place; the drain reads a
 * thread's name again when the epoch moved (drain-emit.c), instead of opening
 * its /proc comm file every second, which cost the sampler thread a fifth
 * of its CPU time on a busy single-threaded program. What no hook sees (an inline system call, a
 * write of the comm file itself) is read at the slow refresh, and at the
 * thread's exit.
 */
#include <config.h>
#include "internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/prctl.h>

_Atomic uint32_t recs__names_epoch;

typedef int (*setname_fn)(pthread_t, const char *);
typedef int (*prctl_fn)(int, ...);

static _Atomic(setname_fn) real_setname;
static _Atomic(prctl_fn) real_prctl;

RECS_RESOLVER
static void names_init(void)
{
    atomic_store(&real_setname, (setname_fn)dlsym(RTLD_NEXT, "pthread_setname_np"));
    atomic_store(&real_prctl, (prctl_fn)dlsym(RTLD_NEXT, "prctl"));
}

int pthread_setname_np(pthread_t th, const char *name)
{
    setname_fn f = atomic_load(&real_setname);
    int rc;

    if (!f) {                         /* before our constructors */
        names_init();
        if (!(f = atomic_load(&real_setname)))
            return ENOSYS;
    }
    rc = f(th, name);
    atomic_fetch_add(&recs__names_epoch, 1);
    return rc;
}

/* prctl takes up to four more arguments, all of the size of a long: all
 * are passed on, as glibc's own wrapper reads them. */
int prctl(int option, ...)
{
    prctl_fn f = atomic_load(&real_prctl);
    unsigned long a2, a3, a4, a5;
    va_list ap;
    int rc, e;

    va_start(ap, option);
    a2 = va_arg(ap, unsigned long);
    a3 = va_arg(ap, unsigned long);
    a4 = va_arg(ap, unsigned long);
    a5 = va_arg(ap, unsigned long);
    va_end(ap);
    if (!f) {
        names_init();
        if (!(f = atomic_load(&real_prctl))) {
            errno = ENOSYS;
            return -1;
        }
    }
    rc = f(option, a2, a3, a4, a5);
    if (option == PR_SET_NAME) {
        e = errno;
        atomic_fetch_add(&recs__names_epoch, 1);
        errno = e;
    }
    return rc;
}
