/*
 * tools/start/start-stream.c - rec-start -o - (or a FIFO): the recording
 * streamed to a consumer, never written to disk.
 *
 * The sampler cannot write a pipe itself: it rewrites chunk headers in
 * place under a seqlock, and it must never block on a consumer. So it
 * records into a private in-memory file (a memfd), and rec-start relays
 * each chunk as a STREAMED chunk (rec-format(5)): its header once, then
 * each flush's blocks as the sampler commits them, then an END block
 * holding the final header. A chunk's metadata and pools are thus sent
 * once per chunk (chunks rotate by age, --chunk-age), not once per flush,
 * and a flush that wrote nothing sends nothing. A finished chunk is
 * punched out of the memfd: memory holds the chunk being written and what
 * the consumer has not taken yet, up to the backlog limit. Writes never
 * block (non-blocking pipe, poll). When the consumer lags by more than
 * the limit, whole finished chunks not yet begun are dropped, oldest
 * first; each is replaced by a small chunk (start-drop.c) that keeps its
 * non-sample events and turns its samples into CPUTimeSampleLost with
 * reason stream-dropped, so the CPU time stays accounted for.
 */
#include <config.h>
#include "start.h"

#include <rec/record.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "format.h"

static const char *prog = "rec-start";

/* A chunk to send. From the memfd it goes out as a STREAMED chunk: hdr
 * (the first header, marked), the memfd's bytes [off + 80, off + len) as
 * they are committed, then end (the END block) once it is FINISHED. */
typedef struct item {
    struct item *next;
    uint64_t off, len;          /* the chunk in the memfd: committed so far */
    uint8_t *buf;               /* a replacement chunk instead (heap) */
    uint64_t sent;              /* bytes of what goes out (wire_len) */
    bool finished;              /* len is final and end is built */
    bool dead;                  /* its writer died in it: ends at len */
    uint8_t hdr[REC_CHUNK_HEADER_SIZE];
    uint8_t end[REC_BLOCK_HEADER_SIZE + REC_CHUNK_HEADER_SIZE];
} item;

struct start_stream {
    int mfd;                    /* what the sampler writes */
    int out;                    /* the consumer (non-blocking) */
    const char *name;           /* "-" or the FIFO's path */
    uint64_t limit;             /* backlog in bytes before chunks drop */
    uint64_t scan_off;          /* next chunk header to look at */
    item *head, *tail;
    uint64_t backlog;           /* unsent bytes queued */
    bool gone;                  /* the consumer went away */
    bool broken;                /* the memfd holds no recording we can read */
    uint64_t relayed_bytes, relayed_chunks;
    uint64_t dropped_chunks, dropped_samples, dropped_ns;
    uint64_t discarded_chunks;  /* after the consumer went away */
    bool unfinished;            /* the last chunk relayed was OPEN */
    bool progress;              /* the consumer took bytes since the last look */
    uint64_t stall_ns;          /* after the program: give up then */
    start_tally tally;
    uint8_t io[256 << 10];
};

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

/* Bytes an item puts on the wire, as far as known. */
static uint64_t wire_len(const item *it)
{
    if (it->buf)
        return it->len;
    return it->len + (it->finished ? sizeof it->end : 0);
}

/* The sampler's in-memory file; an unlinked file in $TMPDIR where memfd
 * is unavailable (said: it is then on a file system). */
int start_backing_file(char *msg, size_t msize)
{
    int fd = memfd_create("rec-stream", MFD_CLOEXEC);
    if (fd >= 0)
        return fd;
    const char *dir = getenv("TMPDIR");
    if (!dir || !dir[0])
        dir = "/tmp";
    fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC | O_EXCL, 0600);
    if (fd < 0) {
        snprintf(msg, msize, "cannot create the stream's buffer (memfd: "
                 "unavailable, %s: %s)", dir, strerror(errno));
        return -1;
    }
    fprintf(stderr, "%s: memfd unavailable: the stream is buffered in an "
            "unlinked file in %s\n", prog, dir);
    return fd;
}

int start_stream_open(start_stream **out, int out_fd, const char *name,
                      uint64_t limit, char *msg, size_t msize)
{
    start_stream *s = calloc(1, sizeof *s);
    char p[64];
    int fd;

    *out = NULL;
    if (!s) {
        snprintf(msg, msize, "out of memory");
        return -1;
    }
    if ((s->mfd = start_backing_file(msg, msize)) < 0) {
        free(s);
        return -1;
    }
    /* Our own open file description of a pipe, made non-blocking: the
     * one we were given may be shared (O_NONBLOCK on it would change it
     * for others). Anything else (a socket, a regular file: its offset)
     * is used as it is. */
    struct stat st;
    fd = -1;
    if (fstat(out_fd, &st) == 0 && S_ISFIFO(st.st_mode)) {
        snprintf(p, sizeof p, "/proc/self/fd/%d", out_fd);
        fd = open(p, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    }
    if (fd < 0) {
        fd = fcntl(out_fd, F_DUPFD_CLOEXEC, 3);
        if (fd >= 0)
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
    if (fd < 0) {
        snprintf(msg, msize, "%s: %s", name, strerror(errno));
        close(s->mfd);
        free(s);
        return -1;
    }
    s->out = fd;
    s->name = name;
    s->limit = limit;
    s->stall_ns = 10000000000ull;
    start_tally_init(&s->tally);
    *out = s;
    return 0;
}

int start_stream_memfd(const start_stream *s)
{
    return s->mfd;
}

static void punch(start_stream *s, uint64_t off, uint64_t len)
{
    if (len)
        fallocate(s->mfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  (off_t)off, (off_t)len);
}

/* Count the chunk of fd at off into t (its events only: the reader would
 * go on into the next one). Returns whether the chunk is finished. */
bool start_tally_chunk(start_tally *t, int fd, uint64_t off)
{
    char p[64];
    rec_reader *r;
    const rec_event *ev;
    rec_chunk_info ci;
    bool finished = true;
    int rfd;

    snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
    if ((rfd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
        return true;
    if (lseek(rfd, (off_t)off, SEEK_SET) < 0) {
        close(rfd);
        return true;
    }
    if (rec_reader_open_fd(&r, rfd, "stream", 0) < 0)
        return true;
    cli_evview view = { 0 };
    while (rec_reader_next(r, &ev) > 0) {
        if (rec_reader_chunk(r, &ci) < 0 || ci.offset != off)
            break;
        start_tally_event(t, &view, ev);
    }
    cli_evview_free(&view);
    if (rec_reader_chunk(r, &ci) == 0 && ci.offset == off && !ci.finished)
        finished = false;
    rec_reader_close(r);
    return finished;
}

static void queue(start_stream *s, item *it)
{
    if (s->tail)
        s->tail->next = it;
    else
        s->head = it;
    s->tail = it;
    s->backlog += wire_len(it);
}

/* The consumer lags by more than the limit: the oldest chunks that are
 * not being written yet give way to their replacements. */
static void drop_oldest(start_stream *s)
{
    for (item *it = s->head; it && s->backlog > s->limit; it = it->next) {
        uint8_t *buf;
        size_t len;
        start_drop_stats ds;
        if (it->buf || it->sent || !it->finished)
            continue;
        if (start_drop_chunk(s->mfd, it->off, &buf, &len, &ds) < 0) {
            buf = NULL;     /* unreadable: dropped without replacement */
            len = 0;
            memset(&ds, 0, sizeof ds);
        }
        punch(s, it->off, it->len);
        s->backlog -= wire_len(it);
        it->buf = buf;
        it->off = 0;
        it->len = len;
        s->backlog += len;
        s->dropped_chunks++;
        s->dropped_samples += ds.samples;
        s->dropped_ns += ds.cpu_ns;
        if (buf)
            start_drop_tally(buf, len, &s->tally);
    }
}

/* The header of the chunk at off of the sampler's file into h,
 * consistent: under the writer's seqlock, or once the writer is gone
 * (at_end) as a reader would take it, its generation mended. 1, 0 (not
 * there yet), -1 (no chunk header there: the file is not ours to read). */
int start_peek_header(int mfd, uint64_t off, bool at_end, uint8_t *h)
{
    ssize_t n = pread(mfd, h, REC_CHUNK_HEADER_SIZE, (off_t)off);
    if (n < (ssize_t)REC_CHUNK_HEADER_SIZE)
        return 0;
    if (memcmp(h, REC_MAGIC, REC_MAGIC_LEN) != 0 ||
        start_le32(h + REC_CH_HEADER_SIZE) != REC_CHUNK_HEADER_SIZE)
        return -1;
    uint32_t gen = start_le32(h + REC_CH_GENERATION);
    bool ok = rec__crc32c(0, h, REC_CH_CRC) == start_le32(h + REC_CH_CRC);
    if (!at_end && ((gen & 1) || !ok))
        return 0;   /* an update in progress: looked at again later */
    for (int d = -1; !ok && (gen & 1) && d <= 1; d += 2) {
        put32(h + REC_CH_GENERATION, gen + (uint32_t)d);
        ok = rec__crc32c(0, h, REC_CH_CRC) == start_le32(h + REC_CH_CRC);
    }
    return ok && start_le64(h + REC_CH_SIZE) >= REC_CHUNK_HEADER_SIZE;
}

/* The header a STREAMED chunk starts with: sent once, never rewritten. */
static void mark_streamed(item *it, const uint8_t *h)
{
    uint8_t *m = it->hdr;
    memcpy(m, h, REC_CHUNK_HEADER_SIZE);
    put32(m + REC_CH_GENERATION, 0);
    m[REC_CH_STATE] = REC_STATE_OPEN;
    m[REC_CH_FLAGS] |= REC_CHUNK_STREAMED;
    put64(m + REC_CH_SIZE, REC_CHUNK_HEADER_SIZE);
    put32(m + REC_CH_CRC, rec__crc32c(0, m, REC_CH_CRC));
}

/* The END block: the chunk's final header, as the file would hold it. */
static void build_end(item *it, const uint8_t *h)
{
    uint8_t *b = it->end;
    memset(b, 0, REC_BLOCK_HEADER_SIZE);
    b[REC_BH_KIND] = REC_BLOCK_END;
    put32(b + REC_BH_STORED, REC_CHUNK_HEADER_SIZE);
    put32(b + REC_BH_RAW, REC_CHUNK_HEADER_SIZE);
    memcpy(b + REC_BLOCK_HEADER_SIZE, h, REC_CHUNK_HEADER_SIZE);
    uint32_t crc = rec__crc32c(0, b, REC_BH_CRC);
    put32(b + REC_BH_CRC, rec__crc32c(crc, h, REC_CHUNK_HEADER_SIZE));
}

/* What the sampler committed since the last look: the open chunk's new
 * blocks and its end, then new chunks. at_end: the program is gone. */
static void scan(start_stream *s, bool at_end)
{
    uint8_t h[REC_CHUNK_HEADER_SIZE];

    while (!s->broken) {
        item *it = s->tail && !s->tail->buf && !s->tail->finished
                   ? s->tail : NULL;
        uint64_t off = it ? it->off : s->scan_off;
        int k = start_peek_header(s->mfd, off, at_end, h);
        if (k < 0) {
            fprintf(stderr, "%s: %s: no chunk at offset %" PRIu64 " of the "
                    "sampler's output: streaming stops\n", prog, s->name, off);
            s->broken = true;
        }
        if (k <= 0)
            return;
        uint64_t size = start_le64(h + REC_CH_SIZE);
        if (!it) {
            if (!(it = calloc(1, sizeof *it)))
                return;
            it->off = off;
            it->len = REC_CHUNK_HEADER_SIZE;
            mark_streamed(it, h);
            queue(s, it);
        }
        if (size > it->len) {
            s->backlog += size - it->len;
            it->len = size;
        }
        if (h[REC_CH_STATE] != REC_STATE_FINISHED) {
            if (at_end)
                it->dead = true;    /* the writer died in it: no END */
            return;
        }
        build_end(it, h);
        it->finished = true;
        s->backlog += sizeof it->end;
        s->scan_off = off + size;
    }
}

static void consumer_gone(start_stream *s, int e)
{
    if (!s->gone)
        fprintf(stderr, "%s: %s: the consumer went away (%s): the rest of "
                "the recording is discarded; the program goes on\n", prog,
                s->name, strerror(e));
    s->gone = true;
}

static void finish_item(start_stream *s, item *it, bool sent)
{
    s->head = it->next;
    if (!s->head)
        s->tail = NULL;
    s->backlog -= wire_len(it) - it->sent;
    if (!it->buf) {
        if (sent && !start_tally_chunk(&s->tally, s->mfd, it->off))
            s->unfinished = true;
        punch(s, it->off, it->len);
    }
    if (sent) {
        s->relayed_chunks++;
        s->relayed_bytes += wire_len(it);
    } else {
        s->discarded_chunks++;
    }
    free(it->buf);
    free(it);
}

/* Write what the pipe takes now; 1 if it is full, 0 when all that can go
 * is out. */
static int send_some(start_stream *s)
{
    while (s->head) {
        item *it = s->head;
        bool whole = it->buf || it->finished || it->dead;
        if (s->gone || s->out < 0) {
            if (!whole)
                return 0;   /* punched once the sampler finishes it */
            finish_item(s, it, false);
            continue;
        }
        uint64_t total = wire_len(it);
        if (it->sent == total) {
            if (!whole)
                return 0;   /* the rest is not written yet */
            finish_item(s, it, true);
            continue;
        }
        const uint8_t *p;
        size_t n = total - it->sent < sizeof s->io
                   ? (size_t)(total - it->sent) : sizeof s->io;
        if (it->buf) {
            p = it->buf + it->sent;
        } else if (it->sent < REC_CHUNK_HEADER_SIZE) {
            p = it->hdr + it->sent;
            n = REC_CHUNK_HEADER_SIZE - (size_t)it->sent;
        } else if (it->sent < it->len) {
            if (n > it->len - it->sent)
                n = (size_t)(it->len - it->sent);
            ssize_t k = pread(s->mfd, s->io, n, (off_t)(it->off + it->sent));
            if (k <= 0) {
                it->dead = true;
                it->finished = false;
                s->backlog -= it->len - it->sent;
                it->len = it->sent;
                finish_item(s, it, false);
                continue;
            }
            n = (size_t)k;
            p = s->io;
        } else {
            p = it->end + (it->sent - it->len);
            n = (size_t)(total - it->sent);
        }
        ssize_t w = write(s->out, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                return 1;
            consumer_gone(s, errno);
            continue;
        }
        it->sent += (uint64_t)w;
        s->backlog -= (uint64_t)w;
        s->progress = true;
    }
    return 0;
}

void start_stream_pollfd(const start_stream *s, struct pollfd *p)
{
    p->fd = s->head && !s->gone ? s->out : -1;
    p->events = POLLOUT;
    p->revents = 0;
}

void start_stream_work(start_stream *s)
{
    scan(s, false);
    if (s->backlog > s->limit && !s->gone)
        drop_oldest(s);
    send_some(s);
}

void start_stream_set_timeout(start_stream *s, uint64_t ns)
{
    s->stall_ns = ns;
}

/* The program is gone: nothing is slowed by waiting for the consumer any
 * more, but a consumer that takes nothing for the stall time (it stopped
 * reading without closing) does not keep rec-start, and the shell that
 * waits for its status, from ending. */
void start_stream_finish(start_stream *s)
{
    uint64_t idle_ms = 0, limit_ms = s->stall_ns / 1000000u;

    scan(s, true);
    for (;;) {
        s->progress = false;
        if (send_some(s) != 1)
            break;
        if (s->progress)
            idle_ms = 0;
        struct pollfd p = { s->out, POLLOUT, 0 };
        int k = poll(&p, 1, 100);
        if (k < 0 && errno != EINTR)
            break;
        if (k == 0 && (idle_ms += 100) >= limit_ms) {
            fprintf(stderr, "%s: %s: the consumer took nothing for %.1f s "
                    "after the program ended: %" PRIu64 " bytes not "
                    "delivered; rec-start stops waiting "
                    "(--stream-timeout)\n", prog, s->name,
                    (double)idle_ms / 1000, s->backlog);
            s->gone = true;
            send_some(s);   /* counts what is discarded */
            break;
        }
    }
    if (s->out >= 0)
        close(s->out);
    s->out = -1;
}

void start_stream_summary(start_stream *s, bool signaled, const char *why)
{
    char label[600];
    snprintf(label, sizeof label, "%s (streamed)", s->name);
    if (!s->relayed_chunks && !s->discarded_chunks && !s->gone) {
        fprintf(stderr, "%s: nothing was streamed to %s (did the sampler "
                "start? see its messages above)\n", prog, s->name);
        return;
    }
    start_tally_print(&s->tally, label, s->relayed_bytes,
                      s->unfinished ? (signaled ? " (unfinished: up to the "
                                       "last flush)" : " (unfinished)") : "",
                      why);
    if (s->dropped_chunks)
        fprintf(stderr, "%s: %s: the consumer lagged: %" PRIu64 " chunk%s "
                "dropped, %" PRIu64 " samples (%.1f ms of CPU) sent as lost, "
                "reason stream-dropped\n", prog, s->name, s->dropped_chunks,
                s->dropped_chunks == 1 ? "" : "s", s->dropped_samples,
                (double)s->dropped_ns / 1e6);
    if (s->gone)
        fprintf(stderr, "%s: %s: %" PRIu64 " chunk%s discarded after the "
                "consumer went away\n", prog, s->name, s->discarded_chunks,
                s->discarded_chunks == 1 ? "" : "s");
}

int start_stream_setup(const char *output, bool follow, uint64_t backlog,
                       start_stream **out, bool *to_stdout)
{
    struct stat st, so;
    char msg[PATH_MAX + 256];
    int fd = STDOUT_FILENO;

    *out = NULL;
    *to_stdout = false;
    /* A FIFO is streamed into, with --force too: there is no file to
     * replace, and the option is what a script passes every time. */
    if (!output || (strcmp(output, "-") &&
                    (stat(output, &st) != 0 || !S_ISFIFO(st.st_mode))))
        return 0;
    if (follow) {
        fprintf(stderr, "%s: --follow-children records each process into "
                "its own file: it cannot stream to %s\nTry 'rec-start "
                "--help'.\n", prog, output);
        return 2;
    }
    if (!strcmp(output, "-") && isatty(STDOUT_FILENO)) {
        fprintf(stderr, "%s: -o -: standard output is a terminal: refusing "
                "to write a binary recording to it\n", prog);
        return 1;
    }
    if (strcmp(output, "-") &&
        (fd = open(output, O_WRONLY | O_CLOEXEC)) < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, output, strerror(errno));
        return 1;
    }
    /* -o -, or a name of the same pipe (/dev/stdout): the program's
     * output must not mix with the recording. */
    *to_stdout = fd == STDOUT_FILENO ||
        (fstat(fd, &st) == 0 && fstat(STDOUT_FILENO, &so) == 0 &&
         st.st_dev == so.st_dev && st.st_ino == so.st_ino);
    int rc = start_stream_open(out, fd, output,
                               backlog ? backlog : 32u << 20, msg, sizeof msg);
    if (fd != STDOUT_FILENO)
        close(fd);      /* the stream has its own description */
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", prog, msg);
        return 1;
    }
    return 0;
}

void start_stream_free(start_stream *s)
{
    if (!s)
        return;
    while (s->head) {
        item *it = s->head;
        s->head = it->next;
        free(it->buf);
        free(it);
    }
    if (s->out >= 0)
        close(s->out);
    close(s->mfd);
    start_tally_free(&s->tally);
    free(s);
}
