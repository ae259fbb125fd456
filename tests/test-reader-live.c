/*
 * tests/test-reader-live.c - follow a recording while a writer thread
 * emits, flushes and rotates it: the reader must see a growing,
 * gap-free sequence of valid events (rec_reader_poll() after each end) and,
 * once the writer closed, all of them and a clean end. For its first
 * flushes the writer waits until the reader has seen them, so the reader
 * really follows an OPEN chunk (and its rotations). No timing assumptions:
 * the reader only sleeps when poll() reports nothing new.
 */
#include <config.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rec/record.h"
#include "tap.h"

#define NEVENTS 20000u
#define FLUSH_EVERY 250u
#define ROTATE_EVERY 4000u

#define HANDSHAKES 40u     /* flushes after which the writer waits for the reader */

static rec_writer *w;
static atomic_int writer_done;
static atomic_uint reader_seen;    /* events the reader has validated */
static int writer_rc, handshake_timeouts;

/* Let the reader catch up with a flush, so that it must find the new events
 * by polling an OPEN chunk (bounded: a broken reader fails, not hangs). */
static void wait_reader(unsigned upto)
{
    for (int i = 0; i < 20000 && atomic_load(&reader_seen) < upto; i++) {
        struct timespec ts = { 0, 500000 };
        nanosleep(&ts, NULL);
    }
    if (atomic_load(&reader_seen) < upto)
        handshake_timeouts++;
}

static void *writer_main(void *arg)
{
    rec_stream *s;
    rec_id name, thr;
    int rc = rec_stream_open(w, &s);
    for (unsigned i = 1; i <= NEVENTS && rc == 0; i++) {
        /* interned again after each rotation: the pools follow the chunk */
        rc |= rec_intern_cstr(w, "live", &name);
        struct rec_Thread t = { 7, name, 1 };
        rc |= rec_intern_Thread(w, &t, &thr);
        struct rec_CPUTimeSample e = { thr, i, false, false, 0, 0 };
        rc |= rec_emit_CPUTimeSample(s, &e);
        if (i % FLUSH_EVERY == 0) {
            rc |= rec_writer_flush(w);
            if (i / FLUSH_EVERY <= HANDSHAKES)
                wait_reader(i);
        }
        if (i % ROTATE_EVERY == 0)
            rc |= rec_writer_rotate(w);
    }
    rc |= rec_stream_close(s);
    rc |= rec_writer_close(w);
    writer_rc = rc;
    atomic_store(&writer_done, 1);
    return arg;
}

int main(void)
{
    char path[256];
    snprintf(path, sizeof path, "test-reader-live.%d.rec", (int)getpid());
    rec_writer_options opt;
    rec_writer_options_init(&opt);
    opt.overwrite = true;
    if (rec_writer_open(&w, path, &opt) < 0)
        TAP_BAIL("writer open");
    pthread_t th;
    pthread_create(&th, NULL, writer_main, NULL);

    rec_reader *r;
    const rec_event *ev;
    uint64_t next = 1, bad = 0, ends = 0, growths = 0, truncs = 0;
    int rc, idle = 0;
    if (rec_reader_open(&r, path, 0) < 0)
        TAP_BAIL("reader open");
    for (;;) {
        while ((rc = rec_reader_next(r, &ev)) == 1) {
            rec_value v, t, n;
            bool ok = rec_event_get(ev, 1, &v) == 0 && v.kind == REC_UINT && v.v.u == next &&
                      rec_event_get(ev, 0, &t) == 0 && t.kind == REC_REF && t.v.ref.entry &&
                      rec_entry_get(t.v.ref.entry, 1, &n) == 0 && n.kind == REC_REF &&
                      n.v.ref.entry;
            if (!ok && bad++ < 5)
                tap_diag("event %llu: unexpected (period kind %d value %llu)",
                         (unsigned long long)next, v.kind, (unsigned long long)v.v.u);
            next = v.kind == REC_UINT ? v.v.u + 1 : next + 1;
            atomic_store(&reader_seen, (unsigned)next - 1);
        }
        if (rc == REC_ETRUNCATED) {
            truncs++;       /* a header or block caught mid-write */
        } else if (rc < 0) {
            tap_diag("reader: %s", rec_reader_message(r));
            break;
        } else {
            ends++;
        }
        bool done = atomic_load(&writer_done);
        int p = rec_reader_poll(r);
        if (p < 0) {
            tap_diag("poll: %d %s", p, rec_reader_message(r) ? rec_reader_message(r) : "");
            break;
        }
        if (p > 0) {
            growths++;
            idle = 0;
            continue;
        }
        if (done && rc == 0 && !rec_reader_warning(r))
            break;          /* the last chunk is closed and fully read */
        if (done && ++idle > 1000) {
            tap_diag("no progress after the writer closed: %s",
                     rec_reader_warning(r) ? rec_reader_warning(r) : "-");
            break;
        }
        struct timespec ts = { 0, 200000 };
        nanosleep(&ts, NULL);
    }
    pthread_join(th, NULL);
    tap_ok(writer_rc == 0, "writer wrote %u events with flushes and rotations", NEVENTS);
    tap_ok(handshake_timeouts == 0 && growths >= HANDSHAKES,
           "reader caught up with each of %u flushes by polling (%llu polls with news)",
           HANDSHAKES, (unsigned long long)growths);
    tap_ok(bad == 0, "every event seen in order and valid (%llu bad)",
           (unsigned long long)bad);
    tap_ok(next == NEVENTS + 1 && rc == 0, "all %u events read live, clean end (rc %d)",
           NEVENTS, rc);
    tap_diag("%llu ends of data, %llu polls with news, %llu cut reads",
             (unsigned long long)ends, (unsigned long long)growths,
             (unsigned long long)truncs);
    rec_reader_close(r);
    unlink(path);
    return tap_done();
}
