/*
 * librecord/block.c - one block of the chunk being read: checked (sizes
 * against the chunk and format.h's limits, CRC-32C, lz4 size), then taken
 * apart: the metadata (schema), pool entries, or the events block whose
 * events rec_reader_next() hands out one at a time.
 *
 * Events of a block are delivered only after the whole block passed its
 * checksum, so a damaged file yields exactly the events of its intact
 * blocks before the error.
 */
#include <config.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>

#include "format.h"
#include "reader_int.h"
#include "fields.h"

#define MAX_SCHEMAS 8           /* distinct metadata kept for pointer stability */

static int reserve(uint8_t **buf, size_t *cap, size_t n)
{
    if (n <= *cap)
        return 0;
    size_t c = (n + 0xffff) & ~(size_t)0xffff;
    uint8_t *p = malloc(c);
    if (!p)
        return REC_ENOMEM;
    free(*buf);
    *buf = p;
    *cap = c;
    return 0;
}

static int load_metadata(rec_reader *r, const uint8_t *raw, size_t n)
{
    rec__schema *s, **pp;
    size_t count = 0;
    for (pp = &r->schemas; *pp; pp = &(*pp)->next, count++) {
        s = *pp;
        if (s->raw_len == n && memcmp(s->raw, raw, n) == 0) {
            *pp = s->next;          /* move to front */
            s->next = r->schemas;
            r->schemas = s;
            goto found;
        }
    }
    char what[200];
    int rc = rec__schema_parse(&s, raw, n, what, sizeof what);
    if (rc < 0)
        return rec__rfail(r, rc, r->blk_off, "%s", what);
    s->next = r->schemas;
    r->schemas = s;
    if (count + 1 > MAX_SCHEMAS) {
        /* forget the least recently used one, never the current */
        rec__schema **q = &r->schemas;
        while ((*q)->next)
            q = &(*q)->next;
        rec__schema_free(*q);
        *q = NULL;
    }
found:
    r->schema = s;
    if (s->max_fields > r->vals_cap) {
        rec_value *v = realloc(r->vals, s->max_fields * sizeof *v);
        if (!v)
            return rec__rfail(r, REC_ENOMEM, r->blk_off, "out of memory");
        r->vals = v;
        r->vals_cap = s->max_fields;
    }
    r->ev.values = r->vals;
    rec__drop_pools(r);
    if (rec__rp_init(&r->pools, s) < 0)
        return rec__rfail(r, REC_ENOMEM, r->blk_off, "out of memory");
    r->pools_live = true;
    r->have_meta = true;
    return 0;
}

static const char *code_what(int rc)
{
    return rc == REC_ETOOBIG ? "declared size exceeds limit" : "malformed CBOR";
}

static int decode_fail(rec_reader *r, const rec__dctx *c, int rc, const char *kind,
                       size_t at, const rec_type *t)
{
    const rec_field_info *f = c->field;
    const char *what = c->what ? c->what : code_what(rc);
    if (t && f)
        return rec__rfail(r, rc, r->blk_off, "%s block, byte %zu: %s.%s: %s",
                    kind, at, t->name, f->name, what);
    return rec__rfail(r, rc, r->blk_off, "%s block, byte %zu: %s", kind, at, what);
}

static int load_pool(rec_reader *r, const uint8_t *raw, size_t n)
{
    rec__cdec d;
    rec__citem it;
    int rc;
    rec__dctx c = { .pools = &r->pools };
    rec__cdec_init(&d, raw, n);
    while (!rec__cdec_done(&d)) {
        size_t at = d.pos;
        const rec_type *t = NULL;
        c.what = NULL;
        c.field = NULL;
        if ((rc = rec__cdec_next(&d, &it)) < 0)
            return decode_fail(r, &c, rc, "pool", at, NULL);
        if (it.kind != RCK_ARRAY || it.u < 2)
            return rec__rfail(r, REC_ECORRUPT, r->blk_off,
                        "pool block, byte %zu: entry is not [typeId, id, ...]", at);
        uint64_t count = it.u;
        if ((rc = rec__cdec_next(&d, &it)) < 0 || it.kind != RCK_UINT)
            return rec__rfail(r, rc < 0 ? rc : REC_ECORRUPT, r->blk_off,
                        "pool block, byte %zu: bad type id (%s)", at,
                        rc < 0 ? code_what(rc) : "not an unsigned integer");
        t = rec__schema_type(r->schema, it.u);
        if (!t || t->is_event)
            return rec__rfail(r, REC_ECORRUPT, r->blk_off,
                        "pool block, byte %zu: unknown pool type %" PRIu64, at, it.u);
        if (count != 2 + t->nfields)
            return rec__rfail(r, REC_ECORRUPT, r->blk_off,
                        "pool block, byte %zu: %s entry has %" PRIu64 " items, expected %zu",
                        at, t->name, count, 2 + t->nfields);
        if ((rc = rec__cdec_next(&d, &it)) < 0 || it.kind != RCK_UINT ||
            it.u == 0 || it.u > UINT32_MAX)
            return rec__rfail(r, rc < 0 ? rc : REC_ECORRUPT, r->blk_off,
                        "pool block, byte %zu: bad %s id", at, t->name);
        rec_entry *e = rec__arena_alloc(&r->pools.arena,
                                        sizeof *e + t->nfields * sizeof(rec_value));
        if (!e)
            return rec__rfail(r, REC_ETOOBIG, r->blk_off,
                        "pools of the chunk exceed %zu MiB", REC__POOL_ARENA_LIMIT >> 20);
        e->type = t;
        e->pools = &r->pools;
        e->id = (rec_id)it.u;
        e->resolved = false;
        c.prev_ticks = 0;
        const uint8_t *p = d.buf + d.pos;
        rc = decode_fields(&p, d.buf + d.end, t, e->values, &c, true);
        d.pos = (size_t)(p - d.buf);
        if (rc < 0)
            return decode_fail(r, &c, rc, "pool", at, t);
        if ((rc = rec__rp_add(&r->pools, e)) < 0)
            return rec__rfail(r, rc, r->blk_off, "out of memory");
    }
    return 0;
}

static int start_events(rec_reader *r, const uint8_t *raw, size_t n)
{
    rec__citem it;
    rec__cdec_init(&r->dec, raw, n);
    int rc = rec__cdec_next(&r->dec, &it);
    if (rc < 0 || it.kind != RCK_UINT)
        return rec__rfail(r, rc < 0 ? rc : REC_ECORRUPT, r->blk_off,
                    "events block without base ticks (%s)",
                    rc < 0 ? code_what(rc) : "not an unsigned integer");
    r->dctx = (rec__dctx){ .pools = &r->pools,
                           .prev_ticks = it.u, .items = r->dctx.items,
                           .items_cap = r->dctx.items_cap };
    r->in_events = true;
    return 0;
}

/* Read, check and dispatch the block at r->pos. */
int rec__read_block(rec_reader *r)
{
    uint8_t bh[REC_BLOCK_HEADER_SIZE];
    uint64_t off = r->pos;
    r->blk_off = off;
    if (r->chunk_end - off < REC_BLOCK_HEADER_SIZE)
        return rec__rfail(r, REC_ECORRUPT, off, "block header crosses the end of the chunk");
    ssize_t got = rec__pread_full(r->fd, bh, sizeof bh, off);
    if (got < 0)
        return rec__io_error(r, off);
    if ((size_t)got < sizeof bh)
        return rec__rtruncated(r, off, "file ends inside a block header");
    unsigned kind = bh[REC_BH_KIND], flags = bh[REC_BH_FLAGS];
    uint32_t stored = le32(bh + REC_BH_STORED), raw = le32(bh + REC_BH_RAW);
    bool skip = kind >= REC_BLOCK_SKIPPABLE;
    bool lz4 = flags & REC_BLOCK_LZ4;

    if (!skip && kind != REC_BLOCK_METADATA && kind != REC_BLOCK_POOL &&
        kind != REC_BLOCK_EVENTS)
        return rec__rfail(r, REC_ECORRUPT, off, "unknown block kind %u", kind);
    if (!skip && (flags & ~REC_BLOCK_LZ4))
        return rec__rfail(r, REC_ECORRUPT, off, "unknown block flags 0x%x", flags);
    if (raw > REC_MAX_BLOCK_RAW)
        return rec__rfail(r, REC_ETOOBIG, off, "block raw size %" PRIu32 " exceeds %u",
                    raw, REC_MAX_BLOCK_RAW);
    if (kind == REC_BLOCK_METADATA && raw > REC_MAX_METADATA_RAW)
        return rec__rfail(r, REC_ETOOBIG, off, "metadata raw size %" PRIu32 " exceeds %u",
                    raw, REC_MAX_METADATA_RAW);
    if (lz4 ? stored > (uint32_t)LZ4_COMPRESSBOUND(raw) || stored == 0
            : !skip && stored != raw)
        return rec__rfail(r, REC_ECORRUPT, off, "stored size %" PRIu32
                    " does not fit raw size %" PRIu32, stored, raw);
    if (stored > (uint32_t)LZ4_COMPRESSBOUND(REC_MAX_BLOCK_RAW))
        return rec__rfail(r, REC_ETOOBIG, off, "block stored size %" PRIu32 " too large", stored);
    if (r->chunk_end - off - REC_BLOCK_HEADER_SIZE < stored)
        return rec__rfail(r, REC_ECORRUPT, off, "block of %" PRIu32 " bytes overruns the chunk",
                    stored);
    if (kind == REC_BLOCK_METADATA ? r->have_meta : !r->have_meta && !skip)
        return rec__rfail(r, REC_ECORRUPT, off, r->have_meta ? "second metadata block"
                                                      : "chunk does not start with metadata");

    /* payload: compressed into io, else straight into raw */
    uint8_t **dst = lz4 ? &r->io : &r->raw;
    size_t *cap = lz4 ? &r->io_cap : &r->raw_cap;
    if (reserve(dst, cap, stored ? stored : 1) < 0)
        return rec__rfail(r, REC_ENOMEM, off, "out of memory");
    got = rec__pread_full(r->fd, *dst, stored, off + REC_BLOCK_HEADER_SIZE);
    if (got < 0)
        return rec__io_error(r, off);
    if ((size_t)got < stored)
        return rec__rtruncated(r, off, "file ends inside a block (%zd of %" PRIu32 " bytes)",
                         got, stored);
    uint32_t crc = rec__crc32c(0, bh, REC_BH_CRC);
    crc = rec__crc32c(crc, *dst, stored);
    if (crc != le32(bh + REC_BH_CRC))
        return rec__rfail(r, REC_ECORRUPT, off, "block checksum mismatch");
    r->pos = off + REC_BLOCK_HEADER_SIZE + stored;
    if (skip || (kind == REC_BLOCK_EVENTS && off < r->skip_before))
        return 0;
    if (lz4) {
        if (reserve(&r->raw, &r->raw_cap, raw ? raw : 1) < 0)
            return rec__rfail(r, REC_ENOMEM, off, "out of memory");
        int n = LZ4_decompress_safe((const char *)r->io, (char *)r->raw,
                                    (int)stored, (int)raw);
        if (n < 0)
            return rec__rfail(r, REC_ECORRUPT, off, "corrupt lz4 data");
        if ((uint32_t)n != raw)
            return rec__rfail(r, REC_ECORRUPT, off, "lz4 data gives %d bytes, header says %"
                        PRIu32, n, raw);
    }
    switch (kind) {
    case REC_BLOCK_METADATA:
        return load_metadata(r, r->raw, raw);
    case REC_BLOCK_POOL:
        return load_pool(r, r->raw, raw);
    default:
        return start_events(r, r->raw, raw);
    }
}

/* ---- events ---- */

/* A code for an item the decoder read but a check refused: REC_ETOOBIG
 * when it declared more than the limits allow. */
static int refused(const rec_value *v)
{
    return v->kind == REC__K_TOOBIG ? REC_ETOOBIG : 0;
}

static int decode_event(rec_reader *r)
{
    rec__cdec *d = &r->dec;
    rec_value h;
    size_t at = d->pos;
    const uint8_t *p = d->buf + at, *end = d->buf + d->end;
    int rc = rec__vdec_at(&p, end, &h);
    if (__builtin_expect(rc < 0 || h.kind != REC__K_ARRAY || h.v.array.n == 0, 0)) {
        if (rc < 0 || (rc = refused(&h)) < 0) {
            r->dctx.what = NULL;
            return decode_fail(r, &r->dctx, rc, "events", at, NULL);
        }
        return rec__rfail(r, REC_ECORRUPT, r->blk_off,
                    "events block, byte %zu: %s", at,
                    h.kind == REC__K_ARRAY ? "empty event" : "event is not an array");
    }
    uint64_t count = h.v.array.n;
    rc = rec__vdec_at(&p, end, &h);
    if (__builtin_expect(rc < 0 || h.kind != REC_UINT, 0)) {
        if (rc == 0)
            rc = refused(&h);
        return rec__rfail(r, rc < 0 ? rc : REC_ECORRUPT, r->blk_off,
                    "events block, byte %zu: bad event type id (%s)", at,
                    rc < 0 ? code_what(rc) : "not an unsigned integer");
    }
    const rec_type *t = rec__schema_type(r->schema, h.v.u);
    if (__builtin_expect(!t || !t->is_event, 0))
        return rec__rfail(r, REC_ECORRUPT, r->blk_off,
                    "events block, byte %zu: unknown event type %" PRIu64, at, h.v.u);
    if (__builtin_expect(count != 1 + t->nfields, 0))
        return rec__rfail(r, REC_ECORRUPT, r->blk_off,
                    "events block, byte %zu: %s event has %" PRIu64 " items, expected %zu",
                    at, t->name, count, 1 + t->nfields);
    r->dctx.nitems = 0;
    rc = decode_fields(&p, end, t, r->vals, &r->dctx, false);
    d->pos = (size_t)(p - d->buf);
    if (__builtin_expect(rc < 0, 0))
        return decode_fail(r, &r->dctx, rc, "events", at, t);
    r->ev.type = t;
    r->ev.ticks = t->ticks_field >= 0 && r->vals[t->ticks_field].kind == REC_UINT
                  ? r->vals[t->ticks_field].v.u : r->dctx.prev_ticks;
    r->ev.bytes = d->pos - at;
    return 0;
}

/* Here rather than in reader.c so that decode_event() inlines. */
int rec_reader_next(rec_reader *r, const rec_event **ev)
{
    if (!r || !ev)
        return REC_EINVAL;
    for (;;) {
        if (r->in_events) {
            if (!rec__cdec_done(&r->dec)) {
                int rc = decode_event(r);
                if (rc < 0)
                    return rc;
                long rf = r->ev.type->restated_field;
                if (__builtin_expect(rf >= 0, 0) && r->continues &&
                    !(r->flags & REC_READ_RESTATED) &&
                    r->vals[rf].kind == REC_BOOL && r->vals[rf].v.b)
                    continue;
                *ev = &r->ev;
                return 1;
            }
            r->in_events = false;
            rec__check_dangling(r);
        }
        int rc = rec__advance(r, false);
        if (rc <= 0)
            return rc;
    }
}
