/*
 * tests/test-reader-streamed.c - STREAMED chunks (rec-format(5), 1.3): a
 * recording sent as rec-start -o - sends it (each chunk's header once,
 * its blocks as they come, an END block with the final header) reads
 * through a pipe and from a saved file as the file it came from; events
 * of a chunk come before its END block arrives; a streamed chunk cut
 * inside a block is read up to its last whole block; an END block that
 * does not finish its chunk, or an END block in a chunk that is not
 * streamed, is an error after every valid event; a growing file of
 * streamed chunks is followed block by block (rec_reader_poll).
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
#include <time.h>
#include <unistd.h>

#include "rec/record.h"
#include "crc32c.h"
#include "format.h"
#include "tap.h"

#define NEVENTS 3000u
#define ROTATE_EVERY 700u       /* 5 chunks */
#define FLUSH_EVERY 100u        /* an EVENTS block each */

static char path[256], spath[256];

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void make_recording(void)
{
    rec_writer *w;
    rec_stream *s;
    rec_id name, thr;
    int rc = rec_writer_open(&w, path, &(rec_writer_options){
        .size = sizeof(rec_writer_options), .overwrite = true });
    if (rc < 0)
        TAP_BAIL("writer: %s", rec_strerror(rc));
    rc = rec_stream_open(w, &s);
    for (unsigned i = 1; i <= NEVENTS && rc == 0; i++) {
        rc |= rec_intern_cstr(w, "streamed", &name);
        rc |= rec_intern_Thread(w, &(struct rec_Thread){ 9, name, 1 }, &thr);
        rc |= rec_emit_CPUTimeSample(s, &(struct rec_CPUTimeSample){
                                         thr, i, false, false, 0, 0 });
        if (i % FLUSH_EVERY == 0)
            rc |= rec_writer_flush(w);
        if (i % ROTATE_EVERY == 0) {
            rc |= rec_stream_close(s);
            rc |= rec_writer_rotate(w);
            rc |= rec_stream_open(w, &s);
        }
    }
    rc |= rec_stream_close(s);
    rc |= rec_writer_close(w);
    if (rc)
        TAP_BAIL("writing the recording failed");
}

/* The file's chunks as a sender streams them, into buf; the offset of
 * each block (blocks[]) and of each END block (ends[]). */
static uint8_t *stream_of(size_t *len, size_t *blocks, size_t *nblocks,
                          size_t *ends, size_t *nends)
{
    struct stat st;
    int fd = open(path, O_RDONLY);
    if (fd < 0 || fstat(fd, &st) < 0)
        TAP_BAIL("open: %s", strerror(errno));
    uint8_t *f = malloc((size_t)st.st_size), *o = malloc((size_t)st.st_size * 2);
    if (!f || !o || read(fd, f, (size_t)st.st_size) != st.st_size)
        TAP_BAIL("read");
    close(fd);
    size_t off = 0, n = 0;
    *nblocks = *nends = 0;
    while (off + REC_CHUNK_HEADER_SIZE <= (size_t)st.st_size) {
        const uint8_t *h = f + off;
        size_t size = (size_t)le64(h + REC_CH_SIZE);
        uint8_t *m = o + n;
        memcpy(m, h, REC_CHUNK_HEADER_SIZE);
        put32(m + REC_CH_GENERATION, 0);
        m[REC_CH_STATE] = REC_STATE_OPEN;
        m[REC_CH_FLAGS] |= REC_CHUNK_STREAMED;
        memset(m + REC_CH_SIZE, 0, 8);
        m[REC_CH_SIZE] = REC_CHUNK_HEADER_SIZE;
        put32(m + REC_CH_CRC, rec__crc32c(0, m, REC_CH_CRC));
        n += REC_CHUNK_HEADER_SIZE;
        for (size_t b = REC_CHUNK_HEADER_SIZE; b < size;) {
            size_t bl = REC_BLOCK_HEADER_SIZE + le32(h + b + REC_BH_STORED);
            blocks[(*nblocks)++] = n;
            memcpy(o + n, h + b, bl);
            n += bl;
            b += bl;
        }
        uint8_t *e = o + n;
        ends[(*nends)++] = n;
        memset(e, 0, REC_BLOCK_HEADER_SIZE);
        e[REC_BH_KIND] = REC_BLOCK_END;
        put32(e + REC_BH_STORED, REC_CHUNK_HEADER_SIZE);
        put32(e + REC_BH_RAW, REC_CHUNK_HEADER_SIZE);
        memcpy(e + REC_BLOCK_HEADER_SIZE, h, REC_CHUNK_HEADER_SIZE);
        put32(e + REC_BH_CRC, rec__crc32c(rec__crc32c(0, e, REC_BH_CRC),
                                          h, REC_CHUNK_HEADER_SIZE));
        n += REC_BLOCK_HEADER_SIZE + REC_CHUNK_HEADER_SIZE;
        off += size;
    }
    free(f);
    *len = n;
    return o;
}

static void save(const uint8_t *b, size_t n)
{
    int fd = open(spath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, b, n) != (ssize_t)n)
        TAP_BAIL("write %s", spath);
    close(fd);
}

/* Events of fd (pipe or file) read to the end: count, sum of periods,
 * last result, message or warning. */
static unsigned read_all(int fd, int *last, unsigned long long *sum,
                         char *msg, size_t msize)
{
    rec_reader *r;
    const rec_event *ev;
    unsigned n = 0;
    *sum = 0;
    msg[0] = '\0';
    if ((*last = rec_reader_open_fd(&r, fd, "s", 0)) < 0)
        return 0;
    while ((*last = rec_reader_next(r, &ev)) > 0) {
        rec_value v;
        n++;
        if (rec_event_get(ev, 1, &v) == 0 && v.kind == REC_UINT)
            *sum += v.v.u;
    }
    const char *m = rec_reader_message(r) ? rec_reader_message(r)
                                          : rec_reader_warning(r);
    snprintf(msg, msize, "%s", m ? m : "");
    rec_reader_close(r);
    return n;
}

/* A sender that stops after `pause` bytes until told (or 10 s), then
 * sends the rest. */
struct feed {
    int fd;
    const uint8_t *buf;
    size_t len, pause;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool go, resumed_alone;
};

static void *feeder(void *arg)
{
    struct feed *f = arg;
    size_t at = 0;
    while (at < f->len) {
        if (at == f->pause) {
            struct timespec dl;
            clock_gettime(CLOCK_REALTIME, &dl);
            dl.tv_sec += 10;
            pthread_mutex_lock(&f->mu);
            while (!f->go)
                if (pthread_cond_timedwait(&f->cv, &f->mu, &dl) != 0) {
                    f->resumed_alone = true;
                    break;
                }
            pthread_mutex_unlock(&f->mu);
        }
        size_t n = f->len - at < 777 ? f->len - at : 777;  /* in pieces */
        if (at < f->pause && at + n > f->pause)
            n = f->pause - at;
        if (write(f->fd, f->buf + at, n) != (ssize_t)n)
            break;
        at += n;
    }
    close(f->fd);
    return NULL;
}

int main(void)
{
    static size_t blocks[4096], ends[64];
    size_t len, nblocks, nends;
    char msg[512];
    int last, p[2];
    unsigned long long sum, want_sum = (unsigned long long)NEVENTS * (NEVENTS + 1) / 2;
    unsigned n;

    signal(SIGPIPE, SIG_IGN);
    const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, sizeof path, "%s/test-reader-streamed-%d.rec", tmp, (int)getpid());
    snprintf(spath, sizeof spath, "%s/test-reader-streamed-%d.s.rec", tmp, (int)getpid());
    make_recording();
    uint8_t *s = stream_of(&len, blocks, &nblocks, ends, &nends);

    /* Through a pipe, with a pause after the second events block of the
     * first chunk: its events come before the chunk's END block. */
    {
        struct feed f = { .buf = s, .len = len, .mu = PTHREAD_MUTEX_INITIALIZER,
                          .cv = PTHREAD_COND_INITIALIZER };
        /* blocks: metadata, pool, events, pool?, events...: pause after
         * the block that holds event 200. */
        f.pause = blocks[4];
        pthread_t t;
        rec_reader *r;
        const rec_event *ev;
        unsigned early = 0;
        if (pipe(p) < 0)
            TAP_BAIL("pipe");
        f.fd = p[1];
        pthread_create(&t, NULL, feeder, &f);
        last = rec_reader_open_fd(&r, p[0], "-", 0);
        n = 0;
        sum = 0;
        while (last == 0 || last == 1) {
            if ((last = rec_reader_next(r, &ev)) <= 0)
                break;
            rec_value v;
            n++;
            if (rec_event_get(ev, 1, &v) == 0 && v.kind == REC_UINT)
                sum += v.v.u;
            pthread_mutex_lock(&f.mu);
            if (!f.go && n == FLUSH_EVERY) {
                early = n;
                f.go = true;
                pthread_cond_signal(&f.cv);
            }
            pthread_mutex_unlock(&f.mu);
        }
        const char *m = last < 0 ? rec_reader_message(r) : rec_reader_warning(r);
        snprintf(msg, sizeof msg, "%s", m ? m : "");
        rec_reader_close(r);
        pthread_join(t, NULL);
        tap_ok(n == NEVENTS && last == 0 && sum == want_sum && !msg[0],
               "a pipe of streamed chunks gives every event in order "
               "(%u of %u, end %d %s)", n, NEVENTS, last, msg);
        tap_ok(early == FLUSH_EVERY && !f.resumed_alone,
               "a chunk's events come as its blocks do, before its END");
    }

    /* Saved to a file: the same. */
    save(s, len);
    n = read_all(open(spath, O_RDONLY), &last, &sum, msg, sizeof msg);
    tap_ok(n == NEVENTS && last == 0 && sum == want_sum && !msg[0],
           "a saved stream reads as the file (%u events, %s)", n, msg);

    /* Cut inside a block of the third chunk: every whole block before it,
     * then the chunk is unfinished (a warning, not an error). */
    {
        size_t cut = 0, whole = 0, j = 0;
        while (j < nblocks && blocks[j] < ends[1])
            j++;
        /* j: the third chunk's metadata; j + 3, an events block */
        if (j + 4 < nblocks) {
            cut = blocks[j + 4] - 20;
            whole = blocks[j + 3];
        }
        save(s, cut);
        n = read_all(open(spath, O_RDONLY), &last, &sum, msg, sizeof msg);
        tap_ok(cut && n > 2 * ROTATE_EVERY && n < NEVENTS && last == 0 &&
               strstr(msg, "unfinished"), "a streamed chunk cut inside a "
               "block: the events of its whole blocks (%u), then '%s'", n, msg);
        save(s, whole);
        unsigned k = read_all(open(spath, O_RDONLY), &last, &sum, msg, sizeof msg);
        tap_ok(k == n, "the same as cut at the end of the last whole block "
               "(%u)", k);
    }

    /* An END block whose header does not finish the chunk. */
    {
        uint8_t *d = malloc(len);
        memcpy(d, s, len);
        uint8_t *e = d + ends[1], *h = e + REC_BLOCK_HEADER_SIZE;
        h[REC_CH_SIZE] ^= 0x10;
        put32(h + REC_CH_CRC, rec__crc32c(0, h, REC_CH_CRC));
        put32(e + REC_BH_CRC, rec__crc32c(rec__crc32c(0, e, REC_BH_CRC), h,
                                          REC_CHUNK_HEADER_SIZE));
        save(d, len);
        n = read_all(open(spath, O_RDONLY), &last, &sum, msg, sizeof msg);
        tap_ok(n == 2 * ROTATE_EVERY && last == REC_ECORRUPT &&
               strstr(msg, "END block does not finish"),
               "an END block for another size: every event before, then an "
               "error (%u, %s)", n, msg);
        free(d);
    }

    /* An END block in a chunk that is not streamed: the first chunk as the
     * file holds it, with an END block in place of its last block. */
    {
        int fd = open(path, O_RDONLY);
        uint8_t *f = malloc(len);
        ssize_t fl = read(fd, f, len);
        close(fd);
        size_t size = (size_t)le64(f + REC_CH_SIZE), last_block = 0;
        for (size_t b = REC_CHUNK_HEADER_SIZE; b < size;
             b += REC_BLOCK_HEADER_SIZE + le32(f + b + REC_BH_STORED))
            last_block = b;
        f[last_block + REC_BH_KIND] = REC_BLOCK_END;
        uint32_t st = le32(f + last_block + REC_BH_STORED);
        put32(f + last_block + REC_BH_CRC,
              rec__crc32c(rec__crc32c(0, f + last_block, REC_BH_CRC),
                          f + last_block + REC_BLOCK_HEADER_SIZE, st));
        save(f, fl > 0 ? (size_t)fl : 0);
        n = read_all(open(spath, O_RDONLY), &last, &sum, msg, sizeof msg);
        tap_ok(last == REC_ECORRUPT && strstr(msg, "unknown block kind 4"),
               "an END block outside a streamed chunk is an error (%s)", msg);
        free(f);
    }

    /* A growing file: the first chunk's blocks one at a time. */
    {
        rec_reader *r;
        const rec_event *ev;
        unsigned got = 0, polls = 0;
        save(s, blocks[1]);         /* header and metadata */
        int rc = rec_reader_open(&r, spath, 0);
        int fd = open(spath, O_WRONLY | O_APPEND);
        size_t at = blocks[1];
        while (rc == 0 && at < ends[1]) {
            while ((rc = rec_reader_next(r, &ev)) > 0)
                got++;
            if (rc < 0)
                break;
            size_t next = at;
            for (size_t i = 0; i < nblocks; i++)
                if (blocks[i] > at) {
                    next = blocks[i];
                    break;
                }
            if (next == at)
                next = ends[1];
            if (write(fd, s + at, next - at) != (ssize_t)(next - at))
                break;
            at = next;
            rc = rec_reader_poll(r);
            polls += rc > 0;
            rc = rc < 0 ? rc : 0;
        }
        while (rc == 0 && (rc = rec_reader_next(r, &ev)) > 0) {
            got++;
            rc = 0;
        }
        tap_ok(rc == 0 && got == 2 * ROTATE_EVERY && polls > 2,
               "a growing file of streamed chunks is read as blocks come "
               "(%u events, %u polls found more, %d)", got, polls, rc);
        close(fd);
        rec_reader_close(r);
    }

    free(s);
    unlink(path);
    unlink(spath);
    return tap_done();
}
