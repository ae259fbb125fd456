/* altstack: burn CPU inside a SIGUSR1 handler that runs on an alternate
 * signal stack: the sampler cannot bound a walk there, so those samples
 * have the interrupted function only (from the registers) and keep their
 * CPU time. Exit 0 when done. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "hazard.h"

static void on_usr1(int sig)
{
    (void)sig;
    hz_burn_ms(100);
}

int main(void)
{
    stack_t ss;
    struct sigaction sa;

    ss.ss_size = 1 << 16;
    ss.ss_sp = malloc(ss.ss_size);
    ss.ss_flags = 0;
    if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0)
        return 2;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGUSR1, &sa, NULL);
    hz_burn_ms(50);
    raise(SIGUSR1);
    hz_burn_ms(50);
    return 0;
}
