/*
 * tools/start/start-seal.c - finishing the recording of a program that
 * could not: one that left by a raw exit_group (Go does), was killed
 * (SIGKILL, the OOM killer), or whose sampler was stuck. rec-start waited
 * for it, so it knows what nobody inside the process could write any
 * more: the process's resource usage (wait4). It appends a sealing chunk
 * (rec_writer_open_seal()) with a ProcessUsage event and the CPU time the
 * file does not account for, as a CPUTimeSampleLost of reason "sealed".
 *
 * What this cannot know: how the missing time divides among threads (it
 * is charged to the process's main thread id), the per-thread CPU times
 * of threads that did not end through the sampler (no ThreadEnd), and the
 * sampler thread's own CPU time in the last image (inside the missing
 * time).
 */
#include <config.h>
#include "start.h"
#include "cli.h"

#include <rec/events.h>
#include <rec/record.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static const char *prog = "rec-start";

void start_account(const char *path, start_accounted *a)
{
    cli_evview view = { 0 };
    uint64_t chunk = UINT64_MAX, v;
    const rec_event *ev;
    rec_reader *r;

    if (rec_reader_open(&r, path, 0) < 0)
        return;
    while (rec_reader_next(r, &ev) > 0) {
        if (cli_chunk_changed(r, &chunk, NULL))
            cli_evview_reset(&view);
        const cli_evtype *t = cli_evview_event(&view, ev);
        long f = t->kind == CLI_EV_SAMPLE || t->kind == CLI_EV_SETTINGS
                 ? t->period : t->kind == CLI_EV_LOST ? t->lost_time
                 : t->kind == CLI_EV_USAGE ? t->sampler_time : -1;
        if (!cli_ev_uint(rec_event_values(ev), f, &v))
            continue;
        if (t->kind == CLI_EV_SETTINGS)
            a->period_ns = v;
        else if (t->kind == CLI_EV_USAGE)
            a->sampler_ns += v;
        else
            a->cpu_ns += v;
    }
    cli_evview_free(&view);
    rec_reader_close(r);
}

static uint64_t tv_ns(struct timeval tv)
{
    return (uint64_t)tv.tv_sec * 1000000000u + (uint64_t)tv.tv_usec * 1000u;
}

int start_seal(const char *path, pid_t pid, const struct rusage *ru,
               const start_accounted *prior)
{
    start_accounted a = { 0 };
    rec_seal_info info;
    rec_writer *w;
    rec_stream *st = NULL;
    struct rec_ProcessUsage u;
    struct rec_CPUTimeSampleLost lost;
    struct rec_Thread th;
    uint64_t total, missing;
    int rc;

    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    /* Under a file size limit (inherited by the program, which may have
     * stopped its recording for it), a write fails with EFBIG instead of
     * killing rec-start. */
    signal(SIGXFSZ, SIG_IGN);
    rc = rec_writer_open_seal(&w, path, &info);
    if (rc == REC_EEXIST)
        return 0;
    if (rc < 0) {
        fprintf(stderr, "%s: %s: cannot seal the unfinished recording: %s\n",
                prog, path, rec_strerror(rc));
        return rc;
    }
    /* Read only now that there is something to seal (a finished
     * recording is not read here at all): the committed events are the
     * same, the sealing chunk holds none yet. */
    if (prior)
        a = *prior;
    start_account(path, &a);
    total = tv_ns(ru->ru_utime) + tv_ns(ru->ru_stime);
    missing = total > a.cpu_ns + a.sampler_ns ? total - a.cpu_ns - a.sampler_ns
                                              : 0;
    memset(&u, 0, sizeof u);
    u.userTime = tv_ns(ru->ru_utime);
    u.systemTime = tv_ns(ru->ru_stime);
    u.maxRss = (uint64_t)ru->ru_maxrss * 1024u;
    u.voluntarySwitches = (uint64_t)ru->ru_nvcsw;
    u.involuntarySwitches = (uint64_t)ru->ru_nivcsw;
    u.startTime = rec_now_ns();
    u.samplerCpuTime = a.sampler_ns;          /* 0: null, unknown */
    memset(&th, 0, sizeof th);
    th.osThreadId = (uint64_t)pid;
    th.processId = (uint64_t)pid;
    memset(&lost, 0, sizeof lost);
    lost.lostTime = missing;
    lost.lostSamples = a.period_ns ? (missing + a.period_ns / 2) / a.period_ns
                                   : 0;
    lost.startTime = u.startTime;
    if ((rc = rec_stream_open(w, &st)) == 0 &&
        (rc = rec_intern_Thread(w, &th, &lost.eventThread)) == 0 &&
        (rc = rec_intern_cstr(w, "sealed", &lost.reason)) == 0 &&
        (rc = rec_emit_ProcessUsage(st, &u)) == 0 && missing)
        rc = rec_emit_CPUTimeSampleLost(st, &lost);
    if (st)
        rec_stream_close(st);
    {
        int crc = rec_writer_close(w);
        if (!rc)
            rc = crc;
    }
    if (rc < 0) {
        /* What fit of the sealing chunk would read as damage. */
        if (truncate(path, (off_t)info.committed) != 0)
            fprintf(stderr, "%s: %s: cannot remove the partial sealing "
                    "chunk: %s\n", prog, path, strerror(errno));
        fprintf(stderr, "%s: %s: sealing the recording failed: %s\n", prog,
                path, rec_strerror(rc));
        return rc;
    }
    return 1;
}
