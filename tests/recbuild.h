/*
 * tests/recbuild.h - a raw recording builder for reader tests and the
 * corrupt corpus generator. It writes chunk headers, blocks and CBOR by
 * hand, independently of librecord's writer, so tests can produce exactly
 * the bytes (and the damage) they need. Test-only; header-only.
 */
#ifndef REC_TESTS_RECBUILD_H
#define REC_TESTS_RECBUILD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lz4.h>

#include "format.h"

typedef struct rb_buf {
    uint8_t *p;
    size_t n, cap;
} rb_buf;

static inline void rb_put(rb_buf *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p)
            abort();
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->n, p, n);
    b->n += n;
}

static inline void rb_free(rb_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* ---- CBOR ---- */

static inline void rb_head(rb_buf *b, unsigned major, uint64_t v)
{
    uint8_t h[9];
    size_t n;
    major <<= 5;
    if (v < 24) {
        h[0] = (uint8_t)(major | v);
        n = 1;
    } else if (v <= 0xff) {
        h[0] = (uint8_t)(major | 24);
        h[1] = (uint8_t)v;
        n = 2;
    } else if (v <= 0xffff) {
        h[0] = (uint8_t)(major | 25);
        h[1] = (uint8_t)(v >> 8);
        h[2] = (uint8_t)v;
        n = 3;
    } else if (v <= 0xffffffffu) {
        h[0] = (uint8_t)(major | 26);
        for (int i = 0; i < 4; i++)
            h[1 + i] = (uint8_t)(v >> (24 - 8 * i));
        n = 5;
    } else {
        h[0] = (uint8_t)(major | 27);
        for (int i = 0; i < 8; i++)
            h[1 + i] = (uint8_t)(v >> (56 - 8 * i));
        n = 9;
    }
    rb_put(b, h, n);
}

static inline void rb_uint(rb_buf *b, uint64_t v) { rb_head(b, 0, v); }
static inline void rb_int(rb_buf *b, int64_t v)
{
    if (v >= 0)
        rb_head(b, 0, (uint64_t)v);
    else
        rb_head(b, 1, (uint64_t)(-1 - v));
}
static inline void rb_textn(rb_buf *b, const char *s, size_t n)
{
    rb_head(b, 3, n);
    rb_put(b, s, n);
}
static inline void rb_text(rb_buf *b, const char *s) { rb_textn(b, s, strlen(s)); }
static inline void rb_array(rb_buf *b, uint64_t n) { rb_head(b, 4, n); }
static inline void rb_map(rb_buf *b, uint64_t n) { rb_head(b, 5, n); }
static inline void rb_bool(rb_buf *b, bool v) { uint8_t c = v ? 0xf5 : 0xf4; rb_put(b, &c, 1); }
static inline void rb_null(rb_buf *b) { uint8_t c = 0xf6; rb_put(b, &c, 1); }

/* ---- CRC-32C, bitwise: an independent check of librecord's ---- */

static inline uint32_t rb_crc32c(uint32_t crc, const void *p, size_t n)
{
    const uint8_t *s = p;
    crc = ~crc;
    while (n--) {
        crc ^= *s++;
        for (int k = 0; k < 8; k++)
            crc = crc & 1 ? (crc >> 1) ^ 0x82f63b78u : crc >> 1;
    }
    return ~crc;
}

static inline void rb_le16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void rb_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline void rb_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- file structure ---- */

typedef struct rb_file {
    rb_buf out;
    size_t chunk;            /* offset of the open chunk's header */
    uint32_t index;
    uint16_t major, minor;   /* for the next chunk (default 1.0) */
    uint32_t header_size;    /* default 80 */
} rb_file;

#define RB_START_WALL  1700000000000000000ull
#define RB_START_TICKS 5000000ull
#define RB_TPS         1000000ull

static inline void rb_chunk_begin(rb_file *f)
{
    uint32_t hs = f->header_size ? f->header_size : REC_CHUNK_HEADER_SIZE;
    uint8_t *h = calloc(1, hs);
    f->chunk = f->out.n;
    rb_put(&f->out, h, hs);
    free(h);
}

/* Patch the header of the open chunk: size = bytes so far. */
static inline void rb_chunk_end(rb_file *f, uint8_t state, uint8_t flags)
{
    uint8_t *h = f->out.p + f->chunk;
    uint32_t hs = f->header_size ? f->header_size : REC_CHUNK_HEADER_SIZE;
    memcpy(h + REC_CH_MAGIC, REC_MAGIC, REC_MAGIC_LEN);
    rb_le16(h + REC_CH_MAJOR, f->major ? f->major : 1);
    rb_le16(h + REC_CH_MINOR, f->minor);
    rb_le32(h + REC_CH_HEADER_SIZE, hs);
    rb_le32(h + REC_CH_GENERATION, 2);
    h[REC_CH_STATE] = state;
    h[REC_CH_FLAGS] = flags;
    rb_le64(h + REC_CH_SIZE, f->out.n - f->chunk);
    rb_le64(h + REC_CH_START_WALL, RB_START_WALL);
    rb_le64(h + REC_CH_START_TICKS, RB_START_TICKS);
    rb_le64(h + REC_CH_DURATION, 1000);
    rb_le64(h + REC_CH_TICKS_PER_S, RB_TPS);
    rb_le32(h + REC_CH_INDEX, f->index++);
    rb_le32(h + REC_CH_CRC, rb_crc32c(0, h, REC_CH_CRC));
}

/* Append a block; raw_override (if nonzero) lies about the raw size. */
static inline void rb_block_x(rb_file *f, unsigned kind, bool lz4, const rb_buf *payload,
                              uint32_t raw_override)
{
    uint8_t h[REC_BLOCK_HEADER_SIZE] = { 0 };
    const uint8_t *data = payload->p;
    size_t stored = payload->n;
    char *z = NULL;
    if (lz4) {
        int bound = LZ4_compressBound((int)payload->n);
        z = malloc((size_t)bound + 1);
        stored = (size_t)LZ4_compress_default((const char *)payload->p, z,
                                              (int)payload->n, bound);
        data = (const uint8_t *)z;
    }
    h[REC_BH_KIND] = (uint8_t)kind;
    h[REC_BH_FLAGS] = lz4 ? REC_BLOCK_LZ4 : 0;
    rb_le32(h + REC_BH_STORED, (uint32_t)stored);
    rb_le32(h + REC_BH_RAW, raw_override ? raw_override : (uint32_t)payload->n);
    uint32_t crc = rb_crc32c(0, h, REC_BH_CRC);
    crc = rb_crc32c(crc, data, stored);
    rb_le32(h + REC_BH_CRC, crc);
    rb_put(&f->out, h, sizeof h);
    rb_put(&f->out, data, stored);
    free(z);
}

static inline void rb_block(rb_file *f, unsigned kind, bool lz4, const rb_buf *payload)
{
    rb_block_x(f, kind, lz4, payload, 0);
}

static inline uint64_t rb_rdle(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Recompute the checksums of whatever structure is still walkable. */
static inline void rb_fix_crcs(uint8_t *f, size_t size)
{
    size_t off = 0;
    while (off + REC_CHUNK_HEADER_SIZE <= size) {
        uint8_t *h = f + off;
        uint64_t csize = rb_rdle(h + REC_CH_SIZE, 8);
        uint32_t hs = (uint32_t)rb_rdle(h + REC_CH_HEADER_SIZE, 4);
        rb_le32(h + REC_CH_CRC, rb_crc32c(0, h, REC_CH_CRC));
        if (csize < REC_CHUNK_HEADER_SIZE || csize > size - off || hs > csize)
            return;
        size_t pos = off + hs;
        while (pos + REC_BLOCK_HEADER_SIZE <= off + csize) {
            uint8_t *b = f + pos;
            uint64_t stored = rb_rdle(b + REC_BH_STORED, 4);
            if (stored > off + csize - pos - REC_BLOCK_HEADER_SIZE)
                return;
            uint32_t crc = rb_crc32c(0, b, REC_BH_CRC);
            rb_le32(b + REC_BH_CRC, rb_crc32c(crc, b + REC_BLOCK_HEADER_SIZE, stored));
            pos += REC_BLOCK_HEADER_SIZE + stored;
        }
        off += csize;
    }
}

/* ---- a small schema: enough types for every field encoding ---- */

enum { RB_STRING = 1, RB_THREAD = 2, RB_FRAME = 4, RB_STACK = 5,
       RB_SAMPLE = 32, RB_MARKER = 33 };

static inline void rb_field(rb_buf *b, const char *name, const char *type,
                            bool array, bool nullable)
{
    rb_map(b, 2 + array + nullable);
    rb_text(b, "name");
    rb_text(b, name);
    rb_text(b, "type");
    rb_text(b, type);
    if (array) {
        rb_text(b, "array");
        rb_bool(b, true);
    }
    if (nullable) {
        rb_text(b, "nullable");
        rb_bool(b, true);
    }
}

static inline void rb_type(rb_buf *b, uint32_t id, const char *name, bool event,
                           unsigned nfields)
{
    rb_map(b, 4);
    rb_text(b, "id");
    rb_uint(b, id);
    rb_text(b, "name");
    rb_text(b, name);
    rb_text(b, "kind");
    rb_text(b, event ? "event" : "pool");
    rb_text(b, "fields");
    rb_array(b, nfields);
}

/* Sample fields: eventThread, period, delta, ok, stackTrace, note, startTime */
static inline void rb_mini_metadata(rb_buf *b)
{
    rb_map(b, 2);
    rb_text(b, "version");
    rb_uint(b, 1);
    rb_text(b, "types");
    rb_array(b, 6);
    rb_type(b, RB_STRING, "String", false, 1);
    rb_field(b, "value", "string", false, false);
    rb_type(b, RB_THREAD, "Thread", false, 2);
    rb_field(b, "osThreadId", "uint", false, false);
    rb_field(b, "name", "String", false, true);
    rb_type(b, RB_FRAME, "Frame", false, 2);
    rb_field(b, "function", "String", false, true);
    rb_field(b, "line", "uint", false, true);
    rb_type(b, RB_STACK, "StackTrace", false, 2);
    rb_field(b, "truncated", "boolean", false, false);
    rb_field(b, "frames", "Frame", true, false);
    rb_type(b, RB_SAMPLE, "Sample", true, 7);
    rb_field(b, "eventThread", "Thread", false, false);
    rb_field(b, "period", "uint", false, false);
    rb_field(b, "delta", "int", false, false);
    rb_field(b, "ok", "boolean", false, false);
    rb_field(b, "stackTrace", "StackTrace", false, true);
    rb_field(b, "note", "string", false, true);
    rb_field(b, "startTime", "ticks", false, false);
    rb_type(b, RB_MARKER, "Marker", true, 1);
    rb_field(b, "startTime", "ticks", false, false);
}

/* Pools used by rb_mini_sample: strings 1..3, thread 1, frames 1..2, stack 1. */
static inline void rb_mini_pools(rb_buf *b)
{
    const char *s[] = { "main", "work", "caf\xc3\xa9" };
    for (unsigned i = 0; i < 3; i++) {
        rb_array(b, 3);
        rb_uint(b, RB_STRING);
        rb_uint(b, i + 1);
        rb_text(b, s[i]);
    }
    rb_array(b, 4);
    rb_uint(b, RB_THREAD);
    rb_uint(b, 1);
    rb_uint(b, 4242);
    rb_uint(b, 1);
    for (unsigned i = 0; i < 2; i++) {
        rb_array(b, 4);
        rb_uint(b, RB_FRAME);
        rb_uint(b, i + 1);
        rb_uint(b, i + 2);
        if (i)
            rb_null(b);
        else
            rb_uint(b, 17);
    }
    rb_array(b, 4);
    rb_uint(b, RB_STACK);
    rb_uint(b, 1);
    rb_bool(b, false);
    rb_array(b, 2);
    rb_uint(b, 1);
    rb_uint(b, 2);
}

/* Event i of a deterministic sequence; ticks delta alternates in sign. */
static inline void rb_mini_sample(rb_buf *b, unsigned i)
{
    rb_array(b, 8);
    rb_uint(b, RB_SAMPLE);
    rb_uint(b, 1);                          /* eventThread */
    rb_uint(b, 1000000 + i);                /* period */
    rb_int(b, (int64_t)i * (i & 1 ? -1 : 1));/* delta */
    rb_bool(b, i % 3 == 0);                 /* ok */
    if (i % 4 == 3)
        rb_null(b);
    else
        rb_uint(b, 1);                      /* stackTrace */
    if (i % 2)
        rb_null(b);
    else
        rb_text(b, "n\xc3\xb6te");
    rb_int(b, i % 5 == 4 ? -3 : 10);        /* startTime delta */
}

/* A valid recording: nchunks chunks of nblocks events blocks of per events.
 * Returns the number of events. */
static inline unsigned rb_mini_recording(rb_file *f, unsigned nchunks, unsigned nblocks,
                                         unsigned per, bool lz4)
{
    unsigned n = 0;
    for (unsigned c = 0; c < nchunks; c++) {
        rb_buf m = { 0 }, p = { 0 };
        rb_chunk_begin(f);
        rb_mini_metadata(&m);
        rb_block(f, REC_BLOCK_METADATA, lz4, &m);
        rb_mini_pools(&p);
        rb_block(f, REC_BLOCK_POOL, lz4, &p);
        for (unsigned k = 0; k < nblocks; k++) {
            rb_buf e = { 0 };
            rb_uint(&e, RB_START_TICKS + 100 * k);
            for (unsigned i = 0; i < per; i++)
                rb_mini_sample(&e, n++);
            rb_block(f, REC_BLOCK_EVENTS, lz4, &e);
            rb_free(&e);
        }
        rb_chunk_end(f, REC_STATE_FINISHED, c + 1 == nchunks ? REC_CHUNK_LAST : 0);
        rb_free(&m);
        rb_free(&p);
    }
    return n;
}

static inline int rb_write(const rb_buf *b, const char *path)
{
    FILE *fp = fopen(path, "wb");
    if (!fp)
        return -1;
    size_t w = fwrite(b->p, 1, b->n, fp);
    return fclose(fp) == 0 && w == b->n ? 0 : -1;
}

#endif
