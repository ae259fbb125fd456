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
                  "RFC 3339 or +DURATION)", opt, arg);
        return -1;
    }
    *have = true;
    return 0;
}
