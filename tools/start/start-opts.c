/*
 * tools/start/start-opts.c - rec-start's command line: the options, their
 * checks (everything that can be refused is refused here, with the
 * reason), and the help.
 */
#include <config.h>
#include "start.h"
#include "session-throttle.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *prog = "rec-start";

static void usage(FILE *f)
{
    fprintf(f,
"Usage: rec-start [OPTIONS] [--] PROGRAM [ARGS...]\n"
"       rec-start -p PID [--duration T] [OPTIONS]\n"
"Run PROGRAM with the rec CPU-time sampler and record where its threads\n"
"spend CPU time; or record the running process PID for T (or until\n"
"Ctrl-C, or its end), then leave it running as before.\n"
"\n"
"  -o, --output FILE        recording to write (default rec-<pid>.rec)\n"
"                           (-: stream it to standard output; to a FIFO:\n"
"                           stream it there; see --stream-backlog)\n"
"  -f, --force              replace FILE if it exists\n"
"      --max-size S         keep the newest chunks within S bytes (64M):\n"
"                           FILE is then a directory of chunk files\n"
"      --max-age T          keep the chunks of the last T (10m, 24h); the\n"
"                           same\n"
"  -t, --throttle T         a per-thread CPU period (10ms, 500us) or a rate\n"
"                           over the machine (500/s); default 10ms\n"
"  -d, --stack-depth N      frames per sample, 1..1024 (default 64)\n"
"      --max-chunk-size S   start a new chunk above S bytes (64M)\n"
"      --chunk-age T        start a new chunk every T (with -o - or a FIFO:\n"
"                           default 1m; else none)\n"
"      --flush-interval T   data readable within T (default: about every\n"
"                           128 samples, 10ms to 1s apart; 1s when idle)\n"
"      --signal SIG         sampling signal (default SIGPROF)\n"
"      --engine E           auto (default), perf (perf_event task-clock per\n"
"                           thread) or timer (CPU-time timers)\n"
"      --stack-walker W     cfi (call-frame information, default) or fp\n"
"                           (frame pointers)\n"
"  -c, --follow-children    record descendant processes too, each into\n"
"                           its own file (default: only PROGRAM)\n"
"      --no-command-line    record the program's name, not its arguments\n"
"      --no-python          Python programs: their C code only, without\n"
"                           the Python functions it runs\n"
"      --stream-backlog S   with -o - or a FIFO: what may wait for a slow\n"
"                           consumer before chunks are dropped (32M)\n"
"      --stream-timeout T   after PROGRAM ends, stop waiting for a consumer\n"
"                           that takes nothing for T (default 10s)\n"
"  -p, --pid PID            record the running process PID (x86-64, GNU C\n"
"                           library; needs ptrace access to it)\n"
"      --duration T         with -p: record for T (30s, 5m)\n"
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

int start_parse_args(int argc, char **argv, struct start_opts *o)
{
    enum { OPT_CHUNK = 256, OPT_FLUSH, OPT_SIGNAL, OPT_NO_CMDLINE, OPT_WALKER,
           OPT_ENGINE, OPT_BACKLOG, OPT_NO_PYTHON, OPT_CHUNK_AGE,
           OPT_STREAM_TIMEOUT, OPT_MAX_SIZE, OPT_MAX_AGE, OPT_DURATION };
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
        { "no-python", no_argument, NULL, OPT_NO_PYTHON },
        { "stream-backlog", required_argument, NULL, OPT_BACKLOG },
        { "stream-timeout", required_argument, NULL, OPT_STREAM_TIMEOUT },
        { "chunk-age", required_argument, NULL, OPT_CHUNK_AGE },
        { "max-size", required_argument, NULL, OPT_MAX_SIZE },
        { "max-age", required_argument, NULL, OPT_MAX_AGE },
        { "pid", required_argument, NULL, 'p' },
        { "duration", required_argument, NULL, OPT_DURATION },
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
    while ((c = getopt_long(argc, argv, "+o:ft:d:cqhVp:", longopts, NULL)) != -1) {
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
        case OPT_BACKLOG:
            if (recs__parse_size(optarg, &v) < 0 || v < (64u << 10))
                return fail_usage("invalid stream backlog '%s' (e.g. 64M, at "
                                  "least 64k)", optarg);
            o->backlog = v;
            break;
        case OPT_STREAM_TIMEOUT:
            if (recs__parse_duration(optarg, &v) < 0 || v < 1000000)
                return fail_usage("invalid stream timeout '%s' (e.g. 10s, at "
                                  "least 1ms)", optarg);
            o->stream_timeout = v;
            break;
        case OPT_CHUNK_AGE:
            if (recs__parse_duration(optarg, &v) < 0 || v < 100000000)
                return fail_usage("invalid chunk age '%s' (e.g. 1m, at least "
                                  "100ms)", optarg);
            o->chunk_age = optarg;
            break;
        case OPT_MAX_SIZE:
            if (recs__parse_size(optarg, &v) < 0 || v < (64u << 10))
                return fail_usage("invalid maximum size '%s' (e.g. 64M, at "
                                  "least 64k)", optarg);
            o->max_size = v;
            o->dir = true;
            break;
        case OPT_MAX_AGE:
            if (recs__parse_duration(optarg, &v) < 0 || v < 1000000000u)
                return fail_usage("invalid maximum age '%s' (e.g. 24h, at "
                                  "least 1s)", optarg);
            o->max_age = v;
            o->dir = true;
            break;
        case 'p':
            if (recs__parse_uint(optarg, 1, 0x7fffffff, &v) < 0)
                return fail_usage("invalid process id '%s'", optarg);
            o->pid = (pid_t)v;
            break;
        case OPT_DURATION:
            if (recs__parse_duration(optarg, &v) < 0 || v < 1000000)
                return fail_usage("invalid duration '%s' (e.g. 30s, at least "
                                  "1ms)", optarg);
            o->duration_ms = v / 1000000;
            break;
        case 'c': o->follow = true; break;
        case OPT_NO_CMDLINE: o->no_cmdline = true; break;
        case OPT_NO_PYTHON: o->no_python = true; break;
        case 'q': o->quiet = true; break;
        case 'h': usage(stdout); exit(0);
        case 'V': printf("rec-start (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION); exit(0);
        default:
            fprintf(stderr, "Try 'rec-start --help'.\n");
            return 2;
        }
    }
    if (o->pid) {
        if (optind < argc)
            return fail_usage("-p records a running process: no PROGRAM "
                              "to run with it");
        if (o->follow || o->dir || (o->output && !strcmp(o->output, "-")))
            return fail_usage("-p writes one recording file: not with "
                              "--follow-children, --max-size, --max-age "
                              "or -o -");
        return 0;
    }
    if (o->duration_ms)
        return fail_usage("--duration is for -p: a program run under "
                          "rec-start is recorded until it ends");
    if (optind >= argc)
        return fail_usage("no program to run");
    if (o->dir && !o->output)
        return fail_usage("--max-size and --max-age need -o DIR: the "
                          "directory that holds the chunk files");
    if (o->dir && o->follow)
        return fail_usage("--follow-children records each process into its "
                          "own file: it cannot keep a directory of chunks");
    return 0;
}

