/*
 * tools/start/start-drop.c - the chunk that replaces one a lagging
 * consumer of rec-start -o - never gets (start-stream.c).
 *
 * Nothing is lost silently: the dropped chunk is read back, its samples
 * are summed per thread into CPUTimeSampleLost events with reason
 * stream-dropped (what rec-cpu, rec-summary and rec-dump then show as
 * lost CPU), and its other events - thread starts and ends with their
 * kernel CPU figures, losses, settings, process and module information -
 * are carried over unchanged, so that per-thread accounting still adds up.
 * The replacement is written with librecord's writer into a scratch
 * in-memory file, and its header is then given the dropped chunk's place
 * in the recording (index, start time, writer).
 */
#include <config.h>
#include "start.h"
#include "cli.h"

#include <rec/record.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "crc32c.h"
#include "format.h"

#define REASON "stream-dropped"

/* A thread's dropped samples. */
typedef struct acc {
    uint64_t tid, pid, samples, ns, last_ns;
    char name[64];
    bool has_name;
} acc;

typedef struct copier {
    rec_writer *w;
    rec_stream *st;
    uint64_t tps;
    acc *acc;
    size_t nacc, cap;
    int err;
} copier;

/* Field f of ev (or of entry e) by name; kind REC_NULL if absent. */
static rec_value field(const rec_event *ev, const rec_entry *e,
                       const char *name)
{
    rec_value v = { .kind = REC_NULL };
    const rec_type *t = ev ? rec_event_type(ev) : rec_entry_type(e);
    long i = rec_type_field_index(t, name);
    if (i >= 0) {
        int rc = ev ? rec_event_get(ev, (size_t)i, &v)
                    : rec_entry_get(e, (size_t)i, &v);
        if (rc < 0)
            v.kind = REC_NULL;
    }
    return v;
}

static uint64_t u(const rec_event *ev, const rec_entry *e, const char *name)
{
    rec_value v = field(ev, e, name);
    return v.kind == REC_UINT ? v.v.u : 0;
}

static bool b(const rec_event *ev, const char *name)
{
    rec_value v = field(ev, NULL, name);
    return v.kind == REC_BOOL && v.v.b;
}

/* A ticks field as CLOCK_MONOTONIC ns (the writer's time base). */
static uint64_t ns(const copier *c, const rec_event *ev, const char *name)
{
    uint64_t t = u(ev, NULL, name);
    return (uint64_t)((unsigned __int128)t * 1000000000u / c->tps);
}

static rec_id str(copier *c, const rec_event *ev, const rec_entry *e,
                  const char *name)
{
    char buf[4096];
    rec_id id = 0;
    if (cli_value_string(field(ev, e, name), buf, sizeof buf) &&
        rec_intern_cstr(c->w, buf, &id) < 0)
        c->err = -1;
    return id;
}

static rec_id thread(copier *c, const rec_event *ev, const char *name)
{
    rec_value v = field(ev, NULL, name);
    rec_id id = 0;
    if (v.kind != REC_REF || !v.v.ref.entry)
        return 0;
    const rec_entry *e = v.v.ref.entry;
    struct rec_Thread t = { .osThreadId = u(NULL, e, "osThreadId"),
                            .name = str(c, NULL, e, "name"),
                            .processId = u(NULL, e, "processId") };
    if (rec_intern_Thread(c->w, &t, &id) < 0)
        c->err = -1;
    return id;
}

static acc *acc_of(copier *c, const rec_event *ev)
{
    rec_value v = field(ev, NULL, "eventThread");
    const rec_entry *e = v.kind == REC_REF ? v.v.ref.entry : NULL;
    uint64_t tid = e ? u(NULL, e, "osThreadId") : 0;
    uint64_t pid = e ? u(NULL, e, "processId") : 0;
    for (size_t i = 0; i < c->nacc; i++)
        if (c->acc[i].tid == tid && c->acc[i].pid == pid)
            return &c->acc[i];
    if (c->nacc == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        acc *a = realloc(c->acc, cap * sizeof *a);
        if (!a)
            return NULL;
        c->acc = a;
        c->cap = cap;
    }
    acc *a = &c->acc[c->nacc++];
    memset(a, 0, sizeof *a);
    a->tid = tid;
    a->pid = pid;
    a->has_name = e && cli_value_string(field(NULL, e, "name"), a->name,
                                          sizeof a->name);
    return a;
}

/* The thread's dropped samples so far, as one loss event. */
static void emit_loss(copier *c, acc *a)
{
    rec_id th = 0, name = 0, reason = 0;
    if (!a->samples)
        return;
    if ((a->has_name && rec_intern_cstr(c->w, a->name, &name) < 0) ||
        rec_intern_Thread(c->w, &(struct rec_Thread){ .osThreadId = a->tid,
                          .name = name, .processId = a->pid }, &th) < 0 ||
        rec_intern_cstr(c->w, REASON, &reason) < 0 ||
        rec_emit_CPUTimeSampleLost(c->st, &(struct rec_CPUTimeSampleLost){
            .eventThread = th, .lostSamples = a->samples, .lostTime = a->ns,
            .reason = reason, .startTime = a->last_ns }) < 0)
        c->err = -1;
    a->samples = a->ns = 0;
}

/* One event of the dropped chunk into the replacement. Event types this
 * code does not know are not carried (nor counted: they hold no CPU). */
static void copy_event(copier *c, const rec_event *ev)
{
    const char *n = rec_type_name(rec_event_type(ev));
    int rc = 0;

    if (!strcmp(n, "CPUTimeSample")) {
        acc *a = acc_of(c, ev);
        if (!a) {
            c->err = -1;
            return;
        }
        a->samples++;
        a->ns += u(ev, NULL, "samplingPeriod");
        a->last_ns = ns(c, ev, "startTime");
    } else if (!strcmp(n, "CPUTimeSampleLost")) {
        rc = rec_emit_CPUTimeSampleLost(c->st, &(struct rec_CPUTimeSampleLost){
            .eventThread = thread(c, ev, "eventThread"),
            .lostSamples = u(ev, NULL, "lostSamples"),
            .lostTime = u(ev, NULL, "lostTime"),
            .reason = str(c, ev, NULL, "reason"),
            .startTime = ns(c, ev, "startTime") });
    } else if (!strcmp(n, "ThreadStart")) {
        rc = rec_emit_ThreadStart(c->st, &(struct rec_ThreadStart){
            .eventThread = thread(c, ev, "eventThread"),
            .parentThread = thread(c, ev, "parentThread"),
            .cpuTime = u(ev, NULL, "cpuTime"),
            .startTime = ns(c, ev, "startTime"),
            .engine = str(c, ev, NULL, "engine") });
    } else if (!strcmp(n, "ThreadEnd")) {
        /* The thread's losses come before its end, as the sampler's do. */
        acc *a = acc_of(c, ev);
        if (a)
            emit_loss(c, a);
        rc = rec_emit_ThreadEnd(c->st, &(struct rec_ThreadEnd){
            .eventThread = thread(c, ev, "eventThread"),
            .cpuTime = u(ev, NULL, "cpuTime"),
            .snapshot = b(ev, "snapshot"),
            .startTime = ns(c, ev, "startTime") });
    } else if (!strcmp(n, "RecordingSettings")) {
        rc = rec_emit_RecordingSettings(c->st, &(struct rec_RecordingSettings){
            .throttle = str(c, ev, NULL, "throttle"),
            .samplingPeriod = u(ev, NULL, "samplingPeriod"),
            .signal = u(ev, NULL, "signal"),
            .unwinder = str(c, ev, NULL, "unwinder"),
            .stackDepth = u(ev, NULL, "stackDepth"),
            .queueCapacity = u(ev, NULL, "queueCapacity"),
            .startTime = ns(c, ev, "startTime"),
            .engine = str(c, ev, NULL, "engine"),
            .engineNote = str(c, ev, NULL, "engineNote") });
    } else if (!strcmp(n, "ProcessInfo")) {
        rc = rec_emit_ProcessInfo(c->st, &(struct rec_ProcessInfo){
            .processId = u(ev, NULL, "processId"),
            .parentProcessId = u(ev, NULL, "parentProcessId"),
            .executable = str(c, ev, NULL, "executable"),
            .commandLine = str(c, ev, NULL, "commandLine"),
            .hostName = str(c, ev, NULL, "hostName"),
            .runId = str(c, ev, NULL, "runId"),
            .startTime = ns(c, ev, "startTime") });
    } else if (!strcmp(n, "CPUInfo")) {
        rc = rec_emit_CPUInfo(c->st, &(struct rec_CPUInfo){
            .onlineCpus = u(ev, NULL, "onlineCpus"),
            .availableCpus = u(ev, NULL, "availableCpus"),
            .clockTickHz = u(ev, NULL, "clockTickHz"),
            .model = str(c, ev, NULL, "model"),
            .startTime = ns(c, ev, "startTime") });
    } else if (!strcmp(n, "ModuleLoad")) {
        rec_value v = field(ev, NULL, "module");
        const rec_entry *e = v.kind == REC_REF ? v.v.ref.entry : NULL;
        rec_id m = 0;
        if (e && rec_intern_Module(c->w, &(struct rec_Module){
                .path = str(c, NULL, e, "path"),
                .buildId = str(c, NULL, e, "buildId"),
                .baseAddress = u(NULL, e, "baseAddress"),
                .size = u(NULL, e, "size") }, &m) == 0)
            rc = rec_emit_ModuleLoad(c->st, &(struct rec_ModuleLoad){
                .module = m, .startTime = ns(c, ev, "startTime") });
    } else if (!strcmp(n, "ProcessUsage")) {
        rc = rec_emit_ProcessUsage(c->st, &(struct rec_ProcessUsage){
            .userTime = u(ev, NULL, "userTime"),
            .systemTime = u(ev, NULL, "systemTime"),
            .maxRss = u(ev, NULL, "maxRss"),
            .voluntarySwitches = u(ev, NULL, "voluntarySwitches"),
            .involuntarySwitches = u(ev, NULL, "involuntarySwitches"),
            .startTime = ns(c, ev, "startTime"),
            .samplerCpuTime = u(ev, NULL, "samplerCpuTime") });
    }
    if (rc < 0)
        c->err = -1;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The replacement chunk takes the dropped one's place: its index, start
 * (so chunks stay in time order), duration, writer and flags (LAST: the
 * recording closed cleanly). */
static void place(uint8_t *h, const uint8_t *orig)
{
    memcpy(h + REC_CH_START_WALL, orig + REC_CH_START_WALL, 8);
    memcpy(h + REC_CH_START_TICKS, orig + REC_CH_START_TICKS, 8);
    memcpy(h + REC_CH_DURATION, orig + REC_CH_DURATION, 8);
    memcpy(h + REC_CH_INDEX, orig + REC_CH_INDEX, 4);
    memcpy(h + REC_CH_WRITER_PID, orig + REC_CH_WRITER_PID, 4);
    h[REC_CH_FLAGS] = orig[REC_CH_FLAGS];
    put32(h + REC_CH_CRC, rec__crc32c(0, h, REC_CH_CRC));
}

int start_drop_chunk(int mfd, uint64_t off, uint8_t **out, size_t *outlen,
                     start_drop_stats *ds)
{
    copier c = { 0 };
    rec_reader *r = NULL;
    const rec_event *ev;
    rec_chunk_info ci;
    rec_writer_options wo;
    uint8_t orig[REC_CHUNK_HEADER_SIZE], h[REC_CHUNK_HEADER_SIZE];
    char p[64];
    int rfd, wfd = -1, rc = -1;

    *out = NULL;
    *outlen = 0;
    memset(ds, 0, sizeof *ds);
    if (pread(mfd, orig, sizeof orig, (off_t)off) != (ssize_t)sizeof orig)
        return -1;
    snprintf(p, sizeof p, "/proc/self/fd/%d", mfd);
    if ((rfd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    if (lseek(rfd, (off_t)off, SEEK_SET) < 0) {
        close(rfd);
        return -1;
    }
    if (rec_reader_open_fd(&r, rfd, "stream", 0) < 0)
        return -1;
    if (rec_reader_chunk(r, &ci) < 0 || !ci.ticks_per_second)
        goto out;
    c.tps = ci.ticks_per_second;
    rec_writer_options_init(&wo);
    if (1000000000u % c.tps == 0)
        wo.tick_ns = (uint32_t)(1000000000u / c.tps);
    if ((wfd = memfd_create("rec-drop", MFD_CLOEXEC)) < 0)
        goto out;
    rc = rec_writer_open_fd(&c.w, wfd, &wo);
    wfd = -1;               /* the writer's, also on failure */
    if (rc < 0) {
        rc = -1;
        c.w = NULL;
        goto out;
    }
    rc = -1;
    if (rec_stream_open(c.w, &c.st) < 0)
        goto out;
    while (rec_reader_next(r, &ev) > 0) {
        if (rec_reader_chunk(r, &ci) < 0 || ci.offset != off)
            break;
        copy_event(&c, ev);
    }
    for (size_t i = 0; i < c.nacc; i++) {
        ds->samples += c.acc[i].samples;
        ds->cpu_ns += c.acc[i].ns;
        emit_loss(&c, &c.acc[i]);
    }
    rec_stream_close(c.st);
    c.st = NULL;
    if (c.err || rec_writer_rotate(c.w) < 0)
        goto out;
    /* Chunk 0 of the scratch recording is finished: that is the one. */
    int sfd = rec_writer_fd(c.w);
    if (pread(sfd, h, sizeof h, 0) != (ssize_t)sizeof h)
        goto out;
    uint64_t size = 0;
    for (int i = 7; i >= 0; i--)
        size = size << 8 | h[REC_CH_SIZE + i];
    if (size < sizeof h || size > REC_MAX_STREAM_CHUNK ||
        !(*out = malloc(size)))
        goto out;
    if (pread(sfd, *out, size, 0) != (ssize_t)size) {
        free(*out);
        *out = NULL;
        goto out;
    }
    place(*out, orig);
    *outlen = size;
    rc = 0;
out:
    if (c.st)
        rec_stream_close(c.st);
    if (c.w)
        rec_writer_close(c.w);      /* closes wfd */
    else if (wfd >= 0)
        close(wfd);
    rec_reader_close(r);
    free(c.acc);
    return rc;
}

void start_drop_tally(const uint8_t *buf, size_t len, start_tally *t)
{
    rec_reader *r;
    const rec_event *ev;
    int fd = memfd_create("rec-drop", MFD_CLOEXEC);
    if (fd < 0)
        return;
    if (write(fd, buf, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET) < 0) {
        close(fd);
        return;
    }
    if (rec_reader_open_fd(&r, fd, "stream", 0) < 0)
        return;
    while (rec_reader_next(r, &ev) > 0)
        start_tally_event(t, ev);
    rec_reader_close(r);
}
