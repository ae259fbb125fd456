/*
 * tools/cpu/rec-cpu.c - reconstruct each thread's CPU use from the samples of
 * rec recordings, side by side with the kernel's own accounting.
 * See man/rec-cpu.1 for the definitions and the output contract.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rec/record.h>

#include "cli.h"
#include "cpu-model.h"
#include "cpu-follow.h"

static const char prog[] = "rec-cpu";

enum mode { MODE_TEXT, MODE_JSON, MODE_CSV };
static const char *const mode_names[] = { NULL, "--json", "--csv" };

struct opts {
    int mode;
    cpu_options cpu;
    cli_threads *threads;
    const char *svg, *html, *output, *debug_dir;
    bool follow;
    cli_follow_opts fo;
};

static void usage(FILE *f)
{
    fprintf(f,
"Usage: rec-cpu [OPTION]... FILE...\n"
"Reconstruct each thread's CPU time from the samples of rec recordings and\n"
"compare it with the kernel's figures. Several FILEs (a process and its\n"
"children) are read as one: threads are keyed by (process id, thread id).\n"
"\n"
"  --json              the whole report as one JSON object (times in ns)\n"
"  --csv               CSV instead of the text table\n"
"  --interval DUR      CPU use per thread per interval (e.g. 100ms)\n"
"  --svg FILE          write a timeline picture (SVG) to FILE\n"
"  --html FILE         write the timeline as a self-contained HTML page\n"
"  --hot [N]           hot functions (self and total CPU time), top N per\n"
"                      thread and overall (default 10; 0 = all)\n"
"  --debug-dir DIR     --hot: name stripped functions from the debug files\n"
"                      under DIR, found by the build-ids the recording holds\n"
"  --threads LIST      only these threads (tids or name globs, comma-separated)\n"
"  --since TIME        only events at or after TIME\n"
"  --until TIME        only events before TIME\n"
"                      TIME: ns since the epoch, RFC 3339, +DURATION\n"
"                      after the recording's start (+1.5s, +200ms), or\n"
"                      [-]DURATION before the end of its data (5m, -90s)\n"
"  -o, --output FILE   write the report to FILE instead of standard output\n"
"  -f, --follow        live per-thread view of one FILE being written,\n"
"                      every --interval (default 1s); --json: one object\n"
"                      per interval\n"
"      --stall-timeout T  with --follow: give up after T without new data\n"
"  -h, --help          show this help\n"
"  -V, --version       show the version\n"
"\n"
"Exit status: 0 success (an unfinished recording is read up to its last\n"
"flush, with a warning), 1 bad or unreadable input (the report of every\n"
"valid event is printed first), 2 usage error.\n");
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    enum { O_JSON = 256, O_CSV, O_INTERVAL, O_SVG, O_HTML, O_HOT, O_THREADS,
           O_SINCE, O_UNTIL, O_DEBUG_DIR, O_STALL };
    /* --follow is -f */
    static const struct option lopts[] = {
        { "json", no_argument, NULL, O_JSON },
        { "csv", no_argument, NULL, O_CSV },
        { "interval", required_argument, NULL, O_INTERVAL },
        { "svg", required_argument, NULL, O_SVG },
        { "html", required_argument, NULL, O_HTML },
        { "hot", optional_argument, NULL, O_HOT },
        { "threads", required_argument, NULL, O_THREADS },
        { "since", required_argument, NULL, O_SINCE },
        { "until", required_argument, NULL, O_UNTIL },
        { "debug-dir", required_argument, NULL, O_DEBUG_DIR },
        { "output", required_argument, NULL, 'o' },
        { "follow", no_argument, NULL, 'f' },
        { "stall-timeout", required_argument, NULL, O_STALL },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    uint64_t n;
    int c;
    /* getopt names argv[0]: not the build tree's .libs/lt-rec-cpu. */
    argv[0] = (char *)prog;
    while ((c = getopt_long(argc, argv, "o:fhV", lopts, NULL)) != -1) {
        switch (c) {
        case O_JSON:
        case O_CSV:
            if (cli_opt_mode(prog, &o->mode, c == O_JSON ? MODE_JSON
                             : MODE_CSV, mode_names) < 0)
                return -1;
            break;
        case O_INTERVAL:
            if (cli_parse_duration(optarg, &n) < 0 || n == 0) {
                cli_error(prog, "--interval: not a positive duration: '%s' "
                          "(e.g. 100ms)", optarg);
                return -1;
            }
            o->cpu.interval_ns = n;
            break;
        case O_SVG: o->svg = optarg; break;
        case O_HTML: o->html = optarg; break;
        case O_HOT: {
            /* "--hot 5" as well as "--hot=5": take a following number
             * (a recording named "2024.rec" stays a recording). */
            const char *arg = optarg;
            if (!arg && optind < argc && cli_parse_uint(argv[optind], &n) == 0)
                arg = argv[optind++];
            n = 10;
            if (arg && (cli_parse_uint(arg, &n) < 0 || n > UINT32_MAX)) {
                cli_error(prog, "--hot: not a number of functions: '%s'", arg);
                return -1;
            }
            o->cpu.hot = true;
            o->cpu.hot_n = (unsigned)n;
            break;
        }
        case O_THREADS:
            if (cli_opt_threads(prog, optarg, &o->threads) < 0)
                return -1;
            break;
        case O_SINCE:
            if (cli_opt_time(prog, "--since", optarg, &o->cpu.since,
                             &o->cpu.have_since) < 0)
                return -1;
            break;
        case O_UNTIL:
            if (cli_opt_time(prog, "--until", optarg, &o->cpu.until,
                             &o->cpu.have_until) < 0)
                return -1;
            break;
        case O_DEBUG_DIR:
            if (cli_opt_debug_dir(prog, optarg, &o->debug_dir) < 0)
                return -1;
            break;
        case 'o': o->output = optarg; break;
        case 'f': o->follow = true; break;
        case O_STALL:
            if (cli_opt_stall_timeout(prog, optarg, &o->fo.stall_ns) < 0)
                return -1;
            break;
        case 'h': usage(stdout); exit(CLI_EXIT_OK);
        case 'V': cli_version_exit(prog);
        default:
            cli_try_help(prog);
            return -1;
        }
    }
    if (cli_need_files(prog, optind, argc) < 0)
        return -1;
    if (o->mode == MODE_CSV && o->cpu.hot) {
        cli_error(prog, "--hot has no CSV form: use --json");
        return -1;
    }
    if (o->svg && o->html && strcmp(o->svg, "-") == 0
        && strcmp(o->html, "-") == 0) {
        cli_error(prog, "--svg - and --html - both want standard output");
        return -1;
    }
    /* Two outputs into one file: the second would silently replace the
     * first (same name here; links are the first write's business). */
    const char *outs[] = { o->svg, o->html, o->output };
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (outs[i] && outs[j] && strcmp(outs[i], "-") != 0 &&
                strcmp(outs[i], outs[j]) == 0) {
                cli_error(prog, "%s is named for two outputs", outs[i]);
                return -1;
            }
    o->cpu.filter = o->threads;
    if (o->fo.stall_ns && !o->follow) {
        cli_error(prog, "--stall-timeout needs --follow");
        return -1;
    }
    if (o->follow && (argc - optind != 1 || o->mode == MODE_CSV || o->svg ||
                      o->html || o->cpu.hot)) {
        cli_error(prog, "--follow takes one FILE, with --interval, --threads, "
                  "--json and --stall-timeout");
        return -1;
    }
    if (o->follow && cli_is_stream(argv[optind])) {
        cli_error(prog, "--follow: %s is a pipe: a recording that comes "
                  "through one is read whole (without --follow)", argv[optind]);
        return -1;
    }
    return 0;
}

/* Timeline files; "-" is standard output and replaces the report. */
static int write_picture(const cpu_model *m, const char *path, bool html)
{
    bool out = strcmp(path, "-") == 0;
    FILE *f = out ? stdout : fopen(path, "w");
    if (!f) {
        cli_error(prog, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = cpu_write_svg(f, m, html);
    if ((out ? fflush(f) : fclose(f)) != 0 || rc < 0) {
        cli_error(prog, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int report(const struct opts *o, const cpu_model *m, FILE *f)
{
    int rc;
    switch (o->mode) {
    case MODE_JSON:
        return cpu_print_json(f, m);
    case MODE_CSV:
        return m->opt.interval_ns ? cpu_print_intervals_csv(f, m)
                                  : cpu_print_csv(f, m);
    default:
        rc = cpu_print_table(f, m);
        if (rc == 0 && o->cpu.interval_ns) {
            fputc('\n', f);
            rc = cpu_print_intervals(f, m);
        }
        if (rc == 0 && o->cpu.hot) {
            fputc('\n', f);
            rc = cpu_print_hot(f, m);
        }
        return rc;
    }
}

int main(int argc, char **argv)
{
    struct opts o = { 0 };
    int status = CLI_EXIT_OK;
    if (parse_args(argc, argv, &o) < 0) {
        cli_threads_free(o.threads);
        return CLI_EXIT_USAGE;
    }
    /* The same recording twice would count its CPU time twice; a report
     * written over a recording would destroy it. */
    argc = cli_inputs_dedup(prog, argv, optind, argc);
    const char *outs[][2] = { { "--svg", o.svg }, { "--html", o.html },
                              { "-o", o.output }, { NULL, NULL } };
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
        if ((outs[i][0] && !outs[i][1]) ||
            cli_output_not_input(prog, outs[i][0], outs[i][1], argv + optind,
                                 argc - optind) == 0)
            continue;
        cli_threads_free(o.threads);
        return CLI_EXIT_USAGE;
    }
    cli_inputs_runs(prog, argv + optind, argc - optind);
    if (cli_times_from_end(prog, argv + optind, argc - optind,
                           o.cpu.have_since ? &o.cpu.since : NULL,
                           o.cpu.have_until ? &o.cpu.until : NULL) < 0) {
        cli_threads_free(o.threads);
        return CLI_EXIT_USAGE;
    }
    if (o.follow) {
        FILE *f = o.output ? fopen(o.output, "w") : stdout;
        if (!f) {
            cli_error(prog, "%s: %s", o.output, strerror(errno));
            cli_threads_free(o.threads);
            return CLI_EXIT_DATA;
        }
        enum cpu_follow_style st = o.mode == MODE_JSON ? CPU_FOLLOW_JSON
                                 : isatty(fileno(f)) ? CPU_FOLLOW_TTY
                                 : CPU_FOLLOW_LINES;
        status = cpu_follow(prog, argv[optind], &o.fo, o.cpu.interval_ns ?
                            o.cpu.interval_ns : 1000000000u, st, o.threads, f);
        if (f != stdout && fclose(f) != 0 && status == CLI_EXIT_OK)
            status = CLI_EXIT_DATA;
        cli_threads_free(o.threads);
        return status;
    }
    cpu_options copt = o.cpu;
    if ((o.svg || o.html) && !copt.interval_ns)
        copt.interval_ns = 100000000;       /* pictures need a timeline */
    if (o.debug_dir && copt.hot && !(copt.debug = cli_debug_new(o.debug_dir))) {
        cli_error(prog, "out of memory");
        cli_threads_free(o.threads);
        return CLI_EXIT_DATA;
    }

    size_t nin = (size_t)(argc - optind);
    cpu_input *in = calloc(nin, sizeof *in);
    if (!in) {
        cli_error(prog, "out of memory");
        cli_debug_free(copt.debug);
        cli_threads_free(o.threads);
        return CLI_EXIT_DATA;
    }
    /* The origin (start of the earliest recording) must be known before
     * any event is folded: --since +DUR and the interval grid count from
     * it. Each input's first event is read now and folded later. */
    uint64_t origin = UINT64_MAX;
    for (size_t i = 0; i < nin; i++) {
        if (cpu_input_open(&in[i], prog, argv[optind + i]) < 0) {
            status = CLI_EXIT_DATA;
            continue;
        }
        if (in[i].status > 0 && in[i].chunk_start_ns < origin)
            origin = in[i].chunk_start_ns;
    }
    cpu_model m;
    cpu_model_init(&m, &copt);
    cpu_model_set_origin(&m, origin == UINT64_MAX ? 0 : origin);
    for (size_t i = 0; i < nin; i++) {
        if (!in[i].r)
            continue;
        int rc = cpu_input_read(&m, &in[i], prog);
        cpu_input_close(&in[i]);
        if (rc == REC_ENOMEM || rc == REC_ETOOBIG) {
            status = CLI_EXIT_DATA;
            goto done;
        }
        if (rc < 0)
            status = CLI_EXIT_DATA;
    }
    if (cpu_model_finish(&m) < 0) {
        cli_error(prog, "out of memory");
        status = CLI_EXIT_DATA;
        goto done;
    }

    if (o.threads && m.nthreads) {
        size_t nsel;
        cpu_thread **sel = cpu_model_selected(&m, &nsel);
        if (sel && nsel == 0)
            fprintf(stderr, "%s: note: --threads matched no thread of the "
                    "recordings\n", prog);
        free(sel);
    }
    /* Pictures merge intervals into at most a column per pixel: only the
     * printed timeline is a dense grid to bound. */
    if (o.cpu.interval_ns) {
        int rc = cpu_model_timeline_check(&m);
        if (rc < 0) {
            cli_error(prog, rc == REC_ETOOBIG
                      ? "too many intervals: use a longer --interval (the "
                        "samples are far apart: the timeline would be "
                        "mostly empty)" : "out of memory");
            status = CLI_EXIT_DATA;
            goto done;
        }
    }
    bool picture_to_stdout = (o.svg && strcmp(o.svg, "-") == 0)
                             || (o.html && strcmp(o.html, "-") == 0);
    if (o.svg && write_picture(&m, o.svg, false) < 0)
        status = CLI_EXIT_DATA;
    if (o.html && write_picture(&m, o.html, true) < 0)
        status = CLI_EXIT_DATA;
    if (!picture_to_stdout) {
        /* The report's own options decide its content: a timeline made
         * only for a picture is not printed. */
        m.opt.interval_ns = o.cpu.interval_ns;
        FILE *f = o.output ? fopen(o.output, "w") : stdout;
        if (!f) {
            cli_error(prog, "%s: %s", o.output, strerror(errno));
            status = CLI_EXIT_DATA;
            goto done;
        }
        int rc = report(&o, &m, f);
        if (rc == REC_ENOMEM)
            cli_error(prog, "out of memory");
        if ((f == stdout ? fflush(f) : fclose(f)) != 0 || rc < 0) {
            if (rc != REC_ENOMEM)
                cli_error(prog, "%s: %s", o.output ? o.output : "stdout",
                          strerror(errno));
            status = CLI_EXIT_DATA;
        }
    }
done:
    for (size_t i = 0; i < nin; i++)
        cpu_input_close(&in[i]);
    free(in);
    cpu_model_free(&m);
    cli_debug_free(copt.debug);
    cli_threads_free(o.threads);
    return status;
}
