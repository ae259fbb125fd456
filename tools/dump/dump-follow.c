/*
 * tools/dump-follow.c - rec-dump --follow: prints events as each flush of
 * the writer lands (librecord's rec_follow), one line each, flushed per
 * line so that a pipeline sees every event at once; saves and resumes a
 * position so that a stopped follower goes on where it stopped.
 *
 * The position is saved when the follower has caught up with the file and
 * at exit (end of stream, SIGINT, SIGTERM, SIGHUP), always after the lines
 * it covers were written out: a follower stopped that way and restarted
 * with the same file neither loses nor repeats an event. One killed
 * outright (SIGKILL) repeats the events since its last save.
 */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dump-follow.h"

static int read_position(const char *prog, const char *file, char *buf, size_t len)
{
    FILE *fp = fopen(file, "re");
    if (!fp) {
        if (errno == ENOENT)
            return 0;       /* first run: from the start */
        cli_error(prog, "%s: %s", file, strerror(errno));
        return -1;
    }
    size_t n = fread(buf, 1, len - 1, fp);
    fclose(fp);
    buf[n] = 0;
    buf[strcspn(buf, "\r\n")] = 0;
    return buf[0] ? 1 : 0;
}

/* Write then rename, so that a crash leaves the old position or the new. */
static int save_position(const char *prog, const char *file, rec_follow *f)
{
    char pos[REC_FOLLOW_POSITION_MAX], tmp[4096];
    if (rec_follow_position(f, pos, sizeof pos) < 0)
        return -1;
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", file) >= sizeof tmp) {
        cli_error(prog, "%s: name too long", file);
        return -1;
    }
    FILE *fp = fopen(tmp, "we");
    if (!fp || fprintf(fp, "%s\n", pos) < 0 || fclose(fp) != 0 ||
        rename(tmp, file) < 0) {
        cli_error(prog, "%s: %s", file, strerror(errno));
        return -1;
    }
    return 0;
}

static int out_error(const char *prog)
{
    cli_error(prog, "output: %s", strerror(errno));
    return CLI_EXIT_DATA;
}

int dump_follow(const char *prog, const char *path, const dump_follow_opts *o,
                const dump_follow_cb *cb, FILE *out)
{
    char pos[REC_FOLLOW_POSITION_MAX];
    rec_follow_options fo;
    rec_follow *f;
    const rec_event *ev;
    uint64_t last_chunk = UINT64_MAX;
    rec_chunk_info info;
    cli_buf line = { 0 };
    int status = CLI_EXIT_OK, rc;

    rec_follow_options_init(&fo);
    fo.from_end = o->from_end;
    fo.stall_timeout_ms = o->stall_ns ? (int)(o->stall_ns / 1000000u) + 1 : 0;
    if (o->position_file) {
        int k = read_position(prog, o->position_file, pos, sizeof pos);
        if (k < 0)
            return CLI_EXIT_DATA;
        if (k > 0) {
            fo.position = pos;
            fo.from_end = false;    /* the saved position wins */
        }
    }
    if ((rc = rec_follow_open(&f, path, &fo)) < 0) {
        if (rc == REC_EINVAL)
            cli_error(prog, "%s: not a saved position: '%s'",
                      o->position_file, pos);
        else
            cli_error(prog, "%s: %s", path, rec_strerror(rc));
        return CLI_EXIT_DATA;
    }
    cli_follow_catch_stops();

    /* Save once caught up (a zero timeout says so), then wait in slices:
     * a signal interrupts the wait, or lands before it and is seen within
     * a slice. */
    int timeout = 0;
    while (!cli_follow_stopped()) {
        rc = rec_follow_next(f, &ev, timeout);
        if (rc == REC_EAGAIN) {
            if (timeout == 0) {
                if (o->position_file &&
                    save_position(prog, o->position_file, f) < 0) {
                    status = CLI_EXIT_DATA;
                    break;
                }
                timeout = 250;
            }
            continue;
        }
        if (rc <= 0)
            break;
        timeout = 0;
        rec_reader *r = rec_follow_reader(f);
        if (cli_chunk_changed(r, &last_chunk, &info))
            cb->chunk(cb->ctx, &info);
        line.len = 0;
        if (!cb->event(cb->ctx, ev, &line))
            continue;
        cli_buf_addc(&line, '\n');
        if (cli_buf_flush(&line, out) < 0 || fflush(out) != 0) {
            status = out_error(prog);
            break;
        }
    }
    if (status == CLI_EXIT_OK && rc < 0 && rc != REC_EAGAIN) {
        const char *m = rec_follow_message(f);
        cli_error(prog, "%s", m ? m : rec_strerror(rc));
        status = CLI_EXIT_DATA;
    }
    if (o->position_file && save_position(prog, o->position_file, f) < 0)
        status = CLI_EXIT_DATA;
    rec_follow_close(f);
    cli_buf_free(&line);
    return status;
}
