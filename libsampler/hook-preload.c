/*
 * libsampler/hook-preload.c - the LD_PRELOAD entry: start from the environment,
 * follow threads (pthread_create), fork and exec.
 *
 * Which processes record (REC_ROOT_PID is the pid rec-start launched):
 *   - the root process records into REC_OUTPUT; after an exec the new image
 *     appends a new recording to the same file (REC_APPEND=1 is added to the
 *     environment the exec passes on, only if it carries REC_OUTPUT);
 *   - other processes that inherit the preload (children) stay dormant:
 *     no handler, no timer, no registry, unless REC_FOLLOW_CHILDREN=1: then
 *     a child records into "<REC_OUTPUT>.<pid>" and becomes the root of its
 *     own descendants (REC_OUTPUT and REC_ROOT_PID are updated in its
 *     environment).
 *   - fork(): the child of a recording process never touches the parent's
 *     file; its state is reset (timers are not inherited, the sampler thread
 *     does not exist there). vfork() and posix_spawn() children share the
 *     parent's memory until they exec: the exec wrappers see getpid() differ
 *     from the recording's pid and leave everything alone.
 */
#include <config.h>
#include "internal.h"
#include "sym-jit.h"
#include "recenv.h"
#include "unwind.h"

#include <alloca.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef int (*pthread_create_fn)(pthread_t *, const pthread_attr_t *,
                                 void *(*)(void *), void *);
static pthread_create_fn real_pthread_create;
static pthread_create_fn first_pthread_create;
static __thread bool creating_own;
static bool follow_children;
static bool preloaded;              /* started by rec-start's environment */
static __thread sigset_t fork_mask;
static __thread int fork_was_safe;

static void *next_sym(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

int recs__real_pthread_create(pthread_t *th, const pthread_attr_t *attr,
                              void *(*fn)(void *), void *arg)
{
    if (!real_pthread_create) {
        real_pthread_create = (pthread_create_fn)next_sym("pthread_create");
        if (!real_pthread_create)
            return ENOSYS;
    }
    return real_pthread_create(th, attr, fn, arg);
}

/* The sampler's own thread is created as any library's thread is:
 * through the process's first pthread_create, which a runtime that tracks
 * threads may have interposed (a sanitizer's runtime preloaded before us),
 * and which reaches ours last, where it passes on unwrapped. A thread
 * created behind such a runtime's back is unknown to it: AddressSanitizer
 * then never clears the shadow of its stack, and in a forked child that
 * stack is one the C library recycled from a thread of the parent, its
 * frames' redzones still poisoned (tests/hazards/forkstack.c). */
int recs__own_pthread_create(pthread_t *th, void *(*fn)(void *), void *arg)
{
    int rc;

    if (!first_pthread_create)
        first_pthread_create = (pthread_create_fn)dlsym(RTLD_DEFAULT,
                                                        "pthread_create");
    if (!first_pthread_create)
        return recs__real_pthread_create(th, NULL, fn, arg);
    creating_own = true;
    rc = first_pthread_create(th, NULL, fn, arg);
    creating_own = false;
    return rc;
}

/* ------------------------------------------------------------------ */
/* Threads                                                             */
/* ------------------------------------------------------------------ */

struct tramp {
    void *(*fn)(void *);
    void *arg;
    pid_t parent;
    int view;              /* the creator's view of its mask (hook-sigmask.c) */
};

static void *trampoline(void *p)
{
    struct tramp tp = *(struct tramp *)p;
    recs__thread *t;

    free(p);
    recs__sigmask_adopt(tp.view);
    /* Before the start routine: the thread's first CPU cycles count. Exit
     * (return, pthread_exit, cancellation) is caught by a key destructor. */
    if (recs__g.registry && (t = recs__thread_new(tp.parent)))
        recs__thread_register(t);
    return tp.fn(tp.arg);
}

/* A thread created before our constructor (by a library constructor that
 * ran first) or before recs_start: not sampled (drain-untracked.c), but its exit
 * is caught to read its CPU clock one last time. */
static void *early_trampoline(void *p)
{
    struct tramp tp = *(struct tramp *)p;

    free(p);
    recs__untracked_early_thread();
    return tp.fn(tp.arg);
}

int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                   void *(*fn)(void *), void *arg)
{
    struct tramp *tp;
    int rc;

    if (creating_own)
        return recs__real_pthread_create(th, attr, fn, arg);
    if (!recs__g.registry && !recs__g.preloaded &&
        (tp = malloc(sizeof *tp))) {
        tp->fn = fn;
        tp->arg = arg;
        rc = recs__real_pthread_create(th, attr, early_trampoline, tp);
        if (rc != 0)
            free(tp);
        return rc;
    }
    if (!recs__g.registry || !(tp = malloc(sizeof *tp)))
        return recs__real_pthread_create(th, attr, fn, arg);
    tp->fn = fn;
    tp->arg = arg;
    tp->parent = recs__gettid();
    tp->view = recs__sigmask_view();
    rc = recs__real_pthread_create(th, attr, trampoline, tp);
    if (rc != 0)
        free(tp);
    return rc;
}

/* ------------------------------------------------------------------ */
/* fork                                                                */
/* ------------------------------------------------------------------ */

static void fork_prepare(void)
{
    recs__thread *self = recs__self;

    /* A clone() of a large process can take longer than the period: a
     * signal that interrupted it would restart it forever. */
    recs__block_signal(&fork_mask);
    fork_was_safe = self ? atomic_exchange(&self->safe, 0) : 0;
    /* No lock may be held by a thread that does not exist in the child. */
    pthread_mutex_lock(&recs__g.ctl_lock);
    pthread_mutex_lock(&recs__g.drain_lock);
    pthread_mutex_lock(&recs__g.reg_lock);
    recs__uw_fork_prepare();
}

static void fork_parent(void)
{
    recs__thread *self = recs__self;

    recs__uw_fork_parent();
    pthread_mutex_unlock(&recs__g.reg_lock);
    pthread_mutex_unlock(&recs__g.drain_lock);
    pthread_mutex_unlock(&recs__g.ctl_lock);
    if (self && fork_was_safe)
        atomic_store(&self->safe, 1);
    pthread_sigmask(SIG_SETMASK, &fork_mask, NULL);
}

static char *child_output(const char *base, pid_t pid)
{
    size_t n = strlen(base) + 24;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s.%d", base, (int)pid);
    return p;
}

static void become_root(const char *output, pid_t pid)
{
    char buf[24];

    snprintf(buf, sizeof buf, "%d", (int)pid);
    setenv(REC_ENV_OUTPUT, output, 1);
    setenv(REC_ENV_ROOT_PID, buf, 1);
    unsetenv(REC_ENV_APPEND);
    /* rec-start's status pipe is the root process's: the images this
     * child execs must not look for it (the fd is long gone). */
    unsetenv(REC_ENV_STATUS_FD);
}

static void fork_child(void)
{
    recs__thread *self = recs__self;
    bool was_running = atomic_load(&recs__g.running);
    recs__config cfg;
    char *out;

    pthread_mutex_unlock(&recs__g.reg_lock);
    pthread_mutex_unlock(&recs__g.drain_lock);
    pthread_mutex_unlock(&recs__g.ctl_lock);
    /* The other threads do not exist here; their timers neither. Their
     * state is abandoned, not freed: another thread may have held the
     * allocator's lock at the fork (an ASan child deadlocked on it). */
    recs__g.threads = recs__g.dead = NULL;
    recs__g.ndead = 0;
    atomic_store(&recs__g.running, 0);
    atomic_store(&recs__g.inflight, 0);
    /* The parent's writer and stream are the parent's: abandoned, never
     * flushed or closed from here. The unwind tables describe the same
     * code here: kept when they can be (recs__uw_fork_child). */
    recs__g.w = NULL;
    recs__fd_disown(recs__g.out_fd);    /* the parent's */
    recs__g.out_fd = -1;
    recs__g.st = NULL;
    recs__g.sym = NULL;
    recs__g.sampler_started = false;
    atomic_store(&recs__g.sampler_cpu_ns, 0);
    recs__g.batch_size = 0;
    if (recs__g.attached) {
        /* rec-start -p's FIFOs are the parent's session: closed here, so
         * that a child that lives on does not hold them open. */
        recs__g.attached = false;
        if (recs__g.ctl_fd >= 0) {
            recs__fd_disown(recs__g.ctl_fd);
            close(recs__g.ctl_fd);
            recs__g.ctl_fd = -1;
        }
        if (recs__g.status_fd >= 0)
            close(recs__g.status_fd);
    }
    recs__fd_disown(recs__g.status_fd);
    recs__g.status_fd = -1;
    recs__untracked_reset();
    recs__stacks_abandon();
    recs__jit_abandon();
    recs__uw_fork_child();
    /* The parent's perf events are its threads': only their fds came
     * along. */
    recs__perf_forget_all();
    if (self) {
        memset(&self->lost, 0, sizeof self->lost);
        self->q.count = 0;
        self->q.used = 0;
        atomic_store(&self->q.lock, RECS_UNLOCKED);
        self->has_timer = self->in_session = self->start_pending = false;
        self->perf_fd = -1;
        atomic_store(&self->perf_sig_fd, -1);
        self->armed = self->stopped = false;   /* no timer survives fork */
        atomic_store(&self->expiries, 0);
        self->tid = recs__gettid();
        self->parent_tid = 0;
        self->self = pthread_self();
        if (pthread_getcpuclockid(self->self, &self->cpuclock) != 0)
            self->cpuclock = CLOCK_THREAD_CPUTIME_ID;
        self->prev = self->next = NULL;
        recs__g.threads = self;
    }
    if (was_running && follow_children && recs__g.cfg.output &&
        (out = child_output(recs__g.cfg.output, getpid()))) {
        become_root(out, getpid());
        cfg = recs__g.cfg;
        cfg.output = out;
        cfg.append = false;
        cfg.overwrite = false;     /* exclusive: a planted name is refused */
        cfg.output_fd = -1;
        cfg.has_id = false;
        recs__g.cfg.output = NULL;
        recs__g.cfg.throttle_text = NULL;
        recs__start_config(&cfg);
        free(out);
        free(cfg.throttle_text);
    } else {
        /* Dormant: the handler stays (a pending signal must not kill), the
         * rest is given up. */
        recs__g.registry = false;
        recs__self = NULL;
        recs__g.threads = NULL;       /* self abandoned, as above */
        recs__g.pid = getpid();
    }
    if (recs__self && fork_was_safe)
        atomic_store(&recs__self->safe, atomic_load(&recs__g.running));
    pthread_sigmask(SIG_SETMASK, &fork_mask, NULL);
}

static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

static void hooks_init(void)
{
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void recs__hooks_once(void)
{
    pthread_once(&hooks_once, hooks_init);
}

/* ------------------------------------------------------------------ */
/* exec                                                                */
/* ------------------------------------------------------------------ */

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

extern char **environ;

/* Resolved at load, so that the first call never runs dlsym in a vfork
 * child or a signal handler (the lazy fallback stays for safety). */
static execve_fn real_execve, real_execvpe;
static fexecve_fn real_fexecve;
static execveat_fn real_execveat;

RECS_RESOLVER
static void resolve_exec(void)
{
    real_execve = (execve_fn)next_sym("execve");
    real_execvpe = (execve_fn)next_sym("execvpe");
    real_fexecve = (fexecve_fn)next_sym("fexecve");
    real_execveat = (execveat_fn)next_sym("execveat");
    if (!real_pthread_create)
        real_pthread_create = (pthread_create_fn)next_sym("pthread_create");
}

/* A process that is not recorded (and whose exec'd image will not be)
 * passes on neither rec's variables nor its LD_PRELOAD entries. */
#define STRIP_ENV(envp)                                                   \
    do {                                                                  \
        size_t sz_;                                                       \
        if (preloaded && !follow_children &&                              \
            (sz_ = recs__env_strip_size(envp)) != 0)                      \
            envp = recs__env_strip(envp, alloca(sz_));                    \
    } while (0)

/* True in the process that owns the recording (not in a vfork child, which
 * shares our memory but has its own pid). */
static bool owner(void)
{
    return atomic_load(&recs__g.running) && recs__g.pid == getpid();
}

/* Signal-safe (exec is called from signal handlers: a daemon that
 * re-executes itself on SIGHUP). envp continuing this process's
 * recording, if it carries REC_OUTPUT: this file and root pid (a shell
 * passes its own copy of the variables, not what a followed child's
 * environ says), REC_APPEND=1 and the identity of the file to append to
 * (REC_OUTPUT_ID). NULL if unchanged. Nothing is allocated: the array is
 * mapped (a system call takes no lock a signal can interrupt) and freed
 * by env_release(); the strings are static. */
static char **env_for_exec(char *const envp[], size_t *maplen)
{
    static char id[64], root[32], output[PATH_MAX + 16];
    size_t n = 0, k = 0, len;
    bool has_output = false;
    char **out, *p;

    if (!envp || !recs__g.cfg.output ||
        strlen(recs__g.cfg.output) >= sizeof output - sizeof "REC_OUTPUT=")
        return NULL;
    for (; envp[n]; n++)
        if (!strncmp(envp[n], "REC_OUTPUT=", 11))
            has_output = true;
    if (!has_output)
        return NULL;
    len = (n + 5) * sizeof *out;
    out = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
               -1, 0);
    if (out == MAP_FAILED)
        return NULL;
    *maplen = len;
    memcpy(output, "REC_OUTPUT=", 11);
    strcpy(output + 11, recs__g.cfg.output);
    for (size_t i = 0; i < n; i++)
        if (strncmp(envp[i], "REC_APPEND=", 11) &&
            strncmp(envp[i], "REC_OUTPUT_ID=", 14) &&
            strncmp(envp[i], "REC_OUTPUT_FD=", 14) &&
            strncmp(envp[i], "REC_OUTPUT=", 11) &&
            strncmp(envp[i], "REC_ROOT_PID=", 13))
            out[k++] = envp[i];
    memcpy(root, "REC_ROOT_PID=", 13);
    recs__put_u64(root + 13, (uint64_t)getpid());
    memcpy(id, "REC_OUTPUT_ID=", 14);
    p = recs__put_u64(id + 14, (uint64_t)recs__g.out_dev);
    *p++ = ':';
    recs__put_u64(p, (uint64_t)recs__g.out_ino);
    out[k++] = output;
    out[k++] = root;
    out[k++] = (char *)"REC_APPEND=1";
    out[k++] = id;
    out[k] = NULL;
    return out;
}

/* Signal-safe. */
static void env_release(char **env, size_t maplen)
{
    if (env)
        munmap(env, maplen);
}

/* The recording is finished before the image is replaced; if the exec
 * fails, a new recording is appended and sampling goes on. exec_stop:
 * recs__finish_by_sampler's answer (-1: stopped on this thread). */
static int exec_stop;

static void before_exec(void)
{
    recs__thread *self = recs__self;
    sigset_t set, old;
    siginfo_t si, keep[8];
    struct timespec zero = { 0, 0 };
    int rc, nkeep = 0;

    /* This thread's source first, before any wait that can give up (a
     * sampler thread starved of CPU): the other threads end with the
     * exec, this one goes on in the new image, where a perf overflow (or,
     * before Linux 6.13, a timer's signal) still pending would meet the
     * default action. The stop's own reading closes the arming: the CPU
     * time in between is counted undelivered. */
    if (self && self->has_timer && recs__g.pid == getpid())
        recs__engine_pause(self);
    /* By the sampler thread, as an exit: daemons exec from their signal
     * handlers (a re-exec on SIGHUP), maybe inside malloc. */
    exec_stop = recs__finish_by_sampler();
    if (exec_stop < 0)
        recs__stop(false, true);
    if (recs__g.status_fd >= 0)
        fcntl(recs__g.status_fd, F_SETFD, 0);
    /* Ours, pending meanwhile, are dropped (the session is closed: their
     * time is in its last accounting, or the stop gave up); the program's
     * own are put back as they were. */
    if (recs__g.signo <= 0)
        return;
    sigemptyset(&set);
    sigaddset(&set, recs__g.signo);
    recs__real_sigmask(SIG_BLOCK, &set, &old);
    while ((rc = recs__real_sigtimedwait(&set, &si, &zero)) == recs__g.signo)
        if (!recs__signal_ours(&si) && nkeep < 8)
            keep[nkeep++] = si;
    for (int i = 0; i < nkeep; i++)
        syscall(SYS_rt_tgsigqueueinfo, getpid(), recs__gettid(), keep[i].si_signo,
                &keep[i]);
    recs__real_sigmask(SIG_SETMASK, &old, NULL);
}

static void after_failed_exec(void)
{
    recs__config cfg = recs__g.cfg;
    int err = errno;

    if (recs__g.status_fd >= 0)
        fcntl(recs__g.status_fd, F_SETFD, FD_CLOEXEC);
    /* A sampler thread that did not finish in time may still be in the
     * stop, using what it would leave: the process goes on unrecorded. */
    if (exec_stop == 0) {
        errno = err;
        return;
    }
    if (exec_stop > 0)
        recs__session_reclaim();
    if (cfg.output) {
        cfg.append = true;
        cfg.overwrite = false;
        cfg.output_fd = -1;
        cfg.has_id = true;
        cfg.out_dev = recs__g.out_dev;
        cfg.out_ino = recs__g.out_ino;
        recs__start_config(&cfg);
    }
    errno = err;
}

int execve(const char *path, char *const argv[], char *const envp[])
{
    execve_fn real = real_execve;
    char **env;
    size_t envlen = 0;
    int rc, tok;

    if (!real && !(real = (execve_fn)next_sym("execve")))
        return errno = ENOSYS, -1;
    if (!owner()) {
        STRIP_ENV(envp);
        tok = recs__sigmask_before_exec();
        rc = real(path, argv, envp);
        recs__sigmask_after_exec(tok);
        return rc;
    }
    env = env_for_exec(envp, &envlen);
    before_exec();
    tok = recs__sigmask_before_exec();
    rc = real(path, argv, env ? env : envp);
    recs__sigmask_after_exec(tok);
    after_failed_exec();
    env_release(env, envlen);
    return rc;
}

int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

int execvpe(const char *file, char *const argv[], char *const envp[])
{
    execve_fn real = real_execvpe;
    char **env;
    size_t envlen = 0;
    int rc, tok;

    if (!real && !(real = (execve_fn)next_sym("execvpe")))
        return errno = ENOSYS, -1;
    if (!owner()) {
        STRIP_ENV(envp);
        tok = recs__sigmask_before_exec();
        rc = real(file, argv, envp);
        recs__sigmask_after_exec(tok);
        return rc;
    }
    env = env_for_exec(envp, &envlen);
    before_exec();
    tok = recs__sigmask_before_exec();
    rc = real(file, argv, env ? env : envp);
    recs__sigmask_after_exec(tok);
    after_failed_exec();
    env_release(env, envlen);
    return rc;
}

int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

int fexecve(int fd, char *const argv[], char *const envp[])
{
    fexecve_fn real = real_fexecve;
    char **env;
    size_t envlen = 0;
    int rc, tok;

    if (!real && !(real = (fexecve_fn)next_sym("fexecve")))
        return errno = ENOSYS, -1;
    if (!owner()) {
        STRIP_ENV(envp);
        tok = recs__sigmask_before_exec();
        rc = real(fd, argv, envp);
        recs__sigmask_after_exec(tok);
        return rc;
    }
    env = env_for_exec(envp, &envlen);
    before_exec();
    tok = recs__sigmask_before_exec();
    rc = real(fd, argv, env ? env : envp);
    recs__sigmask_after_exec(tok);
    after_failed_exec();
    env_release(env, envlen);
    return rc;
}

int execveat(int dirfd, const char *path, char *const argv[],
             char *const envp[], int flags)
{
    execveat_fn real = real_execveat;
    char **env;
    size_t envlen = 0;
    int rc, tok;

    if (!real && !(real = (execveat_fn)next_sym("execveat")))
        return errno = ENOSYS, -1;
    if (!owner()) {
        STRIP_ENV(envp);
        tok = recs__sigmask_before_exec();
        rc = real(dirfd, path, argv, envp, flags);
        recs__sigmask_after_exec(tok);
        return rc;
    }
    env = env_for_exec(envp, &envlen);
    before_exec();
    tok = recs__sigmask_before_exec();
    rc = real(dirfd, path, argv, env ? env : envp, flags);
    recs__sigmask_after_exec(tok);
    after_failed_exec();
    env_release(env, envlen);
    return rc;
}

/* posix_spawn: the child is never this process. */
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);
static spawn_fn real_spawn, real_spawnp;

__attribute__((constructor))
static void resolve_spawn(void)
{
    real_spawn = (spawn_fn)next_sym("posix_spawn");
    real_spawnp = (spawn_fn)next_sym("posix_spawnp");
}

int posix_spawn(pid_t *pid, const char *path,
                const posix_spawn_file_actions_t *fa,
                const posix_spawnattr_t *attr, char *const argv[],
                char *const envp[])
{
    spawn_fn real = real_spawn;

    if (!real && !(real = (spawn_fn)next_sym("posix_spawn")))
        return ENOSYS;
    STRIP_ENV(envp);
    return recs__sigmask_spawn(real, pid, path, fa, attr, argv, envp);
}

int posix_spawnp(pid_t *pid, const char *file,
                 const posix_spawn_file_actions_t *fa,
                 const posix_spawnattr_t *attr, char *const argv[],
                 char *const envp[])
{
    spawn_fn real = real_spawnp;

    if (!real && !(real = (spawn_fn)next_sym("posix_spawnp")))
        return ENOSYS;
    STRIP_ENV(envp);
    return recs__sigmask_spawn(real, pid, file, fa, attr, argv, envp);
}

/* execl, execlp, execle: collect the variadic arguments. */
#define COLLECT_ARGS(first, ap, argv)                          \
    do {                                                                 \
        size_t n_ = 1;                                                   \
        va_list c_;                                                      \
        va_copy(c_, ap);                                                 \
        while (va_arg(c_, char *))                                       \
            n_++;                                                        \
        va_end(c_);                                                      \
        argv = alloca((n_ + 1) * sizeof(char *));                        \
        argv[0] = (char *)(first);                                       \
        for (size_t i_ = 1; i_ <= n_; i_++)                              \
            argv[i_] = va_arg(ap, char *);                               \
    } while (0)

int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    char **argv;
    int rc;

    va_start(ap, arg);
    COLLECT_ARGS(arg, ap, argv);
    va_end(ap);
    rc = execve(path, argv, environ);
    return rc;
}

int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    char **argv;

    va_start(ap, arg);
    COLLECT_ARGS(arg, ap, argv);
    va_end(ap);
    return execvpe(file, argv, environ);
}

int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    char **argv, **envp = NULL;

    va_start(ap, arg);
    COLLECT_ARGS(arg, ap, argv);
    envp = va_arg(ap, char **);
    va_end(ap);
    return execve(path, argv, envp);
}

/* ------------------------------------------------------------------ */
/* Constructor and destructor                                          */
/* ------------------------------------------------------------------ */

__attribute__((constructor))
static void recs__preload_init(void)
{
    const char *out = getenv(REC_ENV_OUTPUT), *root = getenv(REC_ENV_ROOT_PID);
    const char *v;
    char err[256];
    recs__config cfg;
    pid_t pid = getpid();
    recs__thread *t;
    bool follow = false;
    char *own = NULL;

    if (!out || !*out)
        return;               /* linked, not preloaded by rec-start */
    recs__g.preloaded = true;
    preloaded = true;
    if ((v = getenv(REC_ENV_FOLLOW_CHILDREN)) && *v &&
        recs__parse_bool(v, &follow) < 0) {
        recs__warn("invalid REC_FOLLOW_CHILDREN=%s; not recording", v);
        return;
    }
    follow_children = follow;
    if (!root || !*root) {
        /* Started without rec-start: this process is the root, and the
         * children it starts must know they are not. */
        char buf[24];
        snprintf(buf, sizeof buf, "%d", (int)pid);
        setenv(REC_ENV_ROOT_PID, buf, 1);
    } else if (atol(root) != (long)pid) {
        if (!follow)
            return;           /* dormant */
        if (!(own = child_output(out, pid)))
            return;
        become_root(own, pid);
    }
    if (!own && (v = getenv(REC_ENV_STATUS_FD)) && *v) {
        int fd;
        dev_t dev;
        ino_t ino;
        struct stat st;
        /* FD:DEV:INO: a number alone, inherited from anywhere, could name
         * the program's stdout. Remembered by identity: a program that
         * closes every fd may reuse the number for a file of its own. */
        if (recs__parse_fd_id(v, &fd, &dev, &ino) < 0) {
            recs__warn("ignoring REC_STATUS_FD=%s: not FD:DEV:INO", v);
        } else if (fstat(fd, &st) == 0 && st.st_dev == dev &&
                   st.st_ino == ino) {
            recs__g.status_fd = fd;
            recs__g.status_dev = st.st_dev;
            recs__g.status_ino = st.st_ino;
            recs__fd_own(fd);
            /* Not for the program's children; the next image of this
             * process gets it (before_exec). */
            fcntl(fd, F_SETFD, FD_CLOEXEC);
        }
        /* Else the program closed the descriptor or reused its number
         * (daemons, shells, subprocess's close_fds): nothing to report
         * to, and nothing to say on the program's stderr either. */
        /* Each image of the root process (exec) writes its own line;
         * followed children do not report. */
    }
    if (recs__config_from_env(&cfg, err, sizeof err) < 0) {
        recs__warn("%s; not recording", err);
        free(own);
        return;
    }
    if (!own && (v = getenv(REC_ENV_OUTPUT_FD)) && *v) {
        int fd;
        dev_t dev;
        ino_t ino;
        struct stat st;
        /* The file rec-start created; only if the number still names it. */
        if (recs__parse_fd_id(v, &fd, &dev, &ino) < 0 ||
            fstat(fd, &st) != 0 || st.st_dev != dev || st.st_ino != ino ||
            !S_ISREG(st.st_mode)) {
            recs__warn("REC_OUTPUT_FD=%s does not name the file rec-start "
                       "created; not recording", v);
            recs__config_free(&cfg);
            free(own);
            return;
        }
        cfg.output_fd = fd;
        cfg.append = false;
    }
    unsetenv(REC_ENV_OUTPUT_FD);
    free(own);
    recs__g.registry = true;
    recs__thread_key_init();
    if ((t = recs__thread_new(0)))
        recs__thread_register(t);
    recs__hooks_once();
    recs__install_fatal_handlers();
    if (recs__start_config(&cfg) < 0)
        recs__warn("could not start recording into %s", cfg.output);
    recs__config_free(&cfg);
}

__attribute__((destructor))
static void recs__preload_fini(void)
{
    /* exit(): every thread ends with the process, so their ThreadEnd are
     * ends, not snapshots of threads still running. */
    recs__g.exiting = true;
    recs__stop(false, true);
}
