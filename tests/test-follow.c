/*
 * tests/test-follow.c - rec_follow_*(): a follower started before the
 * file exists sees every event of a writer process in order across
 * rotations and an appended recording (what an exec() leaves), ends
 * cleanly when it closes, ends with REC_EWRITER after exactly the flushed
 * events when it dies, with REC_EREPLACED when the file is truncated,
 * removed or replaced (before its first chunk too, and when it came and
 * went before it could be opened), and resumes from saved positions with
 * nothing lost or repeated.
 *
 * Writers are child processes (their pid is in the chunk headers); they
 * wait on a pipe where the test needs the follower to have caught up, so
 * nothing depends on timing. A stall timeout only turns a hang into a
 * failure.
 */
#include <config.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rec/record.h"
#include "tap.h"

#define GUARD_MS 60000     /* a broken follower fails instead of hanging */

static char path[256];

/* The writer child: n events numbered from first (the period field),
 * flushing every flush_every and rotating every rotate_every events. */
static int write_events_in(rec_writer *w, unsigned first, unsigned n,
                           unsigned flush_every, unsigned rotate_every,
                           bool close_stream)
{
    rec_stream *s;
    rec_id name, thr;
    int rc = rec_stream_open(w, &s);
    for (unsigned i = first; i < first + n && rc == 0; i++) {
        rc |= rec_intern_cstr(w, "follow", &name);
        struct rec_Thread t = { 7, name, 1 };
        rc |= rec_intern_Thread(w, &t, &thr);
        struct rec_CPUTimeSample e = { thr, i, false, false, 0, 0 };
        rc |= rec_emit_CPUTimeSample(s, &e);
        if (flush_every && (i - first + 1) % flush_every == 0)
            rc |= rec_writer_flush(w);
        if (rotate_every && (i - first + 1) % rotate_every == 0)
            rc |= rec_writer_rotate(w);
    }
    if (close_stream)
        rc |= rec_stream_close(s);    /* writes what is left */
    return rc;
}

static int write_events(rec_writer *w, unsigned first, unsigned n,
                        unsigned flush_every, unsigned rotate_every)
{
    return write_events_in(w, first, n, flush_every, rotate_every, true);
}

static rec_writer *open_writer(bool append, uint64_t max_chunk)
{
    rec_writer_options o;
    rec_writer *w;
    rec_writer_options_init(&o);
    o.append = append;
    o.overwrite = !append;
    if (max_chunk)
        o.max_chunk_bytes = max_chunk;
    if (rec_writer_open(&w, path, &o) < 0)
        _exit(3);
    return w;
}

static void wait_byte(int fd)
{
    char c;
    if (read(fd, &c, 1) != 1)
        _exit(4);
}

static unsigned seq_of(const rec_event *ev)
{
    rec_value v;
    if (rec_event_get(ev, 1, &v) < 0 || v.kind != REC_UINT)
        return 0;
    return (unsigned)v.v.u;
}

struct run {
    unsigned seen, next, bad;
    int rc;
    char msg[600];
};

/* Follow until the stream ends; when seen reaches handshake_at (if any),
 * write a byte to hs so that the writer goes on. */
static void follow(rec_follow *f, struct run *r, unsigned handshake_at, int hs)
{
    const rec_event *ev;
    for (;;) {
        int rc = rec_follow_next(f, &ev, 50);
        if (rc == REC_EAGAIN) {
            if (handshake_at && r->seen == handshake_at) {
                if (write(hs, "x", 1) != 1)
                    TAP_BAIL("handshake");
                handshake_at = 0;
            }
            continue;
        }
        if (rc <= 0) {
            r->rc = rc;
            const char *m = rec_follow_message(f);
            snprintf(r->msg, sizeof r->msg, "%s", m ? m : "");
            return;
        }
        unsigned s = seq_of(ev);
        if (s != r->next && r->bad++ < 5)
            tap_diag("event %u where %u was expected", s, r->next);
        r->next = s + 1;
        r->seen++;
    }
}

static rec_follow *open_follow(const char *pos, bool from_end, int finish_wait)
{
    rec_follow_options o;
    rec_follow *f;
    rec_follow_options_init(&o);
    o.stall_timeout_ms = GUARD_MS;
    o.finish_wait_ms = finish_wait;
    o.position = pos;
    o.from_end = from_end;
    if (rec_follow_open(&f, path, &o) < 0)
        TAP_BAIL("rec_follow_open");
    return f;
}

static int reap(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0)
        ;
    return st;
}

/* Rotations and an appended recording, followed from before creation. */
static void test_rotation_and_append(void)
{
    int hs[2];
    if (pipe(hs) < 0)
        TAP_BAIL("pipe");
    unlink(path);
    rec_follow *f = open_follow(NULL, false, -1);
    pid_t pid = fork();
    if (pid == 0) {
        close(hs[1]);
        rec_writer *w = open_writer(false, 4096);
        int rc = write_events(w, 1, 3000, 100, 700);
        rc |= rec_writer_close(w);
        /* what an exec()'d image does: the same pid appends */
        wait_byte(hs[0]);
        w = open_writer(true, 0);
        rc |= write_events(w, 3001, 1000, 100, 0);
        rc |= rec_writer_close(w);
        _exit(rc ? 1 : 0);
    }
    close(hs[0]);
    struct run r = { .next = 1 };
    follow(f, &r, 3000, hs[1]);
    int st = reap(pid);
    close(hs[1]);
    tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer process wrote two recordings");
    tap_ok(r.seen == 4000 && r.bad == 0,
           "follower started before the file saw all 4000 events in order across "
           "rotations and the appended recording (%u seen, %u out of order)",
           r.seen, r.bad);
    tap_ok(r.rc == 0, "stream ends cleanly once the writer closed and exited "
           "(rc %d %s)", r.rc, r.msg);
    char pos[REC_FOLLOW_POSITION_MAX];
    tap_ok(rec_follow_position(f, pos, sizeof pos) == 0 && pos[0],
           "position after the end: %s", pos);
    rec_follow_close(f);
}

/* Count the events a post-mortem reader finds. */
static unsigned postmortem(void)
{
    rec_reader *rd;
    const rec_event *ev;
    unsigned n = 0;
    if (rec_reader_open(&rd, path, 0) < 0)
        return 0;
    while (rec_reader_next(rd, &ev) > 0)
        n++;
    rec_reader_close(rd);
    return n;
}

static void test_writer_dies(void)
{
    unlink(path);
    rec_follow *f = open_follow(NULL, false, -1);
    pid_t pid = fork();
    if (pid == 0) {
        rec_writer *w = open_writer(false, 8192);
        write_events_in(w, 1, 1260, 250, 0, false);
        /* 1250 flushed, 10 only in memory: never reach the file */
        raise(SIGKILL);
        _exit(1);
    }
    struct run r = { .next = 1 };
    follow(f, &r, 0, -1);
    int st = reap(pid);
    unsigned pm = postmortem();
    tap_ok(WIFSIGNALED(st), "writer killed");
    tap_ok(r.rc == REC_EWRITER && strstr(r.msg, "writer"),
           "follower ends with REC_EWRITER and a message (%d: %s)", r.rc, r.msg);
    tap_ok(r.seen == pm && r.seen == 1250 && r.bad == 0,
           "it delivered exactly the flushed events (%u; post-mortem reader %u)",
           r.seen, pm);
    rec_follow_close(f);
}

/* In-process writer (alive all along): truncation, replacement, and
 * removal, after which what the writer flushed into the removed file is
 * still read (through the follower's descriptor) before the end. */
enum change { TRUNCATE, REPLACE, REMOVE };

static void test_truncate_replace(enum change how)
{
    const rec_event *ev;
    bool replace = how == REPLACE;
    unlink(path);
    rec_writer *w = open_writer(false, 0);
    write_events(w, 1, 300, 100, 0);
    rec_follow *f = open_follow(NULL, false, -1);
    unsigned n = 0;
    int rc;
    while ((rc = rec_follow_next(f, &ev, 0)) == 1)
        n++;
    if (how == REMOVE) {
        if (unlink(path) < 0)
            TAP_BAIL("unlink");
        write_events(w, 301, 50, 50, 0);
        while ((rc = rec_follow_next(f, &ev, 50)) == REC_EAGAIN || rc == 1)
            if (rc == 1)
                n++;
        const char *m = rec_follow_message(f);
        tap_ok(n == 350 && rc == REC_EREPLACED && m && strstr(m, "removed"),
               "file removed under the follower: the 50 events flushed into it "
               "since are read, then REC_EREPLACED (%u events, %d: %s)",
               n, rc, m ? m : "");
        rec_follow_close(f);
        rec_writer_close(w);
        return;
    }
    if (replace) {
        char other[300];
        snprintf(other, sizeof other, "%s.new", path);
        FILE *fp = fopen(other, "w");
        if (!fp || fputs("not a recording", fp) < 0 || fclose(fp) != 0 ||
            rename(other, path) < 0)
            TAP_BAIL("replace");
    } else if (truncate(path, 100) < 0) {
        TAP_BAIL("truncate");
    }
    while ((rc = rec_follow_next(f, &ev, 50)) == REC_EAGAIN || rc == 1)
        ;
    const char *m = rec_follow_message(f);
    tap_ok(n == 300 && rc == REC_EREPLACED && m &&
           strstr(m, replace ? "replaced" : "truncated"),
           "file %s under the follower: REC_EREPLACED after %u events (%d: %s)",
           replace ? "replaced" : "truncated", n, rc, m ? m : "");
    rec_follow_close(f);
    rec_writer_close(w);
}

/* A complete recording of 100 events at name, written by this process. */
static void write_other(const char *name)
{
    rec_writer_options o;
    rec_writer *w;
    rec_writer_options_init(&o);
    o.overwrite = true;
    if (rec_writer_open(&w, name, &o) < 0 || write_events(w, 1, 100, 0, 0) < 0 ||
        rec_writer_close(w) < 0)
        TAP_BAIL("other recording");
}

/* Follow until the stream ends (a short stall timeout turns a wait that
 * never ends into REC_ESTALLED); the events delivered go to *n. */
static int follow_to_end(rec_follow *f, unsigned *n)
{
    const rec_event *ev;
    int rc;
    while ((rc = rec_follow_next(f, &ev, 50)) == REC_EAGAIN || rc == 1)
        if (rc == 1)
            ++*n;
    return rc;
}

static rec_follow *open_short(void)
{
    rec_follow_options o;
    rec_follow *f;
    rec_follow_options_init(&o);
    o.stall_timeout_ms = 3000;
    o.finish_wait_ms = 0;   /* another recording moved in ends at its end */
    if (rec_follow_open(&f, path, &o) < 0)
        TAP_BAIL("rec_follow_open");
    return f;
}

/* The file exists but holds no chunk yet when it is removed, or when
 * another recording is moved onto its name: the follower ends, and never
 * delivers the other recording's events as the rest of this one. */
static void test_gone_before_chunk(bool replace)
{
    const rec_event *ev;
    char other[300];
    unlink(path);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0)
        TAP_BAIL("create");
    close(fd);
    rec_follow *f = open_short();
    int rc = rec_follow_next(f, &ev, 0);
    if (replace) {
        snprintf(other, sizeof other, "%s.other", path);
        write_other(other);
        if (rename(other, path) < 0)
            TAP_BAIL("rename");
    } else if (unlink(path) < 0) {
        TAP_BAIL("unlink");
    }
    unsigned n = 0;
    if (rc == REC_EAGAIN)
        rc = follow_to_end(f, &n);
    const char *m = rec_follow_message(f);
    tap_ok(n == 0 && rc == REC_EREPLACED && m &&
           strstr(m, replace ? "replaced" : "removed"),
           "an empty file %s: the follower ends (%u events, %d: %s)",
           replace ? "replaced by another recording" : "removed", n, rc,
           m ? m : "");
    rec_follow_close(f);
    unlink(path);
}

/* Waited for, the file is created and removed before it could be opened
 * (a launch that failed): the follower ends instead of waiting on. */
static void test_created_and_removed(void)
{
    const rec_event *ev;
    unlink(path);
    rec_follow *f = open_short();
    int rc = rec_follow_next(f, &ev, 0);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || close(fd) < 0 || unlink(path) < 0)
        TAP_BAIL("create and remove");
    unsigned n = 0;
    if (rc == REC_EAGAIN)
        rc = follow_to_end(f, &n);
    const char *m = rec_follow_message(f);
    tap_ok(n == 0 && rc == REC_EREPLACED && m && strstr(m, "removed"),
           "a file created and removed before the follower opened it: it "
           "ends (%d: %s)", rc, m ? m : "");
    rec_follow_close(f);
}

/* A complete recording whose writer (a child) is gone ends cleanly even
 * if its name is removed before the follower read it all. */
static void test_complete_then_removed(void)
{
    unlink(path);
    pid_t pid = fork();
    if (pid == 0) {
        write_other(path);
        _exit(0);
    }
    reap(pid);
    rec_follow *f = open_short();
    if (unlink(path) < 0)
        TAP_BAIL("unlink");
    unsigned n = 0;
    int rc = follow_to_end(f, &n);
    tap_ok(n == 100 && rc == 0, "a complete recording removed while read: "
           "all 100 events, clean end (%d)", rc);
    rec_follow_close(f);
}

/* Stop and resume at many points while the writer writes. */
static void test_resume(void)
{
    int hs[2];
    if (pipe(hs) < 0)
        TAP_BAIL("pipe");
    unlink(path);
    pid_t pid = fork();
    if (pid == 0) {
        close(hs[1]);
        rec_writer *w = open_writer(false, 4096);
        int rc = write_events(w, 1, 1500, 50, 400);
        wait_byte(hs[0]);
        rc |= write_events(w, 1501, 1500, 50, 400);
        rc |= rec_writer_close(w);
        _exit(rc ? 1 : 0);
    }
    close(hs[0]);
    char pos[REC_FOLLOW_POSITION_MAX] = "";
    unsigned next = 1, dup = 0, gaps = 0, runs = 0, stop = 0;
    bool released = false;
    int rc = 0;
    /* runs of varying length, some ending inside a block, some at
     * block or chunk boundaries, one before any event */
    static const unsigned lens[] = { 0, 1, 49, 50, 51, 333, 7, 400, 999 };
    for (;;) {
        rec_follow *f = open_follow(pos[0] ? pos : NULL, false, -1);
        unsigned want = lens[runs % (sizeof lens / sizeof *lens)], got = 0;
        const rec_event *ev;
        runs++;
        rc = REC_EAGAIN;
        while (got < want || runs > 40) {
            rc = rec_follow_next(f, &ev, 50);
            if (rc == REC_EAGAIN) {
                if (!released && next == 1501) {
                    if (write(hs[1], "x", 1) != 1)
                        TAP_BAIL("handshake");
                    released = true;
                }
                continue;
            }
            if (rc <= 0)
                break;
            unsigned s = seq_of(ev);
            if (s < next)
                dup++;
            else if (s > next)
                gaps++;
            next = s + 1;
            got++;
        }
        if (rec_follow_position(f, pos, sizeof pos) < 0)
            TAP_BAIL("position");
        if (getenv("FOLLOW_DEBUG"))
            tap_diag("run %u: %u events, next %u, rc %d, position %s",
                     runs, got, next, rc, pos);
        rec_follow_close(f);
        if (rc <= 0 && rc != REC_EAGAIN) {
            stop = 1;
            break;
        }
        if (runs > 41)
            break;
    }
    int st = reap(pid);
    close(hs[1]);
    tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "writer wrote 3000 events");
    tap_ok(stop && rc == 0 && next == 3001 && dup == 0 && gaps == 0,
           "%u follow runs, each resumed from saved positions: all 3000 events, "
           "none repeated (%u), none lost (%u), rc %d", runs, dup, gaps, rc);
}

static void test_bad_position(void)
{
    rec_follow_options o;
    rec_follow *f;
    rec_follow_options_init(&o);
    o.position = "1:0:0:1:80:0x";
    tap_ok(rec_follow_open(&f, path, &o) == REC_EINVAL, "malformed position refused");
    o.position = "1:0:0:12345:80:0";
    o.stall_timeout_ms = GUARD_MS;
    const rec_event *ev;
    int rc = rec_follow_open(&f, path, &o);
    if (rc == 0) {
        rc = rec_follow_next(f, &ev, 1000);
        tap_ok(rc == REC_EINVAL && rec_follow_message(f),
               "position of another recording refused: %s",
               rec_follow_message(f) ? rec_follow_message(f) : "-");
        rec_follow_close(f);
    } else {
        tap_ok(0, "position of another recording: open failed %d", rc);
    }
}

static void test_from_end(void)
{
    const rec_event *ev;
    unlink(path);
    rec_writer *w = open_writer(false, 4096);
    write_events(w, 1, 700, 100, 300);
    rec_follow *f = open_follow(NULL, true, 0);
    write_events(w, 701, 50, 25, 0);
    rec_writer_close(w);
    struct run r = { .next = 701 };
    follow(f, &r, 0, -1);
    tap_ok(r.rc == 0 && r.seen == 50 && r.bad == 0,
           "--from-end: only the 50 events flushed after the open (%u, rc %d)",
           r.seen, r.rc);
    (void)ev;
    rec_follow_close(f);
}

int main(void)
{
    snprintf(path, sizeof path, "test-follow.%d.rec", (int)getpid());
    test_rotation_and_append();
    test_writer_dies();
    test_truncate_replace(TRUNCATE);
    test_truncate_replace(REPLACE);
    test_truncate_replace(REMOVE);
    test_gone_before_chunk(false);
    test_gone_before_chunk(true);
    test_created_and_removed();
    test_complete_then_removed();
    test_resume();
    test_bad_position();
    test_from_end();
    unlink(path);
    return tap_done();
}
