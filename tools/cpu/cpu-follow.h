/*
 * tools/cpu-follow.h - rec-cpu --follow (tools/cpu-follow.c).
 */
#ifndef REC_TOOLS_CPU_FOLLOW_H
#define REC_TOOLS_CPU_FOLLOW_H

#include <stdio.h>
#include "cli.h"

enum cpu_follow_style {
    CPU_FOLLOW_LINES,   /* plain lines per interval */
    CPU_FOLLOW_TTY,     /* redrawn in place */
    CPU_FOLLOW_JSON     /* one JSON object per interval and line */
};

/* Follow path as cli_follow() does, printing the per-thread view every
 * interval_ns. Returns an exit status. */
int cpu_follow(const char *prog, const char *path, const cli_follow_opts *fo,
               uint64_t interval_ns, enum cpu_follow_style style,
               const cli_threads *filter, FILE *out);

#endif
