/*
 * bench/attach-probe.c - clocks and watches for bench/attach.sh and
 * bench/attach-daemon.sh. Built by the scripts (cc -O2), not by make.
 *
 *   attach-probe stamp FILE -- CMD [ARG...]
 *       write "MONOTONIC_NS REALTIME_NS" to FILE, then exec CMD: the moment
 *       the command started, read as close to its exec as a script can.
 *   attach-probe cpu PID
 *       the CPU time of process PID (all its threads, dead ones included),
 *       ns: its process CPU clock, which /proc/PID/stat only gives in 10 ms
 *       ticks.
 *   attach-probe stop SIG TOOL TARGET
 *       send signal SIG (a number) to process TOOL (rec-start or perf) and
 *       time, from that moment, TOOL's exit and the last thread named
 *       "rec-..." leaving process TARGET (0: no TARGET). Polls every 1 ms,
 *       gives up after 30 s. Prints
 *         exit_ns=N gone_ns=N cpu_at_signal=N cpu_at_end=N
 *       (cpu_*: TARGET's CPU time when the signal was sent and when both
 *       were seen; gone_ns=-1 if a thread of ours was still there at the
 *       end, exit_ns=-1 if TOOL did not exit).
 *   attach-probe idle THREADS
 *       an idle target: THREADS threads and the main one blocked in
 *       poll() until killed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    if (clock_gettime(c, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t process_cpu_ns(pid_t pid)
{
    clockid_t c;
    if (pid <= 0 || clock_getcpuclockid(pid, &c) != 0)
        return -1;
    return clock_ns(c);
}

/* Threads of pid whose name starts with "rec-" (the sampler's); -1 once
 * the process is gone. */
static int our_threads(pid_t pid)
{
    char path[300], name[64];
    int n = 0;
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/%d/task/%s/comm", (int)pid, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(name, sizeof name, f) && strncmp(name, "rec-", 4) == 0)
            n++;
        fclose(f);
    }
    closedir(d);
    return n;
}

static int stamp(const char *file, char **cmd)
{
    FILE *f = fopen(file, "w");
    if (!f) {
        perror(file);
        return 127;
    }
    int64_t m = clock_ns(CLOCK_MONOTONIC), r = clock_ns(CLOCK_REALTIME);
    fprintf(f, "%lld %lld\n", (long long)m, (long long)r);
    if (fclose(f) != 0) {
        perror(file);
        return 127;
    }
    execvp(cmd[0], cmd);
    perror(cmd[0]);
    return 127;
}

static int stop(int sig, pid_t tool, pid_t target)
{
    int pfd = (int)syscall(SYS_pidfd_open, tool, 0);
    if (pfd < 0) {
        perror("pidfd_open");
        return 1;
    }
    int64_t cpu0 = process_cpu_ns(target), t0 = clock_ns(CLOCK_MONOTONIC);
    int64_t t_exit = -1, t_gone = -1, now = t0;
    if (kill(tool, sig) != 0) {
        perror("kill");
        return 1;
    }
    while (now - t0 < 30000000000LL) {
        struct pollfd p = { pfd, POLLIN, 0 };
        if (t_exit < 0 && poll(&p, 1, 1) > 0 && (p.revents & POLLIN))
            t_exit = clock_ns(CLOCK_MONOTONIC) - t0;
        if (t_exit >= 0 && t_gone < 0)
            usleep(1000);
        now = clock_ns(CLOCK_MONOTONIC);
        if (t_gone < 0 && (target <= 0 || our_threads(target) <= 0))
            t_gone = now - t0;
        if (t_exit >= 0 && t_gone >= 0)
            break;
    }
    printf("exit_ns=%lld gone_ns=%lld cpu_at_signal=%lld cpu_at_end=%lld\n",
           (long long)t_exit, (long long)t_gone, (long long)cpu0,
           (long long)process_cpu_ns(target));
    return 0;
}

static void *idle_thread(void *arg)
{
    (void)arg;
    for (;;)
        poll(NULL, 0, -1);
    return NULL;
}

static int idle(int n)
{
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, idle_thread, NULL) != 0)
            return 1;
    }
    idle_thread(NULL);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "stamp") == 0 && strcmp(argv[3], "--") == 0)
        return stamp(argv[2], argv + 4);
    if (argc == 3 && strcmp(argv[1], "cpu") == 0) {
        int64_t v = process_cpu_ns((pid_t)atol(argv[2]));
        if (v < 0) {
            fprintf(stderr, "attach-probe: no CPU clock for process %s: %s\n",
                    argv[2], strerror(errno));
            return 1;
        }
        printf("%lld\n", (long long)v);
        return 0;
    }
    if (argc == 5 && strcmp(argv[1], "stop") == 0)
        return stop(atoi(argv[2]), (pid_t)atol(argv[3]), (pid_t)atol(argv[4]));
    if (argc == 3 && strcmp(argv[1], "idle") == 0)
        return idle(atoi(argv[2]));
    fprintf(stderr, "usage: attach-probe stamp FILE -- CMD [ARG...] | cpu PID | "
                    "stop SIG TOOL TARGET | idle THREADS\n");
    return 2;
}
