/*
 * librecord/reemit.c - writing what a reader read, by the schema of the
 * chunk it came from rather than by the compiled-in one.
 *
 * A program that rewrites part of a recording (rec-start replacing a chunk
 * its consumer could not take) must not lose what it does not know about:
 * a field appended to a type, a type added after it was built. So the
 * writer takes the chunk's METADATA payload as it is, and events and pool
 * entries are encoded from rec_value arrays by that schema, references
 * re-interned recursively so that every chunk written stays
 * self-contained.
 */
#include <config.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"
#include "reader_int.h"

/* References nest no deeper than this: a schema whose pool types refer to
 * each other, with entries that do, must not recurse without end. */
#define MAX_DEPTH 16

int rec_writer_open_like(rec_writer **out, int fd, const rec_writer_options *opt,
                         const rec_reader *r)
{
    char what[128];
    rec__schema *s;
    if (out)
        *out = NULL;
    if (!out || fd < 0 || !r || !r->schema) {
        if (fd >= 0)
            close(fd);
        return REC_EINVAL;
    }
    /* A copy of its own: the reader drops its schemas when it closes. */
    int rc = rec__schema_parse(&s, r->schema->raw, r->schema->raw_len, what,
                               sizeof what);
    if (rc < 0) {
        close(fd);
        return rc;
    }
    uint32_t *ids = calloc(s->npools ? s->npools : 1, sizeof *ids);
    if (!ids) {
        rec__schema_free(s);
        close(fd);
        return REC_ENOMEM;
    }
    for (size_t i = 0; i < s->ntypes; i++)
        if (!s->types[i].is_event)
            ids[s->types[i].pool_index] = s->types[i].id;
    rec__foreign f = { .schema = s, .pool_ids = ids, .npools = (unsigned)s->npools,
                       .meta = s->raw, .meta_len = s->raw_len };
    rc = rec__writer_open_schema(out, fd, opt, &f);
    free(ids);
    return rc;
}

/* The writer's own type for t: same id, name and fields, else NULL (a type
 * of another schema that happens to share an id is not it). */
static const rec_type *wtype(const rec_writer *w, const rec_type *t, bool event)
{
    if (!w || !w->schema || !t)
        return NULL;
    const rec_type *o = rec__schema_type(w->schema, t->id);
    if (!o || o->is_event != event || o->nfields != t->nfields ||
        strcmp(o->name, t->name))
        return NULL;
    if (o == t)
        return o;
    for (size_t i = 0; i < o->nfields; i++) {
        const rec_field_info *a = &o->fields[i], *b = &t->fields[i];
        if (strcmp(a->name, b->name) || strcmp(a->type, b->type) ||
            a->array != b->array || a->nullable != b->nullable)
            return NULL;
    }
    return o;
}

/* Whether v is one value (not an array) of field op. */
static bool item_ok(const rec__fop *op, const rec_value *v)
{
    switch (v->kind) {
    case REC_NULL:
        return op->nullable;
    case REC_BOOL:
        return op->enc == FE_BOOL;
    case REC_UINT:
        return op->enc == FE_UINT || op->enc == FE_TICKS ||
               (op->enc == FE_INT && v->v.u <= INT64_MAX);
    case REC_INT:
        return op->enc == FE_INT;
    case REC_STRING:
        return op->enc == FE_STRING && v->v.str.len <= REC_MAX_STRING;
    case REC_REF:
        return op->enc == FE_REF;
    default:
        return false;
    }
}

/* How the caller's references and ticks are to be read. */
typedef struct how {
    bool read;              /* values from a reader: an undefined entry is
                             * null; else entry NULL means id is ours */
    uint64_t src_tps;       /* read ticks: their ticks per second */
} how;

static int intern_entry(rec_writer *w, const rec_entry *e, int depth, rec_id *id);

/* The writer's id for reference v of field op (0: null). */
static int ref_id(rec_writer *w, const rec__fop *op, const rec_value *v,
                  const how *h, int depth, rec_id *id)
{
    *id = 0;
    if (v->kind == REC_REF && v->v.ref.entry) {
        const rec_entry *e = v->v.ref.entry;
        const rec_type *t = wtype(w, e->type, false);
        if (!t || t->pool_index != op->pool)
            return REC_EINVAL;
        return intern_entry(w, e, depth + 1, id);
    }
    if (v->kind == REC_REF && !h->read)
        *id = v->v.ref.id;
    else if (v->kind == REC_REF && v->v.ref.id && !op->nullable)
        return REC_ENOTFOUND;
    if (!*id && !op->nullable)
        return REC_EINVAL;
    return 0;
}

static void sink_item(rec_writer *w, struct rec__sink *k, const rec__fop *op,
                      const rec_value *v, int depth)
{
    static const how entry_how = { .read = true };
    unsigned char *p;
    rec_id id;
    if (!item_ok(op, v) || op->enc == FE_TICKS) {
        /* ticks are deltas within an EVENTS block: pools have none */
        k->err = k->err ? k->err : REC_EINVAL;
        return;
    }
    switch (v->kind) {
    case REC_NULL:
        rec__sink_null(k);
        break;
    case REC_BOOL:
        rec__sink_bool(k, v->v.b);
        break;
    case REC_UINT:
        rec__sink_uint(k, v->v.u);
        break;
    case REC_INT:
        rec__sink_int(k, v->v.i);
        break;
    case REC_STRING:
        if ((p = rec__sink_room(k, REC__MAX_UINT + v->v.str.len)))
            k->len += rec__enc_string(p, v->v.str.s, v->v.str.len);
        break;
    default: {                          /* REC_REF */
        int rc = ref_id(w, op, v, &entry_how, depth, &id);
        if (rc < 0) {
            k->err = k->err ? k->err : rc;
            return;
        }
        rec__sink_ref(k, id, op->nullable);
        if (id)
            rec__sink_addref(k, op->pool, id);
    }
    }
}

static int intern_entry(rec_writer *w, const rec_entry *e, int depth, rec_id *id)
{
    const rec_type *t = wtype(w, e->type, false);
    struct rec__sink k;
    if (depth > MAX_DEPTH)
        return REC_ECORRUPT;
    if (!t)
        return REC_EINVAL;
    rec__sink_init(&k);
    for (size_t i = 0; i < t->nfields && !k.err; i++) {
        const rec__fop *op = &t->ops[i];
        rec_value v;
        if (rec_entry_get(e, i, &v) < 0) {
            k.err = REC_ECORRUPT;
        } else if (!op->array || v.kind == REC_NULL) {
            sink_item(w, &k, op, &v, depth);
        } else if (v.kind != REC_ARRAY) {
            k.err = REC_EINVAL;
        } else {
            rec__sink_array(&k, v.v.array.n);
            for (size_t j = 0; j < v.v.array.n && !k.err; j++)
                sink_item(w, &k, op, &v.v.array.items[j], depth);
        }
    }
    return rec__intern(w, t->pool_index, (unsigned)t->nfields, &k, NULL, NULL, id);
}

int rec_intern_entry(rec_writer *w, const rec_entry *e, rec_id *id)
{
    if (!w || !e || !id)
        return REC_EINVAL;
    return intern_entry(w, e, 0, id);
}

/* A ticks value in the writer's ticks. */
static uint64_t ticks_of(const rec_stream *s, const how *h, uint64_t t)
{
    uint64_t tps = s->w->ticks_per_s;
    if (!h->read)
        return rec__ticks(s, t);        /* ns, 0: now, as rec_emit_<Event>() */
    if (h->src_tps == tps || !h->src_tps)
        return t;
    return (uint64_t)((unsigned __int128)t * tps / h->src_tps);
}

static int emit(rec_stream *s, const rec_type *src, const rec_value *vals,
                const how *h)
{
    rec_writer *w = s ? s->w : NULL;
    const rec_type *t = wtype(w, src, true);
    if (!t || !vals)
        return REC_EINVAL;
    /* First the size and the references: interning may take locks and
     * allocate, which the stream's critical section must not. */
    size_t need = 2 * REC__MAX_UINT, nref = 0;
    uint64_t t0 = 0;
    bool have_t0 = false;
    for (size_t i = 0; i < t->nfields; i++) {
        const rec__fop *op = &t->ops[i];
        const rec_value *v = &vals[i];
        size_t n = 1;
        if (op->array && v->kind != REC_NULL) {
            if (v->kind != REC_ARRAY || v->v.array.n > REC_MAX_ARRAY)
                return v->kind == REC_ARRAY ? REC_ETOOBIG : REC_EINVAL;
            n = v->v.array.n;
            v = v->v.array.items;
            need += REC__MAX_UINT;
        }
        for (size_t j = 0; j < n; j++) {
            if (!item_ok(op, &v[j]))
                return REC_EINVAL;
            need += REC__MAX_UINT;
            if (v[j].kind == REC_STRING)
                need += v[j].v.str.len;
            nref += op->enc == FE_REF;
            if (op->enc == FE_TICKS && v[j].kind == REC_UINT && !have_t0) {
                t0 = ticks_of(s, h, v[j].v.u);
                have_t0 = true;
            }
        }
    }
    rec_id *ids = nref ? malloc(nref * sizeof *ids) : NULL;
    if (nref && !ids)
        return REC_ENOMEM;
    int rc = 0;
    size_t r = 0;
    for (size_t i = 0; i < t->nfields && !rc; i++) {
        const rec__fop *op = &t->ops[i];
        const rec_value *v = &vals[i];
        size_t n = 1;
        if (op->enc != FE_REF)
            continue;
        if (op->array && v->kind == REC_ARRAY) {
            n = v->v.array.n;
            v = v->v.array.items;
        }
        for (size_t j = 0; j < n && !rc; j++)
            rc = ref_id(w, op, &v[j], h, 0, &ids[r++]);
    }
    unsigned char *p = NULL;
    if (!rc && !have_t0)
        t0 = rec__ticks(s, 0);
    if (rc || (rc = rec__emit_begin(s, need, t0, &p)) < 0) {
        free(ids);
        return rc;
    }
    p += rec__enc_array(p, 1 + t->nfields);
    p += rec__enc_uint(p, t->id);
    r = 0;
    for (size_t i = 0; i < t->nfields && !rc; i++) {
        const rec__fop *op = &t->ops[i];
        const rec_value *v = &vals[i];
        size_t n = 1;
        if (op->array && v->kind == REC_ARRAY) {
            n = v->v.array.n;
            v = v->v.array.items;
            p += rec__enc_array(p, n);
        }
        for (size_t j = 0; j < n && !rc; j++) {
            if (op->enc == FE_REF) {
                rec_id id = ids[r++];
                if (!id) {
                    p += rec__enc_null(p);
                } else if (!(rc = rec__emit_mark(s, op->pool, id))) {
                    p += rec__enc_uint(p, id);
                }
                continue;
            }
            switch (v[j].kind) {
            case REC_NULL:
                p += rec__enc_null(p);
                break;
            case REC_BOOL:
                p += rec__enc_bool(p, v[j].v.b);
                break;
            case REC_INT:
                p += rec__enc_int(p, v[j].v.i);
                break;
            case REC_STRING:
                p += rec__enc_string(p, v[j].v.str.s, v[j].v.str.len);
                break;
            default:                    /* REC_UINT */
                p += op->enc == FE_TICKS
                         ? rec__emit_ticks(s, p, ticks_of(s, h, v[j].v.u))
                         : rec__enc_uint(p, v[j].v.u);
            }
        }
    }
    free(ids);
    if (rc) {
        rec__emit_abort(s);
        return rc;
    }
    return rec__emit_commit(s, p);
}

int rec_emit_values(rec_stream *s, const rec_type *t, const rec_value *values)
{
    static const how caller = { .read = false };
    return s ? emit(s, t, values, &caller) : REC_EINVAL;
}

int rec_emit_event(rec_stream *s, const rec_event *ev)
{
    if (!s || !ev)
        return REC_EINVAL;
    how h = { .read = true, .src_tps = ev->ticks_per_second };
    return emit(s, ev->type, ev->values, &h);
}

int rec_intern_values(rec_writer *w, const rec_type *t, const rec_value *values,
                      rec_id *id)
{
    static const how caller = { .read = false };
    const rec_type *o = wtype(w, t, false);
    struct rec__sink k;
    if (!o || !values || !id)
        return REC_EINVAL;
    rec__sink_init(&k);
    for (size_t i = 0; i < o->nfields && !k.err; i++) {
        const rec__fop *op = &o->ops[i];
        const rec_value *v = &values[i];
        size_t n = 1;
        if (op->array && v->kind != REC_NULL) {
            if (v->kind != REC_ARRAY) {
                k.err = REC_EINVAL;
                break;
            }
            rec__sink_array(&k, n = v->v.array.n);
            v = v->v.array.items;
        }
        for (size_t j = 0; j < n && !k.err; j++) {
            if (op->enc != FE_REF || v[j].kind != REC_REF || v[j].v.ref.entry) {
                sink_item(w, &k, op, &v[j], 0);
                continue;
            }
            rec_id rid;
            int rc = ref_id(w, op, &v[j], &caller, 0, &rid);
            if (rc < 0) {
                k.err = rc;
                break;
            }
            rec__sink_ref(&k, rid, op->nullable);
            if (rid)
                rec__sink_addref(&k, op->pool, rid);
        }
    }
    return rec__intern(w, o->pool_index, (unsigned)o->nfields, &k, NULL, NULL, id);
}
