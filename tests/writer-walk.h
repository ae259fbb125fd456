/*
 * tests/writer-walk.h - a minimal, test-only walker over a recording that
 * checks its structure independently of librecord's reader: chunk headers,
 * CRCs, block kinds, and that every pool reference of an event or entry
 * is defined earlier in the same chunk. Events are handed to a callback.
 */
#ifndef REC_TESTS_WRITER_WALK_H
#define REC_TESTS_WRITER_WALK_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lz4.h>
#include "format.h"
#include "crc32c.h"

static uint64_t ww_le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* ---- tiny CBOR reader (well-formed input from our writer, still bounded) ---- */
struct ww_cur { const unsigned char *p, *end; int err; };

enum { WW_UINT, WW_NEG, WW_TEXT, WW_ARRAY, WW_MAP, WW_FALSE, WW_TRUE, WW_NULL, WW_OTHER };

struct ww_item { int kind; uint64_t v; const unsigned char *s; };

static int ww_head(struct ww_cur *c, struct ww_item *it)
{
    if (c->err || c->p >= c->end)
        return c->err = 1;
    unsigned b = *c->p++, major = b >> 5, ai = b & 31;
    uint64_t v = ai;
    if (ai >= 24 && ai <= 27) {
        int n = 1 << (ai - 24);
        if (c->end - c->p < n)
            return c->err = 1;
        v = 0;
        for (int i = 0; i < n; i++)
            v = v << 8 | *c->p++;
    } else if (ai > 27) {
        return c->err = 1;
    }
    it->v = v;
    switch (major) {
    case 0: it->kind = WW_UINT; break;
    case 1: it->kind = WW_NEG; break;
    case 3:
        if ((uint64_t)(c->end - c->p) < v)
            return c->err = 1;
        it->kind = WW_TEXT;
        it->s = c->p;
        c->p += v;
        break;
    case 4: it->kind = WW_ARRAY; break;
    case 5: it->kind = WW_MAP; break;
    case 7: it->kind = ai == 20 ? WW_FALSE : ai == 21 ? WW_TRUE : ai == 22 ? WW_NULL : WW_OTHER; break;
    default: it->kind = WW_OTHER; break;
    }
    return 0;
}

static int ww_skip(struct ww_cur *c, int depth)
{
    struct ww_item it;
    if (depth > 16 || ww_head(c, &it))
        return c->err = 1;
    if (it.kind == WW_ARRAY || it.kind == WW_MAP) {
        uint64_t n = it.kind == WW_MAP ? it.v * 2 : it.v;
        for (uint64_t i = 0; i < n; i++)
            if (ww_skip(c, depth + 1))
                return 1;
    }
    return 0;
}

/* ---- the walk ---- */
#define WW_MAXTYPE 64
#define WW_MAXID (1u << 16)

struct ww_event {
    unsigned chunk;
    uint64_t type;
    uint64_t ticks;                /* absolute: baseTicks + deltas */
    struct ww_item f[16];          /* top-level fields (arrays: header only) */
    unsigned nf;
};

struct ww_stats {
    unsigned chunks, blocks, events, pool_entries;
    unsigned metadata_first;       /* chunks whose first block is METADATA */
    unsigned finished, last_flags, open;
    uint64_t first_chunk_size;
    char error[256];
};

typedef void ww_event_fn(const struct ww_event *ev, void *arg);

/* Field kinds of pool types referenced by the schema, to check references:
 * for each (type id, field index) the referenced type id, 0 if none. This
 * mirrors schemas/events.json for the types the tests use. */
static unsigned ww_ref_of(uint64_t type, unsigned field)
{
    switch (type) {
    case 2:  return field == 1 ? 1 : 0;                              /* Thread.name */
    case 3:  return field <= 1 ? 1 : 0;                              /* Module.path, buildId */
    case 4:  return field == 0 || field == 1 || field == 3 ? 1 : 0;  /* Frame strings */
    case 5:  return field == 1 ? 4 : 0;                              /* StackTrace.frames */
    case 32: return field == 0 ? 2 : field == 4 ? 5 : 0;
    case 33: return field == 0 ? 2 : field == 3 ? 1 : 0;
    case 34: return field <= 1 ? 2 : 0;
    case 35: return field == 0 ? 2 : 0;
    case 39: return field == 0 ? 3 : 0;
    default: return 0;
    }
}

static int ww_fail(struct ww_stats *st, const char *fmt, unsigned long a, unsigned long b)
{
    if (!st->error[0])
        snprintf(st->error, sizeof st->error, fmt, a, b);
    return -1;
}

/* defined[type][id] = chunk index + 1 when the entry was seen. */
static unsigned *ww_defined;

static int ww_check_ref(struct ww_stats *st, unsigned reftype, const struct ww_item *it,
                        unsigned chunk)
{
    if (!reftype || it->kind == WW_NULL)
        return 0;
    if (it->kind != WW_UINT || it->v == 0 || it->v >= WW_MAXID)
        return ww_fail(st, "bad reference kind %lu in chunk %lu", it->kind, chunk);
    if (ww_defined[reftype * WW_MAXID + it->v] != chunk + 1)
        return ww_fail(st, "reference to type %lu id %lu not defined before use in this chunk",
                       reftype, it->v);
    return 0;
}

static int ww_payload(struct ww_stats *st, unsigned kind, const unsigned char *p, size_t n,
                      unsigned chunk, ww_event_fn *fn, void *arg)
{
    struct ww_cur c = { p, p + n, 0 };
    if (kind == REC_BLOCK_METADATA) {
        struct ww_item it;
        if (ww_head(&c, &it) || it.kind != WW_MAP)
            return ww_fail(st, "metadata is not a map (chunk %lu)%lu", chunk, 0);
        return 0;
    }
    if (kind == REC_BLOCK_POOL) {
        while (c.p < c.end) {
            struct ww_item a, t, id;
            if (ww_head(&c, &a) || a.kind != WW_ARRAY || a.v < 2 || ww_head(&c, &t) ||
                ww_head(&c, &id) || t.v >= WW_MAXTYPE || id.v == 0 || id.v >= WW_MAXID)
                return ww_fail(st, "bad pool entry in chunk %lu%lu", chunk, 0);
            for (unsigned f = 0; f + 2 < a.v; f++) {
                struct ww_item x;
                const unsigned char *save = c.p;
                if (ww_head(&c, &x))
                    return ww_fail(st, "bad pool field in chunk %lu%lu", chunk, 0);
                unsigned rt = ww_ref_of(t.v, f);
                if (x.kind == WW_ARRAY) {
                    for (uint64_t i = 0; i < x.v; i++) {
                        struct ww_item y;
                        if (ww_head(&c, &y) || ww_check_ref(st, rt, &y, chunk))
                            return -1;
                    }
                } else if (ww_check_ref(st, rt, &x, chunk)) {
                    return -1;
                }
                (void)save;
            }
            ww_defined[t.v * WW_MAXID + id.v] = chunk + 1;
            st->pool_entries++;
        }
        return 0;
    }
    if (kind == REC_BLOCK_EVENTS) {
        struct ww_item base;
        if (ww_head(&c, &base) || base.kind != WW_UINT)
            return ww_fail(st, "EVENTS block without baseTicks (chunk %lu)%lu", chunk, 0);
        uint64_t ticks = base.v;
        while (c.p < c.end) {
            struct ww_item a, t;
            struct ww_event ev = { .chunk = chunk };
            if (ww_head(&c, &a) || a.kind != WW_ARRAY || a.v < 2 || ww_head(&c, &t))
                return ww_fail(st, "bad event in chunk %lu%lu", chunk, 0);
            ev.type = t.v;
            for (unsigned f = 0; f + 1 < a.v; f++) {
                struct ww_item x;
                if (ww_head(&c, &x))
                    return ww_fail(st, "bad event field in chunk %lu%lu", chunk, 0);
                if (x.kind == WW_ARRAY)
                    for (uint64_t i = 0; i < x.v; i++)
                        ww_skip(&c, 1);
                if (ww_check_ref(st, ww_ref_of(t.v, f), &x, chunk))
                    return -1;
                /* the last field of every schema event is its startTime */
                if (f + 2 == a.v) {
                    if (x.kind == WW_UINT)
                        ticks += x.v;
                    else if (x.kind == WW_NEG)
                        ticks -= x.v + 1;
                    else
                        return ww_fail(st, "startTime is not an integer (chunk %lu)%lu", chunk, 0);
                }
                if (ev.nf < 16)
                    ev.f[ev.nf++] = x;
            }
            ev.ticks = ticks;
            st->events++;
            if (fn)
                fn(&ev, arg);
        }
        return c.err ? ww_fail(st, "truncated event (chunk %lu)%lu", chunk, 0) : 0;
    }
    return ww_fail(st, "unknown block kind %lu%lu", kind, 0);
}

/* Walk the whole file; 0 if it is well formed. With `open_ok`, chunks may
 * be OPEN (a recording still being written): read up to chunk_size. */
static int ww_walk(const char *path, int open_ok, struct ww_stats *st, ww_event_fn *fn, void *arg)
{
    memset(st, 0, sizeof *st);
    FILE *f = fopen(path, "rb");
    if (!f)
        return ww_fail(st, "cannot open file%lu%lu", 0, 0);
    fseek(f, 0, SEEK_END);
    long fsz = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *d = malloc(fsz > 0 ? (size_t)fsz : 1);
    if (!d || fread(d, 1, (size_t)fsz, f) != (size_t)fsz) {
        fclose(f);
        free(d);
        return ww_fail(st, "cannot read file%lu%lu", 0, 0);
    }
    fclose(f);
    if (!ww_defined)
        ww_defined = calloc((size_t)WW_MAXTYPE * WW_MAXID, sizeof *ww_defined);
    memset(ww_defined, 0, (size_t)WW_MAXTYPE * WW_MAXID * sizeof *ww_defined);
    int rc = 0;
    uint64_t off = 0, size = (uint64_t)fsz;
    unsigned char *raw = malloc(REC_MAX_BLOCK_RAW);
    while (off < size && !rc) {
        const unsigned char *h = d + off;
        unsigned chunk = st->chunks;
        if (size - off < REC_CHUNK_HEADER_SIZE || memcmp(h, REC_MAGIC, REC_MAGIC_LEN)) {
            rc = ww_fail(st, "no chunk header at offset %lu%lu", off, 0);
            break;
        }
        if (ww_le(h + REC_CH_MAJOR, 2) != 1 || ww_le(h + REC_CH_HEADER_SIZE, 4) != 80 ||
            ww_le(h + REC_CH_GENERATION, 4) & 1 ||
            rec__crc32c(0, h, REC_CH_CRC) != ww_le(h + REC_CH_CRC, 4)) {
            rc = ww_fail(st, "bad chunk header (chunk %lu, offset %lu)", chunk, off);
            break;
        }
        uint64_t csize = ww_le(h + REC_CH_SIZE, 8);
        unsigned state = h[REC_CH_STATE];
        if (chunk == 0)
            st->first_chunk_size = csize;
        if (ww_le(h + REC_CH_TICKS_PER_S, 8) == 0 || csize < 80 || csize > size - off) {
            rc = ww_fail(st, "bad chunk size or tick rate (chunk %lu)%lu", chunk, 0);
            break;
        }
        if (state == REC_STATE_FINISHED)
            st->finished++;
        else if (state == REC_STATE_OPEN && open_ok)
            st->open++;
        else {
            rc = ww_fail(st, "chunk %lu in state %lu", chunk, state);
            break;
        }
        if (h[REC_CH_FLAGS] & REC_CHUNK_LAST)
            st->last_flags++;
        uint64_t p = off + REC_CHUNK_HEADER_SIZE;
        int first = 1;
        while (p < off + csize && !rc) {
            const unsigned char *b = d + p;
            if (off + csize - p < REC_BLOCK_HEADER_SIZE) {
                rc = ww_fail(st, "block header overruns chunk %lu%lu", chunk, 0);
                break;
            }
            uint64_t stored = ww_le(b + REC_BH_STORED, 4), rawn = ww_le(b + REC_BH_RAW, 4);
            if (stored > off + csize - p - REC_BLOCK_HEADER_SIZE || rawn > REC_MAX_BLOCK_RAW) {
                rc = ww_fail(st, "block overruns chunk %lu%lu", chunk, 0);
                break;
            }
            uint32_t crc = rec__crc32c(0, b, REC_BH_CRC);
            crc = rec__crc32c(crc, b + REC_BLOCK_HEADER_SIZE, stored);
            if (crc != ww_le(b + REC_BH_CRC, 4)) {
                rc = ww_fail(st, "block CRC mismatch in chunk %lu at %lu", chunk, p);
                break;
            }
            const unsigned char *pl = b + REC_BLOCK_HEADER_SIZE;
            size_t pn = stored;
            if (b[REC_BH_FLAGS] & REC_BLOCK_LZ4) {
                int r = LZ4_decompress_safe((const char *)pl, (char *)raw, (int)stored, (int)rawn);
                if (r < 0 || (uint64_t)r != rawn) {
                    rc = ww_fail(st, "lz4 block does not decode (chunk %lu)%lu", chunk, 0);
                    break;
                }
                pl = raw;
                pn = rawn;
            } else if (stored != rawn) {
                rc = ww_fail(st, "stored block sizes differ (chunk %lu)%lu", chunk, 0);
                break;
            }
            if (first && b[REC_BH_KIND] == REC_BLOCK_METADATA)
                st->metadata_first++;
            else if (b[REC_BH_KIND] == REC_BLOCK_METADATA)
                rc = ww_fail(st, "METADATA block not first (chunk %lu)%lu", chunk, 0);
            first = 0;
            st->blocks++;
            if (!rc)
                rc = ww_payload(st, b[REC_BH_KIND], pl, pn, chunk, fn, arg);
            p += REC_BLOCK_HEADER_SIZE + stored;
        }
        if (!rc && p != off + csize)
            rc = ww_fail(st, "blocks do not end at chunk size (chunk %lu)%lu", chunk, 0);
        st->chunks++;
        off += csize;
        if (state == REC_STATE_OPEN)
            break;   /* data after an open chunk's committed size is not ours to read */
    }
    if (!rc && !st->open && off != size)
        rc = ww_fail(st, "chunks end at %lu, file at %lu", off, size);
    free(raw);
    free(d);
    return rc;
}
#endif
