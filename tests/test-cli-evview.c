/*
 * tests/test-cli-evview.c - the tools' typed view of a chunk's events
 * (tools/cli/cli-types.c) on a recording whose schema is not the one the
 * tools know: fields absent, a samplingPeriod declared int, a loss reason
 * as an inline string, a thread without a name. Every tool reads these the
 * same way through the view, so this is where that way is pinned down.
 */
#include <config.h>

#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli.h"
#include "recbuild.h"
#include "tap.h"

enum { STRING = 1, THREAD = 2, STACK = 5, SAMPLE = 32, LOST = 33, MARK = 34 };

static void metadata(rb_buf *b)
{
    rb_map(b, 2);
    rb_text(b, "version");
    rb_uint(b, 1);
    rb_text(b, "types");
    rb_array(b, 6);
    rb_type(b, STRING, "String", false, 1);
    rb_field(b, "value", "string", false, false);
    rb_type(b, THREAD, "Thread", false, 2);
    rb_field(b, "osThreadId", "uint", false, false);
    rb_field(b, "name", "String", false, true);
    rb_type(b, STACK, "StackTrace", false, 2);
    rb_field(b, "truncated", "boolean", false, false);
    rb_field(b, "truncationReason", "String", false, true);
    rb_type(b, SAMPLE, "CPUTimeSample", true, 5);
    rb_field(b, "eventThread", "Thread", false, false);
    rb_field(b, "samplingPeriod", "int", false, false);
    rb_field(b, "failed", "boolean", false, false);
    rb_field(b, "stackTrace", "StackTrace", false, true);
    rb_field(b, "startTime", "ticks", false, false);
    rb_type(b, LOST, "CPUTimeSampleLost", true, 4);
    rb_field(b, "eventThread", "Thread", false, false);
    rb_field(b, "lostTime", "uint", false, false);
    rb_field(b, "reason", "string", false, false);
    rb_field(b, "startTime", "ticks", false, false);
    rb_type(b, MARK, "Marker", true, 1);
    rb_field(b, "startTime", "ticks", false, false);
}

/* Strings 1 "main", 2 "depth"; thread 1 (42, "main"), 2 (43, no name);
 * stack 1 cut short for "depth". */
static void pools(rb_buf *b)
{
    const char *s[] = { "main", "depth" };
    for (unsigned i = 0; i < 2; i++) {
        rb_array(b, 3);
        rb_uint(b, STRING);
        rb_uint(b, i + 1);
        rb_text(b, s[i]);
    }
    for (unsigned i = 0; i < 2; i++) {
        rb_array(b, 4);
        rb_uint(b, THREAD);
        rb_uint(b, i + 1);
        rb_uint(b, 42 + i);
        if (i)
            rb_null(b);
        else
            rb_uint(b, 1);
    }
    rb_array(b, 4);
    rb_uint(b, STACK);
    rb_uint(b, 1);
    rb_bool(b, true);
    rb_uint(b, 2);
}

/* A sample of period 5, one of period -3 without a stack, a loss, a mark. */
static void events(rb_buf *b)
{
    rb_uint(b, RB_START_TICKS);
    for (int i = 0; i < 2; i++) {
        rb_array(b, 6);
        rb_uint(b, SAMPLE);
        rb_uint(b, 1);
        rb_int(b, i ? -3 : 5);
        rb_bool(b, false);
        if (i)
            rb_null(b);
        else
            rb_uint(b, 1);
        rb_int(b, 1);
    }
    rb_array(b, 5);
    rb_uint(b, LOST);
    rb_uint(b, 2);
    rb_uint(b, 7);
    rb_text(b, "queue-full");
    rb_int(b, 1);
    rb_array(b, 2);
    rb_uint(b, MARK);
    rb_int(b, 1);
}

static rec_reader *open_recording(void)
{
    rb_file f = { 0 };
    rb_buf m = { 0 }, p = { 0 }, e = { 0 };
    rec_reader *r = NULL;
    int fd = memfd_create("evview", MFD_CLOEXEC);

    rb_chunk_begin(&f);
    metadata(&m);
    rb_block(&f, REC_BLOCK_METADATA, false, &m);
    pools(&p);
    rb_block(&f, REC_BLOCK_POOL, false, &p);
    events(&e);
    rb_block(&f, REC_BLOCK_EVENTS, false, &e);
    rb_chunk_end(&f, REC_STATE_FINISHED, REC_CHUNK_LAST);
    if (fd < 0 || write(fd, f.out.p, f.out.n) != (ssize_t)f.out.n ||
        lseek(fd, 0, SEEK_SET) < 0 ||
        rec_reader_open_fd(&r, fd, "evview", 0) < 0)
        r = NULL;
    rb_free(&f.out);
    rb_free(&m);
    rb_free(&p);
    rb_free(&e);
    return r;
}

int main(void)
{
    rec_reader *r = open_recording();
    const rec_event *ev[4];
    const cli_evtype *t;
    const rec_value *vals;
    cli_evview v = { 0 };
    cli_thread_info ti;
    const char *s;
    size_t len;
    uint64_t u;
    int n = 0;

    tap_ok(r != NULL, "the recording opens");
    if (!r)
        return tap_done();
    /* Events stay valid until the next one is read: each is checked as
     * it comes. */
    while (n < 4 && rec_reader_next(r, &ev[n]) > 0) {
        t = cli_evview_event(&v, ev[n]);
        vals = rec_event_values(ev[n]);
        switch (n) {
        case 0:
            tap_ok(t->kind == CLI_EV_SAMPLE && t->thread == 0 &&
                   t->period == 1 && t->failed == 2 && t->stack == 3 &&
                   t->start_time == 4 && t->biased == -1 &&
                   t->lost_samples == -1,
                   "a sample type: its kind, its fields' indexes, -1 for "
                   "those it lacks");
            u = 0;
            bool got = cli_ev_uint(vals, t->period, &u);
            tap_ok(got && u == 5, "an int period >= 0 reads as a count (%llu)",
                   (unsigned long long)u);
            tap_ok(!cli_ev_bool(vals, t->failed) &&
                   !cli_ev_bool(vals, t->biased),
                   "false and absent flags read false");
            cli_evview_thread(&v, cli_ev_ref(vals, t->thread), &ti);
            tap_ok(ti.have_tid && ti.tid == 42 && !ti.have_pid && ti.name &&
                   ti.name_len == 4 && !memcmp(ti.name, "main", 4),
                   "the thread: its id, its name through the String pool, "
                   "no process id in this schema");
            const rec_entry *st = cli_ev_ref(vals, t->stack);
            const rec_value *items;
            tap_ok(st && cli_evview_partial(&v, st) == 0 &&
                   cli_evview_frames(&v, st, &items) == 0,
                   "the stack: cut short for depth, no frames field");
            break;
        case 1:
            u = 99;
            tap_ok(!cli_ev_uint(vals, t->period, &u) && u == 99,
                   "a negative period is no count, and leaves the output");
            tap_ok(!cli_ev_ref(vals, t->stack), "a null stack is no entry");
            break;
        case 2:
            tap_ok(t->kind == CLI_EV_LOST && t->reason == 2 &&
                   t->lost_samples == -1, "a loss type without lostSamples");
            tap_ok(!cli_ev_uint(vals, t->lost_samples, &u) &&
                   cli_ev_uint(vals, t->lost_time, &u) && u == 7,
                   "its lost time, and no count");
            tap_ok(cli_ev_text(&v, vals, t->reason, &s, &len) && len == 10 &&
                   !memcmp(s, "queue-full", 10),
                   "an inline string reads as text");
            char buf[6];
            tap_ok(cli_ev_text_copy(&v, vals, t->reason, buf, sizeof buf) &&
                   !strcmp(buf, "queue"), "copied text is cut to the buffer");
            cli_evview_thread(&v, cli_ev_ref(vals, t->thread), &ti);
            tap_ok(ti.have_tid && ti.tid == 43 && !ti.name,
                   "a thread without a name");
            tap_ok(!cli_entry_text(&v, cli_ev_ref(vals, t->thread),
                                   cli_evview_entry(&v, cli_ev_ref(vals,
                                   t->thread))->name, &s, &len),
                   "its null name is no text");
            break;
        case 3:
            tap_ok(t->kind == CLI_EV_OTHER && t->start_time == 0 &&
                   t->thread == -1, "another type: kind other, its fields");
            break;
        }
        n++;
    }
    tap_ok(n == 4, "four events read (%d)", n);
    t = cli_evview_type(&v, NULL);
    tap_ok(t->kind == CLI_EV_OTHER && t->thread == -1 && t->value == -1,
           "no type: kind other, no fields");
    /* A type resolved again after a reset (a chunk change) is the same. */
    const rec_type *st = rec_reader_type_by_name(r, "CPUTimeSample");
    long before = cli_evview_type(&v, st)->stack;
    size_t nt = v.n;
    cli_evview_reset(&v);
    tap_ok(v.n == 0 && st && cli_evview_type(&v, st)->stack == before &&
           v.n == 1, "a reset forgets the types (%zu), resolves them anew",
           nt);
    cli_evview_free(&v);
    rec_reader_close(r);
    return tap_done();
}
