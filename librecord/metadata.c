/*
 * librecord/metadata.c - the METADATA block (the CBOR form of
 * schemas/events.json) decoded into rec_type tables, and the arena those
 * tables live in.
 *
 * Every name the reader uses comes from here, never from the generated
 * header: a reader must understand recordings of other schema versions.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "reader_int.h"

/* ---- arena ---- */

struct rec__arena_blk {
    struct rec__arena_blk *next;
    size_t used, cap;
    max_align_t data[];
};

#define ARENA_MIN (64u << 10)

void *rec__arena_alloc(rec__arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    struct rec__arena_blk *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > ARENA_MIN ? n : ARENA_MIN;
        if (a->total >= ARENA_MIN * 16 && cap < a->total / 4)
            cap = a->total / 4;     /* fewer, larger blocks as pools grow */
        if (a->limit && a->total + cap > a->limit)
            return NULL;
        b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
        a->total += cap;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    return p;
}

char *rec__arena_strndup(rec__arena *a, const void *s, size_t n)
{
    char *p = rec__arena_alloc(a, n + 1);
    if (p) {
        if (n)
            memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

void rec__arena_free(rec__arena *a)
{
    struct rec__arena_blk *b = a->head, *next;
    for (; b; b = next) {
        next = b->next;
        free(b);
    }
    a->head = NULL;
    a->total = 0;
}

/* ---- metadata ---- */

typedef struct mparse {
    rec__cdec d;
    rec__schema *s;
    const char *what;
    char buf[160];              /* what, when it names something */
    /* field type names until every type is known */
    const char **ftype;
} mparse;

#define FAIL(m, code, msg) do { (m)->what = (msg); return (code); } while (0)

static int next_item(mparse *m, rec__citem *it)
{
    int rc = rec__cdec_next(&m->d, it);
    if (rc < 0)
        m->what = rc == REC_ETOOBIG ? "metadata: item too large"
                                    : "metadata: malformed CBOR";
    return rc;
}

static int skip_value(mparse *m)
{
    int rc = rec__cdec_skip(&m->d, REC_MAX_NESTING);
    if (rc < 0)
        m->what = rc == REC_ETOOBIG ? "metadata: item too large"
                                    : "metadata: malformed CBOR or nested too deep";
    return rc;
}

static int get_text(mparse *m, const char **out, const char *msg)
{
    rec__citem it;
    int rc = next_item(m, &it);
    if (rc < 0)
        return rc;
    if (it.kind != RCK_TEXT)
        FAIL(m, REC_ECORRUPT, msg);
    if (!(*out = rec__arena_strndup(&m->s->arena, it.p, it.len)))
        FAIL(m, REC_ENOMEM, "out of memory");
    return 0;
}

static int get_bool(mparse *m, bool *out, const char *msg)
{
    rec__citem it;
    int rc = next_item(m, &it);
    if (rc < 0)
        return rc;
    if (it.kind != RCK_BOOL)
        FAIL(m, REC_ECORRUPT, msg);
    *out = it.b;
    return 0;
}

static bool key_is(const rec__citem *k, const char *name)
{
    size_t n = strlen(name);
    return k->len == n && memcmp(k->p, name, n) == 0;
}

/* Read a map key; the map's values are read by the caller. */
static int get_key(mparse *m, rec__citem *k)
{
    int rc = next_item(m, k);
    if (rc < 0)
        return rc;
    if (k->kind != RCK_TEXT)
        FAIL(m, REC_ECORRUPT, "metadata: map key is not a string");
    return 0;
}

static int parse_field(mparse *m, rec_field_info *f, const char **ftype)
{
    rec__citem it, k;
    int rc = next_item(m, &it);
    if (rc < 0)
        return rc;
    if (it.kind != RCK_MAP)
        FAIL(m, REC_ECORRUPT, "metadata: field is not a map");
    for (uint64_t i = 0; i < it.u; i++) {
        if ((rc = get_key(m, &k)) < 0)
            return rc;
        if (key_is(&k, "name"))
            rc = get_text(m, &f->name, "metadata: field name is not a string");
        else if (key_is(&k, "type"))
            rc = get_text(m, ftype, "metadata: field type is not a string");
        else if (key_is(&k, "unit"))
            rc = get_text(m, &f->unit, "metadata: field unit is not a string");
        else if (key_is(&k, "label"))
            rc = get_text(m, &f->label, "metadata: field label is not a string");
        else if (key_is(&k, "description"))
            rc = get_text(m, &f->description,
                          "metadata: field description is not a string");
        else if (key_is(&k, "array"))
            rc = get_bool(m, &f->array, "metadata: field array is not a boolean");
        else if (key_is(&k, "nullable"))
            rc = get_bool(m, &f->nullable,
                          "metadata: field nullable is not a boolean");
        else
            rc = skip_value(m);     /* newer keys */
        if (rc < 0)
            return rc;
    }
    if (!f->name || !*ftype)
        FAIL(m, REC_ECORRUPT, "metadata: field without name or type");
    if (!f->label)
        f->label = f->name;
    if (!f->description)
        f->description = "";
    return 0;
}

static int parse_type(mparse *m, rec_type *t, size_t tindex)
{
    rec__citem it, k;
    bool have_id = false, have_kind = false, have_fields = false;
    int rc = next_item(m, &it);
    if (rc < 0)
        return rc;
    if (it.kind != RCK_MAP)
        FAIL(m, REC_ECORRUPT, "metadata: type is not a map");
    for (uint64_t i = 0; i < it.u; i++) {
        if ((rc = get_key(m, &k)) < 0)
            return rc;
        if (key_is(&k, "id")) {
            rec__citem v;
            if ((rc = next_item(m, &v)) < 0)
                return rc;
            if (v.kind != RCK_UINT || v.u > UINT32_MAX)
                FAIL(m, REC_ECORRUPT, "metadata: bad type id");
            t->id = (uint32_t)v.u;
            have_id = true;
        } else if (key_is(&k, "name")) {
            rc = get_text(m, &t->name, "metadata: type name is not a string");
        } else if (key_is(&k, "kind")) {
            const char *kind;
            if ((rc = get_text(m, &kind, "metadata: type kind is not a string")) < 0)
                return rc;
            if (strcmp(kind, "event") == 0)
                t->is_event = true;
            else if (strcmp(kind, "pool") != 0)
                FAIL(m, REC_ECORRUPT, "metadata: unknown type kind");
            have_kind = true;
        } else if (key_is(&k, "label")) {
            rc = get_text(m, &t->label, "metadata: type label is not a string");
        } else if (key_is(&k, "description")) {
            rc = get_text(m, &t->description,
                          "metadata: type description is not a string");
        } else if (key_is(&k, "fields")) {
            rec__citem a;
            if (have_fields)
                FAIL(m, REC_ECORRUPT, "metadata: fields given twice");
            if ((rc = next_item(m, &a)) < 0)
                return rc;
            if (a.kind != RCK_ARRAY)
                FAIL(m, REC_ECORRUPT, "metadata: fields is not an array");
            if (a.u > REC_MAX_FIELDS)
                FAIL(m, REC_ETOOBIG, "metadata: too many fields");
            t->nfields = a.u;
            t->fields = rec__arena_alloc(&m->s->arena,
                                         (a.u + 1) * sizeof *t->fields);
            t->enc = rec__arena_alloc(&m->s->arena, a.u + 1);
            const char **ft = rec__arena_alloc(&m->s->arena,
                                               (a.u + 1) * sizeof *ft);
            if (!t->fields || !t->enc || !ft)
                FAIL(m, REC_ENOMEM, "out of memory");
            memset(t->fields, 0, (a.u + 1) * sizeof *t->fields);
            memset(ft, 0, (a.u + 1) * sizeof *ft);
            for (size_t j = 0; j < a.u; j++)
                if ((rc = parse_field(m, &t->fields[j], &ft[j])) < 0)
                    return rc;
            m->ftype[tindex] = (const char *)ft;   /* resolved later */
            have_fields = true;
        } else {
            rc = skip_value(m);
        }
        if (rc < 0)
            return rc;
    }
    if (!have_id || !t->name || !have_kind || !have_fields)
        FAIL(m, REC_ECORRUPT, "metadata: type without id, name, kind or fields");
    if (!t->label)
        t->label = t->name;
    if (!t->description)
        t->description = "";
    return 0;
}

static int cmp_type_id(const void *a, const void *b)
{
    const rec_type *x = *(rec_type *const *)a, *y = *(rec_type *const *)b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static const rec_type *type_by_name(const rec__schema *s, const char *name)
{
    for (size_t i = 0; i < s->ntypes; i++)
        if (strcmp(s->types[i].name, name) == 0)
            return &s->types[i];
    return NULL;
}

/* Field types name builtins or pool types; known only once all are read. */
static int resolve_fields(mparse *m)
{
    rec__schema *s = m->s;
    for (size_t i = 0; i < s->ntypes; i++) {
        rec_type *t = &s->types[i];
        const char **ft = (const char **)m->ftype[i];
        t->ticks_field = -1;
        t->restated_field = -1;
        for (size_t j = 0; j < t->nfields; j++) {
            rec_field_info *f = &t->fields[j];
            const char *n = ft[j];
            f->type = n;
            if (strcmp(n, "boolean") == 0) {
                t->enc[j] = FE_BOOL;
                if (t->is_event && !f->array && !strcmp(f->name, "restated"))
                    t->restated_field = (long)j;
            } else if (strcmp(n, "uint") == 0)
                t->enc[j] = FE_UINT;
            else if (strcmp(n, "int") == 0)
                t->enc[j] = FE_INT;
            else if (strcmp(n, "string") == 0)
                t->enc[j] = FE_STRING;
            else if (strcmp(n, "ticks") == 0) {
                if (f->array)
                    FAIL(m, REC_ECORRUPT, "metadata: array of ticks");
                t->enc[j] = FE_TICKS;
                if (t->ticks_field < 0)
                    t->ticks_field = (long)j;
            } else {
                const rec_type *p = type_by_name(s, n);
                if (!p) {
                    snprintf(m->buf, sizeof m->buf, "metadata: %s.%s: unknown field type "
                             "\"%.40s\"", t->name, f->name, n);
                    FAIL(m, REC_ECORRUPT, m->buf);
                }
                if (p->is_event)
                    FAIL(m, REC_ECORRUPT, "metadata: field refers to an event type");
                t->enc[j] = FE_REF;
                f->ref = p;
            }
            for (size_t k = 0; k < j; k++)
                if (strcmp(t->fields[k].name, f->name) == 0)
                    FAIL(m, REC_ECORRUPT, "metadata: duplicate field name");
        }
    }
    return 0;
}

static int build_index(mparse *m)
{
    rec__schema *s = m->s;
    uint32_t max_id = 0;
    s->sorted = rec__arena_alloc(&s->arena, (s->ntypes + 1) * sizeof *s->sorted);
    if (!s->sorted)
        FAIL(m, REC_ENOMEM, "out of memory");
    for (size_t i = 0; i < s->ntypes; i++) {
        rec_type *t = &s->types[i];
        s->sorted[i] = t;
        if (t->id > max_id)
            max_id = t->id;
        if (!t->is_event)
            t->pool_index = (uint32_t)s->npools++;
        if (t->nfields > s->max_fields)
            s->max_fields = t->nfields;
        for (size_t j = 0; j < i; j++)
            if (strcmp(s->types[j].name, t->name) == 0)
                FAIL(m, REC_ECORRUPT, "metadata: duplicate type name");
    }
    qsort(s->sorted, s->ntypes, sizeof *s->sorted, cmp_type_id);
    for (size_t i = 1; i < s->ntypes; i++)
        if (s->sorted[i]->id == s->sorted[i - 1]->id)
            FAIL(m, REC_ECORRUPT, "metadata: duplicate type id");
    for (size_t i = 0; i < s->ntypes; i++) {
        rec_type *t = &s->types[i];
        t->ops = rec__arena_alloc(&s->arena, (t->nfields + 1) * sizeof *t->ops);
        if (!t->ops)
            FAIL(m, REC_ENOMEM, "out of memory");
        for (size_t j = 0; j < t->nfields; j++) {
            const rec_field_info *f = &t->fields[j];
            uint8_t done = 0xff;
            if (!f->array && t->enc[j] == FE_UINT)
                done = REC_UINT;
            else if (!f->array && t->enc[j] == FE_BOOL)
                done = REC_BOOL;
            t->ops[j] = (rec__fop){ .enc = t->enc[j], .array = f->array,
                                    .nullable = f->nullable, .done_kind = done,
                                    .pool = f->ref ? f->ref->pool_index : 0 };
        }
    }
    if (max_id < 4096) {
        s->ndirect = (size_t)max_id + 1;
        s->direct = rec__arena_alloc(&s->arena, s->ndirect * sizeof *s->direct);
        if (!s->direct)
            FAIL(m, REC_ENOMEM, "out of memory");
        memset(s->direct, 0, s->ndirect * sizeof *s->direct);
        for (size_t i = 0; i < s->ntypes; i++)
            s->direct[s->types[i].id] = &s->types[i];
    }
    return 0;
}

static int parse(mparse *m)
{
    rec__citem it, k;
    bool have_types = false;
    int rc = next_item(m, &it);
    if (rc < 0)
        return rc;
    if (it.kind != RCK_MAP)
        FAIL(m, REC_ECORRUPT, "metadata: not a map");
    for (uint64_t i = 0; i < it.u; i++) {
        if ((rc = get_key(m, &k)) < 0)
            return rc;
        if (key_is(&k, "types") && !have_types) {
            rec__citem a;
            if ((rc = next_item(m, &a)) < 0)
                return rc;
            if (a.kind != RCK_ARRAY)
                FAIL(m, REC_ECORRUPT, "metadata: types is not an array");
            if (a.u > REC_MAX_TYPES)
                FAIL(m, REC_ETOOBIG, "metadata: too many types");
            m->s->ntypes = a.u;
            m->s->types = rec__arena_alloc(&m->s->arena,
                                           (a.u + 1) * sizeof *m->s->types);
            m->ftype = rec__arena_alloc(&m->s->arena, (a.u + 1) * sizeof *m->ftype);
            if (!m->s->types || !m->ftype)
                FAIL(m, REC_ENOMEM, "out of memory");
            memset(m->s->types, 0, (a.u + 1) * sizeof *m->s->types);
            for (size_t j = 0; j < a.u; j++)
                if ((rc = parse_type(m, &m->s->types[j], j)) < 0)
                    return rc;
            have_types = true;
        } else {
            rc = skip_value(m);     /* "version" and newer keys */
        }
        if (rc < 0)
            return rc;
    }
    if (!have_types)
        FAIL(m, REC_ECORRUPT, "metadata: no types");
    if (!rec__cdec_done(&m->d))
        FAIL(m, REC_ECORRUPT, "metadata: trailing data");
    if ((rc = resolve_fields(m)) < 0)
        return rc;
    return build_index(m);
}

int rec__schema_parse(rec__schema **out, const uint8_t *raw, size_t n,
                      char *what, size_t whatlen)
{
    rec__schema *s = calloc(1, sizeof *s);
    mparse m = { .s = s, .what = NULL };
    *out = NULL;
    if (!s) {
        snprintf(what, whatlen, "out of memory");
        return REC_ENOMEM;
    }
    s->arena.limit = (size_t)64 << 20;
    rec__cdec_init(&m.d, raw, n);
    int rc = parse(&m);
    if (rc == 0 && !(s->raw = rec__arena_alloc(&s->arena, n ? n : 1))) {
        m.what = "out of memory";
        rc = REC_ENOMEM;
    }
    if (rc < 0) {
        snprintf(what, whatlen, "%s", m.what ? m.what : "metadata: invalid");
        rec__schema_free(s);
        return rc;
    }
    memcpy(s->raw, raw, n);
    s->raw_len = n;
    *out = s;
    return 0;
}

void rec__schema_free(rec__schema *s)
{
    if (!s)
        return;
    rec__arena_free(&s->arena);
    free(s);
}

const rec_type *rec__schema_type_slow(const rec__schema *s, uint64_t id)
{
    if (id < s->ndirect)
        return s->direct[id];
    size_t lo = 0, hi = s->ntypes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->sorted[mid]->id == id)
            return s->sorted[mid];
        if (s->sorted[mid]->id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}
