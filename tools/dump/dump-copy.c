/*
 * tools/dump/dump-copy.c - rec-dump --format rec: "the last five minutes
 * of a running recording, as one file". librecord copies the chunks
 * (rec_reader_copy: whole chunks, an OPEN one finished at its last flush,
 * the last one marked LAST); here are the window and the messages.
 *
 * Each input is copied as one closed recording, so several inputs make a
 * concatenation of closed recordings, which reads as one recording.
 */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "dump-copy.h"

struct sink {
    FILE *f;
    bool failed;
    int err;
};

static int sink_write(void *ctx, const void *data, size_t len)
{
    struct sink *s = ctx;
    if (fwrite(data, 1, len, s->f) == len)
        return 0;
    s->failed = true;
    s->err = errno;
    return REC_EIO;
}

int dump_copy(const char *prog, const dump_copy_opts *o, char *const *in,
              int n, FILE *out)
{
    struct sink sink = { .f = out };
    uint64_t total = 0;
    int status = CLI_EXIT_OK;
    for (int i = 0; i < n; i++) {
        rec_reader *r;
        rec_chunk_info info;
        uint64_t since = 0, until = UINT64_MAX, copied = 0;
        int rc = rec_reader_open(&r, in[i], 0);
        if (rc < 0) {
            cli_reader_error(prog, in[i], NULL, rc);
            status = CLI_EXIT_DATA;
            continue;
        }
        /* +DURATION counts from this input's first chunk, as rec-dump's
         * other formats do; the reader has read its header by now. */
        uint64_t start = rec_reader_chunk(r, &info) == 0 ? info.start_ns : 0;
        if (o->have_since)
            since = cli_time_resolve(&o->since, start);
        if (o->have_until)
            until = cli_time_resolve(&o->until, start);
        rc = rec_reader_copy(r, since, until, sink_write, &sink, &copied);
        total += copied;
        if (sink.failed) {
            cli_error(prog, "%s: %s", o->output, strerror(sink.err));
            rec_reader_close(r);
            return CLI_EXIT_DATA;
        }
        if (rc < 0) {
            cli_reader_error(prog, in[i], r, rc);
            status = CLI_EXIT_DATA;
        } else {
            cli_reader_warning(prog, in[i], r);
        }
        rec_reader_close(r);
    }
    if (fflush(out) != 0) {
        cli_error(prog, "%s: %s", o->output, strerror(errno));
        return CLI_EXIT_DATA;
    }
    if (total == 0 && status == CLI_EXIT_OK)
        cli_warn(prog, "no chunk of the recording%s meets the time window: "
                 "%s is empty", n > 1 ? "s" : "", o->output);
    return status;
}
