/*
 * tools/start/start-check.c - what rec-start verifies before it runs anything:
 * the program can be found and executed, and LD_PRELOAD will apply to it.
 */
#include <config.h>
#include "start.h"

#include <elf.h>
#include <linux/perf_event.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

static void set_msg(char *msg, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_msg(char *msg, size_t size, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
}

/* execvp's search, done beforehand so that "not found" is reported before
 * anything runs. An entry that exists but cannot be executed is remembered
 * (EACCES) and reported if nothing later in PATH works, as the shells do. */
int start_find_program(const char *name, char **path, char *msg, size_t msize)
{
    const char *p, *env = getenv("PATH");
    bool denied = false;
    struct stat st;

    *path = NULL;
    if (!name[0]) {
        set_msg(msg, msize, "empty program name");
        return START_NOTFOUND;
    }
    if (strchr(name, '/')) {
        if (stat(name, &st) < 0) {
            int e = errno;
            set_msg(msg, msize, "%s: %s", name, strerror(e));
            return e == ENOENT || e == ENOTDIR ? START_NOTFOUND : START_NOEXEC;
        }
        if (S_ISDIR(st.st_mode) || access(name, X_OK) < 0) {
            set_msg(msg, msize, "%s: %s", name,
                    S_ISDIR(st.st_mode) ? "is a directory" : strerror(errno));
            return START_NOEXEC;
        }
        *path = strdup(name);
        return *path ? 0 : START_ERROR;
    }
    if (!env)
        env = "/usr/local/bin:/usr/bin:/bin";
    for (p = env;; p++) {
        const char *end = strchrnul(p, ':');
        char buf[PATH_MAX];
        int dl = (int)(end - p);

        if (snprintf(buf, sizeof buf, "%.*s%s%s", dl, p, dl ? "/" : "", name) <
                (int)sizeof buf &&
            stat(buf, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(buf, X_OK) == 0) {
                *path = strdup(buf);
                return *path ? 0 : START_ERROR;
            }
            denied = true;
        }
        if (!*end)
            break;
        p = end;
    }
    if (denied) {
        set_msg(msg, msize, "%s: %s", name, strerror(EACCES));
        return START_NOEXEC;
    }
    set_msg(msg, msize, "%s: command not found", name);
    return START_NOTFOUND;
}

static bool read_at(int fd, void *buf, size_t n, off_t off)
{
    return pread(fd, buf, n, off) == (ssize_t)n;
}

/* Our own ELF class and machine: a program of another kind cannot load the
 * sampler (the loader would skip it with a warning and run unprofiled). */
static void self_kind(unsigned char *cls, uint16_t *machine)
{
    Elf64_Ehdr eh;
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

    *cls = ELFCLASSNONE;
    *machine = EM_NONE;
    if (fd < 0)
        return;
    if (read_at(fd, &eh, sizeof eh, 0)) {
        *cls = eh.e_ident[EI_CLASS];
        *machine = eh.e_machine;
    }
    close(fd);
}

/* A program with a loader but no library at all (a Go program built
 * without cgo): the sampler would load, but the program's threads never
 * run the C library (the Go runtime creates them and sets their thread
 * pointer itself) and its runtime replaces every signal handler with raw
 * system calls: nothing could be sampled. */
static int check_needed(int fd, const Elf64_Phdr *dyn, const char *shown,
                        char *msg, size_t msize)
{
    uint64_t n = dyn->p_filesz / sizeof(Elf64_Dyn);

    if (n > 65536)
        n = 65536;
    for (uint64_t i = 0; i < n; i++) {
        Elf64_Dyn d;
        if (!read_at(fd, &d, sizeof d, (off_t)(dyn->p_offset + i * sizeof d)) ||
            d.d_tag == DT_NULL)
            break;
        if (d.d_tag == DT_NEEDED)
            return 0;
    }
    set_msg(msg, msize,
            "%s: uses no shared library, not even the C library (a Go "
            "program built with CGO_ENABLED=0?): its threads are not the "
            "C library's and it replaces the sampler's signal handler, so "
            "nothing could be sampled; rebuild it with CGO_ENABLED=1", shown);
    return START_UNSUPPORTED;
}

static int check_elf(int fd, const char *shown, char *msg, size_t msize)
{
    Elf64_Ehdr eh;
    unsigned char cls;
    uint16_t machine;

    if (!read_at(fd, &eh, sizeof eh, 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG)) {
        set_msg(msg, msize, "%s: not an ELF program", shown);
        return START_NOEXEC;
    }
    self_kind(&cls, &machine);
    if (eh.e_ident[EI_CLASS] != cls || eh.e_machine != machine) {
        set_msg(msg, msize,
                "%s: built for another architecture or word size than the "
                "sampler: it cannot be preloaded into it", shown);
        return START_UNSUPPORTED;
    }
    if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 ||
        eh.e_phnum > 4096) {
        set_msg(msg, msize, "%s: malformed ELF program headers", shown);
        return START_NOEXEC;
    }
    bool interp = false;
    Elf64_Phdr dyn = { 0 };
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (!read_at(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph))) {
            set_msg(msg, msize, "%s: truncated ELF file", shown);
            return START_NOEXEC;
        }
        if (ph.p_type == PT_INTERP)
            interp = true;
        else if (ph.p_type == PT_DYNAMIC)
            dyn = ph;
    }
    if (interp)
        return check_needed(fd, &dyn, shown, msg, msize);
    set_msg(msg, msize,
            "%s: statically linked (no dynamic loader): LD_PRELOAD cannot "
            "load the sampler into it", shown);
    return START_UNSUPPORTED;
}

/* Set-user/group-ID and file capabilities put the loader in secure-execution
 * mode (AT_SECURE), where it drops LD_PRELOAD of a path. Refused on the mode
 * bits alone, even when the caller owns the file (root running a root-owned
 * setuid program gets AT_SECURE=0): one rule is easier to trust than a
 * profile that silently stays empty. */
static int check_secure(int fd, const struct stat *st, const char *shown,
                        char *msg, size_t msize)
{
    if (st->st_mode & S_ISUID) {
        set_msg(msg, msize,
                "%s: set-user-ID program: the dynamic loader ignores "
                "LD_PRELOAD for it (profile a copy without the bit)", shown);
        return START_UNSUPPORTED;
    }
    if ((st->st_mode & S_ISGID) && (st->st_mode & S_IXGRP)) {
        set_msg(msg, msize,
                "%s: set-group-ID program: the dynamic loader ignores "
                "LD_PRELOAD for it (profile a copy without the bit)", shown);
        return START_UNSUPPORTED;
    }
    if (fgetxattr(fd, "security.capability", NULL, 0) > 0) {
        set_msg(msg, msize,
                "%s: has file capabilities: the dynamic loader ignores "
                "LD_PRELOAD for it (profile a copy without them)", shown);
        return START_UNSUPPORTED;
    }
    return 0;
}

static int check_file(const char *path, const char *shown, int depth,
                      char *msg, size_t msize)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    char head[256];
    ssize_t n;
    int rc;

    if (fd < 0) {
        int e = errno;
        set_msg(msg, msize, "%s: %s", shown, strerror(e));
        return e == ENOENT ? START_NOTFOUND : START_NOEXEC;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        set_msg(msg, msize, "%s: not a regular file", shown);
        close(fd);
        return START_NOEXEC;
    }
    rc = check_secure(fd, &st, shown, msg, msize);
    if (rc == 0) {
        n = pread(fd, head, sizeof head - 1, 0);
        if (n >= 2 && head[0] == '#' && head[1] == '!') {
            /* A script: the sampler goes into its interpreter. */
            char *p, *q;
            head[n] = '\0';
            p = head + 2;
            p += strspn(p, " \t");
            q = p + strcspn(p, " \t\n");
            *q = '\0';
            if (!*p || depth > 0) {
                set_msg(msg, msize, "%s: bad interpreter line", shown);
                rc = START_NOEXEC;
            } else {
                rc = check_file(p, p, depth + 1, msg, msize);
            }
        } else if (depth == 0 && (n < SELFMAG || memcmp(head, ELFMAG,
                                                         SELFMAG) != 0)) {
            /* Neither ELF nor "#!": execve() says ENOEXEC, and execvp(),
             * like every shell, then runs the file with /bin/sh. So do
             * we (rec-start's child), and the sampler goes into sh. */
            rc = check_file("/bin/sh", "/bin/sh", depth + 1, msg, msize);
        } else {
            rc = check_elf(fd, shown, msg, msize);
        }
    }
    close(fd);
    return rc;
}

int start_check_program(const char *path, char *msg, size_t msize)
{
    return check_file(path, path, 0, msg, msize);
}

/* Make path absolute (the program may change directory before it exits, and
 * descendants derive their files from it). */
char *start_absolute(const char *path)
{
    char cwd[PATH_MAX], *r;

    if (path[0] == '/')
        return strdup(path);
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    if (asprintf(&r, "%s/%s", cwd, path) < 0)
        return NULL;
    return r;
}

/* What can be said before the program runs: an existing name is an
 * error unless force, and force replaces only a regular file (never a
 * device node, a FIFO, a directory or what a symbolic link points to).
 * The file itself is created exclusively later (start_create_output), in
 * the child, so that no name planted in between is ever followed. */
int start_check_output(const char *path, bool force, char *msg, size_t msize)
{
    struct stat st;

    if (lstat(path, &st) != 0)
        return 0;
    if (S_ISDIR(st.st_mode)) {
        set_msg(msg, msize, "%s: is a directory", path);
        return START_ERROR;
    }
    if (!force) {
        set_msg(msg, msize, "%s: file exists (use --force to replace it)",
                path);
        return START_ERROR;
    }
    if (!S_ISREG(st.st_mode)) {
        set_msg(msg, msize, "%s: not a regular file (%s): --force replaces "
                "only a regular file", path,
                S_ISLNK(st.st_mode) ? "a symbolic link" :
                S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" :
                S_ISFIFO(st.st_mode) ? "a FIFO" :
                S_ISSOCK(st.st_mode) ? "a socket" : "not a file");
        return START_ERROR;
    }
    if (unlink(path) < 0) {
        set_msg(msg, msize, "%s: cannot replace: %s", path, strerror(errno));
        return START_ERROR;
    }
    return 0;
}

/* The recording file, created exclusively (a symbolic link or anything
 * else planted at the name is refused, not followed), mode 0600 whatever
 * the umask: it holds command lines, paths and addresses. Not close-on-
 * exec: the sampler in the program writes through it. */
int start_create_output(const char *path, int *fd)
{
    *fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    if (*fd < 0)
        return -1;
    if (fchmod(*fd, 0600) != 0) {
        int e = errno;
        close(*fd);
        unlink(path);
        errno = e;
        return -1;
    }
    return 0;
}

int start_check_perf(char *msg, size_t msize)
{
    struct perf_event_attr a;
    int fd, e, paranoid = -99;
    FILE *f;

    memset(&a, 0, sizeof a);
    a.type = PERF_TYPE_SOFTWARE;
    a.size = sizeof a;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = 1000000;
    a.disabled = 1;
    /* The sampler settles for user time only where that is all it gets. */
    for (int ek = 0; ek < 2; ek++) {
        a.exclude_kernel = ek ? 1 : 0;
        fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1,
                          PERF_FLAG_FD_CLOEXEC);
        if (fd >= 0) {
            close(fd);
            return 0;
        }
        if (errno != EACCES && errno != EPERM)
            break;
    }
    e = errno;
    if ((f = fopen("/proc/sys/kernel/perf_event_paranoid", "re"))) {
        if (fscanf(f, "%d", &paranoid) != 1)
            paranoid = -99;
        fclose(f);
    }
    if (paranoid != -99)
        snprintf(msg, msize, "--engine perf: perf_event_open is not allowed "
                 "for this process (%s; perf_event_paranoid=%d, or a seccomp "
                 "filter); use --engine auto or --engine timer",
                 strerror(e), paranoid);
    else
        snprintf(msg, msize, "--engine perf: perf_event_open is not available "
                 "(%s); use --engine auto or --engine timer", strerror(e));
    return START_ERROR;
}
