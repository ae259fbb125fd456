/* c11sig: a strict ISO C program (built with -std=c11, where signal() is
 * glibc's __sysv_signal: one-shot) that installs a SIGPROF handler. Under
 * rec the first timer signal used to reset the action to the default and
 * the second killed the process. Exit 0 if the handler got none of rec's
 * signals. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <time.h>
#include "hazard.h"

static volatile sig_atomic_t got;

static void h(int sig)
{
    (void)sig;
    got++;
}

int main(void)
{
    if (signal(SIGPROF, h) == SIG_ERR)
        return 10;
    hz_burn_ms(300);
    return got == 0 ? 0 : 1;
}
