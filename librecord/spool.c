/*
 * librecord/spool.c - reading a recording that comes through a pipe, a
 * FIFO or a socket (rec-start -o - | rec-dump -): a stream that cannot be
 * re-read or seeked.
 *
 * The reader walks files with pread() at chunk offsets. A stream is fed
 * to it one whole chunk at a time through a private in-memory file (a
 * memfd): when the reader wants the chunk header at chunk_off, the next
 * chunk is copied from the stream to that offset, and what lies before it
 * is punched out, so memory holds one chunk (at most REC_MAX_STREAM_CHUNK)
 * whatever the length of the stream. Damage and truncation are then found
 * by the reader's usual checks, with the usual messages.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lz4.h>

#include "format.h"
#include "reader_int.h"

/* read() until n bytes or the end of the stream; bytes read or -1. */
static ssize_t read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, (char *)buf + got, n - got);
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

static int spool_write(rec_reader *r, const void *p, size_t n, uint64_t off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t k = pwrite(r->fd, (const char *)p + done, n - done,
                           (off_t)(off + done));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return rec__io_error(r, off + done);
        done += (size_t)k;
    }
    return 0;
}

/* The next len bytes of the stream into the spool, at its end; a stream
 * that ends first is torn there (the reader reports where). */
static int copy_on(rec_reader *r, uint64_t len)
{
    uint8_t buf[64 << 10];
    int rc;

    for (uint64_t left = len; left > 0;) {
        size_t want = left < sizeof buf ? (size_t)left : sizeof buf;
        ssize_t n = read_full(r->src_fd, buf, want);
        if (n < 0)
            return rec__io_error(r, r->spooled_end);
        if (n > 0 && (rc = spool_write(r, buf, (size_t)n, r->spooled_end)) < 0)
            return rc;
        r->spooled_end += (uint64_t)n;
        left -= (uint64_t)n;
        if ((size_t)n < want) {
            close(r->src_fd);
            r->src_fd = -1;
            break;
        }
    }
    return 0;
}

bool rec__is_stream(int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return false;
    if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode))
        return true;
    return lseek(fd, 0, SEEK_CUR) < 0 && errno == ESPIPE;
}

int rec__spool_init(rec_reader *r, int src)
{
    int fd = memfd_create("rec-stream", MFD_CLOEXEC);
    if (fd < 0)
        return REC_EIO;
    r->fd = fd;
    r->src_fd = src;
    return 0;
}

/* Bring the chunk that starts at r->chunk_off into the spool, if the
 * stream has one: 0 when done (or at the end of the stream: the reader
 * then finds nothing there, or a torn chunk), or an error. */
int rec__spool_next(rec_reader *r)
{
    uint8_t h[REC_CHUNK_HEADER_SIZE];
    uint64_t off = r->chunk_off, size;
    ssize_t n;
    int rc;

    if (r->src_fd < 0 || r->spooled_end > off)
        return 0;       /* no stream, or that chunk is here already */
    if (off > 0 &&
        fallocate(r->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
                  (off_t)off) < 0 && errno != EOPNOTSUPP)
        return rec__io_error(r, off);
    n = read_full(r->src_fd, h, sizeof h);
    if (n < 0)
        return rec__io_error(r, off);
    if (n > 0 && (rc = spool_write(r, h, (size_t)n, off)) < 0)
        return rc;
    r->spooled_end = off + (uint64_t)n;
    if ((size_t)n < sizeof h) {
        close(r->src_fd);       /* the end; what came is the reader's */
        r->src_fd = -1;
        return 0;
    }
    size = le64(h + REC_CH_SIZE);
    if (memcmp(h, REC_MAGIC, REC_MAGIC_LEN) != 0 ||
        size < REC_CHUNK_HEADER_SIZE)
        return 0;       /* the reader says what is wrong */
    if (size > REC_MAX_STREAM_CHUNK)
        return rec__rfail(r, REC_ETOOBIG, off, "chunk of %" PRIu64 " bytes "
                          "in a stream (limit %u)", size,
                          (unsigned)REC_MAX_STREAM_CHUNK);
    return copy_on(r, size - sizeof h);
}

/* The next block of a streamed chunk, at off: its 16-byte header, then
 * its payload, copied as they come (the reader then finds a whole block
 * at off, or the torn end of the stream). 0, or an error. */
int rec__spool_block(rec_reader *r, uint64_t off)
{
    uint8_t bh[REC_BLOCK_HEADER_SIZE];
    ssize_t n;
    int rc;

    if (r->src_fd < 0 || r->spooled_end != off)
        return 0;       /* no stream, or that block is here already */
    n = read_full(r->src_fd, bh, sizeof bh);
    if (n < 0)
        return rec__io_error(r, off);
    if (n > 0 && (rc = spool_write(r, bh, (size_t)n, off)) < 0)
        return rc;
    r->spooled_end = off + (uint64_t)n;
    if ((size_t)n < sizeof bh) {
        close(r->src_fd);
        r->src_fd = -1;
        return 0;
    }
    uint32_t stored = le32(bh + REC_BH_STORED);
    if (stored > (uint32_t)LZ4_COMPRESSBOUND(REC_MAX_BLOCK_RAW))
        return 0;       /* the reader says what is wrong */
    return copy_on(r, stored);
}
