/*
 * librecord/value.c - field values of events and pool entries: decoding
 * (the reader's hot path: no allocation per event, strings point into the
 * block) and the public accessors.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "reader_int.h"

#define FAIL(c, code, msg) do { (c)->what = (msg); return (code); } while (0)

static inline __attribute__((always_inline)) int next(rec__cdec *d, rec__citem *it, rec__dctx *c)
{
    int rc = rec__cdec_next(d, it);
    if (rc < 0)
        c->what = rc == REC_ETOOBIG ? "declared size exceeds limit"
                                    : "malformed CBOR";
    return rc;
}

/* One scalar (or array item) of field encoding enc from item it. */
static inline __attribute__((always_inline)) int scalar(const rec__citem *it, unsigned enc, const rec_field_info *f,
                  rec__dctx *c, rec_value *v)
{
    if (it->kind == RCK_NULL) {
        if (!f->nullable)
            FAIL(c, REC_ECORRUPT, "null in a field that is not nullable");
        v->kind = REC_NULL;
        return 0;
    }
    switch (enc) {
    case FE_BOOL:
        if (it->kind != RCK_BOOL)
            break;
        v->kind = REC_BOOL;
        v->v.b = it->b;
        return 0;
    case FE_UINT:
        if (it->kind != RCK_UINT)
            break;
        v->kind = REC_UINT;
        v->v.u = it->u;
        return 0;
    case FE_INT:
        if (it->u > INT64_MAX)
            FAIL(c, REC_ECORRUPT, "int field out of range");
        if (it->kind == RCK_UINT)
            v->v.i = (int64_t)it->u;
        else if (it->kind == RCK_NEGINT)
            v->v.i = -1 - (int64_t)it->u;
        else
            break;
        v->kind = REC_INT;
        return 0;
    case FE_TICKS:
        /* signed delta from the previous ticks value; wraps like the writer */
        if (it->kind == RCK_UINT)
            c->prev_ticks += it->u;
        else if (it->kind == RCK_NEGINT)
            c->prev_ticks -= it->u + 1;
        else
            break;
        v->kind = REC_UINT;
        v->v.u = c->prev_ticks;
        return 0;
    case FE_STRING:
        if (it->kind != RCK_TEXT)
            break;
        v->kind = REC_STRING;
        v->v.str.len = it->len;
        if (c->copy) {
            char *s = rec__arena_strndup(&c->pools->arena, it->p, it->len);
            if (!s)
                FAIL(c, REC_ETOOBIG, "pools of the chunk exceed the memory limit");
            v->v.str.s = s;
        } else {
            v->v.str.s = (const char *)it->p;
        }
        return 0;
    case FE_REF:
        if (it->kind != RCK_UINT)
            break;
        if (it->u > UINT32_MAX)
            FAIL(c, REC_ECORRUPT, "pool id out of range");
        v->kind = REC_REF;
        v->v.ref.id = (rec_id)it->u;
        if (c->copy) {
            v->v.ref.entry = NULL;      /* resolved on first access */
        } else {
            v->v.ref.entry = rec__rp_find(c->pools, f->ref, (rec_id)it->u);
            if (!v->v.ref.entry)
                c->pools->dangling++;
        }
        return 0;
    }
    FAIL(c, REC_ECORRUPT, "value does not match the field type");
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
        FAIL(c, REC_ENOMEM, "out of memory");
    for (size_t j = 0; j < nvals; j++)
        if (vals[j].kind == REC_ARRAY && vals[j].v.array.n)
            vals[j].v.array.items = items + (vals[j].v.array.items - c->items);
    c->items = items;
    c->items_cap = cap;
    return 0;
}

int rec__decode_fields(rec__cdec *d, const rec_type *t, rec_value *vals,
                       rec__dctx *c)
{
    rec__citem it;
    int rc;
    for (size_t j = 0; j < t->nfields; j++) {
        const rec_field_info *f = &t->fields[j];
        c->field = f;
        if ((rc = next(d, &it, c)) < 0)
            return rc;
        if (!f->array) {
            if ((rc = scalar(&it, t->enc[j], f, c, &vals[j])) < 0)
                return rc;
            continue;
        }
        if (it.kind == RCK_NULL && f->nullable) {
            vals[j].kind = REC_NULL;
            continue;
        }
        if (it.kind != RCK_ARRAY)
            FAIL(c, REC_ECORRUPT, "array field is not an array");
        size_t n = it.u;        /* <= REC_MAX_ARRAY, checked by the decoder */
        rec_value *items;
        if (c->copy) {
            items = n ? rec__arena_alloc(&c->pools->arena, n * sizeof *items) : NULL;
            if (n && !items)
                FAIL(c, REC_ETOOBIG, "pools of the chunk exceed the memory limit");
        } else {
            if ((rc = reserve_items(c, n, vals, j)) < 0)
                return rc;
            items = c->items + c->nitems;
            c->nitems += n;
        }
        for (size_t i = 0; i < n; i++) {
            if ((rc = next(d, &it, c)) < 0)
                return rc;
            if ((rc = scalar(&it, t->enc[j], f, c, &items[i])) < 0)
                return rc;
        }
        vals[j].kind = REC_ARRAY;
        vals[j].v.array.items = items;
        vals[j].v.array.n = n;
    }
    c->field = NULL;
    return 0;
}

static void resolve_value(rec__rpools *p, const rec_field_info *f, rec_value *v)
{
    if (v->kind == REC_REF && !v->v.ref.entry) {
        v->v.ref.entry = rec__rp_find(p, f->ref, v->v.ref.id);
        if (!v->v.ref.entry)
            p->dangling++;
    }
}

void rec__entry_resolve(rec_entry *e)
{
    const rec_type *t = e->type;
    for (size_t j = 0; j < t->nfields; j++) {
        if (t->enc[j] != FE_REF)
            continue;
        rec_value *v = &e->values[j];
        if (v->kind == REC_ARRAY) {
            rec_value *items = (rec_value *)v->v.array.items;
            for (size_t i = 0; i < v->v.array.n; i++)
                resolve_value(e->pools, &t->fields[j], &items[i]);
        } else {
            resolve_value(e->pools, &t->fields[j], v);
        }
    }
    e->resolved = true;
}

/* ---- events ---- */

const rec_type *rec_event_type(const rec_event *ev) { return ev->type; }

uint64_t rec_event_ticks(const rec_event *ev)
{
    return ev->ticks - ev->start_ticks;
}

uint64_t rec_event_time_ns(const rec_event *ev)
{
    /* events buffered before a rotation can precede the chunk start */
    int64_t d = (int64_t)(ev->ticks - ev->start_ticks);
    uint64_t tps = ev->ticks_per_second;
    uint64_t ad = d < 0 ? -(uint64_t)d : (uint64_t)d;
    uint64_t ns = ad / tps * 1000000000u
                + (uint64_t)((unsigned __int128)(ad % tps) * 1000000000u / tps);
    return d < 0 ? ev->start_wall_ns - ns : ev->start_wall_ns + ns;
}

size_t rec_event_bytes(const rec_event *ev) { return ev->bytes; }

int rec_event_get(const rec_event *ev, size_t field, rec_value *out)
{
    if (!ev || field >= ev->type->nfields)
        return REC_ENOTFOUND;
    *out = ev->values[field];
    return 0;
}

/* ---- pool entries ---- */

const rec_type *rec_entry_type(const rec_entry *e) { return e->type; }
rec_id rec_entry_id(const rec_entry *e) { return e->id; }

int rec_entry_get(const rec_entry *e, size_t field, rec_value *out)
{
    if (!e || field >= e->type->nfields)
        return REC_ENOTFOUND;
    if (!e->resolved)
        rec__entry_resolve((rec_entry *)e);
    *out = e->values[field];
    return 0;
}

/* ---- types ---- */

const char *rec_type_name(const rec_type *t) { return t->name; }
const char *rec_type_label(const rec_type *t) { return t->label; }
const char *rec_type_description(const rec_type *t) { return t->description; }
uint32_t rec_type_id(const rec_type *t) { return t->id; }
bool rec_type_is_event(const rec_type *t) { return t->is_event; }
size_t rec_type_nfields(const rec_type *t) { return t->nfields; }

const rec_field_info *rec_type_field(const rec_type *t, size_t i)
{
    return i < t->nfields ? &t->fields[i] : NULL;
}

long rec_type_field_index(const rec_type *t, const char *name)
{
    for (size_t i = 0; i < t->nfields; i++)
        if (strcmp(t->fields[i].name, name) == 0)
            return (long)i;
    return -1;
}
