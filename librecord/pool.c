/*
 * librecord/pool.c - constant pools: interning with content dedup, lock-free
 * id lookup, and lazy per-chunk emission.
 *
 * Lookups (by content and by id) never lock: entries, id segments and hash
 * tables are immutable once published with a release store, and a grown
 * hash table leaves the old one readable until the writer closes. Inserts
 * serialise on the pool's mutex, which is held only on a miss.
 */
#include <config.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "crc32c.h"

void rec__sink_init(struct rec__sink *k)
{
    k->buf = k->local;
    k->cap = sizeof k->local;
    k->len = 0;
    k->refs = k->local_refs;
    k->crefs = sizeof k->local_refs / sizeof k->local_refs[0];
    k->nrefs = 0;
    k->err = 0;
    k->heap_buf = k->heap_refs = false;
}

static void sink_release(struct rec__sink *k)
{
    if (k->heap_buf)
        free(k->buf);
    if (k->heap_refs)
        free(k->refs);
}

int rec__sink_grow(struct rec__sink *k, size_t more)
{
    if (k->err)
        return k->err;
    size_t cap = k->cap * 2;
    while (cap < k->len + more)
        cap *= 2;
    unsigned char *n = k->heap_buf ? realloc(k->buf, cap) : malloc(cap);
    if (!n)
        return k->err = REC_ENOMEM;
    if (!k->heap_buf)
        memcpy(n, k->buf, k->len);
    k->buf = n;
    k->cap = cap;
    k->heap_buf = true;
    return 0;
}

void rec__sink_addref(struct rec__sink *k, uint32_t pool, rec_id id)
{
    if (k->nrefs == k->crefs) {
        size_t c = k->crefs * 2;
        struct rec__ref *n = k->heap_refs ? realloc(k->refs, c * sizeof *n)
                                          : malloc(c * sizeof *n);
        if (!n) {
            k->err = REC_ENOMEM;
            return;
        }
        if (!k->heap_refs)
            memcpy(n, k->refs, k->nrefs * sizeof *n);
        k->refs = n;
        k->crefs = c;
        k->heap_refs = true;
    }
    k->refs[k->nrefs++] = (struct rec__ref){ pool, id };
}

void rec__sink_string(struct rec__sink *k, const char *s, bool nullable)
{
    if (!s) {
        if (nullable)
            rec__sink_null(k);
        else if (!k->err)
            k->err = REC_EINVAL;
        return;
    }
    size_t n = strlen(s);
    if (n > REC_MAX_STRING) {
        if (!k->err)
            k->err = REC_ETOOBIG;
        return;
    }
    unsigned char *p = rec__sink_room(k, REC__MAX_UINT + n);
    if (p)
        k->len += rec__enc_string(p, s, n);
}

static struct rec__entry *htab_find(struct rec__htab *t, uint32_t h,
                                    const unsigned char *f, size_t flen)
{
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        struct rec__entry *e = atomic_load_explicit(&t->slot[i], memory_order_acquire);
        if (!e)
            return NULL;
        if (e->hash == h && e->flen == flen &&
            memcmp(e->enc + e->elen - e->flen, f, flen) == 0)
            return e;
    }
}

static void htab_put(struct rec__htab *t, struct rec__entry *e)
{
    size_t i = e->hash & t->mask;
    while (atomic_load_explicit(&t->slot[i], memory_order_relaxed))
        i = (i + 1) & t->mask;
    atomic_store_explicit(&t->slot[i], e, memory_order_release);
}

static struct rec__htab *htab_new(size_t n)
{
    struct rec__htab *t = calloc(1, sizeof *t + n * sizeof t->slot[0]);
    if (t)
        t->mask = n - 1;
    return t;
}

/* Under p->lock: make the id slot for the next entry and the hash table
 * ready for one more entry. */
static int pool_reserve(struct rec__pool *p, uint32_t count)
{
    uint32_t j = count + (1u << REC__SEG_SHIFT);   /* index count is id count+1 */
    unsigned k = 31 - (unsigned)__builtin_clz(j) - REC__SEG_SHIFT;
    if (k >= REC__NSEGS || count == UINT32_MAX - 1)
        return REC_ETOOBIG;
    if (!atomic_load_explicit(&p->seg[k], memory_order_relaxed)) {
        struct rec__entry **s = calloc((size_t)1 << (k + REC__SEG_SHIFT), sizeof *s);
        if (!s)
            return REC_ENOMEM;
        atomic_store_explicit(&p->seg[k], s, memory_order_release);
    }
    struct rec__htab *t = atomic_load_explicit(&p->tab, memory_order_relaxed);
    if (!t || (size_t)count + 1 > (t->mask + 1) / 2) {
        struct rec__htab *n = htab_new(t ? (t->mask + 1) * 2 : 64);
        if (!n)
            return REC_ENOMEM;
        if (t) {
            for (size_t i = 0; i <= t->mask; i++) {
                struct rec__entry *e = atomic_load_explicit(&t->slot[i], memory_order_relaxed);
                if (e)
                    htab_put(n, e);
            }
        }
        n->older = t;
        atomic_store_explicit(&p->tab, n, memory_order_release);
    }
    return 0;
}

static int pool_insert(rec_writer *w, struct rec__pool *p, unsigned nfields,
                       struct rec__sink *k, uint32_t h, rec_id *id)
{
    /* Resolve references first: an entry never points at a missing one. */
    struct rec__entry *local[64], **ch = local;
    if (k->nrefs > 64 && !(ch = malloc(k->nrefs * sizeof *ch)))
        return REC_ENOMEM;
    for (size_t i = 0; i < k->nrefs; i++) {
        if (k->refs[i].pool >= w->npools ||
            !(ch[i] = rec__pool_get(&w->pools[k->refs[i].pool], k->refs[i].id))) {
            if (ch != local)
                free(ch);
            return REC_ENOTFOUND;
        }
    }
    int rc = 0;
    pthread_mutex_lock(&p->lock);
    uint32_t count = atomic_load_explicit(&p->count, memory_order_relaxed);
    struct rec__htab *t = atomic_load_explicit(&p->tab, memory_order_relaxed);
    struct rec__entry *e = t ? htab_find(t, h, k->buf, k->len) : NULL;
    if (e) {                     /* another thread inserted it meanwhile */
        *id = e->id;
        goto out;
    }
    if ((rc = pool_reserve(p, count)))
        goto out;
    unsigned char head[3 * REC__MAX_UINT];
    size_t hl = rec__enc_array(head, 2 + nfields);
    hl += rec__enc_uint(head + hl, p->type_id);
    hl += rec__enc_uint(head + hl, count + 1);
    size_t sz = sizeof *e + k->nrefs * sizeof *ch + hl + k->len;
    if (hl + k->len > UINT32_MAX / 2 || !(e = malloc(sz))) {
        rc = REC_ENOMEM;
        goto out;
    }
    atomic_init(&e->gen, 0);
    e->id = count + 1;
    e->hash = h;
    e->nchildren = (uint32_t)k->nrefs;
    e->children = (struct rec__entry **)(e + 1);
    memcpy(e->children, ch, k->nrefs * sizeof *ch);
    e->enc = (unsigned char *)(e->children + k->nrefs);
    memcpy(e->enc, head, hl);
    memcpy(e->enc + hl, k->buf, k->len);
    e->flen = (uint32_t)k->len;
    e->elen = (uint32_t)(hl + k->len);
    /* Publish by id first, then by content: a thread that finds the entry
     * by content can always look its id up. */
    uint32_t j = count + (1u << REC__SEG_SHIFT);
    unsigned sk = 31 - (unsigned)__builtin_clz(j);
    struct rec__entry **seg = atomic_load_explicit(&p->seg[sk - REC__SEG_SHIFT],
                                                   memory_order_relaxed);
    seg[j - (1u << sk)] = e;   /* readers reach it only through count */
    atomic_store_explicit(&p->count, count + 1, memory_order_release);
    htab_put(atomic_load_explicit(&p->tab, memory_order_relaxed), e);
    *id = e->id;
out:
    pthread_mutex_unlock(&p->lock);
    if (ch != local)
        free(ch);
    return rc;
}

int rec__intern(rec_writer *w, unsigned pool, unsigned nfields,
                struct rec__sink *k, const void *v, rec__refs_fn *refs, rec_id *id)
{
    int rc = k->err;
    if (!rc && (!w || !id || pool >= w->npools))
        rc = REC_EINVAL;
    if (!rc) {
        struct rec__pool *p = &w->pools[pool];
        uint32_t h = rec__crc32c(0, k->buf, k->len);
        struct rec__htab *t = atomic_load_explicit(&p->tab, memory_order_acquire);
        struct rec__entry *e = t ? htab_find(t, h, k->buf, k->len) : NULL;
        if (e) {
            *id = e->id;
        } else {
            if (refs)
                refs(v, k);
            rc = k->err ? k->err : pool_insert(w, p, nfields, k, h, id);
        }
    }
    sink_release(k);
    return rc;
}

/* Under w->hlock. References go first so that a POOL block never refers
 * forward; recursion depth is the reference chain length of the schema. */
static int mark_locked(rec_writer *w, struct rec__entry *e, uint32_t g)
{
    if (atomic_load_explicit(&e->gen, memory_order_relaxed) == g)
        return 0;
    for (uint32_t i = 0; i < e->nchildren; i++) {
        int rc = mark_locked(w, e->children[i], g);
        if (rc)
            return rc;
    }
    if (w->npending == w->cpending) {
        size_t c = w->cpending ? w->cpending * 2 : 256;
        struct rec__entry **n = realloc(w->pending, c * sizeof *n);
        if (!n)
            return REC_ENOMEM;
        w->pending = n;
        w->cpending = c;
    }
    w->pending[w->npending++] = e;
    atomic_store_explicit(&e->gen, g, memory_order_release);
    return 0;
}

/* Called inside a stream critical section; w->gen is stable meanwhile. The
 * entry's gen is set under hlock together with its queueing, and every
 * consumer of events takes hlock after taking them, so an event that saw
 * the mark set by another thread is never written before the entry. */
int rec__mark_slow(rec_writer *w, struct rec__entry *e)
{
    uint32_t g = atomic_load_explicit(&w->gen, memory_order_relaxed);
    pthread_mutex_lock(&w->hlock);
    int rc = mark_locked(w, e, g);
    pthread_mutex_unlock(&w->hlock);
    return rc;
}

int rec__pools_init(rec_writer *w, const uint32_t *type_ids, unsigned n)
{
    if (!type_ids)
        n = rec__npools;
    w->pools = calloc(n ? n : 1, sizeof *w->pools);
    if (!w->pools)
        return REC_ENOMEM;
    w->npools = n;
    for (unsigned i = 0; i < n; i++) {
        pthread_mutex_init(&w->pools[i].lock, NULL);
        w->pools[i].type_id = type_ids ? type_ids[i] : rec__pool_descs[i].type_id;
    }
    return 0;
}

void rec__pools_free(rec_writer *w)
{
    if (!w->pools)
        return;
    for (unsigned i = 0; i < w->npools; i++) {
        struct rec__pool *p = &w->pools[i];
        uint32_t n = atomic_load_explicit(&p->count, memory_order_relaxed);
        for (uint32_t id = 1; id <= n; id++)
            free(rec__pool_get(p, id));
        for (unsigned k = 0; k < REC__NSEGS; k++)
            free(atomic_load_explicit(&p->seg[k], memory_order_relaxed));
        struct rec__htab *t = atomic_load_explicit(&p->tab, memory_order_relaxed);
        while (t) {
            struct rec__htab *o = t->older;
            free(t);
            t = o;
        }
        pthread_mutex_destroy(&p->lock);
    }
    free(w->pools);
    w->pools = NULL;
}
