/*
 * tools/cli/cli-opts.c - the option handling every rec tool shares (the
 * messages and exit statuses of man/rec-dump.1, rec-summary.1, rec-cpu.1).
 */
#include <config.h>

#include "cli.h"

#include <stdlib.h>

void cli_try_help(const char *prog)
{
    fprintf(stderr, "Try '%s --help' for more information.\n", prog);
}

_Noreturn void cli_version_exit(const char *prog)
{
    printf("%s (%s) %s\n", prog, PACKAGE_NAME, PACKAGE_VERSION);
    exit(CLI_EXIT_OK);
}

int cli_need_files(const char *prog, int first, int argc)
{
    if (first < argc)
        return 0;
    cli_error(prog, "no recording given");
    cli_try_help(prog);
    return -1;
}

int cli_opt_mode(const char *prog, int *mode, int want,
                 const char *const *names)
{
    if (*mode && *mode != want) {
        cli_error(prog, "%s and %s exclude each other", names[*mode],
                  names[want]);
        return -1;
    }
    *mode = want;
    return 0;
}

int cli_opt_threads(const char *prog, const char *arg, cli_threads **threads)
{
    cli_threads_free(*threads);
    *threads = NULL;
    if (cli_threads_parse(arg, threads) < 0) {
        cli_error(prog, "--threads: empty thread list '%s'", arg);
        return -1;
    }
    return 0;
}

int cli_opt_time(const char *prog, const char *opt, const char *arg,
                 cli_time *t, bool *have)
{
    if (cli_parse_time(arg, t) < 0) {
        cli_error(prog, "%s: not a time: '%s' (ns since the epoch, "
                  "RFC 3339, +DURATION after the start or -DURATION before "
                  "the end)", opt, arg);
        return -1;
    }
    *have = true;
    return 0;
}

int cli_opt_stall_timeout(const char *prog, const char *arg, uint64_t *ns)
{
    /* rec_follow takes it in ms, as an int. */
    if (cli_parse_duration(arg, ns) < 0 ||
        *ns > (uint64_t)INT32_MAX * 1000000u) {
        cli_error(prog, "--stall-timeout: not a duration: '%s'", arg);
        return -1;
    }
    return 0;
}

/* The end of an input's data: its latest chunk end, 0 if none is read. */
static uint64_t data_end(const char *path)
{
    rec_reader *r;
    rec_chunk_info c;
    uint64_t end = 0;
    if (rec_reader_open(&r, path, 0) < 0)
        return 0;
    while (rec_reader_next_chunk(r) > 0 && rec_reader_chunk(r, &c) == 0) {
        uint64_t e = c.start_ns + c.duration_ns;
        if (e >= c.start_ns && e > end)
            end = e;
    }
    rec_reader_close(r);
    return end;
}

int cli_times_from_end(const char *prog, char *const *in, int n,
                       cli_time *a, cli_time *b)
{
    uint64_t end = 0;
    if (!(a && a->before_end) && !(b && b->before_end))
        return 0;
    for (int i = 0; i < n; i++) {
        if (cli_is_stream(in[i])) {
            cli_error(prog, "%s: a time before the end of the recording needs "
                      "its end before reading it, and a pipe can be read only "
                      "once: give a file or an absolute time", in[i]);
            return -1;
        }
        uint64_t e = data_end(in[i]);
        if (e > end)
            end = e;
    }
    cli_time *t[2] = { a, b };
    for (int i = 0; i < 2; i++) {
        if (!t[i] || !t[i]->before_end)
            continue;
        t[i]->ns = end > t[i]->ns ? end - t[i]->ns : 0;
        t[i]->before_end = false;
        t[i]->relative = false;
    }
    return 0;
}
