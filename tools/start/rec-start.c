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
#include "throttle.h"
#include "losses.h"

#include <rec/record.h>

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <limits.h>
#include <link.h>
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
#define REC_SAMPLER_INSTALLED "/usr/local/lib/libsampler.so"
#endif
#ifndef REC_SAMPLER_BUILD
#define REC_SAMPLER_BUILD ""
#endif
#ifndef REC_BUILDDIR
#define REC_BUILDDIR ""
#endif

static const char *prog = "rec-start";

struct opts {
    const char *output;
    const char *throttle;
    const char *depth;
    const char *max_chunk;
    const char *flush;
    const char *signal;
    const char *walker;
    const char *engine;
    bool follow, force, quiet, no_cmdline;
    char run_id[33];            /* REC_RUN_ID of this run */
};

static void usage(FILE *f)
{
    fprintf(f,
"Usage: rec-start [OPTIONS] [--] PROGRAM [ARGS...]\n"
"Run PROGRAM with the rec CPU-time sampler and record where its threads\n"
"spend CPU time.\n"
"\n"
"  -o, --output FILE        recording to write (default rec-<pid>.rec)\n"
"  -f, --force              replace FILE if it exists\n"
"  -t, --throttle T         a per-thread CPU period (10ms, 500us) or a rate\n"
"                           over the machine (500/s); default 10ms\n"
"  -d, --stack-depth N      frames per sample, 1..1024 (default 64)\n"
"      --max-chunk-size S   start a new chunk above S bytes (64M)\n"
"      --flush-interval T   data readable within T (default 100ms)\n"
"      --signal SIG         sampling signal (default SIGPROF)\n"
"      --engine E           auto (default), perf (perf_event task-clock per\n"
"                           thread) or timer (CPU-time timers)\n"
"      --stack-walker W     cfi (call-frame information, default) or fp\n"
"                           (frame pointers)\n"
"  -c, --follow-children    record descendant processes too, each into\n"
"                           its own file (default: only PROGRAM)\n"
"      --no-command-line    record the program's name, not its arguments\n"
"  -q, --quiet              no summary line on stderr\n"
"  -h, --help               this help\n"
"  -V, --version            version\n"
"\n"
"Exit status: PROGRAM's; 127 not found, 126 not executable, 2 usage,\n"
"1 other errors. A PROGRAM killed by a signal makes rec-start die of it.\n");
}

static int fail_usage(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static int fail_usage(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'rec-start --help'.\n");
    return 2;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    enum { OPT_CHUNK = 256, OPT_FLUSH, OPT_SIGNAL, OPT_NO_CMDLINE, OPT_WALKER,
           OPT_ENGINE };
    static const struct option longopts[] = {
        { "output", required_argument, NULL, 'o' },
        { "force", no_argument, NULL, 'f' },
        { "throttle", required_argument, NULL, 't' },
        { "stack-depth", required_argument, NULL, 'd' },
        { "max-chunk-size", required_argument, NULL, OPT_CHUNK },
        { "flush-interval", required_argument, NULL, OPT_FLUSH },
        { "signal", required_argument, NULL, OPT_SIGNAL },
        { "stack-walker", required_argument, NULL, OPT_WALKER },
        { "engine", required_argument, NULL, OPT_ENGINE },
        { "follow-children", no_argument, NULL, 'c' },
        { "quiet", no_argument, NULL, 'q' },
        { "no-command-line", no_argument, NULL, OPT_NO_CMDLINE },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 }
    };
    recs__throttle t;
    uint64_t v;
    int sig, c;

    /* getopt names argv[0]: not the build tree's .libs/lt-rec-start. */
    argv[0] = (char *)prog;
    /* '+': options end at PROGRAM, whose own options are left alone. */
    while ((c = getopt_long(argc, argv, "+o:ft:d:cqhV", longopts, NULL)) != -1) {
        switch (c) {
        case 'o':
            if (!optarg[0])
                return fail_usage("empty output file name");
            o->output = optarg;
            break;
        case 'f': o->force = true; break;
        case 't':
            if (recs__parse_throttle(optarg, &t) < 0)
                return fail_usage("invalid throttle '%s' (10ms, 500us, 500/s; "
                                  "periods from 10us to 10s)", optarg);
            if (t.is_rate) {
                /* A rate is a per-thread period over the CPUs: one out of
                 * range is refused like such a period, not clamped. */
                long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
                double p = (ncpu > 0 ? (double)ncpu : 1.0) * 1e9 /
                           t.rate_per_s;
                if (!(p >= RECS_MIN_PERIOD_NS && p <= RECS_MAX_PERIOD_NS)) {
                    char why[200];
                    snprintf(why, sizeof why, "throttle '%s' is a period of "
                             "%.3g %s per thread on %ld CPUs: periods range "
                             "from 10us to 10s (%.6g/s to %.6g/s here)",
                             optarg, p >= 1e9 ? p / 1e9 : p / 1e3,
                             p >= 1e9 ? "s" : "us", ncpu > 0 ? ncpu : 1,
                             (ncpu > 0 ? (double)ncpu : 1.0) * 1e9 /
                             RECS_MAX_PERIOD_NS,
                             (ncpu > 0 ? (double)ncpu : 1.0) * 1e9 /
                             RECS_MIN_PERIOD_NS);
                    return fail_usage("%s", why);
                }
            }
            o->throttle = optarg;
            break;
        case 'd':
            if (recs__parse_uint(optarg, 1, 1024, &v) < 0)
                return fail_usage("invalid stack depth '%s' (1..1024)", optarg);
            o->depth = optarg;
            break;
        case OPT_WALKER:
            if (strcmp(optarg, "cfi") && strcmp(optarg, "fp"))
                return fail_usage("invalid stack walker '%s' (cfi or fp)",
                                  optarg);
            o->walker = optarg;
            break;
        case OPT_CHUNK:
            if (recs__parse_size(optarg, &v) < 0 || v < 4096)
                return fail_usage("invalid chunk size '%s' (e.g. 64M, at least 4k)",
                                  optarg);
            o->max_chunk = optarg;
            break;
        case OPT_FLUSH:
            /* the sampler refuses less (REC_FLUSH_INTERVAL) */
            if (recs__parse_duration(optarg, &v) < 0 || v < 10000000)
                return fail_usage("invalid flush interval '%s' (e.g. 1s, at "
                                  "least 10ms)", optarg);
            o->flush = optarg;
            break;
        case OPT_SIGNAL:
            if (recs__parse_signal(optarg, &sig) < 0)
                return fail_usage("invalid or unusable signal '%s'", optarg);
            o->signal = optarg;
            break;
        case OPT_ENGINE:
            if (strcmp(optarg, "auto") && strcmp(optarg, "perf") &&
                strcmp(optarg, "timer"))
                return fail_usage("invalid engine '%s' (auto, perf, timer)",
                                  optarg);
            o->engine = optarg;
            break;
        case 'c': o->follow = true; break;
        case OPT_NO_CMDLINE: o->no_cmdline = true; break;
        case 'q': o->quiet = true; break;
        case 'h': usage(stdout); exit(0);
        case 'V': printf("rec-start (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION); exit(0);
        default:
            fprintf(stderr, "Try 'rec-start --help'.\n");
            return 2;
        }
    }
    if (optind >= argc)
        return fail_usage("no program to run");
    return 0;
}

static bool is_file(const char *p)
{
    struct stat st;
    return p && p[0] && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The sampler next to a build-tree rec-start (libtool keeps the real binary
 * in tools/.libs/ or relinks it in tools/), else the installed one.
 * REC_SAMPLER_LIB overrides both. */
static const char *find_sampler(void)
{
    const char *env = getenv(REC_ENV_SAMPLER_LIB);
    char self[PATH_MAX];
    ssize_t n;
    size_t bl = strlen(REC_BUILDDIR);

    if (env && env[0])
        return env;
    n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0 && bl) {
        self[n] = '\0';
        if (!strncmp(self, REC_BUILDDIR, bl) && self[bl] == '/' &&
            is_file(REC_SAMPLER_BUILD))
            return REC_SAMPLER_BUILD;
    }
    return REC_SAMPLER_INSTALLED;
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

static void forward(int sig)
{
    if (child_pid > 0)
        kill(child_pid, sig);
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

/* An event's String field as text in buf (rec-start does not link the
 * tools' common code: cli_event_string there). */
static bool event_string(const rec_event *ev, const char *field, char *buf,
                         size_t size)
{
    long f = rec_type_field_index(rec_event_type(ev), field);
    rec_value v;
    size_t n;

    if (f < 0 || rec_event_get(ev, (size_t)f, &v) < 0)
        return false;
    if (v.kind == REC_REF && v.v.ref.entry) {
        const rec_entry *e = v.v.ref.entry;
        long sf = rec_type_field_index(rec_entry_type(e), "value");
        if (sf < 0 || rec_entry_get(e, (size_t)sf, &v) < 0)
            return false;
    }
    if (v.kind != REC_STRING)
        return false;
    n = v.v.str.len < size - 1 ? v.v.str.len : size - 1;
    memcpy(buf, v.v.str.s, n);
    buf[n] = '\0';
    return true;
}

/* samples/lost of a finished (or abandoned) recording, for the summary. */
static void summarize(const char *path, bool signaled)
{
    rec_reader *r;
    const rec_event *ev;
    const rec_type *lost_type = NULL;
    long lost_field = -1;
    uint64_t samples = 0, lost = 0;
    char engine[64] = "", note[256] = "", tmp[256];
    cli_losses *losses;
    char line[1024];
    struct stat st;
    int rc;

    if (stat(path, &st) < 0) {
        fprintf(stderr, "%s: no recording was written to %s (did the sampler "
                "start? see its messages above)\n", prog, path);
        return;
    }
    rc = rec_reader_open(&r, path, 0);
    if (rc < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, rec_strerror(rc));
        return;
    }
    losses = cli_losses_new();
    while ((rc = rec_reader_next(r, &ev)) > 0) {
        const rec_type *t = rec_event_type(ev);
        uint32_t id = rec_type_id(t);
        if (losses)
            cli_losses_event(losses, ev);
        if (id == REC_TYPE_CPUTimeSample) {
            samples++;
        } else if (id == REC_TYPE_RecordingSettings) {
            /* The engine of the last recording in the file (exec). */
            if (event_string(ev, "engine", engine, sizeof engine)) {
                if (!event_string(ev, "engineNote", note, sizeof note))
                    note[0] = '\0';
            } else {
                engine[0] = note[0] = '\0';
            }

        } else if (id == REC_TYPE_CPUTimeSampleLost) {
            rec_value v;
            if (t != lost_type) {
                lost_type = t;
                lost_field = rec_type_field_index(t, "lostSamples");
            }
            if (lost_field >= 0 && rec_event_get(ev, (size_t)lost_field, &v) == 0 &&
                v.kind == REC_UINT)
                lost += v.v.u;
        }
    }
    if (engine[0] && note[0])
        snprintf(tmp, sizeof tmp, ", engine %s (%s)", engine, note);
    else if (engine[0])
        snprintf(tmp, sizeof tmp, ", engine %s", engine);
    else
        tmp[0] = '\0';
    fprintf(stderr, "%s: %s: %llu samples, %llu lost, %.1f KiB%s%s\n", prog,
            path, (unsigned long long)samples, (unsigned long long)lost,
            (double)st.st_size / 1024.0, tmp,
            rc < 0 ? " (damaged: read up to the damage)"
            : rec_reader_warning(r) ? (signaled ? " (unfinished: read up to the "
                                       "last flush)" : " (unfinished)")
            : "");
    /* Where the CPU time without stacks went, when it matters. */
    if (losses && *cli_losses_line(losses, line, sizeof line))
        fprintf(stderr, "%s: %s\n", prog, line);
    cli_losses_free(losses);
    rec_reader_close(r);
}

/* ".123" or ".123.456...": a descendant's suffix (each process names its
 * children's files after its own: FILE.PID, FILE.PID.PID, ...). */
static bool descendant_suffix(const char *s, bool *nested)
{
    int parts = 0;
    while (*s == '.' && s[1] >= '0' && s[1] <= '9') {
        s += 1 + strspn(s + 1, "0123456789");
        parts++;
    }
    *nested = parts > 1;
    return parts > 0 && !*s;
}

/* Whether the recording's first ProcessInfo carries this run's id: the
 * files of an earlier run with the same name are not ours to count. */
static bool of_this_run(const char *path, const char *run_id)
{
    rec_reader *r;
    const rec_event *ev;
    bool ours = false;
    if (rec_reader_open(&r, path, 0) < 0)
        return false;
    for (unsigned n = 0; n < 10000 && rec_reader_next(r, &ev) > 0; n++) {
        const rec_type *t = rec_event_type(ev);
        if (rec_type_id(t) != REC_TYPE_ProcessInfo)
            continue;
        long f = rec_type_field_index(t, "runId");
        rec_value v;
        if (f >= 0 && rec_event_get(ev, (size_t)f, &v) == 0 &&
            v.kind == REC_REF && v.v.ref.entry &&
            rec_entry_get(v.v.ref.entry, 0, &v) == 0 &&
            v.kind == REC_STRING && v.v.str.len == strlen(run_id))
            ours = memcmp(v.v.str.s, run_id, v.v.str.len) == 0;
        break;
    }
    rec_reader_close(r);
    return ours;
}

/* With --follow-children: say where the descendants' recordings went. */
static void summarize_children(const char *path, const char *run_id)
{
    char *pattern;
    glob_t g;
    size_t n = 0, stale = 0;
    bool nested, any_nested = false;

    if (asprintf(&pattern, "%s.[0-9]*", path) < 0)
        return;
    if (glob(pattern, 0, NULL, &g) == 0) {
        size_t len = strlen(path);
        for (size_t i = 0; i < g.gl_pathc; i++) {
            if (!descendant_suffix(g.gl_pathv[i] + len, &nested))
                continue;
            if (!of_this_run(g.gl_pathv[i], run_id)) {
                stale++;
                continue;
            }
            n++;
            any_nested |= nested;
        }
        globfree(&g);
    }
    if (n)
        fprintf(stderr, "%s: %zu descendant recording%s: %s.<pid>%s\n", prog,
                n, n == 1 ? "" : "s", path,
                any_nested ? " (their own children's: .<pid>.<pid>...)" : "");
    if (stale)
        fprintf(stderr, "%s: %zu other file%s named %s.<pid> %s not of this "
                "run\n", prog, stale, stale == 1 ? "" : "s", path,
                stale == 1 ? "is" : "are");
    free(pattern);
}

/* In the child, before exec: the sampler's settings. */
static int child_env(const struct opts *o, const char *output, const char *lib)
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
    rc |= setenv(REC_ENV_OUTPUT, output, 1);
    rc |= setenv(REC_ENV_ROOT_PID, buf, 1);
    rc |= setenv(REC_ENV_FOLLOW_CHILDREN, o->follow ? "1" : "0", 1);
    rc |= setenv(REC_ENV_THROTTLE, o->throttle ? o->throttle : "10ms", 1);
    rc |= setenv(REC_ENV_STACK_DEPTH, o->depth ? o->depth : "64", 1);
    rc |= setenv(REC_ENV_FLUSH_INTERVAL, o->flush ? o->flush : "100ms", 1);
    rc |= setenv(REC_ENV_STACK_WALKER, o->walker ? o->walker : "cfi", 1);
    if (o->max_chunk)
        rc |= setenv(REC_ENV_MAX_CHUNK_SIZE, o->max_chunk, 1);
    else
        unsetenv(REC_ENV_MAX_CHUNK_SIZE);
    rc |= setenv("REC_ENGINE", o->engine ? o->engine : "auto", 1);
    if (o->signal)
        rc |= setenv(REC_ENV_SIGNAL, o->signal, 1);
    else
        unsetenv(REC_ENV_SIGNAL);
    rc |= setenv(REC_ENV_NO_COMMAND_LINE, o->no_cmdline ? "1" : "0", 1);
    rc |= setenv(REC_ENV_RUN_ID, o->run_id, 1);
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

/* The child: wait for the parent's checks (nothing runs if they fail), then
 * exec. The output path comes through the pipe: the default name holds our
 * pid, known to the parent only after fork. */
static void run_child(const struct opts *o, const char *lib, const char *path,
                      char **args, int go, int err,
                      const struct sigaction *old_int,
                      const struct sigaction *old_quit)
{
    char output[PATH_MAX + 1];
    uint32_t len;
    int e = EINVAL;

    if (!read_full(go, &len, sizeof len) || len == 0 || len > PATH_MAX ||
        !read_full(go, output, len))
        _exit(127);
    output[len] = '\0';
    sigaction(SIGINT, old_int, NULL);
    sigaction(SIGQUIT, old_quit, NULL);
    if (child_env(o, output, lib) == 0) {
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
    }
    if (write(err, &e, sizeof e) < 0)
        _exit(127);
    _exit(127);
}

int main(int argc, char **argv)
{
    struct opts o = { 0 };
    struct sigaction ign, old_int, old_quit, fwd;
    char msg[PATH_MAX + 256], *path = NULL, *output = NULL;
    const char *lib;
    int go[2], err[2], status, rc, e;
    static const int fwd_sigs[] = { SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 };
    pid_t pid;
    ssize_t n;

    if ((rc = parse_args(argc, argv, &o)) != 0)
        return rc;
    /* One id for the whole run: every recording of it (children, exec'd
     * images) inherits it, so readers can tell stale files apart. */
    uint8_t id[16];
    if (getrandom(id, sizeof id, 0) != sizeof id) {
        fprintf(stderr, "%s: getrandom: %s\n", prog, strerror(errno));
        return 1;
    }
    for (int i = 0; i < 16; i++)
        snprintf(o.run_id + 2 * i, 3, "%02x", id[i]);
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
    if ((rc = start_find_program(argv[optind], &path, msg, sizeof msg)) < 0 ||
        (rc = start_check_program(path, msg, sizeof msg)) < 0) {
        fprintf(stderr, "%s: %s\n", prog, msg);
        free(path);
        return exit_for(rc);
    }
    if (pipe2(go, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
        fprintf(stderr, "%s: pipe: %s\n", prog, strerror(errno));
        free(path);
        return 1;
    }
    /* Like a shell: the terminal's ^C and ^\ are for the program. The
     * dispositions we found are what the program inherits. */
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    fflush(NULL);

    pid = fork();
    if (pid < 0) {
        fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
        return 1;
    }
    if (pid == 0) {
        close(go[1]);
        close(err[0]);
        run_child(&o, lib, path, argv + optind, go[0], err[1], &old_int, &old_quit);
    }
    child_pid = pid;
    close(go[0]);
    close(err[1]);
    /* Signals meant to stop the whole run (timeout, a closing terminal)
     * go to the program; we end when it does. */
    memset(&fwd, 0, sizeof fwd);
    fwd.sa_handler = forward;
    fwd.sa_flags = SA_RESTART;
    for (size_t i = 0; i < sizeof fwd_sigs / sizeof fwd_sigs[0]; i++)
        sigaction(fwd_sigs[i], &fwd, NULL);

    if (o.output) {
        output = start_absolute(o.output);
    } else {
        char name[64];
        snprintf(name, sizeof name, "rec-%ld.rec", (long)pid);
        output = start_absolute(name);
    }
    if (!output) {
        snprintf(msg, sizeof msg, "cannot resolve the output path: %s",
                 strerror(errno));
        rc = START_ERROR;
    } else if (strlen(output) > PATH_MAX) {
        snprintf(msg, sizeof msg, "output path too long");
        rc = START_ERROR;
    } else {
        rc = start_check_output(output, o.force, msg, sizeof msg);
    }
    if (rc == 0) {
        uint32_t len = (uint32_t)strlen(output);
        if (write(go[1], &len, sizeof len) != sizeof len ||
            write(go[1], output, len) != (ssize_t)len) {
            snprintf(msg, sizeof msg, "cannot start the program: %s", strerror(errno));
            rc = START_ERROR;
        }
    }
    close(go[1]);
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", prog, msg);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        free(output);
        free(path);
        return 1;
    }

    /* exec failed in the child after all (raced with a change of the file). */
    do
        n = read(err[0], &e, sizeof e);
    while (n < 0 && errno == EINTR);
    close(err[0]);
    if (n == sizeof e) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(e));
        waitpid(pid, NULL, 0);
        free(output);
        free(path);
        return e == ENOENT ? 127 : 126;
    }

    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "%s: waitpid: %s\n", prog, strerror(errno));
            free(output);
            free(path);
            return 1;
        }
    }
    child_pid = 0;
    if (!o.quiet) {
        summarize(output, WIFSIGNALED(status));
        if (o.follow)
            summarize_children(output, o.run_id);
    }
    free(output);
    free(path);
    if (WIFSIGNALED(status))
        die_like(WTERMSIG(status));
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
