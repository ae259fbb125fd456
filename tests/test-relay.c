/*
 * tests/test-relay.c - rec_relay (librecord/relay.c): a recording relayed
 * while the writer writes it, flush by flush, as files (byte for byte what
 * the writer wrote, readable up to the last flush at every step) and as a
 * stream of STREAMED chunks (read back as the recording); a header caught
 * in an update waits until the writer is gone; a damaged or rewritten
 * source stops the relay with a code and a message, never a crash; and
 * rec_relay_place() puts a chunk of another writer in a chunk's place.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rec/record.h"
#include "format.h"
#include "recbuild.h"
#include "tap.h"

#define NEVENTS 2000u
#define FLUSH_EVERY 100u
#define ROTATE_EVERY 700u

static int memfd(const char *name)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    if (fd < 0)
        TAP_BAIL("memfd_create: %s", strerror(errno));
    return fd;
}

static int memfd_of(const void *p, size_t n)
{
    int fd = memfd("test-relay-copy");
    if (n && pwrite(fd, p, n, 0) != (ssize_t)n)
        TAP_BAIL("pwrite: %s", strerror(errno));
    return fd;
}

static uint8_t *contents(int fd, size_t *n)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        TAP_BAIL("fstat");
    uint8_t *p = malloc((size_t)st.st_size + 1);
    if (!p || pread(fd, p, (size_t)st.st_size, 0) != st.st_size)
        TAP_BAIL("pread");
    *n = (size_t)st.st_size;
    return p;
}

/* Where a relay's pieces go, and what was seen of them. */
typedef struct sink {
    rec_relay *rl;
    int src;
    unsigned mode;
    rb_buf out;
    uint64_t base;              /* FILE: the current chunk in out */
    uint64_t at;                /* STREAMED: its bytes so far */
    uint32_t next_index;
    unsigned chunks;            /* complete ones */
    unsigned block_pieces;      /* of the current chunk */
    unsigned most_block_pieces; /* of one chunk */
    bool order_ok;
    bool last_seen;             /* a complete chunk said LAST */
    rec_relay_piece lastp;
} sink;

static void put_at(rb_buf *b, uint64_t at, const void *p, size_t n)
{
    if (at + n > b->n) {
        size_t grow = (size_t)(at + n - b->n);
        uint8_t *z = calloc(1, grow);
        rb_put(b, z, grow);
        free(z);
    }
    memcpy(b->p + at, p, n);
}

static void sink_open(sink *s, int src, unsigned mode)
{
    rec_relay_options o;
    memset(s, 0, sizeof *s);
    s->src = src;
    s->mode = mode;
    s->order_ok = true;
    rec_relay_options_init(&o);
    o.mode = mode;
    if (rec_relay_open(&s->rl, src, &o) < 0)
        TAP_BAIL("rec_relay_open");
}

static void apply(sink *s, const rec_relay_piece *p)
{
    uint8_t *buf = malloc(p->len ? (size_t)p->len : 1);
    if (!buf)
        TAP_BAIL("malloc");
    if (p->data) {
        memcpy(buf, p->data, (size_t)p->len);
        if (p->len > REC_RELAY_DATA_MAX || p->kind == REC_RELAY_BLOCKS)
            s->order_ok = false;
    } else if (p->kind != REC_RELAY_BLOCKS ||
               p->source != p->chunk.offset + p->pos ||
               pread(s->src, buf, (size_t)p->len, (off_t)p->source) != (ssize_t)p->len) {
        s->order_ok = false;
        free(buf);
        return;
    }
    if (p->kind == REC_RELAY_BEGIN) {
        if (p->pos != 0 || p->chunk.index != s->next_index)
            s->order_ok = false;
        s->base = s->mode == REC_RELAY_FILE ? s->out.n : 0;
        s->at = 0;
        s->block_pieces = 0;
    }
    if (p->kind == REC_RELAY_BLOCKS)
        s->block_pieces++;
    if (s->mode == REC_RELAY_FILE) {
        put_at(&s->out, s->base + p->pos, buf, (size_t)p->len);
    } else {
        if (p->pos != s->at)
            s->order_ok = false;
        rb_put(&s->out, buf, (size_t)p->len);
        s->at += p->len;
    }
    if (p->complete) {
        s->chunks++;
        s->next_index++;
        s->last_seen = p->chunk.last;
        if (s->block_pieces > s->most_block_pieces)
            s->most_block_pieces = s->block_pieces;
    }
    s->lastp = *p;
    free(buf);
}

/* Everything committed so far: the last rec_relay_next() result. */
static int drain(sink *s)
{
    rec_relay_piece p;
    int rc, n = 0;
    while ((rc = rec_relay_next(s->rl, &p)) > 0 && n++ < 100000)
        apply(s, &p);
    return rc;
}

/* Events a reader gets from buf, and whether it ends without error. */
static unsigned events_in(const uint8_t *p, size_t n, int *rc, bool *warned)
{
    rec_reader *r;
    const rec_event *ev;
    unsigned k = 0;
    if (rec_reader_open_fd(&r, memfd_of(p, n), "copy", 0) < 0)
        TAP_BAIL("rec_reader_open_fd");
    while ((*rc = rec_reader_next(r, &ev)) > 0)
        k++;
    *warned = rec_reader_warning(r) != NULL;
    rec_reader_close(r);
    return k;
}

/* The same through a pipe, as a consumer of rec-start -o - reads it. */
static unsigned events_piped(const uint8_t *p, size_t n, int *rc)
{
    int fds[2];
    rec_reader *r;
    const rec_event *ev;
    unsigned k = 0;
    FILE *tmp = tmpfile();
    if (!tmp || fwrite(p, 1, n, tmp) != n || fflush(tmp) || pipe(fds) < 0)
        TAP_BAIL("pipe");
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        rewind(tmp);
        uint8_t b[4096];
        size_t got;
        while ((got = fread(b, 1, sizeof b, tmp)) > 0)
            if (write(fds[1], b, got) != (ssize_t)got)
                _exit(1);
        _exit(0);
    }
    close(fds[1]);
    fclose(tmp);
    if (rec_reader_open_fd(&r, fds[0], "pipe", 0) < 0)
        TAP_BAIL("rec_reader_open_fd");
    while ((*rc = rec_reader_next(r, &ev)) > 0)
        k++;
    rec_reader_close(r);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    return k;
}

static int src;                 /* the writer's file */
static uint8_t *snapshot;       /* of it with the last chunk OPEN */
static size_t snapshot_len;

/* A recording written flush by flush and relayed as it grows. */
static void growing(void)
{
    rec_writer *w;
    rec_stream *s;
    rec_id name, thr;
    sink f, st;
    bool same = true, readable = true;
    int rc;

    src = memfd("test-relay-src");
    if (rec_writer_open_fd(&w, dup(src), NULL) < 0)
        TAP_BAIL("writer");
    sink_open(&f, src, REC_RELAY_FILE);
    sink_open(&st, src, REC_RELAY_STREAMED);
    rc = rec_stream_open(w, &s);
    for (unsigned i = 1; i <= NEVENTS && rc == 0; i++) {
        rc |= rec_intern_cstr(w, "relayed", &name);
        rc |= rec_intern_Thread(w, &(struct rec_Thread){ 9, name, 1 }, &thr);
        rc |= rec_emit_CPUTimeSample(s, &(struct rec_CPUTimeSample){
                                         thr, i, false, false, 0, 0 });
        if (i % ROTATE_EVERY == 0) {
            rc |= rec_stream_close(s);
            rc |= rec_writer_rotate(w);
            rc |= rec_stream_open(w, &s);
        }
        if (i % FLUSH_EVERY)
            continue;
        rc |= rec_writer_flush(w);
        if (drain(&f) != 0 || drain(&st) != 0)
            same = false;
        /* The copy is the source, byte for byte, up to what the writer
         * committed: its blocks, then its header. */
        size_t n;
        uint8_t *cur = contents(src, &n);
        uint64_t committed = f.lastp.chunk.offset + f.lastp.chunk.size;
        if (f.out.n != committed || memcmp(f.out.p, cur, f.out.n) != 0)
            same = false;
        free(cur);
        int rrc;
        bool warned;
        if (events_in(f.out.p, f.out.n, &rrc, &warned) != i || rrc != 0)
            readable = false;
        if (i == NEVENTS - FLUSH_EVERY) {
            snapshot = contents(src, &snapshot_len);
        }
    }
    rc |= rec_stream_close(s);
    if (rc)
        TAP_BAIL("writing failed");
    tap_ok(same, "FILE: after each flush the copy is the writer's file, byte "
           "for byte (%zu bytes)", f.out.n);
    tap_ok(readable, "FILE: at each flush a reader of the copy gets every "
           "event flushed");
    tap_ok(f.chunks == 2 && st.chunks == 2 && f.order_ok && st.order_ok,
           "the rotated chunks are complete, pieces in order (%u, %u)",
           f.chunks, st.chunks);
    tap_ok(f.most_block_pieces >= 5 && st.most_block_pieces >= 5,
           "a chunk's blocks come in several pieces, one a flush (%u)",
           f.most_block_pieces);
    tap_ok(!f.lastp.complete && !f.lastp.chunk.finished &&
           f.lastp.chunk.index == 2, "the chunk being written is open, no "
           "complete piece (index %u)", f.lastp.chunk.index);

    if (rec_writer_close(w) < 0)
        TAP_BAIL("close");
    int frc = drain(&f), src2 = drain(&st);
    size_t n;
    uint8_t *whole = contents(src, &n);
    tap_ok(frc == 0 && f.chunks == 3 && f.last_seen && f.out.n == n &&
           !memcmp(f.out.p, whole, n), "closed: the copy is the recording, "
           "its last chunk LAST (%zu of %zu bytes)", f.out.n, n);
    tap_ok(rec_relay_next(f.rl, &f.lastp) == 0, "then nothing more");
    int rrc;
    bool warned;
    unsigned k = events_in(st.out.p, st.out.n, &rrc, &warned);
    tap_ok(src2 == 0 && st.chunks == 3 && st.last_seen && k == NEVENTS &&
           rrc == 0 && !warned, "STREAMED: a saved stream reads as the "
           "recording, closed (%u events, %d)", k, rrc);
    k = events_piped(st.out.p, st.out.n, &rrc);
    tap_ok(k == NEVENTS && rrc == 0, "STREAMED: so does the stream through "
           "a pipe (%u events, %d)", k, rrc);
    tap_ok(st.out.n == n + 3 * (REC_BLOCK_HEADER_SIZE + REC_CHUNK_HEADER_SIZE),
           "STREAMED: the file's bytes and an END block a chunk (%zu)",
           st.out.n);
    free(whole);
    rec_relay_close(f.rl);
    rec_relay_close(st.rl);
    rb_free(&f.out);
    rb_free(&st.out);
}

/* The chunk header at off of the snapshot; chunk offsets in offs. */
static size_t chunk_offsets(const uint8_t *p, size_t n, uint64_t *offs)
{
    size_t k = 0;
    for (uint64_t off = 0; off + REC_CHUNK_HEADER_SIZE <= n && k < 16;) {
        offs[k++] = off;
        off += rb_rdle(p + off + REC_CH_SIZE, 8);
    }
    return k;
}

/* A writer caught inside a header update, then gone. */
static void seqlock(void)
{
    uint64_t offs[16];
    size_t k = chunk_offsets(snapshot, snapshot_len, offs);
    uint8_t *p = malloc(snapshot_len);
    memcpy(p, snapshot, snapshot_len);
    uint8_t *h = p + offs[k - 1];
    uint32_t gen = (uint32_t)rb_rdle(h + REC_CH_GENERATION, 4);
    rb_le32(h + REC_CH_GENERATION, gen + 1);     /* odd: step 2 of 4 */
    int fd = memfd_of(p, snapshot_len);
    sink s;
    sink_open(&s, fd, REC_RELAY_FILE);
    int rc = drain(&s), rc2 = drain(&s);
    tap_ok(rc == 0 && rc2 == 0 && s.chunks == k - 1 && s.next_index == k - 1 &&
           s.out.n == offs[k - 1], "an update in progress: the chunks before "
           "it, then nothing while the writer may finish it (%u chunks)",
           s.chunks);
    rec_relay_writer_gone(s.rl);
    rc = drain(&s);
    const uint8_t *c = s.out.p + offs[k - 1];
    tap_ok(rc == 0 && s.out.n == snapshot_len &&
           rb_rdle(c + REC_CH_GENERATION, 4) == gen &&
           rb_crc32c(0, c, REC_CH_CRC) == rb_rdle(c + REC_CH_CRC, 4) &&
           !memcmp(s.out.p, snapshot, snapshot_len),
           "the writer gone: its chunk up to the last flush, the header as "
           "it was before the update");
    tap_ok(!s.lastp.complete && !s.lastp.chunk.finished,
           "an unfinished chunk: no complete piece");
    rec_relay_close(s.rl);
    rb_free(&s.out);
    close(fd);
    free(p);
}

/* Relay p[0..n) (the writer gone) in a mode: the code it ends with, the
 * complete chunks, and whether the pieces stayed inside the source. */
static int relay_all(const uint8_t *p, size_t n, unsigned mode, unsigned *chunks,
                     bool *inside, char *msg, size_t msize)
{
    int fd = memfd_of(p, n);
    sink s;
    sink_open(&s, fd, mode);
    rec_relay_writer_gone(s.rl);
    rec_relay_piece pc;
    int rc, guard = 0;
    *inside = true;
    while ((rc = rec_relay_next(s.rl, &pc)) > 0 && guard++ < 10000) {
        if (!pc.data && pc.source + pc.len > n)
            *inside = false;
        if (pc.complete)
            s.chunks++;
    }
    if (guard >= 10000)
        *inside = false;
    *chunks = s.chunks;
    if (msg)
        snprintf(msg, msize, "%s", rec_relay_message(s.rl));
    if (rc < 0 && rec_relay_next(s.rl, &pc) != rc)
        *inside = false;        /* stopped means stopped */
    rec_relay_close(s.rl);
    close(fd);
    rb_free(&s.out);
    return rc;
}

static void damaged(void)
{
    size_t n;
    uint8_t *p = contents(src, &n);
    uint64_t offs[16];
    size_t k = chunk_offsets(p, n, offs);
    char msg[300];
    unsigned chunks;
    bool inside;
    int rc;

    uint8_t junk[200];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)(i * 7 + 3);
    rc = relay_all(junk, sizeof junk, REC_RELAY_FILE, &chunks, &inside,
                   msg, sizeof msg);
    tap_ok(rc == REC_EMAGIC && chunks == 0 && inside && strstr(msg, "magic"),
           "not a recording: REC_EMAGIC, said (%s), and it stays stopped", msg);

    rb_buf b = { 0 };
    rb_put(&b, p, n);
    rb_put(&b, "this is no chunk header, nor the start of one, at all....."
           "...................", 78);
    rc = relay_all(b.p, b.n, REC_RELAY_STREAMED, &chunks, &inside, msg, sizeof msg);
    tap_ok(rc == REC_EMAGIC && chunks == k && inside,
           "garbage after the chunks: every chunk, then REC_EMAGIC (%s)", msg);
    rb_free(&b);

    uint8_t *d = malloc(n);
    memcpy(d, p, n);
    d[offs[1] + REC_CH_DURATION] ^= 0x40;
    int fd = memfd_of(d, n);
    sink s;
    sink_open(&s, fd, REC_RELAY_STREAMED);
    int rc1 = drain(&s);
    rec_relay_writer_gone(s.rl);
    rc = drain(&s);
    tap_ok(rc1 == 0 && s.chunks == 1 && rc == REC_ECORRUPT &&
           strstr(rec_relay_message(s.rl), "checksum"),
           "a damaged header is waited for while the writer may be at work, "
           "then REC_ECORRUPT (%s)", rec_relay_message(s.rl));
    rec_relay_close(s.rl);
    rb_free(&s.out);
    close(fd);

    rc = relay_all(p, (size_t)offs[2] - 100, REC_RELAY_FILE, &chunks, &inside,
                   msg, sizeof msg);
    tap_ok(rc == REC_ETRUNCATED && chunks == 1 && inside,
           "a source shorter than a header says: REC_ETRUNCATED (%s)", msg);

    /* Another chunk's header where the one being relayed was: another
     * start, the same size. */
    fd = memfd_of(snapshot, snapshot_len);
    uint64_t so[16];
    size_t sk = chunk_offsets(snapshot, snapshot_len, so);
    sink_open(&s, fd, REC_RELAY_FILE);
    rc1 = drain(&s);
    uint8_t other[REC_CHUNK_HEADER_SIZE];
    memcpy(other, snapshot + so[sk - 1], sizeof other);
    other[REC_CH_START_WALL] ^= 1;
    rb_le32(other + REC_CH_CRC, rb_crc32c(0, other, REC_CH_CRC));
    if (pwrite(fd, other, sizeof other, (off_t)so[sk - 1]) < 0)
        TAP_BAIL("pwrite");
    rc = drain(&s);
    tap_ok(rc1 == 0 && rc == REC_ECORRUPT && strstr(rec_relay_message(s.rl),
           "another chunk"), "a source rewritten under the relay: "
           "REC_ECORRUPT (%s)", rec_relay_message(s.rl));
    rec_relay_close(s.rl);
    rb_free(&s.out);
    close(fd);

    /* Each byte of the first two headers, and bytes of blocks, damaged:
     * the relay ends (a code or the end), inside the source. */
    bool ok = true;
    unsigned tried = 0;
    for (uint64_t at = 0; at < n; at++) {
        bool hdr = at < offs[1] + REC_CHUNK_HEADER_SIZE &&
                   (at < REC_CHUNK_HEADER_SIZE || at >= offs[1]);
        if (!hdr && at % 97)
            continue;
        for (unsigned mode = REC_RELAY_FILE; mode <= REC_RELAY_STREAMED; mode++) {
            memcpy(d, p, n);
            d[at] ^= (uint8_t)(1u << (at % 8));
            rc = relay_all(d, n, mode, &chunks, &inside, NULL, 0);
            tried++;
            if (!inside || rc > 0 || (rc < 0 && rc < REC_EREPLACED) ||
                (rc == 0 && chunks > k))
                ok = false;
        }
    }
    tap_ok(ok, "%u damaged sources: each relay ends, with pieces inside "
           "the source", tried);
    free(d);
    free(p);
}

static void place(void)
{
    size_t n;
    uint8_t *p = contents(src, &n);
    uint64_t offs[16];
    chunk_offsets(p, n, offs);

    /* A chunk of another writer, with another tick. */
    int fd = memfd("test-relay-place");
    rec_writer *w;
    rec_stream *s;
    rec_writer_options wo;
    rec_id name, thr;
    rec_writer_options_init(&wo);
    wo.tick_ns = 1;
    if (rec_writer_open_fd(&w, fd, &wo) < 0 || rec_stream_open(w, &s) < 0 ||
        rec_intern_cstr(w, "placed", &name) < 0 ||
        rec_intern_Thread(w, &(struct rec_Thread){ 7, name, 1 }, &thr) < 0 ||
        rec_emit_CPUTimeSample(s, &(struct rec_CPUTimeSample){ thr, 5, false,
                               false, 0, 0 }) < 0 ||
        rec_stream_close(s) < 0 || rec_writer_flush(w) < 0)
        TAP_BAIL("writer");
    size_t cn;
    uint8_t *c = contents(rec_writer_fd(w), &cn);
    tap_ok(rec_relay_place(c, cn, src, offs[1]) == REC_EINVAL,
           "an OPEN chunk is not placed: REC_EINVAL");
    free(c);
    if (rec_writer_rotate(w) < 0)
        TAP_BAIL("rotate");
    c = contents(rec_writer_fd(w), &cn);
    size_t clen = (size_t)rb_rdle(c + REC_CH_SIZE, 8);
    tap_ok(rec_relay_place(c, clen + 1, src, offs[1]) == REC_EINVAL,
           "nor one of another length");
    tap_ok(rec_relay_place(c, clen, src, offs[1] + 8) == REC_EMAGIC &&
           rec_relay_place(c, clen, src, n + 100) == REC_ETRUNCATED,
           "no chunk at the offset: REC_EMAGIC, REC_ETRUNCATED");
    int rc = rec_relay_place(c, clen, src, offs[1]);
    const uint8_t *o = p + offs[1];
    uint64_t tps = rb_rdle(o + REC_CH_TICKS_PER_S, 8);
    bool fields = rb_rdle(c + REC_CH_INDEX, 4) == 1 &&
        !memcmp(c + REC_CH_START_WALL, o + REC_CH_START_WALL, 8) &&
        rb_rdle(c + REC_CH_START_TICKS, 8) ==
            rb_rdle(o + REC_CH_START_TICKS, 8) * (1000000000u / tps) &&
        !memcmp(c + REC_CH_WRITER_PID, o + REC_CH_WRITER_PID, 4) &&
        c[REC_CH_FLAGS] == o[REC_CH_FLAGS] &&
        rb_crc32c(0, c, REC_CH_CRC) == rb_rdle(c + REC_CH_CRC, 4);
    tap_ok(rc == 0 && fields, "placed: index, start (in its own ticks, %llu "
           "a second), writer and flags of the chunk it stands for",
           (unsigned long long)rb_rdle(c + REC_CH_TICKS_PER_S, 8));
    rb_buf b = { 0 };
    rb_put(&b, p, (size_t)offs[1]);
    rb_put(&b, c, clen);
    rb_put(&b, p + offs[2], n - (size_t)offs[2]);
    int rrc;
    bool warned;
    unsigned k = events_in(b.p, b.n, &rrc, &warned);
    tap_ok(rrc == 0 && !warned && k == NEVENTS - ROTATE_EVERY + 1,
           "the recording with it in the other's place reads cleanly (%u "
           "events)", k);
    rb_free(&b);
    free(c);
    rec_writer_close(w);
    free(p);
}

static void options(void)
{
    rec_relay *rl;
    rec_relay_options o;
    rec_relay_piece pc;
    size_t n;
    uint8_t *p = contents(src, &n);
    uint64_t offs[16];
    chunk_offsets(p, n, offs);

    memset(&o, 0, sizeof o);
    tap_ok(rec_relay_open(&rl, src, &o) == REC_EINVAL && !rl,
           "options not initialised (size 0): REC_EINVAL");
    rec_relay_options_init(&o);
    o.mode = 9;
    tap_ok(rec_relay_open(&rl, src, &o) == REC_EINVAL, "an unknown mode: "
           "REC_EINVAL");
    o.mode = REC_RELAY_FILE;
    o.offset = offs[1];
    int rc = rec_relay_open(&rl, src, &o);
    tap_ok(rc == 0 && rec_relay_next(rl, &pc) == 1 && pc.kind == REC_RELAY_BEGIN &&
           pc.chunk.offset == offs[1] && pc.chunk.index == 0,
           "from an offset: that chunk first, index 0");
    rec_relay_close(rl);
    /* Shorter than the first version (librecord(3), VERSIONS AND ABI):
     * no caller ever had such a struct. */
    o.size = offsetof(rec_relay_options, offset);
    o.mode = REC_RELAY_STREAMED;
    rc = rec_relay_open(&rl, src, &o);
    tap_ok(rc == REC_EINVAL && !rl,
           "a struct shorter than the first version: REC_EINVAL");
    rec_relay_close(rl);
    tap_ok(rec_relay_open(&rl, -1, NULL) == REC_EINVAL, "no source: REC_EINVAL");
    free(p);
}

int main(void)
{
    growing();
    seqlock();
    damaged();
    place();
    options();
    free(snapshot);
    close(src);
    return tap_done();
}
