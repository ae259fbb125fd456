/*
 * tools/start/start-summary.c - rec-start's closing lines: what the
 * recording holds (samples, lost, engine, why it stopped early, where the
 * CPU time without stacks went) and, with --follow-children, where the
 * descendants' recordings of this run are. Read from the files themselves:
 * they are right whatever happened to the program.
 */
#include <config.h>
#include "start.h"
#include "cli.h"
#include "losses.h"

#include <rec/record.h>

#include <errno.h>
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *prog = "rec-start";

void start_tally_init(start_tally *t)
{
    memset(t, 0, sizeof *t);
    t->losses = cli_losses_new();
}

void start_tally_event(start_tally *t, cli_evview *view, const rec_event *ev)
{
    const cli_evtype *c = cli_evview_event(view, ev);
    const rec_value *vals = rec_event_values(ev);
    uint64_t n;
    if (t->losses)
        cli_losses_event(t->losses, view, ev);
    if (c->kind == CLI_EV_SAMPLE) {
        t->samples++;
    } else if (c->kind == CLI_EV_SETTINGS) {
        /* The engine of the last recording in the file (exec). */
        if (cli_ev_text_copy(view, vals, c->engine, t->engine,
                             sizeof t->engine)) {
            if (!cli_ev_text_copy(view, vals, c->engine_note, t->note,
                                  sizeof t->note))
                t->note[0] = '\0';
        } else {
            t->engine[0] = t->note[0] = '\0';
        }
    } else if (c->kind == CLI_EV_LOST &&
               cli_ev_uint(vals, c->lost_samples, &n)) {
        t->lost += n;
    }
}

/* Tally the events r has left; the last rec_reader_next() result. */
static int tally_rest(start_tally *t, rec_reader *r)
{
    cli_evview view = { 0 };
    uint64_t chunk = UINT64_MAX;
    const rec_event *ev;
    int rc;
    while ((rc = rec_reader_next(r, &ev)) > 0) {
        if (cli_chunk_changed(r, &chunk, NULL))
            cli_evview_reset(&view);
        start_tally_event(t, &view, ev);
    }
    cli_evview_free(&view);
    return rc;
}

void start_tally_print(start_tally *t, const char *path, uint64_t bytes,
                       const char *state, const char *why)
{
    char tmp[512], line[1024];

    if (t->engine[0] && t->note[0])
        snprintf(tmp, sizeof tmp, ", engine %s (%s)", t->engine, t->note);
    else if (t->engine[0])
        snprintf(tmp, sizeof tmp, ", engine %s", t->engine);
    else
        tmp[0] = '\0';
    fprintf(stderr, "%s: %s: %llu samples, %llu lost, %.1f KiB%s%s%s%s\n",
            prog, path, (unsigned long long)t->samples,
            (unsigned long long)t->lost, (double)bytes / 1024.0, tmp, state,
            why[0] ? "; stopped early: " : "", why);
    /* Where the CPU time without stacks went, when it matters. */
    if (t->losses && *cli_losses_line(t->losses, line, sizeof line))
        fprintf(stderr, "%s: %s\n", prog, line);
}

void start_tally_free(start_tally *t)
{
    cli_losses_free(t->losses);
    t->losses = NULL;
}

/* samples/lost of a finished (or abandoned) recording, for the summary. */
void start_summarize(const char *path, bool signaled, bool sealed,
                     const char *why, start_total *tot)
{
    rec_reader *r;
    start_tally t;
    struct stat st;
    int rc;

    if (stat(path, &st) < 0) {
        fprintf(stderr, "%s: no recording was written to %s (did the sampler "
                "start? see its messages above)\n", prog, path);
        return;
    }
    rc = rec_reader_open(&r, path, 0);
    if (rc < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, rec_strerror(rc));
        return;
    }
    start_tally_init(&t);
    rc = tally_rest(&t, r);
    start_tally_print(&t, path, (uint64_t)st.st_size,
            rc < 0 ? " (damaged: read up to the damage)"
            : rec_reader_warning(r) ? (signaled ? " (unfinished: read up to the "
                                       "last flush)" : " (unfinished)")
            : sealed || rec_reader_sealed(r)
            ? " (sealed by rec-start: the program ended without finishing "
              "it; data up to its last flush, the rest counted lost)"
            : "", why);
    tot->samples += t.samples;
    tot->lost += t.lost;
    tot->bytes += (uint64_t)st.st_size;
    tot->files++;
    start_tally_free(&t);
    rec_reader_close(r);
}

/* ".123" or ".123.456...": a descendant's suffix (each process names its
 * children's files after its own: FILE.PID, FILE.PID.PID, ...). */
static bool descendant_suffix(const char *s, bool *nested)
{
    int parts = 0;
    while (*s == '.' && s[1] >= '0' && s[1] <= '9') {
        s += 1 + strspn(s + 1, "0123456789");
        parts++;
    }
    *nested = parts > 1;
    return parts > 0 && !*s;
}

/* Whether the recording's first ProcessInfo carries this run's id (the
 * files of an earlier run with the same name are not ours to count), and
 * then what it holds, added to tot. */
static bool of_this_run(const char *path, const char *run_id, start_total *tot)
{
    rec_reader *r;
    const rec_event *ev;
    bool ours = false;
    struct stat st;
    start_tally tally;
    if (rec_reader_open(&r, path, 0) < 0)
        return false;
    cli_evview view = { 0 };
    uint64_t chunk = UINT64_MAX;
    for (unsigned n = 0; n < 10000 && rec_reader_next(r, &ev) > 0; n++) {
        if (cli_chunk_changed(r, &chunk, NULL))
            cli_evview_reset(&view);
        const cli_evtype *c = cli_evview_event(&view, ev);
        const char *id;
        size_t len;
        if (c->kind == CLI_EV_SAMPLE)
            tot->samples++;        /* before its ProcessInfo: rare */
        if (c->kind != CLI_EV_PROCESS)
            continue;
        if (cli_ev_text(&view, rec_event_values(ev), c->run_id, &id, &len) &&
            len == strlen(run_id))
            ours = memcmp(id, run_id, len) == 0;
        break;
    }
    cli_evview_free(&view);
    if (ours) {
        start_tally_init(&tally);
        tally_rest(&tally, r);
        tot->samples += tally.samples;
        tot->lost += tally.lost;
        if (stat(path, &st) == 0)
            tot->bytes += (uint64_t)st.st_size;
        tot->files++;
        start_tally_free(&tally);
    }
    rec_reader_close(r);
    return ours;
}

/* With --follow-children: say where the descendants' recordings went. */
void start_summarize_children(const char *path, const char *run_id,
                              start_total *tot)
{
    char *pattern;
    glob_t g;
    size_t n = 0, stale = 0;
    bool nested, any_nested = false;

    if (asprintf(&pattern, "%s.[0-9]*", path) < 0)
        return;
    if (glob(pattern, 0, NULL, &g) == 0) {
        size_t len = strlen(path);
        for (size_t i = 0; i < g.gl_pathc; i++) {
            if (!descendant_suffix(g.gl_pathv[i] + len, &nested))
                continue;
            start_total mine = { 0 };
            if (!of_this_run(g.gl_pathv[i], run_id, &mine)) {
                stale++;
                continue;
            }
            tot->samples += mine.samples;
            tot->lost += mine.lost;
            tot->bytes += mine.bytes;
            tot->files += mine.files;
            n++;
            any_nested |= nested;
        }
        globfree(&g);
    }
    if (n)
        fprintf(stderr, "%s: %zu descendant recording%s: %s.<pid>%s\n", prog,
                n, n == 1 ? "" : "s", path,
                any_nested ? " (their own children's: .<pid>.<pid>...)" : "");
    if (stale)
        fprintf(stderr, "%s: %zu other file%s named %s.<pid> %s not of this "
                "run\n", prog, stale, stale == 1 ? "" : "s", path,
                stale == 1 ? "is" : "are");
    /* The root's line may say 0 samples (a shell, make): the run's. */
    if (n)
        fprintf(stderr, "%s: all %zu recordings of this run: %llu samples, "
                "%llu lost, %.1f KiB\n", prog, tot->files,
                (unsigned long long)tot->samples, (unsigned long long)tot->lost,
                (double)tot->bytes / 1024.0);
    free(pattern);
}

static void status_line(start_status *s, const char *line)
{
    if (!strncmp(line, "error ", 6))
        fprintf(stderr, "%s: %s\n", prog, line + 6);
    else if (!strncmp(line, "stopped ", 8) && !s->why[0])
        snprintf(s->why, s->wsize, "%s", line + 8);
    else if (!strncmp(line, "attached", 8))
        s->attached = true;
    else if (!strcmp(line, "failed"))
        s->failed = true;
    else if (!strncmp(line, "detached", 8))
        s->detached = true;
}

int start_status_read(start_status *s, int fd)
{
    size_t size = sizeof s->buf;
    ssize_t n;
    char *nl;

    while ((n = read(fd, s->buf + s->len, size - 1 - s->len)) > 0 ||
           (n < 0 && errno == EINTR)) {
        if (n < 0)
            continue;
        s->len += (size_t)n;
        s->buf[s->len] = '\0';
        while ((nl = strchr(s->buf, '\n'))) {
            *nl = '\0';
            status_line(s, s->buf);
            s->len -= (size_t)(nl + 1 - s->buf);
            memmove(s->buf, nl + 1, s->len + 1);
        }
        if (s->len == size - 1)
            s->len = 0;      /* a line too long to be ours */
    }
    return n == 0 ? -1 : 0;
}
