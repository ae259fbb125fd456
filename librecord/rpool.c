/*
 * librecord/rpool.c - the constant pools of the chunk being read: id ->
 * decoded entry, one open-addressing table per pool type. Entries live in an
 * arena that is dropped with the chunk.
 */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "reader_int.h"

int rec__rp_init(rec__rpools *p, const rec__schema *s)
{
    memset(p, 0, sizeof *p);
    p->arena.limit = REC__POOL_ARENA_LIMIT;
    p->ntabs = s->npools;
    if (p->ntabs && !(p->tabs = calloc(p->ntabs, sizeof *p->tabs)))
        return REC_ENOMEM;
    return 0;
}

void rec__rp_free(rec__rpools *p)
{
    for (size_t i = 0; i < p->ntabs; i++) {
        free(p->tabs[i].slots);
        free(p->tabs[i].dense);
    }
    free(p->tabs);
    rec__arena_free(&p->arena);
    memset(p, 0, sizeof *p);
}

static inline size_t slot_of(rec_id id, size_t cap)
{
    /* ids are mostly dense small integers: Fibonacci hashing spreads them */
    return (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

rec_entry *rec__rp_find_slow(const rec__ptab *tab, rec_id id)
{
    if (!tab->cap)
        return NULL;
    for (size_t i = slot_of(id, tab->cap);; i = (i + 1) & (tab->cap - 1)) {
        rec_entry *e = tab->slots[i];
        if (!e || e->id == id)
            return e;
    }
}

static int grow(rec__ptab *tab)
{
    size_t cap = tab->cap ? tab->cap * 2 : 256;
    rec_entry **slots = calloc(cap, sizeof *slots);
    if (!slots)
        return REC_ENOMEM;
    for (size_t j = 0; j < tab->cap; j++) {
        rec_entry *e = tab->slots[j];
        if (!e)
            continue;
        size_t i = slot_of(e->id, cap);
        while (slots[i])
            i = (i + 1) & (cap - 1);
        slots[i] = e;
    }
    free(tab->slots);
    tab->slots = slots;
    tab->cap = cap;
    return 0;
}

/* Ids below dense_cap live in the array. It grows only while that keeps
 * it at least half full, so memory stays proportional to the entries. */
static int add_dense(rec__ptab *tab, rec_entry *e)
{
    if (e->id >= tab->dense_cap) {
        size_t cap = tab->dense_cap ? tab->dense_cap : 1024;
        while (cap <= e->id)
            cap *= 2;
        rec_entry **d = realloc(tab->dense, cap * sizeof *d);
        if (!d)
            return REC_ENOMEM;
        memset(d + tab->dense_cap, 0, (cap - tab->dense_cap) * sizeof *d);
        tab->dense = d;
        tab->dense_cap = cap;
    }
    tab->dense[e->id] = e;
    tab->n++;
    return 0;
}

int rec__rp_add(rec__rpools *p, rec_entry *e)
{
    rec__ptab *tab = &p->tabs[e->type->pool_index];
    if (rec__rp_find(p, e->type, e->id)) {
        p->dup++;           /* keep the first: events already point at it */
        return 0;
    }
    if (e->id < tab->dense_cap || (size_t)e->id < 1024 + 2 * tab->n)
        return add_dense(tab, e);
    if ((tab->n + 1) * 2 > tab->cap) {
        int rc = grow(tab);
        if (rc < 0)
            return rc;
    }
    size_t i = slot_of(e->id, tab->cap);
    while (tab->slots[i])
        i = (i + 1) & (tab->cap - 1);
    tab->slots[i] = e;
    tab->n++;
    return 0;
}
