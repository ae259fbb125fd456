/*
 * librecord/copy.c - rec_reader_copy(): the whole chunks of a time window
 * copied byte for byte into one recording (rec-dump --format rec).
 *
 * Chunks are self-contained (each has its schema and pools), so a run of
 * them copied as they are is a valid recording. Two headers may need
 * rewriting: a chunk still OPEN is copied up to its last flush and marked
 * FINISHED at that size (what the writer would do at a rotation), and the
 * last chunk copied gets the LAST flag so that the copy reads as a closed
 * recording. Which chunk is the last is known only when the walk finds no
 * other one in the window, so each chunk is held back (its header and a
 * descriptor of its file, not its bytes) until the next one turns up.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "reader_int.h"

#define COPY_BUF (64u << 10)

/* A chunk found in the window, not written yet. */
struct held {
    bool have;
    int fd;             /* its own descriptor: retention may remove the
                         * file while it waits */
    char *path;
    uint32_t chunk_no;
    uint64_t off, size;
    uint8_t hdr[REC_CHUNK_HEADER_SIZE];
};

static void drop(struct held *h)
{
    if (h->have && h->fd >= 0)
        close(h->fd);
    free(h->path);
    memset(h, 0, sizeof *h);
    h->fd = -1;
}

/* Hold the reader's current chunk. */
static int hold(rec_reader *r, struct held *h)
{
    drop(h);
    h->fd = fcntl(r->fd, F_DUPFD_CLOEXEC, 0);
    if (h->fd < 0)
        return rec__io_error(r, r->chunk_off);
    if (!(h->path = strdup(r->path))) {
        close(h->fd);
        h->fd = -1;
        return REC_ENOMEM;
    }
    h->have = true;
    h->chunk_no = r->chunk_no;
    h->off = r->chunk_off;
    memcpy(h->hdr, r->hdr_raw, sizeof h->hdr);
    /* A streamed chunk (rec-format(5)) is copied as a file holds it: the
     * bytes its final header describes, without the END block; one that
     * never ended, up to its last whole block. */
    h->size = h->hdr[REC_CH_FLAGS] & REC_CHUNK_STREAMED
              ? r->chunk_end - r->chunk_off : le64(h->hdr + REC_CH_SIZE);
    return 0;
}

static int held_fail(rec_reader *r, const struct held *h, int code,
                     uint64_t off, const char *what)
{
    snprintf(r->msg, sizeof r->msg, "%s: chunk %" PRIu32 ", offset %" PRIu64
             ": %s", h->path, h->chunk_no, off, what);
    r->st = ST_ERROR;
    r->err = code;
    r->resumable = false;
    return code;
}

static int emit(const struct held *h, bool last, uint8_t *buf,
                rec_reader *r, int (*out)(void *, const void *, size_t),
                void *ctx)
{
    uint8_t hd[REC_CHUNK_HEADER_SIZE];
    uint32_t gen = le32(h->hdr + REC_CH_GENERATION);
    int rc;
    memcpy(hd, h->hdr, sizeof hd);
    /* The size field already says h->size: the header was read with it. An
     * odd generation (a writer that died inside an update, the checksum
     * matching a neighbour) is made even: the copy is not being written. */
    if (hd[REC_CH_STATE] != REC_STATE_FINISHED ||
        (last && !(hd[REC_CH_FLAGS] & REC_CHUNK_LAST)) || (gen & 1) ||
        (hd[REC_CH_FLAGS] & REC_CHUNK_STREAMED)) {
        hd[REC_CH_STATE] = REC_STATE_FINISHED;
        hd[REC_CH_FLAGS] &= (uint8_t)~REC_CHUNK_STREAMED;
        for (int i = 0; i < 8; i++)
            hd[REC_CH_SIZE + i] = (uint8_t)(h->size >> (8 * i));
        if (last)
            hd[REC_CH_FLAGS] |= REC_CHUNK_LAST;
        put32(hd + REC_CH_GENERATION, gen + (gen & 1));
        put32(hd + REC_CH_CRC, rec__crc32c(0, hd, REC_CH_CRC));
    }
    if ((rc = out(ctx, hd, sizeof hd)) < 0)
        return rc;
    for (uint64_t pos = sizeof hd; pos < h->size;) {
        size_t want = h->size - pos < COPY_BUF ? (size_t)(h->size - pos) : COPY_BUF;
        ssize_t n = rec__pread_full(h->fd, buf, want, h->off + pos);
        if (n < 0) {
            char what[160];
            snprintf(what, sizeof what, "read: %s", strerror(errno));
            return held_fail(r, h, REC_EIO, h->off + pos, what);
        }
        if ((size_t)n < want)
            return held_fail(r, h, REC_ETRUNCATED, h->off + pos + (uint64_t)n,
                             "the file is shorter than its chunk header says "
                             "(truncated while being copied?)");
        if ((rc = out(ctx, buf, want)) < 0)
            return rc;
        pos += want;
    }
    return 0;
}

int rec_reader_copy(rec_reader *r, uint64_t since_ns, uint64_t until_ns,
                    int (*out)(void *ctx, const void *data, size_t len),
                    void *ctx, uint64_t *nchunks)
{
    struct held h = { .fd = -1 };
    uint64_t n = 0;
    int rc, wrc = 0;
    if (nchunks)
        *nchunks = 0;
    /* A stream's chunks are gone from its spool once the next one came. */
    if (!r || !out || r->src_fd >= 0 || r->spooled_end)
        return REC_EINVAL;
    uint8_t *buf = malloc(COPY_BUF);
    if (!buf)
        return REC_ENOMEM;
    while ((rc = rec_reader_next_chunk(r)) > 0) {
        const rec_chunk_info *c = &r->info;
        uint64_t end = c->start_ns + c->duration_ns;
        if (end < c->start_ns)
            end = UINT64_MAX;
        if (c->start_ns >= until_ns || end < since_ns)
            continue;
        if (h.have) {
            if ((wrc = emit(&h, false, buf, r, out, ctx)) < 0)
                break;
            n++;
        }
        if ((wrc = hold(r, &h)) < 0)
            break;
    }
    /* What was valid before an error is copied, as readers print every
     * valid event before reporting one; the copy is closed all the same. */
    if (wrc == 0 && h.have && (wrc = emit(&h, true, buf, r, out, ctx)) == 0)
        n++;
    drop(&h);
    free(buf);
    if (nchunks)
        *nchunks = n;
    return wrc < 0 ? wrc : rc < 0 ? rc : 0;
}
