/* maskview: workers that block every signal with pthread_sigmask (as xz's
 * do) and burn CPU; the mask the program sees must be the one it set.
 * argv[1]: "workers" (default), "own" (the program's own SIGPROF handler:
 * a SIGPROF it raises while blocked waits until it unblocks it, or until
 * a sigsuspend admits it), "spawn" (a posix_spawn child inherits the
 * blocked SIGPROF, with and without the sampler) or "raw"
 * (one worker blocks with a raw rt_sigprocmask system call; argv[2]: ms),
 * "samask" (handlers whose sa_mask is a full set: the main thread burns
 * CPU in one, and leaves another by siglongjmp; what sigaction and
 * sigprocmask report there is what the kernel gives without the sampler),
 * "glibc" (under the sampler: after glibc's own mask changes, system(),
 * popen(), posix_spawn() and a siglongjmp to a mask saved while SIGPROF
 * was blocked by a raw system call, the thread's real mask, read from
 * /proc, does not block SIGPROF).
 * Exit 0 if every check held, 10+ the failed check otherwise. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "hazard.h"

static double ms = 200;
static _Atomic int failed;
static volatile sig_atomic_t handled;

static void fail(int code)
{
    int z = 0;
    atomic_compare_exchange_strong(&failed, &z, code);
}

static int same(const sigset_t *a, const sigset_t *b)
{
    for (int s = 1; s < NSIG; s++)
        if (sigismember(a, s) != sigismember(b, s))
            return 0;
    return 1;
}

static void *worker(void *arg)
{
    sigset_t all, cur, pend, none;
    (void)arg;
    sigfillset(&all);
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &all, NULL);
    hz_burn_ms(ms);
    /* What it set, from both calls; nothing of rec's pending. */
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    if (!sigismember(&cur, SIGPROF) || !sigismember(&cur, SIGTERM))
        fail(10);
    if (!same(&cur, &all) && !sigismember(&cur, SIGPROF))
        fail(11);
    sigprocmask(SIG_SETMASK, &none, &cur);
    if (!sigismember(&cur, SIGPROF))
        fail(12);
    sigprocmask(SIG_SETMASK, &all, &cur);
    if (sigismember(&cur, SIGPROF) || sigismember(&cur, SIGTERM))
        fail(13);
    hz_burn_ms(ms / 4);
    if (sigpending(&pend) != 0 || sigismember(&pend, SIGPROF))
        fail(14);
    return NULL;
}

static void *raw_worker(void *arg)
{
    sigset_t all;
    (void)arg;
    sigfillset(&all);
    /* Past every interposed function: rec cannot keep the signal open. */
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, (size_t)(_NSIG / 8));
    hz_burn_ms(ms);
    return NULL;
}

static void on_prof(int sig)
{
    (void)sig;
    handled++;
}

static int own(void)
{
    sigset_t prof, pend, old, cur;
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    sigaction(SIGPROF, &sa, NULL);
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    sigprocmask(SIG_BLOCK, &prof, NULL);
    hz_burn_ms(ms / 2);
    raise(SIGPROF);
    if (handled)
        return 20;                 /* delivered while blocked */
    if (sigpending(&pend) != 0 || !sigismember(&pend, SIGPROF))
        return 21;                 /* not pending as it should be */
    sigprocmask(SIG_UNBLOCK, &prof, NULL);
    if (handled != 1)
        return 22;                 /* not delivered once unblocked */
    if (sigpending(&pend) != 0 || sigismember(&pend, SIGPROF))
        return 23;
    hz_burn_ms(ms / 4);
    /* The same through sigsuspend, which admits it atomically; the mask
     * (and its view) is back to blocked after. */
    sigprocmask(SIG_BLOCK, &prof, &old);
    if (sigismember(&old, SIGPROF))
        return 24;
    raise(SIGPROF);
    if (handled != 1)
        return 25;
    if (sigsuspend(&old) != -1 || errno != EINTR || handled != 2)
        return 26;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    if (!sigismember(&cur, SIGPROF))
        return 27;
    raise(SIGPROF);
    if (handled != 2)
        return 28;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (handled != 3)
        return 29;
#if defined(__GLIBC_PREREQ) && __GLIBC_PREREQ(2, 35)
    {
        /* epoll_pwait2 admits it like sigsuspend (a kernel without it:
         * ENOSYS, then the unblock delivers it). */
        int ep = epoll_create1(0), rc;
        struct epoll_event ev;
        struct timespec to = { 5, 0 };

        sigprocmask(SIG_BLOCK, &prof, &old);
        raise(SIGPROF);
        if (handled != 3)
            return 40;
        rc = epoll_pwait2(ep, &ev, 1, &to, &old);
        if (rc == -1 && errno == ENOSYS)
            handled++;
        else if (rc != -1 || errno != EINTR || handled != 4)
            return 41;
        sigprocmask(SIG_BLOCK, NULL, &cur);
        if (!sigismember(&cur, SIGPROF))
            return 42;
        sigprocmask(SIG_SETMASK, &old, NULL);
        close(ep);
    }
#endif
    hz_burn_ms(ms / 4);
    return 0;
}

/* The child: SIGPROF blocked as its parent had it, in its view and, when
 * it runs without the sampler, for real. */
static int childmask(void)
{
    sigset_t cur;
    char line[256];
    FILE *f;
    int real = -1;

    sigprocmask(SIG_BLOCK, NULL, &cur);
    if (!sigismember(&cur, SIGPROF))
        return 30;
    if (getenv("LD_PRELOAD"))
        return 0;
    if (!(f = fopen("/proc/self/status", "r")))
        return 31;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "SigBlk:", 7))
            real = (int)((strtoull(line + 7, NULL, 16) >> (SIGPROF - 1)) & 1);
    fclose(f);
    return real == 1 ? 0 : 32;
}

/* posix_spawn with the parent's mask (no POSIX_SPAWN_SETSIGMASK), with and
 * without the environment (so without the sampler too). */
static int spawner(const char *self)
{
    extern char **environ;
    char *argv[] = { (char *)self, (char *)"childmask", NULL };
    char *noenv[] = { NULL };
    sigset_t prof;
    int st;
    pid_t pid;

    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    pthread_sigmask(SIG_BLOCK, &prof, NULL);
    hz_burn_ms(ms / 2);
    for (int i = 0; i < 2; i++) {
        if (posix_spawn(&pid, self, NULL, NULL, argv, i ? noenv : environ) != 0 ||
            waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
            return 33;
        if (WEXITSTATUS(st))
            return WEXITSTATUS(st) + i * 5;
    }
    return 0;
}

/* Inside a handler whose sa_mask is full: SIGPROF reported blocked. */
__attribute__((noinline)) static void in_full_mask_handler(int sig)
{
    sigset_t cur;

    (void)sig;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    if (sigismember(&cur, SIGPROF) != 1 || sigismember(&cur, SIGTERM) != 1)
        fail(30);
    hz_burn_ms(ms);
}

static sigjmp_buf jb;

static void jump_out(int sig)
{
    (void)sig;
    hz_burn_ms(ms / 10);
    siglongjmp(jb, 1);
}

static int samask(void)
{
    struct sigaction sa, old;
    sigset_t cur, want;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = in_full_mask_handler;
    sa.sa_flags = SA_RESTART;
    sigfillset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0 || sigaction(SIGUSR1, NULL, &old) != 0)
        return 31;
    /* The kernel keeps SIGKILL and SIGSTOP out of a handler's mask. */
    want = sa.sa_mask;
    sigdelset(&want, SIGKILL);
    sigdelset(&want, SIGSTOP);
    if (old.sa_handler != in_full_mask_handler || (old.sa_flags & SA_SIGINFO) ||
        !(old.sa_flags & SA_RESTART) || !same(&old.sa_mask, &want))
        fail(32);
    for (int i = 0; i < 3; i++)
        raise(SIGUSR1);
    sigprocmask(SIG_BLOCK, NULL, &cur);
    if (sigismember(&cur, SIGPROF))
        fail(33);
    /* The old action returned when it is replaced is the same. */
    sa.sa_handler = jump_out;
    if (sigaction(SIGUSR1, &sa, &old) != 0)
        return 34;
    if (old.sa_handler != in_full_mask_handler || !same(&old.sa_mask, &want))
        fail(35);
    if (!sigsetjmp(jb, 1))
        raise(SIGUSR1);
    sigprocmask(SIG_BLOCK, NULL, &cur);
    if (sigismember(&cur, SIGPROF) || sigismember(&cur, SIGTERM))
        fail(36);
    return failed;
}

/* SIGPROF in the thread's real mask (SigBlk, hexadecimal, bit n - 1). */
static int really_blocked(void)
{
    char line[256];
    unsigned long long m = 0;
    FILE *f = fopen("/proc/thread-self/status", "r");

    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "SigBlk:", 7))
            m = strtoull(line + 7, NULL, 16);
    fclose(f);
    return (int)((m >> (SIGPROF - 1)) & 1);
}

static int glibc_masks(const char *self)
{
    extern char **environ;
    sigset_t prof;
    pid_t pid;
    char *argv[] = { (char *)self, (char *)"childmask", NULL };
    FILE *p;
    int st;

    hz_burn_ms(ms / 4);
    if (system("true") != 0)
        return 50;
    if (really_blocked())
        return 51;
    if (!(p = popen("true", "r")) || pclose(p) != 0)
        return 52;
    if (really_blocked())
        return 53;
    if (posix_spawn(&pid, self, NULL, NULL, argv, environ) != 0 ||
        waitpid(pid, &st, 0) != pid)
        return 54;
    if (really_blocked())
        return 55;
    /* A mask saved while SIGPROF was blocked past the interposed calls. */
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &prof, NULL, (size_t)(_NSIG / 8));
    if (!sigsetjmp(jb, 1)) {
        syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &prof, NULL,
                (size_t)(_NSIG / 8));
        siglongjmp(jb, 1);
    }
    if (really_blocked())
        return 56;
    hz_burn_ms(ms / 4);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "workers";
    pthread_t t[3];
    int n = 3;

    ms = hz_arg(argc, argv, 2, 200);
    if (!strcmp(mode, "own"))
        return own();
    if (!strcmp(mode, "childmask"))
        return childmask();
    if (!strcmp(mode, "spawn"))
        return spawner(argv[0]);
    if (!strcmp(mode, "samask"))
        return samask();
    if (!strcmp(mode, "glibc"))
        return glibc_masks(argv[0]);
    for (int i = 0; i < n; i++)
        pthread_create(&t[i], NULL,
                       !strcmp(mode, "raw") && i == 0 ? raw_worker : worker,
                       NULL);
    hz_burn_ms(ms / 2);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    return failed;
}
