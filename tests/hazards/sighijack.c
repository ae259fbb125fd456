/* sighijack: the program sets SIGPROF to SIG_IGN with a raw rt_sigaction
 * system call, past every function rec interposes. rec must notice that
 * its handler is gone, stop its timers (warn once) and still account for
 * all the CPU time. Exit 0 when done; 77 where the raw call is not known. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "hazard.h"

int main(void)
{
#if defined(__x86_64__) || defined(__aarch64__)
    struct { void *handler; unsigned long flags; void *restorer; uint64_t mask; } ka;
    memset(&ka, 0, sizeof ka);
    ka.handler = (void *)SIG_IGN;
    hz_burn_ms(100);
    if (syscall(SYS_rt_sigaction, SIGPROF, &ka, NULL, sizeof ka.mask) != 0)
        return 10;
    hz_burn_ms(300);
    return 0;
#else
    return 77;
#endif
}
