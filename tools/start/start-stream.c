/*
 * tools/start/start-stream.c - rec-start -o - (or a FIFO): the recording
 * streamed to a consumer, never written to disk.
 *
 * The sampler cannot write a pipe itself: it rewrites chunk headers in
 * place under a seqlock, and it must never block on a consumer. So it
 * records into a private in-memory file (a memfd), and rec-start relays
 * each chunk as a STREAMED chunk (rec-format(5); librecord's rec_relay
 * gives its pieces): its header once, then each flush's blocks as the
 * sampler commits them, then an END block holding the final header. A
 * chunk's metadata and pools are thus sent once per chunk (chunks rotate
 * by age, --chunk-age), not once per flush, and a flush that wrote
 * nothing sends nothing. A finished chunk is punched out of the memfd:
 * memory holds the chunk being written and what the consumer has not
 * taken yet, up to the backlog limit. Writes never block (non-blocking
 * pipe, poll). When the consumer lags by more than the limit, whole
 * finished chunks not yet begun are dropped, oldest first; each is
 * replaced by a small chunk (start-drop.c) that keeps its non-sample
 * events and turns its samples into CPUTimeSampleLost with reason
 * stream-dropped, so the CPU time stays accounted for.
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

static const char *prog = "rec-start";

/* A chunk to send. From the memfd it goes out as the relay gives it: hdr
 * (its first header, marked STREAMED), the memfd's bytes [off + hdr_len,
 * off + len) as they are committed, then end (the END block) once it is
 * FINISHED. */
typedef struct item {
    struct item *next;
    uint64_t off, len;          /* the chunk in the memfd: relayed so far */
    uint8_t *buf;               /* a replacement chunk instead (heap) */
    uint64_t sent;              /* bytes of what goes out (wire_len) */
    bool finished;              /* len is final and end is there */
    bool dead;                  /* its writer died in it: ends at len */
    size_t hdr_len, end_len;
    uint8_t hdr[REC_RELAY_DATA_MAX];
    uint8_t end[REC_RELAY_DATA_MAX];
} item;

struct start_stream {
    int mfd;                    /* what the sampler writes */
    rec_relay *rl;              /* its chunks, piece by piece */
    item *cur;                  /* the chunk the relay is in (NULL: given up) */
    int out;                    /* the consumer (non-blocking) */
    const char *name;           /* "-" or the FIFO's path */
    uint64_t limit;             /* backlog in bytes before chunks drop */
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

/* Bytes an item puts on the wire, as far as known. */
static uint64_t wire_len(const item *it)
{
    if (it->buf)
        return it->len;
    return it->len + (it->finished ? it->end_len : 0);
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
    int fd, rc;

    *out = NULL;
    if (!s) {
        snprintf(msg, msize, "out of memory");
        return -1;
    }
    rec_relay_options ro;
    rec_relay_options_init(&ro);
    ro.mode = REC_RELAY_STREAMED;
    if ((s->mfd = start_backing_file(msg, msize)) < 0) {
        free(s);
        return -1;
    }
    if ((rc = rec_relay_open(&s->rl, s->mfd, &ro)) < 0) {
        snprintf(msg, msize, "cannot relay the sampler's output: %s",
                 rec_strerror(rc));
        close(s->mfd);
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
        rec_relay_close(s->rl);
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
    item **link = &s->head, *prev = NULL;
    while (*link && s->backlog > s->limit) {
        item *it = *link;
        uint8_t *buf;
        size_t len;
        start_drop_stats ds;
        if (it->buf || it->sent || !it->finished) {
            prev = it;
            link = &it->next;
            continue;
        }
        if (start_drop_chunk(s->mfd, it->off, &buf, &len, &ds) < 0) {
            buf = NULL;
            len = 0;
            memset(&ds, 0, sizeof ds);
        }
        punch(s, it->off, it->len);
        s->backlog -= wire_len(it);
        s->dropped_chunks++;
        s->dropped_samples += ds.samples;
        s->dropped_ns += ds.cpu_ns;
        if (!buf) {
            /* Unreadable: dropped without replacement. Nothing of it goes
             * out: its header and END block without its blocks would
             * break the stream. */
            *link = it->next;
            if (s->tail == it)
                s->tail = prev;
            free(it);
            continue;
        }
        it->buf = buf;
        it->off = 0;
        it->len = len;
        s->backlog += len;
        start_drop_tally(buf, len, &s->tally);
        prev = it;
        link = &it->next;
    }
}

/* What the sampler committed since the last look: the open chunk's new
 * blocks and its end, then new chunks. at_end: the program is gone. */
static void scan(start_stream *s, bool at_end)
{
    rec_relay_piece pc;
    int rc = 0;

    if (at_end)
        rec_relay_writer_gone(s->rl);
    while (!s->broken && (rc = rec_relay_next(s->rl, &pc)) > 0) {
        item *it = s->cur;
        if (pc.kind == REC_RELAY_BEGIN) {
            if (!(it = calloc(1, sizeof *it))) {
                fprintf(stderr, "%s: %s: out of memory: streaming stops\n",
                        prog, s->name);
                s->broken = true;
                return;
            }
            it->off = pc.chunk.offset;
            it->len = it->hdr_len = (size_t)pc.len;
            memcpy(it->hdr, pc.data, it->hdr_len);
            s->cur = it;
            queue(s, it);
        } else if (!it) {
            /* given up on (the memfd could not be read): released */
            if (pc.complete)
                punch(s, pc.chunk.offset, pc.chunk.size);
        } else if (pc.kind == REC_RELAY_BLOCKS) {
            it->len += pc.len;
            s->backlog += pc.len;
        } else if (pc.kind == REC_RELAY_END) {
            it->end_len = (size_t)pc.len;
            memcpy(it->end, pc.data, it->end_len);
            it->finished = true;
            s->backlog += it->end_len;
        }
        if (pc.complete)
            s->cur = NULL;
    }
    if (rc < 0) {
        fprintf(stderr, "%s: %s: the sampler's output cannot be relayed (%s): "
                "streaming stops\n", prog, s->name, rec_relay_message(s->rl));
        s->broken = true;
    }
    /* The writer died in its chunk: what it committed goes, without END. */
    if (at_end && s->cur)
        s->cur->dead = true;
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
    if (s->cur == it)
        s->cur = NULL;
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
        } else if (it->sent < it->hdr_len) {
            p = it->hdr + it->sent;
            n = it->hdr_len - (size_t)it->sent;
        } else if (it->sent < it->len) {
            if (n > it->len - it->sent)
                n = (size_t)(it->len - it->sent);
            ssize_t k = pread(s->mfd, s->io, n, (off_t)(it->off + it->sent));
            if (k <= 0) {
                s->backlog -= wire_len(it) - it->sent;
                it->dead = true;
                it->finished = false;
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
    rec_relay_close(s->rl);
    close(s->mfd);
    start_tally_free(&s->tally);
    free(s);
}
