/* stuck MODE: the sampler thread is stopped for good (a traced stop, as a
 * thread starved of CPU would be), then the program goes on as MODE says:
 *   exec   burns 100 ms, then execs itself as "child", which burns 300 ms
 *          and exits 5: the exec's bounded stop gives up, and the new
 *          image must not die of a sampling signal left behind (a large
 *          address space makes the exec itself take CPU time, in which a
 *          timer left armed expires);
 *   exit   burns 100 ms, then exit(5): the recording ends at its last
 *          flush, the status is kept.
 * Exit 77 if no sampler thread was found or it could not be stopped
 * (ptrace refused). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>
#include "hazard.h"

/* A child traces the sampler thread alone and keeps it stopped until it
 * dies (with the process, or at the exec). Returns 0 once it is stopped. */
static int stop_sampler(void)
{
    pid_t tid = hz_sampler_tid(), pid;
    int fds[2], st;
    char ok = 0;

    if (!tid || pipe(fds) != 0)
        return -1;
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    if ((pid = fork()) < 0)
        return -1;
    if (pid == 0) {
        close(fds[0]);
        if (ptrace(PTRACE_SEIZE, tid, 0, 0) == 0 &&
            ptrace(PTRACE_INTERRUPT, tid, 0, 0) == 0 &&
            waitpid(tid, &st, __WALL) == tid) {
            ok = 1;
            if (write(fds[1], &ok, 1) != 1)
                _exit(1);
            /* Each stop is left as it is (never continued) until the
             * thread is gone. */
            while (waitpid(tid, &st, __WALL) == tid && !WIFEXITED(st) &&
                   !WIFSIGNALED(st))
                ;
            _exit(0);
        }
        if (write(fds[1], &ok, 1) != 1)
            _exit(1);
        _exit(1);
    }
    close(fds[1]);
    if (read(fds[0], &ok, 1) != 1)
        ok = 0;
    close(fds[0]);
    return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "exec";

    if (!strcmp(mode, "child")) {
        hz_burn_ms(300);
        return 5;
    }
    hz_burn_ms(20);
    if (stop_sampler() != 0)
        return 77;
    hz_burn_ms(100);
    if (!strcmp(mode, "exec")) {
        size_t big = 512u << 20;
        char *mem = malloc(big);
        for (size_t i = 0; mem && i < big; i += 4096)
            mem[i] = 1;
        char *args[] = { argv[0], (char *)"child", NULL };
        execv("/proc/self/exe", args);
        return 4;
    }
    exit(5);
}
