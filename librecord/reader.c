/*
 * librecord/reader.c - walking a recording: chunk headers (read under the
 * writer's seqlock), blocks (checksum, lz4), and the events inside them.
 *
 * The contents of blocks (metadata, pools, events) are block.c's. Memory
 * stays bounded: one block at a time (raw <= REC_MAX_BLOCK_RAW) plus the
 * pools and schema of the current chunk.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <lz4.h>

#include "format.h"
#include "reader_int.h"
#include "sized.h"

#define SEQLOCK_SPINS  8        /* immediate retries, then 1 ms sleeps */
#define SEQLOCK_SLEEPS 10
#define MAX_HEADER_SIZE 4096u   /* header_size of a newer minor version */

/* Stop with code; the message names file, chunk and byte offset. */
int rec__rfail(rec_reader *r, int code, uint64_t off, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(r->msg, sizeof r->msg, "%s: chunk %" PRIu32 ", offset %" PRIu64 ": ",
                     r->path, r->chunk_no, off);
    if (n < 0 || (size_t)n >= sizeof r->msg)
        n = 0;
    va_start(ap, fmt);
    vsnprintf(r->msg + n, sizeof r->msg - (size_t)n, fmt, ap);
    va_end(ap);
    r->st = ST_ERROR;
    r->err = code;
    r->resumable = false;
    r->in_events = false;
    return code;
}

/* Truncation: the file ends before what the data declares. A writer may
 * still be appending, so rec_reader_poll() can resume here. */
int rec__rtruncated(rec_reader *r, uint64_t off, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    enum rstate st = r->st;
    struct stat sb;
    rec__rfail(r, REC_ETRUNCATED, off, "%s", what);
    r->resumable = true;
    r->resume_st = st;
    r->trunc_fsize = fstat(r->fd, &sb) == 0 ? (uint64_t)sb.st_size : 0;
    return REC_ETRUNCATED;
}

__attribute__((format(printf, 2, 3)))
static void set_warning(rec_reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->warn, sizeof r->warn, fmt, ap);
    va_end(ap);
}

/* pread until n bytes or the end of the file; returns bytes read or -1. */
ssize_t rec__pread_full(int fd, void *buf, size_t n, uint64_t off)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (k == 0)
            break;
        got += (size_t)k;
    }
    return (ssize_t)got;
}

int rec__io_error(rec_reader *r, uint64_t off)
{
    int e = errno;
    rec__rfail(r, REC_EIO, off, "read: %s", strerror(e));
    errno = e;
    return REC_EIO;
}

static void backoff(int attempt)
{
    if (attempt < SEQLOCK_SPINS) {
        sched_yield();
    } else {
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
}

/* ---- chunk header ---- */

typedef struct hdr {
    uint16_t major, minor;
    uint32_t header_size, index, pid;
    uint8_t state, flags;
    uint64_t size, start_wall, start_ticks, duration, tps;
    uint8_t raw[REC_CHUNK_HEADER_SIZE];     /* the bytes these came from */
} hdr;

/* A writer that died inside an update leaves the generation odd: the
 * fields are then those of the generation before or after it, and the
 * checksum tells which (or that the header is damaged). */
bool rec__header_crc_ok(const uint8_t *b)
{
    uint8_t c[REC_CHUNK_HEADER_SIZE];
    uint32_t gen = le32(b + REC_CH_GENERATION);

    if (rec__crc32c(0, b, REC_CH_CRC) == le32(b + REC_CH_CRC))
        return true;
    for (int d = -1; (gen & 1) && d <= 1; d += 2) {
        memcpy(c, b, sizeof c);
        put32(c + REC_CH_GENERATION, gen + (uint32_t)d);
        if (rec__crc32c(0, c, REC_CH_CRC) == le32(b + REC_CH_CRC))
            return true;
    }
    return false;
}

/* The fields of a checked header; 1, or an error naming off. */
static int parse_header(rec_reader *r, const uint8_t *b, uint64_t off, hdr *h)
{
    memcpy(h->raw, b, sizeof h->raw);
    h->major = le16(b + REC_CH_MAJOR);
    h->minor = le16(b + REC_CH_MINOR);
    h->header_size = le32(b + REC_CH_HEADER_SIZE);
    h->state = b[REC_CH_STATE];
    h->flags = b[REC_CH_FLAGS];
    h->size = le64(b + REC_CH_SIZE);
    h->start_wall = le64(b + REC_CH_START_WALL);
    h->start_ticks = le64(b + REC_CH_START_TICKS);
    h->duration = le64(b + REC_CH_DURATION);
    h->tps = le64(b + REC_CH_TICKS_PER_S);
    h->index = le32(b + REC_CH_INDEX);
    /* 1.0 wrote 0 here (reserved): "unknown" either way. */
    h->pid = h->minor >= 1 ? le32(b + REC_CH_WRITER_PID) : 0;
    if (h->header_size < REC_CHUNK_HEADER_SIZE || h->header_size > MAX_HEADER_SIZE)
        return rec__rfail(r, REC_ECORRUPT, off, "bad chunk header size %" PRIu32, h->header_size);
    if (h->state != REC_STATE_OPEN && h->state != REC_STATE_FINISHED)
        return rec__rfail(r, REC_ECORRUPT, off, "bad chunk state %u", h->state);
    if (h->size < h->header_size || h->size > UINT64_MAX - off)
        return rec__rfail(r, REC_ECORRUPT, off, "bad chunk size %" PRIu64, h->size);
    /* Writers write 10^9; a tick longer than a millisecond or shorter
     * than a picosecond makes times no reader can lay out. */
    if (h->tps < REC_MIN_TICKS_PER_S || h->tps > REC_MAX_TICKS_PER_S)
        return rec__rfail(r, REC_ECORRUPT, off, "ticks per second %" PRIu64
                          " outside %llu..%llu", h->tps,
                          (unsigned long long)REC_MIN_TICKS_PER_S,
                          (unsigned long long)REC_MAX_TICKS_PER_S);
    /* Since 1.3: a streamed chunk's header is sent once, before its
     * blocks, and never rewritten: its size is the header's alone. */
    if ((h->flags & REC_CHUNK_STREAMED) &&
        (h->state != REC_STATE_OPEN || h->size != h->header_size))
        return rec__rfail(r, REC_ECORRUPT, off, "streamed chunk header is "
                          "not OPEN with the header's size");
    return 1;
}

/* Read the header at off under the seqlock: retry while the generation is
 * odd, changes across the read, or the checksum fails (a torn read).
 * Returns 1 with *h, 0 if the file ends exactly at off, or an error. */
static int read_header(rec_reader *r, uint64_t off, hdr *h)
{
    uint8_t b[REC_CHUNK_HEADER_SIZE], prev[REC_CHUNK_HEADER_SIZE];
    bool crc_ok = false, have_prev = false;
    for (int attempt = 0; attempt < SEQLOCK_SPINS + SEQLOCK_SLEEPS; attempt++) {
        if (attempt)
            backoff(attempt);
        ssize_t n = rec__pread_full(r->fd, b, sizeof b, off);
        if (n < 0)
            return rec__io_error(r, off);
        if (n == 0)
            return 0;
        size_t m = (size_t)n < REC_MAGIC_LEN ? (size_t)n : REC_MAGIC_LEN;
        if (memcmp(b, REC_MAGIC, m) != 0) {
            if (off == 0)
                return rec__rfail(r, REC_EMAGIC, off, "not a rec recording (bad magic)");
            return rec__rfail(r, REC_ECORRUPT, off, "bad chunk magic");
        }
        if ((size_t)n >= REC_CH_MINOR + 2 && le16(b + REC_CH_MAJOR) != REC_FORMAT_MAJOR)
            return rec__rfail(r, REC_EVERSION, off, "unsupported format version %u.%u",
                        le16(b + REC_CH_MAJOR), le16(b + REC_CH_MINOR));
        if ((size_t)n < sizeof b)
            return rec__rtruncated(r, off, "file ends inside a chunk header (%zd of %d bytes)",
                             n, REC_CHUNK_HEADER_SIZE);
        uint32_t gen = le32(b + REC_CH_GENERATION);
        crc_ok = rec__crc32c(0, b, REC_CH_CRC) == le32(b + REC_CH_CRC);
        if (!(gen & 1) && !crc_ok && have_prev && memcmp(prev, b, sizeof b) == 0)
            break;      /* read twice alike, not being updated: damaged */
        memcpy(prev, b, sizeof b);
        have_prev = true;
        if ((gen & 1) || !crc_ok)
            continue;
        uint8_t g2[4];
        if (rec__pread_full(r->fd, g2, 4, off + REC_CH_GENERATION) != 4)
            continue;
        if (le32(g2) != gen)
            continue;
        break;
    }
    if (!crc_ok)
        crc_ok = rec__header_crc_ok(b);
    if (!crc_ok)
        return rec__rfail(r, REC_ECORRUPT, off, "chunk header checksum mismatch");
    return parse_header(r, b, off, h);
}

void rec__drop_pools(rec_reader *r)
{
    if (r->pools_live)
        rec__rp_free(&r->pools);
    r->pools_live = false;
    r->dangling_warned = 0;
}

/* The chunk as rec_reader_chunk() describes it, computed when the header
 * or the position changes rather than per call (tools call it per event). */
static void set_info(rec_reader *r)
{
    rec_chunk_info *info = &r->info;
    info->index = r->chunk_no;
    info->major = r->major;
    info->minor = r->minor;
    info->finished = r->state == REC_STATE_FINISHED;
    info->last = r->cflags & REC_CHUNK_LAST;
    info->offset = r->chunk_off;
    info->size = r->chunk_end - r->chunk_off;
    info->start_ns = r->start_wall;
    uint64_t d = r->duration, tps = r->tps;
    info->duration_ns = d / tps * 1000000000u +
                        (uint64_t)((unsigned __int128)(d % tps) * 1000000000u / tps);
    info->ticks_per_second = tps;
}

static void set_chunk(rec_reader *r, const hdr *h)
{
    r->major = h->major;
    r->minor = h->minor;
    r->header_size = h->header_size;
    r->state = h->state;
    r->cflags = h->flags;
    r->sealed |= (h->flags & REC_CHUNK_SEALED) != 0;
    r->chunk_end = r->chunk_off + h->size;
    r->start_wall = h->start_wall;
    r->start_ticks = h->start_ticks;
    r->duration = h->duration;
    r->tps = h->tps;
    r->writer_pid = h->pid;
    r->streamed = (h->flags & REC_CHUNK_STREAMED) != 0;
    memcpy(r->hdr_raw, h->raw, sizeof r->hdr_raw);
    set_info(r);
    r->ev.start_wall_ns = h->start_wall;
    r->ev.start_ticks = h->start_ticks;
    r->ev.ticks_per_second = h->tps;
    r->ev.ns_per_tick = 1000000000u % h->tps == 0 ? 1000000000u / h->tps : 0;
}

/* Returns 1 at a new chunk, 0 at the end of the recording, or an error. */
static int open_chunk(rec_reader *r)
{
    hdr h;
    for (;;) {
        int rc = r->fd >= 0 ? rec__spool_next(r) : 0;
        if (rc < 0)
            return rc;
        rc = r->fd >= 0 ? read_header(r, r->chunk_off, &h) : 0;
        if (rc > 0)
            break;
        if (rc < 0)
            return rc;
        if (r->dir_fd < 0) {
            if (r->chunk_no == 0)
                return rec__rtruncated(r, 0, "empty file");
            return 0;
        }
        /* A directory's file ends: its next file. Only the newest file may
         * be empty (created, its first chunk not written yet). */
        if (r->fd >= 0 && r->chunk_off == 0 && rec__dir_more(r))
            return rec__rfail(r, REC_ETRUNCATED, 0, "empty file (not the newest "
                              "of the directory recording)");
        if ((rc = rec__dir_next(r)) < 0)
            return rc;
        if (rc > 0)
            continue;
        if (r->fd < 0) {
            snprintf(r->msg, sizeof r->msg, "%s: no .rec file in the directory "
                     "(not a directory recording?)", r->path);
            r->st = ST_ERROR;
            r->resumable = false;
            return r->err = REC_ENOTFOUND;
        }
        if (r->chunk_no == 0)
            return rec__rtruncated(r, 0, "empty file");
        return 0;
    }
    rec__drop_pools(r);
    /* What a chunk restates for readers that start at it, a reader that
     * read the chunk before it in the same recording has seen. */
    r->continues = r->have_chunk && !r->prev_last && h.index > 0 &&
                   h.index == r->index + 1 && h.pid == r->writer_pid;
    r->index = h.index;
    r->walked = false;
    r->have_chunk = true;
    r->have_meta = false;
    set_chunk(r, &h);
    r->pos = r->chunk_off + h.header_size;
    return 1;
}

void rec__check_dangling(rec_reader *r)
{
    if (r->pools_live && r->pools.dangling > r->dangling_warned) {
        r->dangling_warned = r->pools.dangling;
        set_warning(r, "%s: chunk %" PRIu32 ": %" PRIu64
             " references to undefined pool entries (read as missing entries)",
             r->path, r->chunk_no, r->pools.dangling);
    }
}

/* A streamed chunk grows by whole blocks: the block at pos once all of it
 * is there (chunk_end moves past it), or its END block, whose payload is
 * the chunk's final header: the chunk is then FINISHED and the next one
 * starts after the END block. 1 when the chunk grew or ended, 0 when
 * nothing whole is there yet, or an error. */
static int stream_extend(rec_reader *r)
{
    uint8_t bh[REC_BLOCK_HEADER_SIZE], fb[MAX_HEADER_SIZE];
    uint64_t off = r->pos;
    struct stat sb;
    hdr h;
    int rc;

    if (off - r->chunk_off > REC_MAX_STREAM_CHUNK)
        return rec__rfail(r, REC_ETOOBIG, off, "streamed chunk longer than "
                          "%u bytes", (unsigned)REC_MAX_STREAM_CHUNK);
    if ((rc = rec__spool_block(r, off)) < 0)
        return rc;
    ssize_t got = rec__pread_full(r->fd, bh, sizeof bh, off);
    if (got < 0)
        return rec__io_error(r, off);
    if ((size_t)got < sizeof bh)
        return 0;
    uint32_t stored = le32(bh + REC_BH_STORED);
    if (bh[REC_BH_KIND] != REC_BLOCK_END) {
        /* Checked by rec__read_block; an impossible size is said now
         * rather than waited for. */
        if (stored > (uint32_t)LZ4_COMPRESSBOUND(REC_MAX_BLOCK_RAW))
            return rec__rfail(r, REC_ETOOBIG, off, "block stored size %"
                              PRIu32 " too large", stored);
        if (fstat(r->fd, &sb) < 0)
            return rec__io_error(r, off);
        if ((uint64_t)sb.st_size - off - sizeof bh < stored ||
            (uint64_t)sb.st_size < off + sizeof bh)
            return 0;
        r->chunk_end = off + sizeof bh + stored;
        set_info(r);
        return 1;
    }
    if (bh[REC_BH_FLAGS] || stored != r->header_size ||
        le32(bh + REC_BH_RAW) != stored)
        return rec__rfail(r, REC_ECORRUPT, off, "bad END block (flags 0x%x, "
                          "%" PRIu32 " bytes for a %" PRIu32 "-byte header)",
                          bh[REC_BH_FLAGS], stored, r->header_size);
    got = rec__pread_full(r->fd, fb, stored, off + sizeof bh);
    if (got < 0)
        return rec__io_error(r, off);
    if ((size_t)got < stored)
        return 0;
    uint32_t crc = rec__crc32c(rec__crc32c(0, bh, REC_BH_CRC), fb, stored);
    if (crc != le32(bh + REC_BH_CRC))
        return rec__rfail(r, REC_ECORRUPT, off, "END block checksum mismatch");
    if (memcmp(fb, REC_MAGIC, REC_MAGIC_LEN) != 0 ||
        le16(fb + REC_CH_MAJOR) != REC_FORMAT_MAJOR ||
        rec__crc32c(0, fb, REC_CH_CRC) != le32(fb + REC_CH_CRC))
        return rec__rfail(r, REC_ECORRUPT, off, "END block: bad final header");
    if ((rc = parse_header(r, fb, off, &h)) < 0)
        return rc;
    /* The final header of this chunk, and nothing else: it describes the
     * bytes before the END block. */
    if (h.state != REC_STATE_FINISHED || (h.flags & REC_CHUNK_STREAMED) ||
        h.size != off - r->chunk_off || h.header_size != r->header_size ||
        h.start_wall != r->start_wall || h.start_ticks != r->start_ticks ||
        h.tps != r->tps || h.pid != r->writer_pid)
        return rec__rfail(r, REC_ECORRUPT, off, "END block does not finish "
                          "this chunk");
    set_chunk(r, &h);
    r->streamed = false;
    r->chunk_end = off + sizeof bh + stored;
    r->pos = r->chunk_end;
    set_info(r);
    return 1;
}

/* The data ends between chunks: the recording ends there, closed or not. */
static void at_eof(rec_reader *r)
{
    r->st = ST_END_EOF;
    if (!r->prev_last)
        set_warning(r, "%s: recording not closed: the file ends after chunk %" PRIu32
                    " without a last chunk", r->path, r->chunk_no - 1);
}

/* At the end of the current chunk's data: on to the next chunk (ST_CHUNK),
 * or stop at an unfinished chunk (ST_END_OPEN), or an error. */
static int leave_chunk(rec_reader *r)
{
    rec__check_dangling(r);
    r->in_events = false;
    if (r->state == REC_STATE_FINISHED) {
        r->prev_last = r->cflags & REC_CHUNK_LAST;
        r->chunk_off = r->chunk_end;
        r->chunk_no++;
        set_info(r);
        r->st = ST_CHUNK;
        return 0;
    }
    if (r->flags & REC_READ_STRICT) {
        rec__rtruncated(r, r->chunk_end, "chunk unfinished (still being written "
                        "or the writer died)");
        return REC_ETRUNCATED;
    }
    set_warning(r, "%s: chunk %" PRIu32 ": unfinished, read up to last flush at offset %"
                PRIu64 "%s", r->path, r->chunk_no, r->chunk_end,
                rec__dir_more(r) ? "; the recording goes on in the next file" : "");
    if (rec__dir_more(r)) {
        /* A writer that died and was followed by another one: the files
         * after it hold the rest of the recording. */
        uint32_t no = r->chunk_no;
        int rc = rec__dir_next(r);
        if (rc < 0)
            return rc;
        if (rc > 0) {
            r->prev_last = false;
            r->chunk_no = no + 1;
            r->st = ST_CHUNK;
            return 0;
        }
    }
    r->st = ST_END_OPEN;
    return 0;
}

/* The next chunk's header read: its blocks are next (1), or the
 * recording ends there (0), or an error. */
static int enter_chunk(rec_reader *r)
{
    int rc = open_chunk(r);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        at_eof(r);
        return 0;
    }
    r->st = ST_BLOCKS;
    return 1;
}

/* Advance over chunk ends and non-event blocks until events are ready.
 * Returns 1 when r->dec has events, 0 at the end, or an error. */
int rec__advance(rec_reader *r, bool stop_at_metadata)
{
    for (;;) {
        int rc;
        switch (r->st) {
        case ST_ERROR:
            return r->err;
        case ST_END_OPEN:
        case ST_END_EOF:
            return 0;
        case ST_CHUNK:
            if ((rc = enter_chunk(r)) <= 0)
                return rc;
            break;
        case ST_BLOCKS:
            if (stop_at_metadata && r->have_meta)
                return 0;
            if (r->pos >= r->chunk_end && r->streamed &&
                (rc = stream_extend(r)) != 0) {
                if (rc < 0)
                    return rc;
                break;
            }
            if (r->pos >= r->chunk_end) {
                if ((rc = leave_chunk(r)) < 0)
                    return rc;
                if (r->st == ST_END_OPEN)
                    return 0;
                break;
            }
            if ((rc = rec__read_block(r)) < 0)
                return rc;
            if (r->in_events)
                return 1;
            break;
        }
    }
}

int rec__reader_peek(rec_reader *r, uint64_t off, uint64_t *size,
                     uint8_t *state, uint8_t *flags)
{
    hdr h;
    int rc = read_header(r, off, &h);
    if (rc <= 0)
        return rc;
    *size = h.size;
    *state = h.state;
    *flags = h.flags;
    return 1;
}

int rec__reader_seek(rec_reader *r, uint64_t chunk_off, uint32_t chunk_no,
                     uint64_t skip_before, uint64_t *start_wall)
{
    hdr h;
    r->in_events = false;
    r->chunk_off = chunk_off;
    r->chunk_no = chunk_no;
    r->skip_before = skip_before;
    r->prev_last = false;   /* set again when the reader leaves the chunk */
    r->index = UINT32_MAX;  /* what came before was not read */
    r->warn[0] = 0;
    r->st = ST_CHUNK;
    int rc = read_header(r, chunk_off, &h);
    if (rc <= 0)
        return rc;
    *start_wall = h.start_wall;
    return 1;
}

/* ---- open, close, poll ---- */

/* r reads fd (owned from now on) from offset start, or as a stream. */
static int reader_new(rec_reader **out, int fd, const char *name,
                      unsigned flags, uint64_t start)
{
    rec_reader *r = calloc(1, sizeof *r);
    int rc;
    if (!r || !(r->path = strdup(name))) {
        free(r);
        close(fd);
        return REC_ENOMEM;
    }
    r->fd = fd;
    r->src_fd = -1;
    r->dir_fd = -1;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        r->fd = -1;
        if ((rc = rec__dir_init(r, fd)) == REC_ENOMEM) {
            rec_reader_close(r);
            return rc;
        }
        r->flags = flags;
        if (rc == 0)
            rec__advance(r, true);  /* as below */
        *out = r;
        return 0;
    }
    if (rec__is_stream(fd) && (rc = rec__spool_init(r, fd)) < 0) {
        int e = errno;
        close(fd);
        free(r->path);
        free(r);
        errno = e;
        return rc;
    }
    r->flags = flags;
    r->chunk_off = start;
    r->st = ST_CHUNK;
    /* Read the first chunk's header and schema now so that types are known
     * before the first event; errors found here wait for rec_reader_next()
     * so that they come with a message. */
    rec__advance(r, true);
    *out = r;
    return 0;
}

int rec_reader_open(rec_reader **out, const char *path, unsigned flags)
{
    if (!out || !path)
        return REC_EINVAL;
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return REC_EIO;
    return reader_new(out, fd, path, flags, 0);
}

int rec_reader_open_fd(rec_reader **out, int fd, const char *name,
                       unsigned flags)
{
    off_t start = 0;
    if (!out || fd < 0) {
        if (fd >= 0)
            close(fd);
        return REC_EINVAL;
    }
    *out = NULL;
    if (!rec__is_stream(fd) && (start = lseek(fd, 0, SEEK_CUR)) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return REC_EIO;
    }
    return reader_new(out, fd, name ? name : "(descriptor)", flags,
                      (uint64_t)start);
}

bool rec_reader_buffered(const rec_reader *r)
{
    if (!r || r->st == ST_ERROR)
        return false;
    if (r->in_events && !rec__cdec_done(&r->dec))
        return true;
    return r->st == ST_BLOCKS && r->pos < r->chunk_end;
}

void rec_reader_close(rec_reader *r)
{
    if (!r)
        return;
    rec__drop_pools(r);
    while (r->schemas) {
        rec__schema *s = r->schemas;
        r->schemas = s->next;
        rec__schema_free(s);
    }
    if (r->fd >= 0)
        close(r->fd);
    if (r->src_fd >= 0)
        close(r->src_fd);
    rec__dir_free(r);
    free(r->io);
    free(r->raw);
    free(r->vals);
    free(r->dctx.items);
    free(r->path);
    free(r);
}

const char *rec_reader_message(const rec_reader *r)
{
    return r && r->st == ST_ERROR ? r->msg : NULL;
}

const char *rec_reader_warning(const rec_reader *r)
{
    return r && r->warn[0] ? r->warn : NULL;
}

bool rec_reader_sealed(const rec_reader *r)
{
    return r && r->sealed;
}

int rec_reader_poll(rec_reader *r)
{
    if (!r)
        return REC_EINVAL;
    enum rstate st = r->st;
    if (st == ST_ERROR) {
        struct stat sb;
        if (!r->resumable)
            return r->err;
        if (fstat(r->fd, &sb) < 0)
            return REC_EIO;
        if ((uint64_t)sb.st_size <= r->trunc_fsize)
            return 0;           /* nothing new yet */
        st = r->resume_st;
    }
    if (r->fd < 0)
        return 0;       /* a directory whose files all went */
    if (st == ST_END_EOF || st == ST_CHUNK) {
        /* a chunk header appears where the last chunk ended */
        uint8_t b;
        ssize_t n = rec__pread_full(r->fd, &b, 1, r->chunk_off);
        if (n < 0)
            return REC_EIO;
        if (n == 0)
            return 0;
        r->st = ST_CHUNK;
        r->warn[0] = 0;
        return 1;
    }
    if ((st == ST_END_OPEN || st == ST_BLOCKS) && r->streamed) {
        /* a streamed chunk's header is never rewritten: it grows by
         * blocks appended after it */
        int rc = stream_extend(r);
        if (rc <= 0)
            return rc;
        r->st = ST_BLOCKS;
        r->warn[0] = 0;
        return 1;
    }
    if (st == ST_END_OPEN || st == ST_BLOCKS) {
        /* the same chunk after a later flush: re-read its header */
        uint64_t old_end = r->chunk_end;
        uint8_t old_state = r->state;
        hdr h;
        int rc = read_header(r, r->chunk_off, &h);
        if (rc == 0)
            rc = rec__rfail(r, REC_ECORRUPT, r->chunk_off, "chunk header vanished");
        if (rc < 0)
            return rc;
        if (h.start_wall != r->start_wall || h.start_ticks != r->start_ticks ||
            h.header_size != r->header_size)
            return rec__rfail(r, REC_ECORRUPT, r->chunk_off, "chunk header changed");
        set_chunk(r, &h);
        if (r->st == ST_END_OPEN && r->chunk_end == old_end && r->state == old_state)
            return 0;
        r->st = ST_BLOCKS;      /* a cut block is read again from its start */
        r->warn[0] = 0;
        return 1;
    }
    return 0;
}

/* A streamed chunk's size and final header are known at its END block:
 * its blocks are walked (not read) up to there. */
static int walk_streamed(rec_reader *r)
{
    int rc = 0;
    if (r->pos < r->chunk_end)
        r->pos = r->chunk_end;
    while (r->streamed && (rc = stream_extend(r)) > 0)
        r->pos = r->chunk_end;
    return rc < 0 ? rc : 0;
}

int rec_reader_next_chunk(rec_reader *r)
{
    int rc;
    if (!r)
        return REC_EINVAL;
    if (r->st == ST_BLOCKS) {
        if (!r->walked) {
            r->walked = true;
            return (rc = walk_streamed(r)) < 0 ? rc : 1;
        }
        r->pos = r->chunk_end;      /* its blocks are not read */
        if ((rc = leave_chunk(r)) < 0)
            return rc;
    }
    if (r->st == ST_CHUNK) {
        if ((rc = enter_chunk(r)) <= 0)
            return rc;
        r->walked = true;
        return (rc = walk_streamed(r)) < 0 ? rc : 1;
    }
    return r->st == ST_ERROR ? r->err : 0;
}

/* The first version of rec_chunk_info ended with ticks_per_second. */
#define CHUNK_INFO_SIZE_V1 REC__SIZE_TO(rec_chunk_info, ticks_per_second)

int rec_reader_chunk_sized(const rec_reader *r, rec_chunk_info *info,
                           size_t size)
{
    if (!r || !info || size < CHUNK_INFO_SIZE_V1)
        return REC_EINVAL;
    if (!r->have_chunk)
        return REC_ENOTFOUND;
    long n = rec__sized_out(info, size, &r->info, sizeof r->info,
                            CHUNK_INFO_SIZE_V1);
    info->struct_size = (size_t)n;
    return 0;
}

/* ---- schema of the current chunk ---- */

size_t rec_reader_ntypes(const rec_reader *r)
{
    return r && r->schema ? r->schema->ntypes : 0;
}

const rec_type *rec_reader_type(const rec_reader *r, size_t i)
{
    return r && r->schema && i < r->schema->ntypes ? &r->schema->types[i] : NULL;
}

const rec_type *rec_reader_type_by_name(const rec_reader *r, const char *name)
{
    if (!r || !r->schema || !name)
        return NULL;
    for (size_t i = 0; i < r->schema->ntypes; i++)
        if (strcmp(r->schema->types[i].name, name) == 0)
            return &r->schema->types[i];
    return NULL;
}
