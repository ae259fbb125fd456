/*
 * tests/test-reader-stream.c - rec_reader_open_fd(): a recording read
 * through a pipe (one chunk at a time) gives the same events as the file;
 * a stream torn inside a chunk gives every event before the damage, then
 * an error naming the chunk and offset; a regular file is read from the
 * descriptor's offset; rec_reader_buffered() is true inside a chunk and
 * false at its end.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rec/record.h"
#include "tap.h"

#define NEVENTS 3000u
#define ROTATE_EVERY 700u       /* 5 chunks */

static char path[256];

/* A recording of NEVENTS samples over several chunks; its size. */
static off_t make_recording(void)
{
    rec_writer *w;
    rec_stream *s;
    rec_id name, thr;
    struct stat st;
    int rc = rec_writer_open(&w, path, &(rec_writer_options){
        .size = sizeof(rec_writer_options), .overwrite = true });
    if (rc < 0)
        TAP_BAIL("writer: %s", rec_strerror(rc));
    rc = rec_stream_open(w, &s);
    for (unsigned i = 1; i <= NEVENTS && rc == 0; i++) {
        rc |= rec_intern_cstr(w, "pipe", &name);
        rc |= rec_intern_Thread(w, &(struct rec_Thread){ 9, name, 1 }, &thr);
        rc |= rec_emit_CPUTimeSample(s, &(struct rec_CPUTimeSample){
                                         thr, i, false, false, 0, 0 });
        if (i % ROTATE_EVERY == 0) {
            rc |= rec_stream_close(s);
            rc |= rec_writer_rotate(w);
            rc |= rec_stream_open(w, &s);
        }
    }
    rc |= rec_stream_close(s);
    rc |= rec_writer_close(w);
    if (rc || stat(path, &st) < 0)
        TAP_BAIL("writing the recording failed");
    return st.st_size;
}

struct feed {
    int fd;
    off_t len;          /* bytes of the file to send */
};

static void *feeder(void *arg)
{
    struct feed *f = arg;
    char buf[1000];     /* small writes: chunks arrive in pieces */
    int in = open(path, O_RDONLY);
    off_t left = f->len;
    while (in >= 0 && left > 0) {
        ssize_t n = read(in, buf, left < (off_t)sizeof buf ? (size_t)left
                                                            : sizeof buf);
        if (n <= 0 || write(f->fd, buf, (size_t)n) != n)
            break;
        left -= n;
    }
    if (in >= 0)
        close(in);
    close(f->fd);
    return NULL;
}

/* Read len bytes of the recording through a pipe: events, the result of
 * the last rec_reader_next(), its message; sum of the periods (the
 * samples' order and content). */
static unsigned through_pipe(off_t len, int *last, char *msg, size_t msize,
                             unsigned long long *sum, unsigned *unbuffered)
{
    int p[2];
    pthread_t t;
    rec_reader *r;
    const rec_event *ev;
    unsigned n = 0;

    if (pipe(p) < 0)
        TAP_BAIL("pipe: %s", strerror(errno));
    struct feed f = { p[1], len };
    pthread_create(&t, NULL, feeder, &f);
    *last = rec_reader_open_fd(&r, p[0], "-", 0);
    *sum = 0;
    *unbuffered = 0;
    msg[0] = '\0';
    if (*last == 0) {
        while ((*last = rec_reader_next(r, &ev)) > 0) {
            rec_value v;
            n++;
            if (rec_event_get(ev, 1, &v) == 0 && v.kind == REC_UINT)
                *sum += v.v.u;
            if (!rec_reader_buffered(r))
                (*unbuffered)++;
        }
        if (rec_reader_message(r))
            snprintf(msg, msize, "%s", rec_reader_message(r));
        rec_reader_close(r);
    }
    pthread_join(t, NULL);
    return n;
}

int main(void)
{
    char msg[512];
    int last;
    unsigned long long sum;
    unsigned unbuffered;

    signal(SIGPIPE, SIG_IGN);
    snprintf(path, sizeof path, "%s/test-reader-stream-%d.rec",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    off_t size = make_recording();
    /* The file as rec_reader_open() reads it: chunks with events, events
     * before the second chunk and that chunk's offset. */
    unsigned chunks = 0, before_second = 0;
    uint64_t second = 0;
    {
        rec_reader *r;
        const rec_event *ev;
        rec_chunk_info ci;
        uint32_t prev = UINT32_MAX;
        int rc = rec_reader_open(&r, path, 0);
        while (rc == 0 && rec_reader_next(r, &ev) > 0) {
            if (rec_reader_chunk(r, &ci) < 0)
                break;
            if (ci.index != prev)
                chunks++;
            prev = ci.index;
            if (ci.index == 0)
                before_second++;
            else if (!second)
                second = ci.offset;
        }
        rec_reader_close(r);
    }

    unsigned n = through_pipe(size, &last, msg, sizeof msg, &sum, &unbuffered);
    tap_ok(n == NEVENTS && last == 0, "a pipe gives every event (%u of %u, "
           "end %d %s)", n, NEVENTS, last, msg);
    tap_ok(sum == (unsigned long long)NEVENTS * (NEVENTS + 1) / 2,
           "in order, with their values");
    tap_ok(chunks > 2 && unbuffered == chunks,
           "rec_reader_buffered() turns false once per chunk (%u of %u)",
           unbuffered, chunks);

    /* Torn in the middle of the recording. */
    n = through_pipe(size / 2, &last, msg, sizeof msg, &sum, &unbuffered);
    tap_ok(n > 0 && n < NEVENTS && last == REC_ETRUNCATED,
           "a torn stream: %u events, then %s", n, rec_strerror(last));
    tap_ok(strncmp(msg, "-: chunk ", 9) == 0 && strstr(msg, "offset"),
           "the message names the chunk and offset (%s)", msg);

    /* Torn inside the first chunk header. */
    n = through_pipe(40, &last, msg, sizeof msg, &sum, &unbuffered);
    tap_ok(n == 0 && last == REC_ETRUNCATED, "a stream that ends inside "
           "the first header: %s (%s)", rec_strerror(last), msg);

    /* A regular file, from the descriptor's offset: the second chunk on. */
    {
        rec_reader *r;
        const rec_event *ev;
        unsigned k = 0;
        int fd = open(path, O_RDONLY), rc;
        if (fd < 0 || lseek(fd, (off_t)second, SEEK_SET) < 0)
            TAP_BAIL("open: %s", strerror(errno));
        rc = rec_reader_open_fd(&r, fd, "at-offset", 0);
        if (rc == 0)
            while ((rc = rec_reader_next(r, &ev)) > 0)
                k++;
        tap_ok(second > 0 && rc == 0 && k == NEVENTS - before_second,
               "a file from its offset: the chunks from there (%u events, "
               "%s)", k, rec_reader_message(r) ? rec_reader_message(r) : "");
        rec_reader_close(r);
    }
    tap_ok(rec_reader_open_fd(&(rec_reader *){ NULL }, -1, "x", 0) == REC_EINVAL,
           "a bad descriptor is REC_EINVAL");
    unlink(path);
    return tap_done();
}
