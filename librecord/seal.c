/*
 * librecord/seal.c - finishing a recording whose writer is gone: a process
 * that ended without closing it (a raw exit_group, SIGKILL, the OOM
 * killer) leaves its last chunk OPEN, or a rotation half done. The caller
 * (rec-start, which waited for the process) finishes the last chunk at its
 * committed size, cuts what was never committed, and continues the
 * recording in a chunk flagged SEALED for the events only it knows.
 *
 * Only the committed part of the file is kept, as every reader reads it:
 * nothing a reader could see before is lost. The header update follows
 * the sequence lock of rec-format(5), so a follower still reading sees
 * either the OPEN chunk or the FINISHED one.
 */
#include <config.h>
#include "internal.h"
#include "reader_int.h"
#include "crc32c.h"
#include "format.h"
#include "sized.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A chunk header as read back: 1 valid, 0 the file ends at off (or inside
 * the header: a rotation that died before its header was whole), < 0 the
 * header is damaged. */
static int header_at(int fd, uint64_t off, uint8_t *b)
{
    ssize_t n = rec__pread_full(fd, b, REC_CHUNK_HEADER_SIZE, off);

    if (n < 0)
        return REC_EIO;
    if ((size_t)n < REC_CHUNK_HEADER_SIZE)
        return n > 0 && off == 0 ? REC_EMAGIC : 0;
    if (memcmp(b, REC_MAGIC, REC_MAGIC_LEN))
        return off == 0 ? REC_EMAGIC : REC_ECORRUPT;
    if (le16(b + REC_CH_MAJOR) != REC_FORMAT_MAJOR)
        return REC_EVERSION;
    return rec__header_crc_ok(b) ? 1 : REC_ECORRUPT;
}

static int pwrite_full(int fd, const void *p, size_t n, uint64_t off)
{
    const uint8_t *c = p;

    while (n) {
        ssize_t w = pwrite(fd, c, n, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return REC_EIO;
        c += w;
        n -= (size_t)w;
        off += (uint64_t)w;
    }
    return 0;
}

/* Mark the OPEN chunk at off FINISHED at its committed size (the next
 * odd generation, the fields, the even one after it: rec-format(5),
 * SEQUENCE LOCK; a torn odd generation is reused). */
static int finish_open(int fd, uint64_t off, uint8_t *b)
{
    uint32_t gen = le32(b + REC_CH_GENERATION) | 1;
    uint8_t g[4];
    int rc;

    put32(g, gen);
    if ((rc = pwrite_full(fd, g, 4, off + REC_CH_GENERATION)) < 0)
        return rc;
    b[REC_CH_STATE] = REC_STATE_FINISHED;
    put32(b + REC_CH_GENERATION, gen + 1);
    put32(b + REC_CH_CRC, rec__crc32c(0, b, REC_CH_CRC));
    if ((rc = pwrite_full(fd, b + REC_CH_STATE,
                          REC_CHUNK_HEADER_SIZE - REC_CH_STATE,
                          off + REC_CH_STATE)) < 0)
        return rc;
    put32(g, gen + 1);
    return pwrite_full(fd, g, 4, off + REC_CH_GENERATION);
}

/* The first version of rec_seal_info ended with was_open. */
#define SEAL_INFO_SIZE_V1 REC__SIZE_TO(rec_seal_info, was_open)

int rec_writer_open_seal(rec_writer **out, const char *path,
                         rec_seal_info *info)
{
    uint8_t b[REC_CHUNK_HEADER_SIZE];
    uint64_t off = 0, end;
    rec__seal_at at = { 0, 0, REC_CHUNK_SEALED };
    bool any = false, open_chunk = false, last = false;
    struct stat st;
    rec_seal_info got;
    int fd, rc = 0;

    if (!out || !path || (info && info->size < SEAL_INFO_SIZE_V1))
        return REC_EINVAL;
    *out = NULL;
    memset(&got, 0, sizeof got);
    fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return REC_EIO;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return REC_EIO;
    }
    end = (uint64_t)st.st_size;
    /* Chunk by chunk to the last one. */
    for (;;) {
        uint64_t size;
        rc = header_at(fd, off, b);
        if (rc <= 0)
            break;
        size = le64(b + REC_CH_SIZE);
        /* Only an OPEN chunk may claim more than the file holds. */
        if (size < REC_CHUNK_HEADER_SIZE ||
            (size > end - off && b[REC_CH_STATE] != REC_STATE_OPEN)) {
            rc = REC_ECORRUPT;
            break;
        }
        any = true;
        at.index = le32(b + REC_CH_INDEX) + 1;
        last = b[REC_CH_FLAGS] & REC_CHUNK_LAST;
        if (b[REC_CH_STATE] == REC_STATE_OPEN) {
            open_chunk = true;
            break;
        }
        off += size;
        if (off == end)
            break;
    }
    if (rc < 0) {
        /* Damage is not ours to cut away: readers report it. */
        close(fd);
        return rc;
    }
    if (!any) {
        close(fd);
        return REC_EMAGIC;
    }
    if (!open_chunk && last && off == end) {
        close(fd);
        return REC_EEXIST;          /* closed cleanly: nothing to seal */
    }
    if (open_chunk) {
        uint64_t size = le64(b + REC_CH_SIZE);
        if (size > end - off)
            size = end - off;       /* never beyond the file */
        put64(b + REC_CH_SIZE, size);
        if ((rc = finish_open(fd, off, b)) < 0) {
            close(fd);
            return rc;
        }
        off += size;
    }
    got.committed = off;
    got.dropped = end - off;
    got.was_open = open_chunk;
    if (info) {
        /* The caller set the size, not its compiler: nothing is written
         * past it, and the bytes of a newer, larger struct that this
         * library does not know are left alone. */
        size_t n = info->size < sizeof got ? info->size : sizeof got;
        memcpy((char *)info + sizeof got.size, (char *)&got + sizeof got.size,
               n - sizeof got.size);
    }
    /* What follows the committed data was never published. */
    if (off < end && ftruncate(fd, (off_t)off) != 0) {
        close(fd);
        return REC_EIO;
    }
    at.offset = off;
    if ((rc = rec__writer_open_at(out, fd, &at)) < 0) {
        /* Nothing half written stays behind (a file size limit, a full
         * disk): the recording ends at its committed data, as before. */
        int e = errno;
        if ((fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)) >= 0) {
            if (ftruncate(fd, (off_t)off) != 0) {
                /* left as the failed write left it: readers report it */
            }
            close(fd);
        }
        errno = e;
    }
    return rc;
}
