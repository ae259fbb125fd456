/*
 * librecord/fields.h - decoding the fields of events and pool entries: the
 * reader's hot path (no allocation per event, strings point into the
 * block). Included by block.c only, whose loops it is inlined into.
 */
#ifndef REC_FIELDS_H
#define REC_FIELDS_H

#include <stdlib.h>

#include "reader_int.h"

#define FFAIL(c, code, msg) do { (c)->what = (msg); return (code); } while (0)

static inline __attribute__((always_inline)) int next(const uint8_t **p, const uint8_t *end,
                                                     rec_value *v, rec__dctx *c)
{
    int rc = rec__vdec_at(p, end, v);
    if (__builtin_expect(rc < 0, 0))
        c->what = rc == REC_ETOOBIG ? "declared size exceeds limit"
                                    : "malformed CBOR";
    return rc;
}

/* Why item v does not fit field op (the hot path only tests kinds). */
static __attribute__((noinline, cold)) int bad_value(const rec_value *v, const rec__fop *op,
                                                     rec__dctx *c)
{
    if (v->kind == REC__K_TOOBIG)
        FFAIL(c, REC_ETOOBIG, "declared size exceeds limit");
    if (v->kind == REC_NULL)
        FFAIL(c, REC_ECORRUPT, "null in a field that is not nullable");
    if (op->enc == FE_INT && (v->kind == REC_UINT || v->kind == REC__K_NEGINT))
        FFAIL(c, REC_ECORRUPT, "int field out of range");
    if (op->enc == FE_REF && v->kind == REC_UINT)
        FFAIL(c, REC_ECORRUPT, "pool id out of range");
    FFAIL(c, REC_ECORRUPT, "value does not match the field type");
}

/* Turn the decoded item v into a value of field encoding op->enc, in
 * place: most kinds are already right and cost one comparison. */
static inline __attribute__((always_inline)) int conv(rec_value *v, const rec__fop *op,
                                                     rec__dctx *c, const bool copy)
{
    switch (op->enc) {
    case FE_UINT:
        if (__builtin_expect(v->kind == REC_UINT, 1))
            return 0;
        break;
    case FE_BOOL:
        if (__builtin_expect(v->kind == REC_BOOL, 1))
            return 0;
        break;
    case FE_TICKS:
        /* signed delta from the previous ticks value; wraps like the writer */
        if (__builtin_expect(v->kind == REC_UINT, 1)) {
            c->prev_ticks += v->v.u;
        } else if (v->kind == REC__K_NEGINT) {
            c->prev_ticks -= v->v.u + 1;
            v->kind = REC_UINT;
        } else {
            break;
        }
        v->v.u = c->prev_ticks;
        return 0;
    case FE_REF:
        if (__builtin_expect(v->kind == REC_UINT && v->v.u <= UINT32_MAX, 1)) {
            rec_id id = (rec_id)v->v.u;
            v->kind = REC_REF;
            v->v.ref.id = id;
            if (copy) {
                v->v.ref.entry = NULL;      /* resolved on first access */
            } else {
                v->v.ref.entry = rec__rp_get(c->pools, op->pool, id);
                if (__builtin_expect(!v->v.ref.entry, 0))
                    c->pools->dangling++;
            }
            return 0;
        }
        break;
    case FE_STRING:
        if (__builtin_expect(v->kind == REC_STRING, 1)) {
            if (copy) {
                char *s = rec__arena_strndup(&c->pools->arena, v->v.str.s, v->v.str.len);
                if (!s)
                    FFAIL(c, REC_ETOOBIG, "pools of the chunk exceed the memory limit");
                v->v.str.s = s;
            }
            return 0;
        }
        break;
    case FE_INT:
        if (v->kind == REC_UINT && v->v.u <= INT64_MAX) {
            v->kind = REC_INT;              /* same bits */
            return 0;
        }
        if (v->kind == REC__K_NEGINT && v->v.u <= INT64_MAX) {
            v->kind = REC_INT;
            v->v.i = -1 - (int64_t)v->v.u;
            return 0;
        }
        break;
    }
    if (v->kind == REC_NULL && op->nullable)
        return 0;
    return bad_value(v, op, c);
}

/* Room for n more array items in the event item buffer. Growing moves the
 * buffer: rebase the arrays decoded so far (vals[0..nvals)). */
static int reserve_items(rec__dctx *c, size_t n, rec_value *vals, size_t nvals)
{
    if (c->nitems + n <= c->items_cap)
        return 0;
    size_t cap = c->items_cap ? c->items_cap : 64;
    while (cap < c->nitems + n)
        cap *= 2;
    rec_value *items = realloc(c->items, cap * sizeof *items);
    if (!items)
        FFAIL(c, REC_ENOMEM, "out of memory");
    for (size_t j = 0; j < nvals; j++)
        if (vals[j].kind == REC_ARRAY && vals[j].v.array.n)
            vals[j].v.array.items = items + (vals[j].v.array.items - c->items);
    c->items = items;
    c->items_cap = cap;
    return 0;
}

/* Array field j whose head was decoded into vals[j]. */
static inline __attribute__((always_inline)) int
decode_array(const uint8_t **p, const uint8_t *end, const rec__fop *op, rec_value *vals,
             size_t j, rec__dctx *c, const bool copy)
{
    rec_value *v = &vals[j];
    int rc;
    if (v->kind != REC__K_ARRAY) {
        if (v->kind == REC_NULL && op->nullable)
            return 0;
        if (v->kind == REC__K_TOOBIG)
            FFAIL(c, REC_ETOOBIG, "declared size exceeds limit");
        FFAIL(c, REC_ECORRUPT, "array field is not an array");
    }
    size_t n = v->v.array.n;    /* <= REC_MAX_ARRAY, checked by the callback */
    rec_value *items;
    if (copy) {
        items = n ? rec__arena_alloc(&c->pools->arena, n * sizeof *items) : NULL;
        if (n && !items)
            FFAIL(c, REC_ETOOBIG, "pools of the chunk exceed the memory limit");
    } else {
        if ((rc = reserve_items(c, n, vals, j)) < 0)
            return rc;
        items = c->items + c->nitems;
        c->nitems += n;
    }
    for (size_t i = 0; i < n; i++) {
        if ((rc = next(p, end, &items[i], c)) < 0)
            return rc;
        if ((rc = conv(&items[i], op, c, copy)) < 0)
            return rc;
    }
    v->kind = REC_ARRAY;
    v->v.array.items = items;
    v->v.array.n = n;
    return 0;
}

/* The reader's inner loop: the fields of one [typeId, (id,) field...]
 * array after its head, each with one cbor_stream_decode() straight into
 * vals[], the position in a register. copy: pool entries (strings copied
 * into the pool arena, references resolved on first access); a constant,
 * so that each caller gets its own loop. On error c->what and c->field
 * say what and where. */
static inline __attribute__((always_inline)) int
decode_fields(const uint8_t **pp, const uint8_t *end, const rec_type *t, rec_value *vals,
              rec__dctx *c, const bool copy)
{
    const uint8_t *p = *pp;
    const rec__fop *op = t->ops, *op_end = op + t->nfields;
    rec_value *v = vals;
    int rc = 0;
    for (; op < op_end; op++, v++) {
        if ((rc = next(&p, end, v, c)) < 0)
            break;
        if ((unsigned)v->kind == op->done_kind)
            continue;
        if (__builtin_expect(!op->array, 1))
            rc = conv(v, op, c, copy);
        else
            rc = decode_array(&p, end, op, vals, (size_t)(v - vals), c, copy);
        if (rc < 0)
            break;
    }
    *pp = p;
    if (rc < 0)
        c->field = &t->fields[op - t->ops];
    return rc;
}

#undef FFAIL

#endif
