/*
 * tools/start/start-inject.c - rec-start -p: the sampler loaded into a
 * running process, which is left as it was.
 *
 * How the sampler gets in (the technique of gdb's "call dlopen(...)"):
 * one thread of the process is stopped with PTRACE_SEIZE and
 * PTRACE_INTERRUPT at a moment where it runs none of the C library's or
 * the loader's code (so it holds none of their locks), or sleeps in a
 * system call. Its registers and signal mask are saved, every signal is
 * blocked for it, and it is made to call, one after the other, the C
 * library's mmap() (a scratch page for the strings), dlopen() on the
 * sampler, recs_attach() and munmap(). Each call returns to address 0:
 * the fault stops it again, for us, and is never delivered. Then the
 * registers (a system call it slept in is restarted as after any signal)
 * and the mask are restored, and the thread is let go. No code of the
 * process is written to; only the scratch page and the 8 bytes of a
 * return address below its stack pointer (beyond the red zone).
 */
#include <config.h>
#include "start.h"
#include "recenv.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)

#define SCRATCH   65536u
#define CALL_TIMEOUT_MS 10000

static int fail(char *msg, size_t msize, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *msg, size_t msize, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msize, fmt, ap);
    va_end(ap);
    return -1;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ------------------------------------------------------------------ */
/* The process, from /proc                                             */
/* ------------------------------------------------------------------ */

typedef struct mapping {
    uint64_t lo, hi, off;
    bool exec;
    char path[PATH_MAX];
} mapping;

typedef struct maps {
    mapping *v;
    size_t n;
} maps;

static void maps_free(maps *m)
{
    free(m->v);
    m->v = NULL;
    m->n = 0;
}

static int maps_read(pid_t pid, maps *m)
{
    char path[64], line[PATH_MAX + 128];
    size_t cap = 0;
    FILE *f;

    maps_free(m);
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    if (!(f = fopen(path, "re")))
        return -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long long a, b, off;
        char perms[8];
        int at = 0;
        if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &a, &b, perms, &off,
                   &at) < 4)
            continue;
        if (m->n == cap) {
            size_t nc = cap ? cap * 2 : 256;
            mapping *nv = realloc(m->v, nc * sizeof *nv);
            if (!nv)
                break;
            m->v = nv;
            cap = nc;
        }
        mapping *e = &m->v[m->n++];
        e->lo = a;
        e->hi = b;
        e->off = off;
        e->exec = perms[2] == 'x';
        e->path[0] = '\0';
        if (at > 0) {
            size_t l = strcspn(line + at, "\n");
            if (l >= sizeof e->path)
                l = sizeof e->path - 1;
            memcpy(e->path, line + at, l);
            e->path[l] = '\0';
        }
    }
    fclose(f);
    return 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

static bool is_libc(const char *p)
{
    const char *b = base_name(p);
    return !strncmp(b, "libc.so", 7) || !strncmp(b, "libc-2.", 7);
}

static bool is_loader(const char *p)
{
    const char *b = base_name(p);
    return !strncmp(b, "ld-linux", 8) || !strncmp(b, "ld-2.", 5);
}

/* The C library's and the loader's code: a thread stopped there may hold
 * one of their locks (malloc's, the loader's), which dlopen() takes. */
static bool in_runtime(const maps *m, uint64_t pc)
{
    for (size_t i = 0; i < m->n; i++)
        if (m->v[i].exec && pc >= m->v[i].lo && pc < m->v[i].hi)
            return is_libc(m->v[i].path) || is_loader(m->v[i].path) ||
                   !strncmp(base_name(m->v[i].path), "libpthread", 10) ||
                   !strncmp(base_name(m->v[i].path), "libdl", 5);
    return false;
}

/* Where the object whose mapped file is path (or, with pred, the first
 * that pred accepts) is loaded: its first mapping's start less its file
 * offset. */
static bool module_base(const maps *m, const char *path,
                        bool (*pred)(const char *), uint64_t *base,
                        char *found, size_t fsize)
{
    for (size_t i = 0; i < m->n; i++) {
        const mapping *e = &m->v[i];
        if (!e->path[0] || e->path[0] != '/')
            continue;
        if (path ? strcmp(e->path, path) != 0 : !pred(e->path))
            continue;
        *base = e->lo - e->off;
        if (found)
            snprintf(found, fsize, "%s", e->path);
        return true;
    }
    return false;
}

bool start_proc_status(pid_t pid, const char *key, char *out, size_t osize)
{
    char path[64], line[512];
    size_t kl = strlen(key);
    bool ok = false;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (!(f = fopen(path, "re")))
        return false;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, kl) && line[kl] == ':') {
            const char *v = line + kl + 1;
            v += strspn(v, " \t");
            snprintf(out, osize, "%.*s", (int)strcspn(v, "\n"), v);
            ok = true;
            break;
        }
    fclose(f);
    return ok;
}

/* ------------------------------------------------------------------ */
/* Refusals: each says why, and what to do                             */
/* ------------------------------------------------------------------ */

static int check_target(pid_t pid, maps *m, char *msg, size_t msize)
{
    char v[256], a[PATH_MAX], b[PATH_MAX], path[64];
    unsigned ru, eu, su, fu, rg, eg, sg, fg;
    ssize_t n;

    if (kill(pid, 0) != 0 && errno == ESRCH)
        return fail(msg, msize, "no process %d", (int)pid);
    if (pid == getpid())
        return fail(msg, msize, "process %d is rec-start itself", (int)pid);
    if (!start_proc_status(pid, "State", v, sizeof v))
        return fail(msg, msize, "process %d: cannot read /proc/%d/status",
                    (int)pid, (int)pid);
    if (v[0] == 'Z' || v[0] == 'X')
        return fail(msg, msize, "process %d has exited (%s)", (int)pid, v);
    if (v[0] == 'T' || v[0] == 't')
        return fail(msg, msize, "process %d is stopped (%s): continue it "
                    "first (kill -CONT %d)", (int)pid, v, (int)pid);
    if (start_proc_status(pid, "TracerPid", v, sizeof v) && atol(v) != 0)
        return fail(msg, msize, "process %d is already traced by process %s "
                    "(a debugger, strace or another profiler): detach it "
                    "first", (int)pid, v);
    if (start_proc_status(pid, "Uid", v, sizeof v) &&
        sscanf(v, "%u %u %u %u", &ru, &eu, &su, &fu) == 4 &&
        start_proc_status(pid, "Gid", v, sizeof v) &&
        sscanf(v, "%u %u %u %u", &rg, &eg, &sg, &fg) == 4 &&
        (ru != eu || ru != su || rg != eg || rg != sg))
        return fail(msg, msize, "process %d runs with changed user or group "
                    "ids (set-user-ID or set-group-ID): the sampler is not "
                    "loaded into such a process", (int)pid);
    /* The sampler and the recording are named by path: the process must
     * see the same files. */
    snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int)pid);
    if ((n = readlink(path, a, sizeof a - 1)) > 0) {
        a[n] = '\0';
        if ((n = readlink("/proc/self/ns/mnt", b, sizeof b - 1)) > 0) {
            b[n] = '\0';
            if (strcmp(a, b))
                return fail(msg, msize, "process %d is in another mount "
                            "namespace (a container): the sampler library "
                            "and the recording are named by paths it would "
                            "not see; run rec-start inside it (nsenter -t %d "
                            "-m -p rec-start -p %d, with rec installed "
                            "there)", (int)pid, (int)pid, (int)pid);
        }
    }
    if (maps_read(pid, m) < 0) {
        if (errno == EACCES || errno == EPERM)
            return fail(msg, msize, "process %d: permission denied reading "
                        "its memory map: it belongs to another user; run "
                        "rec-start as that user or as root", (int)pid);
        return fail(msg, msize, "process %d: cannot read /proc/%d/maps: %s",
                    (int)pid, (int)pid, strerror(errno));
    }
    if (m->n == 0)
        return fail(msg, msize, "process %d: its memory map is empty (a "
                    "kernel thread?)", (int)pid);
    {
        uint64_t base;
        if (!module_base(m, NULL, is_loader, &base, NULL, 0) ||
            !module_base(m, NULL, is_libc, &base, NULL, 0))
            return fail(msg, msize, "process %d is statically linked or does "
                        "not use the GNU C library: the sampler cannot be "
                        "loaded into it; start it under rec-start instead",
                        (int)pid);
    }
    return 0;
}

static const char *ptrace_advice(pid_t pid, char *buf, size_t bsize)
{
    char v[64];
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
    int scope = 0;
    unsigned ru = 0;

    if (f) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = 0;
        fclose(f);
    }
    if (start_proc_status(pid, "Uid", v, sizeof v))
        ru = (unsigned)atol(v);
    if (geteuid() != 0 && ru != geteuid())
        snprintf(buf, bsize, "it belongs to another user; run rec-start as "
                 "that user or as root");
    else if (scope >= 3)
        snprintf(buf, bsize, "kernel.yama.ptrace_scope is 3: no process may "
                 "attach to another until the next boot");
    else if (scope == 2 && geteuid() != 0)
        snprintf(buf, bsize, "kernel.yama.ptrace_scope is 2: only a process "
                 "with CAP_SYS_PTRACE may attach; run rec-start as root");
    else if (scope == 1 && geteuid() != 0)
        snprintf(buf, bsize, "kernel.yama.ptrace_scope is 1: only a parent "
                 "may attach to its descendants; run rec-start as root, "
                 "give it CAP_SYS_PTRACE (setcap cap_sys_ptrace+ep), or set "
                 "sysctl kernel.yama.ptrace_scope=0");
    else
        snprintf(buf, bsize, "ptrace is not allowed here (a seccomp or "
                 "security module policy, or no CAP_SYS_PTRACE in this "
                 "container)");
    return buf;
}

/* ------------------------------------------------------------------ */
/* Calls made by a stopped thread                                      */
/* ------------------------------------------------------------------ */

/* Room for the thread's whole extended state (x87, SSE, AVX, AVX-512...:
 * about 2.7 KiB today): the calls clobber the vector registers it may be
 * using (a JIT's loop in the middle of a computation). */
#define XSTATE_MAX 16384

typedef struct victim {
    pid_t tid;
    struct user_regs_struct saved;
    uint64_t mask;
    unsigned char xstate[XSTATE_MAX] __attribute__((aligned(64)));
    size_t xstate_len;             /* as the kernel filled it, 0: FPREGS */
    struct user_fpregs_struct fpregs;
    bool seized, regs_saved, mask_saved, fp_saved;
} victim;

/* The floating-point and vector registers, all of them the kernel keeps. */
static bool save_fp(victim *v)
{
    struct iovec io = { v->xstate, sizeof v->xstate };

    if (ptrace(PTRACE_GETREGSET, v->tid, (void *)NT_X86_XSTATE, &io) == 0) {
        v->xstate_len = io.iov_len;
        return v->fp_saved = true;
    }
    v->xstate_len = 0;
    return v->fp_saved = ptrace(PTRACE_GETFPREGS, v->tid, 0, &v->fpregs) == 0;
}

static void restore_fp(victim *v)
{
    if (!v->fp_saved)
        return;
    if (v->xstate_len) {
        struct iovec io = { v->xstate, v->xstate_len };
        ptrace(PTRACE_SETREGSET, v->tid, (void *)NT_X86_XSTATE, &io);
    } else {
        ptrace(PTRACE_SETFPREGS, v->tid, 0, &v->fpregs);
    }
}

/* Wait for tid's next stop, up to ms. 1: stopped (*st), 0: timed out,
 * -1: it is gone. */
static int wait_stop(pid_t tid, int *st, int ms)
{
    uint64_t until = now_ms() + (uint64_t)ms;

    for (;;) {
        pid_t w = waitpid(tid, st, __WALL | WNOHANG);
        if (w == tid)
            return WIFSTOPPED(*st) ? 1 : -1;
        if (w < 0 && errno != EINTR)
            return -1;
        if (now_ms() >= until)
            return 0;
        usleep(w == 0 ? 200 : 0);
    }
}

/* Stopped by our PTRACE_INTERRUPT (not by a signal on its way: that one
 * is passed on, and the interrupt stop follows). */
static int interrupt(victim *v, char *msg, size_t msize)
{
    int st, r;

    if (ptrace(PTRACE_INTERRUPT, v->tid, 0, 0) != 0)
        return fail(msg, msize, "PTRACE_INTERRUPT of thread %d: %s",
                    (int)v->tid, strerror(errno));
    for (int i = 0; i < 16; i++) {
        if ((r = wait_stop(v->tid, &st, 2000)) <= 0)
            return fail(msg, msize, "thread %d %s", (int)v->tid,
                        r ? "ended" : "did not stop within 2 s");
        if ((st >> 16) == PTRACE_EVENT_STOP)
            return 0;
        /* A signal-delivery stop: deliver it, as without us. */
        if (ptrace(PTRACE_CONT, v->tid, 0, (void *)(long)WSTOPSIG(st)) != 0)
            return fail(msg, msize, "thread %d: %s", (int)v->tid,
                        strerror(errno));
    }
    return fail(msg, msize, "thread %d kept receiving signals", (int)v->tid);
}

static int poke(pid_t pid, uint64_t addr, const void *buf, size_t n)
{
    struct iovec local = { (void *)buf, n }, remote = { (void *)addr, n };

    if (process_vm_writev(pid, &local, 1, &remote, 1, 0) == (ssize_t)n)
        return 0;
    /* Where process_vm_writev is refused: word by word. */
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = 0;
        size_t k = n - i < 8 ? n - i : 8;
        if (k < 8) {
            errno = 0;
            long old = ptrace(PTRACE_PEEKDATA, pid, (void *)(addr + i), 0);
            if (errno)
                return -1;
            memcpy(&w, &old, 8);
        }
        memcpy(&w, (const char *)buf + i, k);
        if (ptrace(PTRACE_POKEDATA, pid, (void *)(addr + i), (void *)w) != 0)
            return -1;
    }
    return 0;
}

static int peek_str(pid_t pid, uint64_t addr, char *buf, size_t n)
{
    struct iovec local = { buf, n - 1 }, remote = { (void *)addr, n - 1 };
    ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);

    if (got <= 0)
        return -1;
    buf[got] = '\0';
    return 0;
}

/* fn(a, b, c, d, e, f) on the stopped thread; *ret its return value. */
static int call(victim *v, uint64_t fn, const uint64_t a[6], uint64_t *ret,
                const char *what, char *msg, size_t msize)
{
    struct user_regs_struct r = v->saved;
    uint64_t sp = ((v->saved.rsp - 256) & ~(uint64_t)15) - 8, zero = 0;
    int st, w;

    if (poke(v->tid, sp, &zero, sizeof zero) < 0)
        return fail(msg, msize, "cannot write a return address on thread "
                    "%d's stack: %s", (int)v->tid, strerror(errno));
    r.rsp = sp;
    r.rip = fn;
    r.rdi = a[0];
    r.rsi = a[1];
    r.rdx = a[2];
    r.rcx = a[3];
    r.r8 = a[4];
    r.r9 = a[5];
    r.rax = 0;
    /* Not in a system call: nothing to restart when it resumes. */
    r.orig_rax = (unsigned long long)-1;
    r.eflags &= ~0x400ull;          /* the ABI's clear direction flag */
    if (ptrace(PTRACE_SETREGS, v->tid, 0, &r) != 0 ||
        ptrace(PTRACE_CONT, v->tid, 0, 0) != 0)
        return fail(msg, msize, "thread %d: %s", (int)v->tid, strerror(errno));
    for (;;) {
        if ((w = wait_stop(v->tid, &st, CALL_TIMEOUT_MS)) < 0)
            return fail(msg, msize, "the process ended during %s", what);
        if (w == 0) {
            /* Stuck (a lock the program holds, say): taken back where it
             * was; what the call had done stays done. */
            if (interrupt(v, msg, msize) == 0)
                return fail(msg, msize, "%s did not return within %d s in "
                            "thread %d; the thread was put back where it was",
                            what, CALL_TIMEOUT_MS / 1000, (int)v->tid);
            return -1;
        }
        if ((st >> 16) == PTRACE_EVENT_STOP) {
            /* A group stop (SIGSTOP sent meanwhile): the call goes on. */
            if (ptrace(PTRACE_CONT, v->tid, 0, 0) != 0)
                return fail(msg, msize, "thread %d: %s", (int)v->tid,
                            strerror(errno));
            continue;
        }
        if (ptrace(PTRACE_GETREGS, v->tid, 0, &r) != 0)
            return fail(msg, msize, "thread %d: %s", (int)v->tid,
                        strerror(errno));
        if (WSTOPSIG(st) == SIGSEGV && r.rip == 0) {
            *ret = r.rax;
            return 0;
        }
        /* A fault inside the call (every other signal is blocked): not
         * delivered, the thread put back. */
        return fail(msg, msize, "%s failed in thread %d with %s at %#llx; "
                    "the thread was put back where it was", what,
                    (int)v->tid, strsignal(WSTOPSIG(st)), r.rip);
    }
}

/* Registers and mask as they were; the thread goes on. */
static void release(victim *v)
{
    if (!v->seized)
        return;
    if (v->regs_saved)
        ptrace(PTRACE_SETREGS, v->tid, 0, &v->saved);
    restore_fp(v);
    if (v->mask_saved)
        ptrace(PTRACE_SETSIGMASK, v->tid, (void *)sizeof v->mask, &v->mask);
    ptrace(PTRACE_DETACH, v->tid, 0, 0);
    v->seized = v->regs_saved = v->mask_saved = v->fp_saved = false;
}

/* What the thread was doing, from /proc (without stopping it): the
 * system call it sleeps in, -1 running, -2 unknown. */
static long task_syscall(pid_t pid, pid_t tid)
{
    char path[96], buf[256];
    ssize_t n;
    int fd;

    snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return -2;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -2;
    buf[n] = '\0';
    if (!strncmp(buf, "running", 7))
        return -1;
    return strtol(buf, NULL, 10);
}

/* The best threads to stop first: asleep in a system call that holds no
 * lock of the C library (read, poll, sleep...), then running, then in a
 * futex wait (which may be a lock's). */
static int rank(long nr)
{
    switch (nr) {
    case SYS_futex:
        return 2;
    case -1:
        return 1;
    case -2:
        return 3;
    default:
        return nr >= 0 ? 0 : 3;
    }
}

static size_t candidates(pid_t pid, pid_t *out, size_t max)
{
    char path[64];
    DIR *d;
    struct dirent *e;
    size_t n = 0;
    pid_t all[4096];
    int rk[4096];
    size_t na = 0;

    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    if (!(d = opendir(path)))
        return 0;
    while ((e = readdir(d)) && na < sizeof all / sizeof all[0]) {
        long tid = strtol(e->d_name, NULL, 10);
        if (tid <= 0)
            continue;
        all[na] = (pid_t)tid;
        rk[na++] = rank(task_syscall(pid, (pid_t)tid));
    }
    closedir(d);
    for (int r = 0; r <= 3; r++)
        for (size_t i = 0; i < na && n < max; i++)
            if (rk[i] == r)
                out[n++] = all[i];
    return n;
}

/* Seize a thread at a moment where it may call dlopen(). */
static int pick(pid_t pid, const maps *m, victim *v, char *msg, size_t msize)
{
    uint64_t until = now_ms() + 2000;
    pid_t c[64];
    char why[256] = "";

    do {
        size_t n = candidates(pid, c, sizeof c / sizeof c[0]);
        if (n == 0)
            return fail(msg, msize, "process %d has no thread to stop",
                        (int)pid);
        for (size_t i = 0; i < n; i++) {
            memset(v, 0, sizeof *v);
            v->tid = c[i];
            if (ptrace(PTRACE_SEIZE, v->tid, 0, 0) != 0) {
                if (errno == EPERM || errno == EACCES) {
                    char adv[256];
                    return fail(msg, msize, "not allowed to trace process "
                                "%d: %s", (int)pid,
                                ptrace_advice(pid, adv, sizeof adv));
                }
                continue;         /* the thread ended meanwhile */
            }
            v->seized = true;
            if (interrupt(v, why, sizeof why) < 0) {
                ptrace(PTRACE_DETACH, v->tid, 0, 0);
                v->seized = false;
                continue;
            }
            if (ptrace(PTRACE_GETREGS, v->tid, 0, &v->saved) != 0) {
                release(v);
                continue;
            }
            /* In a system call (orig_rax set): asleep in the kernel, the
             * C library's wrapper around it holds nothing. Else its pc
             * must lie outside the C library and the loader. */
            if ((long long)v->saved.orig_rax >= 0 ||
                !in_runtime(m, v->saved.rip)) {
                v->regs_saved = true;
                return 0;
            }
            release(v);
        }
        usleep(5000);
    } while (now_ms() < until);
    return fail(msg, msize, "no thread of process %d could be stopped "
                "outside the C library within 2 s%s%s", (int)pid,
                why[0] ? ": " : "", why);
}

/* ------------------------------------------------------------------ */
/* The load                                                            */
/* ------------------------------------------------------------------ */

int start_inject(pid_t pid, const char *lib, const char *spec, char *msg,
                 size_t msize)
{
    maps m = { 0 };
    victim v;
    uint64_t libc_base, sampler_base, f_mmap, f_munmap, f_dlopen, f_dlerror,
             f_attach, scratch = 0, handle = 0, ret;
    char libc_path[PATH_MAX], err[512];
    size_t liblen = strlen(lib) + 1, speclen = strlen(spec) + 1;
    int rc = -1;

    if (liblen + speclen > SCRATCH)
        return fail(msg, msize, "settings too long");
    if (check_target(pid, &m, msg, msize) < 0)
        goto out;
    if (!module_base(&m, NULL, is_libc, &libc_base, libc_path, sizeof libc_path)) {
        fail(msg, msize, "process %d: no C library mapped", (int)pid);
        goto out;
    }
    if (start_elf_symbol(libc_path, "mmap", &f_mmap) < 0 ||
        start_elf_symbol(libc_path, "munmap", &f_munmap) < 0 ||
        start_elf_symbol(libc_path, "dlopen", &f_dlopen) < 0 ||
        start_elf_symbol(libc_path, "dlerror", &f_dlerror) < 0) {
        fail(msg, msize, "process %d: %s has no dlopen() (the GNU C library "
             "before 2.34 keeps it in libdl, which the process has not "
             "loaded)", (int)pid, libc_path);
        goto out;
    }
    if (start_elf_symbol(lib, "recs_attach", &f_attach) < 0) {
        fail(msg, msize, "%s: no recs_attach(): not this version's sampler",
             lib);
        goto out;
    }
    if (pick(pid, &m, &v, msg, msize) < 0)
        goto out;
    if (ptrace(PTRACE_GETSIGMASK, v.tid, (void *)sizeof v.mask, &v.mask) != 0) {
        fail(msg, msize, "thread %d: PTRACE_GETSIGMASK: %s", (int)v.tid,
             strerror(errno));
        goto release;
    }
    v.mask_saved = true;
    if (!save_fp(&v)) {
        fail(msg, msize, "thread %d: cannot read its floating-point "
             "registers: %s", (int)v.tid, strerror(errno));
        goto release;
    }
    {
        /* No handler of the program runs on top of our calls. */
        uint64_t all = ~0ull;
        if (ptrace(PTRACE_SETSIGMASK, v.tid, (void *)sizeof all, &all) != 0) {
            fail(msg, msize, "thread %d: PTRACE_SETSIGMASK: %s", (int)v.tid,
                 strerror(errno));
            goto release;
        }
    }
    {
        uint64_t a[6] = { 0, SCRATCH, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0 };
        if (call(&v, libc_base + f_mmap, a, &ret, "mmap()", msg, msize) < 0)
            goto release;
        if (ret == (uint64_t)MAP_FAILED || ret == 0) {
            fail(msg, msize, "mmap() in process %d failed", (int)pid);
            goto release;
        }
        scratch = ret;
    }
    if (poke(pid, scratch, lib, liblen) < 0 ||
        poke(pid, scratch + liblen, spec, speclen) < 0) {
        fail(msg, msize, "cannot write to process %d: %s", (int)pid,
             strerror(errno));
        goto unmap;
    }
    {
        uint64_t a[6] = { scratch, RTLD_NOW, 0, 0, 0, 0 };
        if (call(&v, libc_base + f_dlopen, a, &handle, "dlopen()", msg, msize) < 0)
            goto unmap;
    }
    if (!handle) {
        uint64_t z[6] = { 0 };
        err[0] = '\0';
        if (call(&v, libc_base + f_dlerror, z, &ret, "dlerror()", msg, msize) == 0 &&
            ret)
            peek_str(pid, ret, err, sizeof err);
        fail(msg, msize, "the process could not load %s: %s", lib,
             err[0] ? err : "dlopen() failed");
        goto unmap;
    }
    if (maps_read(pid, &m) < 0 ||
        !module_base(&m, lib, NULL, &sampler_base, NULL, 0)) {
        fail(msg, msize, "%s is loaded but not found in /proc/%d/maps", lib,
             (int)pid);
        goto unmap;
    }
    {
        uint64_t a[6] = { scratch + liblen, 0, 0, 0, 0, 0 };
        if (call(&v, sampler_base + f_attach, a, &ret, "recs_attach()", msg,
                 msize) < 0)
            goto unmap;
        if ((int)ret == REC_EEXIST) {
            fail(msg, msize, "process %d is being recorded already (by "
                 "rec-start, or another rec-start -p)", (int)pid);
            goto unmap;
        }
        if ((int)ret < 0) {
            fail(msg, msize, "the sampler could not attach: %s",
                 rec_strerror((int)ret));
            goto unmap;
        }
    }
    rc = 0;
unmap:
    {
        uint64_t a[6] = { scratch, SCRATCH, 0, 0, 0, 0 };
        char ignored[256];
        if (scratch)
            call(&v, libc_base + f_munmap, a, &ret, "munmap()", ignored,
                 sizeof ignored);
    }
release:
    release(&v);
out:
    maps_free(&m);
    return rc;
}

#else /* !__x86_64__ */

int start_inject(pid_t pid, const char *lib, const char *spec, char *msg,
                 size_t msize)
{
    (void)pid;
    (void)lib;
    (void)spec;
    snprintf(msg, msize, "-p is implemented for x86-64 only");
    return -1;
}

bool start_proc_status(pid_t pid, const char *key, char *out, size_t osize)
{
    (void)pid;
    (void)key;
    (void)out;
    (void)osize;
    return false;
}

#endif
