/*
 * tools/dump-follow.h - rec-dump --follow: the follow loop, with the
 * selection and rendering left to rec-dump.c through callbacks.
 */
#ifndef REC_TOOLS_DUMP_FOLLOW_H
#define REC_TOOLS_DUMP_FOLLOW_H

#include "cli.h"

typedef struct dump_follow_opts {
    bool from_end;
    const char *position_file;  /* resume from it, save to it (or NULL) */
    uint64_t stall_ns;          /* 0: no stall timeout */
} dump_follow_opts;

typedef struct dump_follow_cb {
    void *ctx;
    /* the reader entered another chunk */
    void (*chunk)(void *ctx, const rec_chunk_info *info);
    /* append ev to out if it is selected (one line, no newline): true if
     * it was */
    bool (*event)(void *ctx, const rec_event *ev, cli_buf *out);
} dump_follow_cb;

/* Follow path ("-" not supported yet), printing one line per selected
 * event to out, flushed per line. Returns an exit status (CLI_EXIT_*). */
int dump_follow(const char *prog, const char *path, const dump_follow_opts *o,
                const dump_follow_cb *cb, FILE *out);

#endif
