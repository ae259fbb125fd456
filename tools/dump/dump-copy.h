/*
 * tools/dump/dump-copy.h - rec-dump --format rec: the whole chunks of a
 * time window of the inputs, copied into one recording.
 */
#ifndef REC_TOOLS_DUMP_COPY_H
#define REC_TOOLS_DUMP_COPY_H

#include "cli.h"

typedef struct dump_copy_opts {
    bool have_since, have_until;
    cli_time since, until;      /* before-the-end times already resolved */
    const char *output;         /* its name, for messages */
} dump_copy_opts;

/* Copy the chunks of each of the n inputs that meet the window to out, in
 * the order given. Returns an exit status (CLI_EXIT_*). */
int dump_copy(const char *prog, const dump_copy_opts *o, char *const *in,
              int n, FILE *out);

#endif
