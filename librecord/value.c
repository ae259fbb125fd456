/*
 * librecord/value.c - field values of events and pool entries: resolving
 * pool references and the public accessors. (Decoding them is fields.h's.)
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "reader_int.h"

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
    uint64_t ns;
    if (ev->ns_per_tick)        /* the same value (mod 2^64), no division */
        ns = ad * ev->ns_per_tick;
    else
        ns = ad / tps * 1000000000u
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

const rec_value *rec_event_values(const rec_event *ev) { return ev->values; }

/* ---- pool entries ---- */

const rec_type *rec_entry_type(const rec_entry *e) { return e ? e->type : NULL; }
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
    if (!t)
        return -1;
    for (size_t i = 0; i < t->nfields; i++)
        if (strcmp(t->fields[i].name, name) == 0)
            return (long)i;
    return -1;
}
