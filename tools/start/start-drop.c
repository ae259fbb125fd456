/*
 * tools/start/start-drop.c - the chunk that replaces one a lagging
 * consumer of rec-start -o - never gets (start-stream.c).
 *
 * Nothing is lost silently: the dropped chunk is read back, its samples
 * are summed per thread into CPUTimeSampleLost events with reason
 * stream-dropped (what rec-cpu, rec-summary and rec-dump then show as
 * lost CPU), and every other event - thread starts and ends with their
 * kernel CPU figures, losses, settings, process and module information,
 * and whatever a later schema adds - is carried over with all of its
 * fields, so that per-thread accounting still adds up. The copy goes by
 * the dropped chunk's own metadata (rec_writer_open_like(),
 * rec_emit_event()), not by the schema this program was built with: a
 * field or event type it does not know survives, and the entries events
 * refer to are re-interned so the replacement stands alone. The
 * replacement is written into a scratch in-memory file, read back as a
 * file holds it (rec_relay), and then given the dropped chunk's place in
 * the recording (rec_relay_place(): index, start time, writer).
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

#define REASON "stream-dropped"
/* What a pipe's reader holds of a chunk at most (rec-format(5), LIMITS). */
#define MAX_CHUNK (1u << 30)

/* A thread's dropped samples. Its entry is interned at once: the last
 * losses are emitted after the reader has looked past the chunk, which
 * frees the chunk's entries. */
typedef struct acc {
    uint64_t tid, pid, samples, ns, last_ns;
    rec_id thread;              /* in the replacement */
} acc;

typedef struct copier {
    rec_writer *w;
    rec_stream *st;
    const rec_type *lost;       /* CPUTimeSampleLost of the chunk's schema */
    const rec_type *thread;     /* Thread of the chunk's schema */
    cli_evview view;            /* of the chunk */
    const cli_evtype *lt;       /* lost, resolved */
    rec_id reason;
    uint64_t tps;
    acc *acc;
    size_t nacc, cap;
    uint64_t samples, ns;       /* all threads', for the caller */
    int err;
} copier;

/* A ticks field as CLOCK_MONOTONIC ns (what rec_emit_values() takes). */
static uint64_t ns(const copier *c, const rec_value *vals, long f)
{
    uint64_t t = 0;
    cli_ev_uint(vals, f, &t);
    return (uint64_t)((unsigned __int128)t * 1000000000u / c->tps);
}

/* The value a field of a loss event that this code does not fill gets: a
 * schema may have grown one, and the event must still be written. */
static rec_value blank(const rec_field_info *f)
{
    rec_value v = { .kind = REC_NULL };
    if (f->nullable)
        return v;
    if (f->array) {
        v.kind = REC_ARRAY;
    } else if (!strcmp(f->type, "boolean")) {
        v.kind = REC_BOOL;
    } else if (!strcmp(f->type, "int")) {
        v.kind = REC_INT;
    } else if (!strcmp(f->type, "string")) {
        v.kind = REC_STRING;
        v.v.str.s = "";
    } else if (!f->ref) {
        v.kind = REC_UINT;
    }
    return v;                   /* a reference stays null: refused */
}

static void put(rec_value *vals, long f, rec_value v)
{
    if (f >= 0)
        vals[f] = v;
}

/* The thread's dropped samples so far, as one loss event. */
static void emit_loss(copier *c, acc *a)
{
    rec_value vals[64];
    const rec_type *t = c->lost;
    size_t n = t ? rec_type_nfields(t) : 0;
    if (!a->samples)
        return;
    if (!t || n > sizeof vals / sizeof vals[0]) {
        c->err = -1;
        return;
    }
    for (size_t i = 0; i < n; i++)
        vals[i] = blank(rec_type_field(t, i));
    put(vals, c->lt->thread, (rec_value){ .kind = REC_REF,
        .v.ref = { .entry = NULL, .id = a->thread } });
    put(vals, c->lt->lost_samples, (rec_value){ .kind = REC_UINT,
        .v.u = a->samples });
    put(vals, c->lt->lost_time, (rec_value){ .kind = REC_UINT, .v.u = a->ns });
    put(vals, c->lt->reason, (rec_value){ .kind = REC_REF,
        .v.ref = { .entry = NULL, .id = c->reason } });
    put(vals, c->lt->start_time, (rec_value){ .kind = REC_UINT,
        .v.u = a->last_ns });
    if (rec_emit_values(c->st, t, vals) < 0)
        c->err = -1;
    c->samples += a->samples;
    c->ns += a->ns;
    a->samples = a->ns = 0;
}

/* An entry of type t with no values: a thread the chunk did not define. */
static int intern_blank(copier *c, const rec_type *t, rec_id *id)
{
    rec_value vals[64];
    size_t n = t ? rec_type_nfields(t) : 0;
    if (!t || n > sizeof vals / sizeof vals[0])
        return -1;
    for (size_t i = 0; i < n; i++)
        vals[i] = blank(rec_type_field(t, i));
    return rec_intern_values(c->w, t, vals, id) < 0 ? -1 : 0;
}

static acc *acc_of(copier *c, const rec_value *vals, long f)
{
    const rec_entry *e = cli_ev_ref(vals, f);
    cli_thread_info ti;
    cli_evview_thread(&c->view, e, &ti);
    uint64_t tid = ti.tid, pid = ti.pid;
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
    acc *a = &c->acc[c->nacc];
    memset(a, 0, sizeof *a);
    a->tid = tid;
    a->pid = pid;
    if (e ? rec_intern_entry(c->w, e, &a->thread) < 0
          : intern_blank(c, c->thread, &a->thread) < 0)
        return NULL;
    c->nacc++;
    return a;
}

/* One event of the dropped chunk into the replacement. */
static void copy_event(copier *c, const rec_event *ev)
{
    const cli_evtype *t = cli_evview_event(&c->view, ev);
    const rec_value *vals = rec_event_values(ev);
    uint64_t p = 0;

    if (t->kind == CLI_EV_SAMPLE) {
        acc *a = acc_of(c, vals, t->thread);
        if (!a) {
            c->err = -1;
            return;
        }
        a->samples++;
        cli_ev_uint(vals, t->period, &p);
        a->ns += p;
        a->last_ns = ns(c, vals, t->start_time);
        return;
    }
    if (t->kind == CLI_EV_THREAD_END) {
        /* The thread's losses come before its end, as the sampler's do. */
        acc *a = acc_of(c, vals, t->thread);
        if (a)
            emit_loss(c, a);
    }
    if (rec_emit_event(c->st, ev) < 0)
        c->err = -1;
}

/* The String entry of the loss reason, by the chunk's schema. */
static int intern_reason(copier *c, const rec_reader *r)
{
    const rec_type *s = rec_reader_type_by_name(r, "String");
    rec_value v = { .kind = REC_STRING,
                    .v.str = { .s = REASON, .len = sizeof REASON - 1 } };
    if (!s || rec_type_nfields(s) != 1)
        return -1;
    return rec_intern_values(c->w, s, &v, &c->reason) < 0 ? -1 : 0;
}

/* The finished first chunk of the scratch recording in fd, as a file
 * holds it, into *out (malloc'ed). */
static int first_chunk(int fd, uint8_t **out, size_t *len)
{
    rec_relay *rl;
    rec_relay_piece pc;
    uint8_t *buf = NULL;
    int rc = -1;

    if (rec_relay_open(&rl, fd, NULL) < 0)
        return -1;
    while (rec_relay_next(rl, &pc) > 0) {
        if (!buf && (!pc.chunk.finished || pc.chunk.size > MAX_CHUNK ||
                     !(buf = malloc((size_t)pc.chunk.size))))
            break;
        if (pc.pos + pc.len > pc.chunk.size)
            break;
        if (pc.data)
            memcpy(buf + pc.pos, pc.data, (size_t)pc.len);
        else if (pread(fd, buf + pc.pos, (size_t)pc.len, (off_t)pc.source) !=
                 (ssize_t)pc.len)
            break;
        if (pc.complete) {
            *out = buf;
            *len = (size_t)pc.chunk.size;
            buf = NULL;
            rc = 0;
            break;
        }
    }
    free(buf);
    rec_relay_close(rl);
    return rc;
}

int start_drop_chunk(int mfd, uint64_t off, uint8_t **out, size_t *outlen,
                     start_drop_stats *ds)
{
    copier c = { 0 };
    rec_reader *r = NULL;
    const rec_event *ev;
    rec_chunk_info ci;
    rec_writer_options wo;
    char p[64];
    int rfd, wfd = -1, rc = -1;

    *out = NULL;
    *outlen = 0;
    memset(ds, 0, sizeof *ds);
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
    rc = rec_writer_open_like(&c.w, wfd, &wo, r);
    wfd = -1;               /* the writer's, also on failure */
    if (rc < 0) {
        rc = -1;
        c.w = NULL;
        goto out;
    }
    rc = -1;
    c.lost = rec_reader_type_by_name(r, "CPUTimeSampleLost");
    c.thread = rec_reader_type_by_name(r, "Thread");
    c.lt = cli_evview_type(&c.view, c.lost);
    if (intern_reason(&c, r) < 0 || rec_stream_open(c.w, &c.st) < 0)
        goto out;
    while (rec_reader_next(r, &ev) > 0) {
        if (rec_reader_chunk(r, &ci) < 0 || ci.offset != off)
            break;
        copy_event(&c, ev);
    }
    for (size_t i = 0; i < c.nacc; i++)
        emit_loss(&c, &c.acc[i]);
    /* also those of threads that ended in the chunk, already emitted */
    ds->samples = c.samples;
    ds->cpu_ns = c.ns;
    rec_stream_close(c.st);
    c.st = NULL;
    if (c.err || rec_writer_rotate(c.w) < 0)
        goto out;
    /* Chunk 0 of the scratch recording is finished: that is the one. */
    if (first_chunk(rec_writer_fd(c.w), out, outlen) < 0)
        goto out;
    if (rec_relay_place(*out, *outlen, mfd, off) < 0) {
        free(*out);
        *out = NULL;
        *outlen = 0;
        goto out;
    }
    rc = 0;
out:
    if (c.st)
        rec_stream_close(c.st);
    if (c.w)
        rec_writer_close(c.w);      /* closes wfd */
    else if (wfd >= 0)
        close(wfd);
    rec_reader_close(r);
    cli_evview_free(&c.view);
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
    cli_evview view = { 0 };
    uint64_t chunk = UINT64_MAX;
    while (rec_reader_next(r, &ev) > 0) {
        if (cli_chunk_changed(r, &chunk, NULL))
            cli_evview_reset(&view);
        start_tally_event(t, &view, ev);
    }
    cli_evview_free(&view);
    rec_reader_close(r);
}
