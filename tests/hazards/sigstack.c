/* sigstack: the program runs on its own sigaltstack (64 KiB, or SIGSTKSZ
 * with "small", a guard page below it) and installs its SIGPROF handler
 * with one of SA_ONSTACK, SA_RESETHAND, SA_NODEFER, then burns CPU while
 * rec samples on SIGPROF (rec's handler runs on that stack too). Exit 0 if
 * the program's own raise(SIGPROF) reached its handler as the flags say
 * (on the alternate stack, reset to the default after one delivery, not
 * masked during the handler) and rec's timer signals never did. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "hazard.h"

static atomic_int got, on_alt, prof_blocked;
static uintptr_t alt_lo, alt_hi;

static void h(int sig)
{
    volatile char here = 0;
    sigset_t cur;

    (void)sig;
    atomic_store(&on_alt, (uintptr_t)&here >= alt_lo &&
                          (uintptr_t)&here < alt_hi);
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    atomic_store(&prof_blocked, sigismember(&cur, SIGPROF));
    atomic_fetch_add(&got, 1);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "onstack";
    long page = sysconf(_SC_PAGESIZE);
    size_t size = !strcmp(mode, "small") ? (size_t)SIGSTKSZ : 1u << 16;
    struct sigaction sa, cur;
    stack_t ss;
    char *m;

    size = (size + (size_t)page - 1) & ~((size_t)page - 1);
    /* A guard page below: a handler that overflows it faults at once
     * instead of writing over the program's memory. */
    m = mmap(NULL, size + (size_t)page, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || mprotect(m, (size_t)page, PROT_NONE) != 0)
        return 20;
    ss.ss_sp = m + page;
    ss.ss_size = size;
    ss.ss_flags = 0;
    if (sigaltstack(&ss, NULL) != 0)
        return 21;
    alt_lo = (uintptr_t)ss.ss_sp;
    alt_hi = alt_lo + size;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = h;
    sigemptyset(&sa.sa_mask);
    if (!strcmp(mode, "onstack") || !strcmp(mode, "small"))
        sa.sa_flags = SA_ONSTACK;
    else if (!strcmp(mode, "resethand"))
        sa.sa_flags = SA_RESETHAND;
    else if (!strcmp(mode, "nodefer"))
        sa.sa_flags = SA_NODEFER | SA_ONSTACK;
    else
        return 9;
    if (sigaction(SIGPROF, &sa, NULL) != 0)
        return 10;
    hz_burn_ms(300);             /* ~30 of rec's signals, on the alt stack */
    if (atomic_load(&got) != 0)
        return 1;
    raise(SIGPROF);
    if (atomic_load(&got) != 1)
        return 2;
    if ((sa.sa_flags & SA_ONSTACK) && !atomic_load(&on_alt))
        return 3;                /* SA_ONSTACK not honoured */
    if (atomic_load(&prof_blocked) != !(sa.sa_flags & SA_NODEFER))
        return 4;
    if (sigaction(SIGPROF, NULL, &cur) != 0)
        return 11;
    if (!(sa.sa_flags & SA_RESETHAND) != (cur.sa_handler != SIG_DFL))
        return 5;                /* one-shot: back to the default */
    hz_burn_ms(100);             /* rec's signals must not kill it now */
    return 0;
}
