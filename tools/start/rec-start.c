/*
 * tools/start/rec-start.c - run a program with the CPU-time sampler preloaded.
 *
 *   rec-start [options] [--] PROGRAM [ARGS...]
 *
 * Everything that can be checked is checked before the program runs (found,
 * executable, dynamically linked, not set-ID, output creatable): a refused
 * run leaves nothing half done. The program gets the terminal, its stdin,
 * stdout and stderr untouched; its exit status becomes ours, and a death by
 * signal is passed on by dying of the same signal (see man rec-start).
 */
#include <config.h>
#include "start.h"
#include "recenv.h"
#include "session-throttle.h"

#include <rec/record.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef REC_SAMPLER_INSTALLED
#define REC_SAMPLER_INSTALLED "/usr/local/lib/rec/libsampler.so.1"
#endif
#ifndef REC_SAMPLER_BUILD
#define REC_SAMPLER_BUILD ""
#endif
#ifndef REC_BUILDDIR
#define REC_BUILDDIR ""
#endif
#ifndef REC_LIBRECORD_BUILD
#define REC_LIBRECORD_BUILD ""
#endif

static const char *prog = "rec-start";

static bool is_file(const char *p)
{
    struct stat st;
    return p && p[0] && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* A build-tree rec-start: libtool keeps the real binary in tools/.libs/
 * (or relinks it in tools/). */
static bool in_build_tree(void)
{
    char self[PATH_MAX];
    size_t bl = strlen(REC_BUILDDIR);
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);

    if (n <= 0 || !bl)
        return false;
    self[n] = '\0';
    return !strncmp(self, REC_BUILDDIR, bl) && self[bl] == '/';
}

/* The sampler next to a build-tree rec-start, else the installed one.
 * REC_SAMPLER_LIB overrides both. */
static const char *find_sampler(void)
{
    const char *env = getenv(REC_ENV_SAMPLER_LIB);

    if (env && env[0])
        return env;
    if (in_build_tree() && is_file(REC_SAMPLER_BUILD))
        return REC_SAMPLER_BUILD;
    return REC_SAMPLER_INSTALLED;
}

/* libtool's wrapper script runs a build-tree rec-start with the build
 * tree's librecord put first in LD_LIBRARY_PATH: the program gets the
 * user's value back (none, if that was all). An installed rec-start has
 * no wrapper. */
static int restore_library_path(void)
{
    const char *v = getenv("LD_LIBRARY_PATH");
    size_t l = strlen(REC_LIBRECORD_BUILD);

    if (!v || !l || strncmp(v, REC_LIBRECORD_BUILD, l) != 0 ||
        (v[l] != ':' && v[l] != '\0') || !in_build_tree())
        return 0;
    if (v[l] == '\0')
        return unsetenv("LD_LIBRARY_PATH");
    char *rest = strdup(v + l + 1);
    int rc = rest ? setenv("LD_LIBRARY_PATH", rest, 1) : -1;
    free(rest);
    return rc;
}

static int find_asan_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    const char **out = arg;
    (void)size;
    if (info->dlpi_name && strstr(info->dlpi_name, "/libasan.so")) {
        *out = info->dlpi_name;
        return 1;
    }
    return 0;
}

/* A sanitizer build's sampler needs the ASan runtime first in the preload
 * list of a program that is not itself instrumented. */
static const char *asan_runtime(void)
{
    const char *p = getenv(REC_ENV_ASAN_RUNTIME), *found = NULL;

    if (p && p[0])
        return p;
    dl_iterate_phdr(find_asan_cb, &found);
    return found;
}

static volatile sig_atomic_t child_pid;
static int chld_pipe[2] = { -1, -1 };

enum { CHILD_CREATE = 1, CHILD_EXEC = 2 };

/* SIGCHLD wakes the loop that reads the sampler's status pipe. */
static void on_chld(int sig)
{
    int e = errno;
    (void)sig;
    if (write(chld_pipe[1], "", 1) < 0) {
        /* full: a wake-up is pending anyway */
    }
    errno = e;
}

/* Marked (REC_FORWARD_VALUE): when the signal was sent to the whole
 * process group, the program got it too, and its sampler drops this copy;
 * sent to rec-start alone, the copy is the program's only one. A signal
 * the kernel sent (a terminal's hangup) went to the program's group as
 * well: not sent again. */
static void forward(int sig, siginfo_t *si, void *uc)
{
    int e = errno;
    (void)uc;
    if (child_pid > 0 && !(si && si->si_code == SI_KERNEL))
        sigqueue(child_pid, sig, (union sigval){ .sival_int = REC_FORWARD_VALUE });
    errno = e;
}

/* Terminate like the child did, so that our parent sees the same thing
 * (a shell reports 128+N); without a core file of our own. */
static void die_like(int sig)
{
    struct rlimit rl = { 0, 0 };
    struct sigaction sa;
    sigset_t set;

    setrlimit(RLIMIT_CORE, &rl);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigaction(sig, &sa, NULL);
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    exit(128 + sig);
}

/* Wait for the program, passing on its sampler's status lines as they
 * come (a descendant may hold the pipe open: the program's exit ends the
 * wait, SIGCHLD wakes the poll). */
static int wait_program(pid_t pid, int sfd, int *status, struct rusage *ru,
                        char *why, size_t wsize, start_stream *stream,
                        start_dir *dir)
{
    start_status st = { .why = why, .wsize = wsize };
    pid_t w;

    /* start_status_read() reads until the pipe is empty: it must not wait for
     * the next line while chunks are to be relayed. */
    if ((stream || dir) && sfd >= 0)
        fcntl(sfd, F_SETFL, O_NONBLOCK);
    for (;;) {
        struct pollfd p[3] = { { sfd, POLLIN, 0 }, { chld_pipe[0], POLLIN, 0 },
                               { -1, 0, 0 } };
        char c[64];

        w = wait4(pid, status, WNOHANG, ru);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR)
            return -1;
        /* A stream looks for finished chunks every 10 ms (a memfd has
         * no change notification): latency is the flush interval plus
         * that. */
        if (stream)
            start_stream_pollfd(stream, &p[2]);
        if (poll(p, 3, stream || dir ? 10 : -1) < 0 && errno != EINTR)
            return -1;
        if (stream)
            start_stream_work(stream);
        if (dir)
            start_dir_work(dir);
        if (sfd >= 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) &&
            start_status_read(&st, sfd) < 0) {
            close(sfd);
            sfd = -1;
        }
        while (read(chld_pipe[0], c, sizeof c) > 0)
            ;
    }
    if (sfd >= 0) {
        fcntl(sfd, F_SETFL, O_NONBLOCK);
        start_status_read(&st, sfd);
        close(sfd);
    }
    return 0;
}

/* In the child, before exec: the sampler's settings. */
static int child_env(const struct start_opts *o, const char *output, const char *lib)
{
    char buf[64], *preload;
    const char *old = getenv("LD_PRELOAD"), *asan = asan_runtime();
    int rc = 0;

    if (asprintf(&preload, "%s%s%s%s%s", asan ? asan : "", asan ? " " : "", lib,
                 old && old[0] ? " " : "", old ? old : "") < 0)
        return -1;
    if (asan) {
        /* The runtime is there for the sampler only: the program's own
         * crashes keep their default action (and status). */
        const char *ao = getenv("ASAN_OPTIONS");
        char *opts;
        if (asprintf(&opts, "%s%shandle_segv=0:handle_sigbus=0:handle_abort=0:"
                     "handle_sigfpe=0:handle_sigill=0", ao ? ao : "",
                     ao && ao[0] ? ":" : "") < 0) {
            free(preload);
            return -1;
        }
        rc |= setenv("ASAN_OPTIONS", opts, 1);
        free(opts);
    }
    snprintf(buf, sizeof buf, "%ld", (long)getpid());
    rc |= setenv("LD_PRELOAD", preload, 1);
    /* What was added: descendants that are not recorded get the user's
     * LD_PRELOAD back. */
    {
        char *added;
        if (asprintf(&added, "%s%s%s", asan ? asan : "", asan ? " " : "",
                     lib) < 0)
            rc = -1;
        else {
            rc |= setenv(REC_ENV_PRELOAD, added, 1);
            free(added);
        }
    }
    rc |= setenv(REC_ENV_OUTPUT, output, 1);
    rc |= setenv(REC_ENV_ROOT_PID, buf, 1);
    rc |= setenv(REC_ENV_FOLLOW_CHILDREN, o->follow ? "1" : "0", 1);
    rc |= setenv(REC_ENV_THROTTLE, o->throttle ? o->throttle : "10ms", 1);
    rc |= setenv(REC_ENV_STACK_DEPTH, o->depth ? o->depth : "64", 1);
    /* None asked for: the sampler's default (a short cadence while
     * samples arrive, libsampler(3)); a stream flushes every 100 ms: a
     * flush sends only the blocks it wrote, nothing when idle. */
    if (o->flush)
        rc |= setenv(REC_ENV_FLUSH_INTERVAL, o->flush, 1);
    else if (o->stream)
        rc |= setenv(REC_ENV_FLUSH_INTERVAL, "100ms", 1);
    else
        unsetenv(REC_ENV_FLUSH_INTERVAL);
    rc |= setenv(REC_ENV_STACK_WALKER, o->walker ? o->walker : "cfi", 1);
    /* A stream's metadata and pools go out once per chunk: a minute's.
     * Retention deletes whole chunks: by age, a quarter of the age each. */
    if (o->chunk_age) {
        rc |= setenv(REC_ENV_MAX_CHUNK_AGE, o->chunk_age, 1);
    } else if (o->dir && o->max_age && o->max_age / 4 < 60000000000ull) {
        char age[32];
        snprintf(age, sizeof age, "%" PRIu64 "ns", o->max_age / 4 < 100000000u
                 ? 100000000u : o->max_age / 4);
        rc |= setenv(REC_ENV_MAX_CHUNK_AGE, age, 1);
    } else if (o->stream || o->dir) {
        rc |= setenv(REC_ENV_MAX_CHUNK_AGE, "1m", 1);
    } else {
        unsetenv(REC_ENV_MAX_CHUNK_AGE);
    }
    if (o->max_chunk) {
        rc |= setenv(REC_ENV_MAX_CHUNK_SIZE, o->max_chunk, 1);
    } else if (o->dir && o->max_size) {
        /* Retention deletes whole chunks: an eighth of the size each. */
        char sz[32];
        uint64_t c = o->max_size / 8;
        snprintf(sz, sizeof sz, "%" PRIu64, c < (64u << 10) ? 64u << 10
                                            : c > (64u << 20) ? 64u << 20 : c);
        rc |= setenv(REC_ENV_MAX_CHUNK_SIZE, sz, 1);
    } else if (o->stream) {
        /* A lagging consumer costs whole chunks not yet begun: a quarter
         * of the backlog each, so that the one being sent, which cannot
         * be dropped, holds memory to the limit and a quarter more. */
        char sz[32];
        uint64_t b = o->backlog ? o->backlog : 32u << 20;
        snprintf(sz, sizeof sz, "%" PRIu64, b / 4 < (64u << 20) ? b / 4
                                                                : 64u << 20);
        rc |= setenv(REC_ENV_MAX_CHUNK_SIZE, sz, 1);
    }
    else
        unsetenv(REC_ENV_MAX_CHUNK_SIZE);
    rc |= setenv("REC_ENGINE", o->engine ? o->engine : "auto", 1);
    if (o->signal)
        rc |= setenv(REC_ENV_SIGNAL, o->signal, 1);
    else
        unsetenv(REC_ENV_SIGNAL);
    rc |= setenv(REC_ENV_NO_COMMAND_LINE, o->no_cmdline ? "1" : "0", 1);
    rc |= setenv(REC_ENV_PYTHON, o->no_python ? "0" : "1", 1);
    rc |= setenv(REC_ENV_RUN_ID, o->run_id, 1);
    rc |= restore_library_path();
    free(preload);
    return rc ? -1 : 0;
}

static int exit_for(int code)
{
    switch (code) {
    case START_NOTFOUND: return 127;
    case START_NOEXEC: return 126;
    default: return 1;
    }
}

/* Read exactly n bytes (the child reading its output path). */
static bool read_full(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        p += r;
        n -= (size_t)r;
    }
    return true;
}

/* "FD:DEV:INO" in the environment: the sampler uses fd only if it still
 * names what rec-start opened. */
static int setenv_fd(const char *name, int fd)
{
    struct stat st;
    char buf[96];

    if (fstat(fd, &st) != 0)
        return -1;
    snprintf(buf, sizeof buf, "%d:%llu:%llu", fd, (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
    return setenv(name, buf, 1);
}

/* The child: wait for the parent's checks (nothing runs if they fail),
 * create the recording (the default name holds our pid), then exec. The
 * output path comes through the pipe; a failure goes back through err as
 * {stage, errno}. */
static void run_child(const struct start_opts *o, const char *lib, const char *path,
                      char **args, int go, int err, int status_fd,
                      int stream_fd, const struct sigaction *old_int,
                      const struct sigaction *old_quit)
{
    char output[PATH_MAX + 1];
    uint32_t len;
    int fail[2] = { CHILD_EXEC, EINVAL }, fd, e;

    if (!read_full(go, &len, sizeof len) || len == 0 || len > PATH_MAX ||
        !read_full(go, output, len))
        _exit(127);
    output[len] = '\0';
    sigaction(SIGINT, old_int, NULL);
    sigaction(SIGQUIT, old_quit, NULL);
    /* -o -: standard output carries the recording; the program's goes
     * to standard error. */
    if (o->stream_stdout && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
        _exit(127);
    if (stream_fd >= 0) {
        fd = stream_fd;
        if (fcntl(fd, F_SETFD, 0) < 0) {
            fail[0] = CHILD_CREATE;
            fail[1] = errno;
            goto failed;
        }
    } else if (start_create_output(output, &fd) != 0) {
        fail[0] = CHILD_CREATE;
        fail[1] = errno;
        goto failed;
    }
    if (child_env(o, output, lib) == 0 &&
        setenv_fd(REC_ENV_OUTPUT_FD, fd) == 0 &&
        (status_fd < 0 || (fcntl(status_fd, F_SETFD, 0) == 0 &&
                           setenv_fd(REC_ENV_STATUS_FD, status_fd) == 0))) {
        execv(path, args);
        e = errno;
        if (e == ENOEXEC) {
            /* A script without "#!": run by /bin/sh, as execvp() and
             * shells do. */
            size_t n = 0;
            while (args[n])
                n++;
            char **sh = calloc(n + 2, sizeof *sh);
            if (sh) {
                sh[0] = (char *)"/bin/sh";
                sh[1] = (char *)path;
                for (size_t i = 1; i < n; i++)
                    sh[i + 1] = args[i];
                execv("/bin/sh", sh);
                e = errno;
            }
        }
        fail[1] = e;
        if (stream_fd < 0)
            unlink(output);
    }
failed:
    if (write(err, fail, sizeof fail) < 0)
        _exit(127);
    _exit(127);
}

/* The program, started under the sampler (spawn) and waited for (finish). */
struct run {
    pid_t pid;
    int go, err, st;                 /* our ends of the three pipes */
    char *path, *output;
    start_stream *stream;
    start_dir *dir;
    int stream_fd;              /* the sampler's in-memory file, or -1 */
};

/* Fork the program: it waits on the go pipe for its output path
 * (hand_output). 0, or 1 with the error said. */
static int spawn(const struct start_opts *o, const char *lib, char **argv,
                 struct run *r)
{
    struct sigaction ign, old_int, old_quit, fwd, chld;
    static const int fwd_sigs[] = { SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 };
    int go[2], err[2], st[2];

    /* st: the sampler's status lines (a write error said at once even
     * when the program closed its stderr; why the recording is short). */
    if (pipe2(go, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0 ||
        pipe2(st, O_CLOEXEC) < 0 ||
        pipe2(chld_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
        fprintf(stderr, "%s: pipe: %s\n", prog, strerror(errno));
        return 1;
    }
    /* Like a shell: the terminal's ^C and ^\ are for the program. The
     * dispositions we found are what the program inherits. */
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    memset(&chld, 0, sizeof chld);
    chld.sa_handler = on_chld;
    chld.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &chld, NULL);
    fflush(NULL);

    r->pid = fork();
    if (r->pid < 0) {
        fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
        return 1;
    }
    if (r->pid == 0) {
        close(go[1]);
        close(err[0]);
        close(st[0]);
        run_child(o, lib, r->path, argv, go[0], err[1], st[1],
                  r->stream_fd, &old_int, &old_quit);
    }
    /* A consumer that goes away is said once (EPIPE), not our death; the
     * program keeps the disposition it inherited. */
    if (r->stream)
        sigaction(SIGPIPE, &ign, NULL);
    child_pid = r->pid;
    close(go[0]);
    close(err[1]);
    close(st[1]);
    r->go = go[1];
    r->err = err[0];
    r->st = st[0];
    /* Signals meant to stop the whole run (timeout, a closing terminal)
     * go to the program; we end when it does. */
    memset(&fwd, 0, sizeof fwd);
    fwd.sa_sigaction = forward;
    fwd.sa_flags = SA_RESTART | SA_SIGINFO;
    for (size_t i = 0; i < sizeof fwd_sigs / sizeof fwd_sigs[0]; i++)
        sigaction(fwd_sigs[i], &fwd, NULL);
    return 0;
}

/* Resolve and check the output path, and send it to the program, which
 * then creates the recording and execs. 0, or 1 with the error said and
 * the program killed. */
static int hand_output(const struct start_opts *o, struct run *r)
{
    char msg[PATH_MAX + 256];
    int rc = 0;

    if (r->stream || r->dir) {
        /* What an exec'd image reopens to append (the sampler checks it
         * is the same file). */
        if (asprintf(&r->output, "/proc/%ld/fd/%d", (long)getpid(),
                     r->stream_fd) < 0)
            r->output = NULL;
    } else if (o->output) {
        r->output = start_absolute(o->output);
    } else {
        char name[64];
        snprintf(name, sizeof name, "rec-%ld.rec", (long)r->pid);
        r->output = start_absolute(name);
    }
    if (!r->output) {
        snprintf(msg, sizeof msg, "cannot resolve the output path: %s",
                 strerror(errno));
        rc = START_ERROR;
    } else if (strlen(r->output) > PATH_MAX) {
        snprintf(msg, sizeof msg, "output path too long");
        rc = START_ERROR;
    } else if (!r->stream && !r->dir) {
        rc = start_check_output(r->output, o->force, msg, sizeof msg);
    }
    if (rc == 0) {
        uint32_t len = (uint32_t)strlen(r->output);
        if (write(r->go, &len, sizeof len) != sizeof len ||
            write(r->go, r->output, len) != (ssize_t)len) {
            snprintf(msg, sizeof msg, "cannot start the program: %s", strerror(errno));
            rc = START_ERROR;
        }
    }
    close(r->go);
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", prog, msg);
        kill(r->pid, SIGKILL);
        waitpid(r->pid, NULL, 0);
        return 1;
    }
    return 0;
}

/* Wait for the program; then finish a stream, or seal what the program
 * could not finish, and summarize. rec-start's exit status. */
static int finish(const struct start_opts *o, struct run *r)
{
    char why[512] = "";
    int fail[2], status, e;
    struct rusage ru;
    ssize_t n;

    /* The recording could not be created (a name planted since the
     * check), or exec failed after all (raced with a change of the file). */
    do
        n = read(r->err, fail, sizeof fail);
    while (n < 0 && errno == EINTR);
    close(r->err);
    if (n == sizeof fail) {
        e = fail[1];
        if (fail[0] == CHILD_CREATE)
            fprintf(stderr, "%s: %s: cannot create: %s\n", prog, r->output,
                    strerror(e));
        else
            fprintf(stderr, "%s: %s: %s\n", prog, r->path, strerror(e));
        waitpid(r->pid, NULL, 0);
        return fail[0] == CHILD_CREATE ? 1 : e == ENOENT ? 127 : 126;
    }

    if (wait_program(r->pid, r->st, &status, &ru, why, sizeof why, r->stream,
                     r->dir) < 0) {
        fprintf(stderr, "%s: waitpid: %s\n", prog, strerror(errno));
        return 1;
    }
    child_pid = 0;
    if (r->stream) {
        start_stream_finish(r->stream);
        if (!strcmp(o->output, "-"))
            close(STDOUT_FILENO);   /* the consumer's end of file */
        if (!o->quiet)
            start_stream_summary(r->stream, WIFSIGNALED(status), why);
        start_stream_free(r->stream);
        r->stream = NULL;
    } else if (r->dir) {
        bool sealed = start_dir_finish(r->dir, r->pid, &ru) > 0;
        if (!o->quiet)
            start_dir_summary(r->dir, WIFSIGNALED(status), sealed, why);
        start_dir_free(r->dir);
        r->dir = NULL;
    } else {
        /* What the program could not finish (a raw exit_group, a kill). */
        bool sealed = start_seal(r->output, r->pid, &ru, NULL) > 0;
        if (!o->quiet) {
            start_total tot = { 0 };
            start_summarize(r->output, WIFSIGNALED(status), sealed, why, &tot);
            if (o->follow)
                start_summarize_children(r->output, o->run_id, &tot);
        }
    }
    if (WIFSIGNALED(status)) {
        free(r->output);
        free(r->path);
        die_like(WTERMSIG(status));
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* One id for the whole run: every recording of it (children, exec'd
 * images) inherits it, so readers can tell stale files apart. */
static int new_run_id(char out[33])
{
    uint8_t id[16];

    if (getrandom(id, sizeof id, 0) != sizeof id) {
        fprintf(stderr, "%s: getrandom: %s\n", prog, strerror(errno));
        return -1;
    }
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", id[i]);
    return 0;
}

/* rec-start -p PID (start-attach.c). */
static int attach(const struct start_opts *o)
{
    start_attach_opts a = {
        .pid = o->pid, .duration_ms = o->duration_ms, .output = o->output,
        .throttle = o->throttle, .depth = o->depth, .walker = o->walker,
        .max_chunk = o->max_chunk, .flush = o->flush, .signal = o->signal,
        .engine = o->engine, .force = o->force, .quiet = o->quiet,
        .no_cmdline = o->no_cmdline, .no_python = o->no_python };
    char run_id[33], msg[512];
    const char *lib = find_sampler();

    if (new_run_id(run_id) < 0)
        return 1;
    a.run_id = run_id;
    if (!is_file(lib)) {
        fprintf(stderr, "%s: sampler library not found: %s (set REC_SAMPLER_LIB)\n",
                prog, lib);
        return 1;
    }
    if (asan_runtime()) {
        fprintf(stderr, "%s: -p: this rec-start's sampler is built with "
                "AddressSanitizer, which cannot be loaded into a running "
                "process\n", prog);
        return 1;
    }
    if (o->engine && !strcmp(o->engine, "perf") &&
        start_check_perf(msg, sizeof msg) < 0) {
        fprintf(stderr, "%s: %s\n", prog, msg);
        return 1;
    }
    return start_attach(&a, lib);
}

int main(int argc, char **argv)
{
    struct start_opts o = { 0 };
    struct run r = { .stream_fd = -1 };
    char msg[PATH_MAX + 256];
    const char *lib;
    int rc;

    if ((rc = start_parse_args(argc, argv, &o)) != 0)
        return rc;
    if (o.pid)
        return attach(&o);
    if ((rc = start_stream_setup(o.output, o.follow, o.backlog,
                                 &r.stream, &o.stream_stdout)) != 0)
        return rc;
    o.stream = r.stream != NULL;
    if (o.dir && o.stream) {
        fprintf(stderr, "%s: --max-size and --max-age keep a directory of "
                "chunk files: they cannot stream to %s\nTry 'rec-start "
                "--help'.\n", prog, o.output);
        start_stream_free(r.stream);
        return 2;
    }
    if (o.dir) {
        if (start_dir_open(&r.dir, o.output, o.force, o.max_size, o.max_age,
                           msg, sizeof msg) < 0) {
            fprintf(stderr, "%s: %s\n", prog, msg);
            return 1;
        }
        r.stream_fd = start_dir_memfd(r.dir);
    }
    if (r.stream) {
        r.stream_fd = start_stream_memfd(r.stream);
        if (o.stream_timeout)
            start_stream_set_timeout(r.stream, o.stream_timeout);
    }
    if (new_run_id(o.run_id) < 0)
        return 1;
    lib = find_sampler();
    if (!is_file(lib)) {
        fprintf(stderr, "%s: sampler library not found: %s (set REC_SAMPLER_LIB)\n",
                prog, lib);
        return 1;
    }
    if (o.engine && !strcmp(o.engine, "perf") &&
        start_check_perf(msg, sizeof msg) < 0) {
        fprintf(stderr, "%s: %s\n", prog, msg);
        return 1;
    }
    if ((rc = start_find_program(argv[optind], &r.path, msg, sizeof msg)) < 0 ||
        (rc = start_check_program(r.path, msg, sizeof msg)) < 0) {
        fprintf(stderr, "%s: %s\n", prog, msg);
        free(r.path);
        return exit_for(rc);
    }
    rc = spawn(&o, lib, argv + optind, &r);
    if (rc == 0)
        rc = hand_output(&o, &r);
    if (rc == 0)
        rc = finish(&o, &r);
    free(r.output);
    free(r.path);
    return rc;
}
