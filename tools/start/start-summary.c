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

#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *prog = "rec-start";

/* samples/lost of a finished (or abandoned) recording, for the summary. */
void start_summarize(const char *path, bool signaled, const char *why)
{
    rec_reader *r;
    const rec_event *ev;
    const rec_type *lost_type = NULL;
    long lost_field = -1;
    uint64_t samples = 0, lost = 0;
    char engine[64] = "", note[256] = "", tmp[256];
    cli_losses *losses;
    char line[1024];
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
    losses = cli_losses_new();
    while ((rc = rec_reader_next(r, &ev)) > 0) {
        const rec_type *t = rec_event_type(ev);
        uint32_t id = rec_type_id(t);
        if (losses)
            cli_losses_event(losses, ev);
        if (id == REC_TYPE_CPUTimeSample) {
            samples++;
        } else if (id == REC_TYPE_RecordingSettings) {
            /* The engine of the last recording in the file (exec). */
            if (cli_event_string(ev, "engine", engine, sizeof engine)) {
                if (!cli_event_string(ev, "engineNote", note, sizeof note))
                    note[0] = '\0';
            } else {
                engine[0] = note[0] = '\0';
            }

        } else if (id == REC_TYPE_CPUTimeSampleLost) {
            rec_value v;
            if (t != lost_type) {
                lost_type = t;
                lost_field = rec_type_field_index(t, "lostSamples");
            }
            if (lost_field >= 0 && rec_event_get(ev, (size_t)lost_field, &v) == 0 &&
                v.kind == REC_UINT)
                lost += v.v.u;
        }
    }
    if (engine[0] && note[0])
        snprintf(tmp, sizeof tmp, ", engine %s (%s)", engine, note);
    else if (engine[0])
        snprintf(tmp, sizeof tmp, ", engine %s", engine);
    else
        tmp[0] = '\0';
    fprintf(stderr, "%s: %s: %llu samples, %llu lost, %.1f KiB%s%s%s%s\n",
            prog, path, (unsigned long long)samples, (unsigned long long)lost,
            (double)st.st_size / 1024.0, tmp,
            rc < 0 ? " (damaged: read up to the damage)"
            : rec_reader_warning(r) ? (signaled ? " (unfinished: read up to the "
                                       "last flush)" : " (unfinished)")
            : "", why[0] ? "; stopped early: " : "", why);
    /* Where the CPU time without stacks went, when it matters. */
    if (losses && *cli_losses_line(losses, line, sizeof line))
        fprintf(stderr, "%s: %s\n", prog, line);
    cli_losses_free(losses);
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

/* Whether the recording's first ProcessInfo carries this run's id: the
 * files of an earlier run with the same name are not ours to count. */
static bool of_this_run(const char *path, const char *run_id)
{
    rec_reader *r;
    const rec_event *ev;
    bool ours = false;
    if (rec_reader_open(&r, path, 0) < 0)
        return false;
    for (unsigned n = 0; n < 10000 && rec_reader_next(r, &ev) > 0; n++) {
        const rec_type *t = rec_event_type(ev);
        if (rec_type_id(t) != REC_TYPE_ProcessInfo)
            continue;
        long f = rec_type_field_index(t, "runId");
        rec_value v;
        if (f >= 0 && rec_event_get(ev, (size_t)f, &v) == 0 &&
            v.kind == REC_REF && v.v.ref.entry &&
            rec_entry_get(v.v.ref.entry, 0, &v) == 0 &&
            v.kind == REC_STRING && v.v.str.len == strlen(run_id))
            ours = memcmp(v.v.str.s, run_id, v.v.str.len) == 0;
        break;
    }
    rec_reader_close(r);
    return ours;
}

/* With --follow-children: say where the descendants' recordings went. */
void start_summarize_children(const char *path, const char *run_id)
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
            if (!of_this_run(g.gl_pathv[i], run_id)) {
                stale++;
                continue;
            }
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
    free(pattern);
}
