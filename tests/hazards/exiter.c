/* exiter: burn CPU in the main thread and a worker that is still running,
 * then leave without exit(): argv[1] is "_exit", "_Exit", "exit_group"
 * (syscall()), "abort" or "segv"; argv[2]: ms of CPU to burn first.
 * Exit status 3 (or the signal's). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "hazard.h"

static _Atomic int started;

static void *spin(void *arg)
{
    (void)arg;
    started = 1;
    for (;;)
        hz_burn_ms(10);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "_exit";
    pthread_t t;

    pthread_create(&t, NULL, spin, NULL);
    while (!started)
        ;
    hz_burn_ms(hz_arg(argc, argv, 2, 200));
    if (!strcmp(how, "_exit"))
        _exit(3);
    if (!strcmp(how, "_Exit"))
        _Exit(3);
    if (!strcmp(how, "exit_group"))
        syscall(SYS_exit_group, 3);
    if (!strcmp(how, "abort"))
        abort();
    if (!strcmp(how, "segv"))
        raise(SIGSEGV);
    return 9;
}
