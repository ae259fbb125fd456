/*
 * tools/cli/cli-follow.c - every --follow of the tools (rec-dump, rec-cpu):
 * one loop over librecord's rec_follow with the same ends for all. It
 * ends cleanly (exit 0) when the recording is closed and its writer gone,
 * or at SIGINT, SIGTERM or SIGHUP (a closed terminal); with one line and
 * exit 1 when the writer died, the file was removed, replaced or
 * damaged, or nothing new came within the stall timeout.
 *
 * With a position file the position is saved when the follower has
 * caught up with the file and at the end, always after the tool has
 * written what the events it covers gave: a follower stopped that way and
 * restarted with the same file neither loses nor repeats an event. One
 * killed outright (SIGKILL) repeats the events since its last save.
 */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* The longest wait: a stop signal that lands just before a wait begins
 * is seen within it. */
#define SLICE_MS 250

static volatile sig_atomic_t follow_stop;

static void on_follow_stop(int sig)
{
    follow_stop = sig;
}

static void catch_stops(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_follow_stop;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        sigaction(sigs[i], &sa, NULL);
}

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

int cli_follow(const char *prog, const char *path, const cli_follow_opts *o,
               const cli_follow_cb *cb)
{
    char pos[REC_FOLLOW_POSITION_MAX];
    rec_follow_options fo;
    rec_follow *f;
    const rec_event *ev;
    uint64_t last_chunk = UINT64_MAX;
    rec_chunk_info info;
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
        if (rc == REC_EINVAL && fo.position)
            cli_error(prog, "%s: not a saved position: '%s'",
                      o->position_file, pos);
        else
            cli_error(prog, "%s: %s", path, rec_strerror(rc));
        return CLI_EXIT_DATA;
    }
    catch_stops();

    /* Save once caught up (a zero timeout says so), then wait in slices,
     * or until the tool has something due. */
    int timeout = 0;
    while (!follow_stop) {
        int due = cb->due ? cb->due(cb->ctx) : -1;
        rc = rec_follow_next(f, &ev, due >= 0 && due < timeout ? due : timeout);
        if (rc == REC_EAGAIN) {
            if (timeout == 0) {
                if (o->position_file &&
                    save_position(prog, o->position_file, f) < 0) {
                    status = CLI_EXIT_DATA;
                    break;
                }
                timeout = SLICE_MS;
            }
            continue;
        }
        if (rc <= 0)
            break;
        timeout = 0;
        if (cb->chunk &&
            cli_chunk_changed(rec_follow_reader(f), &last_chunk, &info))
            cb->chunk(cb->ctx, &info);
        if (cb->event(cb->ctx, ev) < 0) {
            status = CLI_EXIT_DATA;
            break;
        }
    }
    if (cb->end)
        cb->end(cb->ctx);
    if (status == CLI_EXIT_OK && rc < 0 && rc != REC_EAGAIN) {
        const char *m = rec_follow_message(f);
        cli_error(prog, "%s", m ? m : rec_strerror(rc));
        status = CLI_EXIT_DATA;
    }
    if (o->position_file && save_position(prog, o->position_file, f) < 0)
        status = CLI_EXIT_DATA;
    rec_follow_close(f);
    return status;
}
