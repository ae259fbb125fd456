/*
 * librecord/relay.c - rec_relay: the chunks a writer writes, piece by piece
 * as it commits them, for a copy kept elsewhere while it goes on
 * (rec-start relays its sampler's in-memory file to a pipe, or mirrors it
 * into a directory of chunk files).
 *
 * Only chunk headers are read, and without waiting: a header caught in an
 * update (odd generation, checksum mismatch) is looked at again at the
 * next call, where a reader would retry and sleep. The bytes of a chunk
 * below its committed size never change (rec-format(5), SEQUENCE LOCK), so
 * a piece of blocks is a range of the source that the caller reads when
 * it likes. A copy's headers follow the format's rules: a file's first
 * header claims the header alone, and each later one comes after the
 * blocks it describes (the writer's order); a streamed chunk's header is
 * sent once, its final one in the END block.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "sized.h"
#include "reader_int.h"

struct rec_relay {
    int fd;
    unsigned mode;
    bool gone;                  /* the writer's process ended */
    int err;                    /* the relay stopped with it */
    uint64_t off;               /* the current chunk in the source */
    uint32_t ordinal;           /* its index in relay order */
    bool in_chunk;              /* its BEGIN piece was given */
    uint64_t given;             /* bytes of it given: header and blocks */
    uint8_t first[REC_CHUNK_HEADER_SIZE];   /* its header at BEGIN */
    uint8_t hdr[REC_CHUNK_HEADER_SIZE];     /* as read last */
    uint8_t shown[REC_CHUNK_HEADER_SIZE];   /* FILE: as given last */
    uint8_t out[REC_BLOCK_HEADER_SIZE + REC_CHUNK_HEADER_SIZE];
    char msg[256];
};

_Static_assert(REC_BLOCK_HEADER_SIZE + REC_CHUNK_HEADER_SIZE <= REC_RELAY_DATA_MAX,
               "an END block fits a piece");

__attribute__((format(printf, 3, 4)))
static int fail(rec_relay *rl, int code, const char *fmt, ...)
{
    char what[192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(rl->msg, sizeof rl->msg, "chunk %" PRIu32 " (offset %" PRIu64
             "): %s", rl->ordinal, rl->off, what);
    rl->err = code;
    return code;
}

static void seal_crc(uint8_t *h)
{
    put32(h + REC_CH_CRC, rec__crc32c(0, h, REC_CH_CRC));
}

/* A header whose checksum holds with its generation one off (a writer
 * that died inside an update) gets that generation: even, consistent. */
static bool mend(uint8_t *h)
{
    uint32_t gen = le32(h + REC_CH_GENERATION);
    for (int d = -1; (gen & 1) && d <= 1; d += 2) {
        put32(h + REC_CH_GENERATION, gen + (uint32_t)d);
        if (rec__crc32c(0, h, REC_CH_CRC) == le32(h + REC_CH_CRC))
            return true;
    }
    put32(h + REC_CH_GENERATION, gen);
    return false;
}

/* The header of the chunk at rl->off into h: 1 consistent and sound, 0
 * not there yet (or in an update by a writer at work), or a code. */
static int peek(rec_relay *rl, uint8_t *h)
{
    ssize_t n = rec__pread_full(rl->fd, h, REC_CHUNK_HEADER_SIZE, rl->off);
    if (n < 0)
        return fail(rl, REC_EIO, "read: %s", strerror(errno));
    size_t m = (size_t)n < REC_MAGIC_LEN ? (size_t)n : REC_MAGIC_LEN;
    if (memcmp(h, REC_MAGIC, m) != 0)
        return fail(rl, REC_EMAGIC, "no chunk header there (bad magic)");
    /* A header is written whole: what is short of one is still coming,
     * or, the writer gone, was never committed. */
    if ((size_t)n < REC_CHUNK_HEADER_SIZE)
        return 0;
    if (le16(h + REC_CH_MAJOR) != REC_FORMAT_MAJOR ||
        le32(h + REC_CH_HEADER_SIZE) != REC_CHUNK_HEADER_SIZE)
        return fail(rl, REC_EVERSION, "format %u.%u, a %" PRIu32 "-byte "
                    "header: not one this library relays",
                    le16(h + REC_CH_MAJOR), le16(h + REC_CH_MINOR),
                    le32(h + REC_CH_HEADER_SIZE));
    uint32_t gen = le32(h + REC_CH_GENERATION);
    bool ok = rec__crc32c(0, h, REC_CH_CRC) == le32(h + REC_CH_CRC);
    if (!rl->gone && ((gen & 1) || !ok))
        return 0;
    if (!ok && !mend(h))
        return fail(rl, REC_ECORRUPT, "chunk header checksum mismatch");
    uint64_t size = le64(h + REC_CH_SIZE), tps = le64(h + REC_CH_TICKS_PER_S);
    if (h[REC_CH_STATE] != REC_STATE_OPEN &&
        h[REC_CH_STATE] != REC_STATE_FINISHED)
        return fail(rl, REC_ECORRUPT, "bad chunk state %u", h[REC_CH_STATE]);
    if (h[REC_CH_FLAGS] & REC_CHUNK_STREAMED)
        return fail(rl, REC_ECORRUPT, "a streamed chunk: relay the file a "
                    "writer wrote");
    if (size < REC_CHUNK_HEADER_SIZE || size > UINT64_MAX - rl->off)
        return fail(rl, REC_ECORRUPT, "bad chunk size %" PRIu64, size);
    if (tps < REC_MIN_TICKS_PER_S || tps > REC_MAX_TICKS_PER_S)
        return fail(rl, REC_ECORRUPT, "ticks per second %" PRIu64 " outside "
                    "%llu..%llu", tps, (unsigned long long)REC_MIN_TICKS_PER_S,
                    (unsigned long long)REC_MAX_TICKS_PER_S);
    /* The writer commits a header after the blocks it describes. */
    struct stat st;
    if (fstat(rl->fd, &st) < 0)
        return fail(rl, REC_EIO, "stat: %s", strerror(errno));
    if ((uint64_t)st.st_size < rl->off + size)
        return fail(rl, REC_ETRUNCATED, "the header says %" PRIu64 " bytes, "
                    "the source holds %" PRIu64, size,
                    (uint64_t)st.st_size - rl->off);
    return 1;
}

static void info_of(const rec_relay *rl, rec_chunk_info *ci)
{
    const uint8_t *h = rl->hdr;
    uint64_t d = le64(h + REC_CH_DURATION), tps = le64(h + REC_CH_TICKS_PER_S);

    memset(ci, 0, sizeof *ci);
    ci->index = rl->ordinal;
    ci->major = le16(h + REC_CH_MAJOR);
    ci->minor = le16(h + REC_CH_MINOR);
    ci->finished = h[REC_CH_STATE] == REC_STATE_FINISHED;
    ci->last = h[REC_CH_FLAGS] & REC_CHUNK_LAST;
    ci->offset = rl->off;
    ci->size = le64(h + REC_CH_SIZE);
    ci->start_ns = le64(h + REC_CH_START_WALL);
    ci->duration_ns = d / tps * 1000000000u +
                      (uint64_t)((unsigned __int128)(d % tps) * 1000000000u / tps);
    ci->ticks_per_second = tps;
}

static int give(rec_relay *rl, rec_relay_piece *p, enum rec_relay_kind kind,
                uint64_t pos, uint64_t len, const void *data)
{
    info_of(rl, &p->chunk);
    p->kind = kind;
    p->pos = pos;
    p->len = len;
    p->data = data;
    p->source = data ? 0 : rl->off + pos;
    /* The last piece of a chunk: the next call looks for the one after. */
    p->complete = p->chunk.finished &&
                  (kind == (rl->mode == REC_RELAY_STREAMED ? REC_RELAY_END
                                                           : REC_RELAY_HEADER));
    if (p->complete) {
        rl->in_chunk = false;
        rl->off += p->chunk.size;
        rl->ordinal++;
    }
    return 1;
}

/* A new chunk's first header in a copy: OPEN, with the header's size
 * alone (a file's, until its blocks are there) and, streamed, marked so. */
static void first_header(rec_relay *rl)
{
    uint8_t *m = rl->out;
    memcpy(m, rl->hdr, REC_CHUNK_HEADER_SIZE);
    put32(m + REC_CH_GENERATION, 0);
    m[REC_CH_STATE] = REC_STATE_OPEN;
    if (rl->mode == REC_RELAY_STREAMED)
        m[REC_CH_FLAGS] |= REC_CHUNK_STREAMED;
    else
        m[REC_CH_FLAGS] &= (uint8_t)~REC_CHUNK_LAST;
    put64(m + REC_CH_SIZE, REC_CHUNK_HEADER_SIZE);
    seal_crc(m);
}

/* The END block: the chunk's final header as a file holds it. */
static void end_block(rec_relay *rl)
{
    uint8_t *b = rl->out;
    memset(b, 0, REC_BLOCK_HEADER_SIZE);
    b[REC_BH_KIND] = REC_BLOCK_END;
    put32(b + REC_BH_STORED, REC_CHUNK_HEADER_SIZE);
    put32(b + REC_BH_RAW, REC_CHUNK_HEADER_SIZE);
    memcpy(b + REC_BLOCK_HEADER_SIZE, rl->hdr, REC_CHUNK_HEADER_SIZE);
    uint32_t crc = rec__crc32c(0, b, REC_BH_CRC);
    put32(b + REC_BH_CRC, rec__crc32c(crc, rl->hdr, REC_CHUNK_HEADER_SIZE));
}

/* A header read again must be the same chunk's, grown. */
static int check_same(rec_relay *rl, const uint8_t *h)
{
    static const struct { unsigned at, n; } id[] = {
        { REC_CH_START_WALL, 8 }, { REC_CH_START_TICKS, 8 },
        { REC_CH_TICKS_PER_S, 8 }, { REC_CH_INDEX, 4 },
        { REC_CH_WRITER_PID, 4 },
    };
    for (size_t i = 0; i < sizeof id / sizeof id[0]; i++)
        if (memcmp(h + id[i].at, rl->first + id[i].at, id[i].n) != 0)
            return fail(rl, REC_ECORRUPT, "the chunk header now describes "
                        "another chunk (the source was rewritten)");
    if (le64(h + REC_CH_SIZE) < rl->given)
        return fail(rl, REC_ECORRUPT, "chunk size went back from %" PRIu64
                    " to %" PRIu64 " bytes", rl->given, le64(h + REC_CH_SIZE));
    if (rl->hdr[REC_CH_STATE] == REC_STATE_FINISHED &&
        h[REC_CH_STATE] != REC_STATE_FINISHED)
        return fail(rl, REC_ECORRUPT, "a finished chunk is open again");
    return 0;
}

int rec_relay_next(rec_relay *rl, rec_relay_piece *p)
{
    int rc;

    if (!rl || !p)
        return REC_EINVAL;
    if (rl->err)
        return rl->err;
    memset(p, 0, sizeof *p);
    if (!rl->in_chunk) {
        if ((rc = peek(rl, rl->hdr)) <= 0)
            return rc;
        memcpy(rl->first, rl->hdr, sizeof rl->first);
        rl->in_chunk = true;
        rl->given = REC_CHUNK_HEADER_SIZE;
        first_header(rl);
        memcpy(rl->shown, rl->out, sizeof rl->shown);
        return give(rl, p, REC_RELAY_BEGIN, 0, REC_CHUNK_HEADER_SIZE, rl->out);
    }
    /* What the header read last commits, else one look for more. */
    for (bool looked = false;; looked = true) {
        uint64_t size = le64(rl->hdr + REC_CH_SIZE);
        bool fin = rl->hdr[REC_CH_STATE] == REC_STATE_FINISHED;
        if (size > rl->given) {
            uint64_t from = rl->given;
            rl->given = size;
            return give(rl, p, REC_RELAY_BLOCKS, from, size - from, NULL);
        }
        if (rl->mode == REC_RELAY_FILE &&
            memcmp(rl->hdr, rl->shown, sizeof rl->shown) != 0) {
            memcpy(rl->shown, rl->hdr, sizeof rl->shown);
            memcpy(rl->out, rl->hdr, sizeof rl->shown);
            return give(rl, p, REC_RELAY_HEADER, 0, REC_CHUNK_HEADER_SIZE,
                        rl->out);
        }
        if (rl->mode == REC_RELAY_STREAMED && fin) {
            end_block(rl);
            return give(rl, p, REC_RELAY_END, size,
                        REC_BLOCK_HEADER_SIZE + REC_CHUNK_HEADER_SIZE, rl->out);
        }
        if (looked)
            return 0;
        uint8_t h[REC_CHUNK_HEADER_SIZE];
        if ((rc = peek(rl, h)) <= 0)
            return rc;
        if ((rc = check_same(rl, h)) < 0)
            return rc;
        memcpy(rl->hdr, h, sizeof h);
    }
}

const char *rec_relay_message(const rec_relay *rl)
{
    return rl ? rl->msg : "";
}

void rec_relay_writer_gone(rec_relay *rl)
{
    if (rl)
        rl->gone = true;
}

/* The first version's options: size, mode, offset. */
#define RELAY_OPTIONS_V1 REC__SIZE_TO(rec_relay_options, offset)

int rec_relay_options_init_sized(rec_relay_options *opt, size_t size)
{
    rec_relay_options o;

    memset(&o, 0, sizeof o);
    o.size = size;
    o.mode = REC_RELAY_FILE;
    if (rec__sized_out(opt, size, &o, sizeof o, RELAY_OPTIONS_V1) < 0)
        return REC_EINVAL;
    return 0;
}

int rec_relay_open(rec_relay **out, int fd, const rec_relay_options *opt)
{
    rec_relay_options o;
    int rc;

    if (!out)
        return REC_EINVAL;
    *out = NULL;
    memset(&o, 0, sizeof o);
    o.mode = REC_RELAY_FILE;
    /* A caller built against other headers passes its size: the library
     * reads that many bytes and no more (librecord(3), VERSIONS AND ABI). */
    if (opt && (rc = rec__sized_in(&o, sizeof o, opt, opt->size,
                                   RELAY_OPTIONS_V1)) < 0)
        return rc;
    if (fd < 0 || o.mode > REC_RELAY_STREAMED)
        return REC_EINVAL;
    rec_relay *rl = calloc(1, sizeof *rl);
    if (!rl)
        return REC_ENOMEM;
    rl->fd = fd;
    rl->mode = o.mode;
    rl->off = o.offset;
    *out = rl;
    return 0;
}

void rec_relay_close(rec_relay *rl)
{
    free(rl);
}

/* A ticks value of one frequency in another (exact when they are equal). */
static uint64_t reticks(uint64_t v, uint64_t to, uint64_t from)
{
    if (to == from)
        return v;
    return (uint64_t)((unsigned __int128)v * to / from);
}

int rec_relay_place(void *chunk, size_t len, int fd, uint64_t offset)
{
    uint8_t *h = chunk, o[REC_CHUNK_HEADER_SIZE];

    if (!h || len < REC_CHUNK_HEADER_SIZE ||
        memcmp(h, REC_MAGIC, REC_MAGIC_LEN) != 0 ||
        le16(h + REC_CH_MAJOR) != REC_FORMAT_MAJOR ||
        le32(h + REC_CH_HEADER_SIZE) != REC_CHUNK_HEADER_SIZE ||
        rec__crc32c(0, h, REC_CH_CRC) != le32(h + REC_CH_CRC) ||
        h[REC_CH_STATE] != REC_STATE_FINISHED ||
        (h[REC_CH_FLAGS] & REC_CHUNK_STREAMED) || le64(h + REC_CH_SIZE) != len)
        return REC_EINVAL;
    ssize_t n = rec__pread_full(fd, o, sizeof o, offset);
    if (n < 0)
        return REC_EIO;
    if ((size_t)n < sizeof o)
        return REC_ETRUNCATED;
    if (memcmp(o, REC_MAGIC, REC_MAGIC_LEN) != 0)
        return REC_EMAGIC;
    if (le16(o + REC_CH_MAJOR) != REC_FORMAT_MAJOR ||
        le32(o + REC_CH_HEADER_SIZE) != REC_CHUNK_HEADER_SIZE)
        return REC_EVERSION;
    uint64_t to = le64(h + REC_CH_TICKS_PER_S), from = le64(o + REC_CH_TICKS_PER_S);
    if (!rec__header_crc_ok(o) || from < REC_MIN_TICKS_PER_S ||
        from > REC_MAX_TICKS_PER_S || to < REC_MIN_TICKS_PER_S ||
        to > REC_MAX_TICKS_PER_S)
        return REC_ECORRUPT;
    /* Times in the chunk's own ticks: its events are in them. */
    memcpy(h + REC_CH_START_WALL, o + REC_CH_START_WALL, 8);
    put64(h + REC_CH_START_TICKS,
          reticks(le64(o + REC_CH_START_TICKS), to, from));
    put64(h + REC_CH_DURATION, reticks(le64(o + REC_CH_DURATION), to, from));
    memcpy(h + REC_CH_INDEX, o + REC_CH_INDEX, 4);
    memcpy(h + REC_CH_WRITER_PID, o + REC_CH_WRITER_PID, 4);
    h[REC_CH_FLAGS] = o[REC_CH_FLAGS] & (uint8_t)~REC_CHUNK_STREAMED;
    seal_crc(h);
    return 0;
}
