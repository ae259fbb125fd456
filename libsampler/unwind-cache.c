/*
 * libsampler/unwind-cache.c - unwind tables in the shared cache (cache.h):
 * a module's table, built once, mapped by every process that walks
 * through the module.
 *
 * Body: nrows rows (12 bytes each) then npages page indexes (4 bytes
 * each), as recs_uw_table holds them. Beyond the cache's own checks, a
 * table is used only if its rows are sorted and every page index lies
 * inside the rows: the handler's lookups rely on nothing else.
 */
#include <config.h>

#include "cache.h"
#include "unwind.h"
#include <rec/record.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define UWC_MAGIC "RECUWT\0\2"
#define UWC_EXT   "uwt"

static bool sizes_ok(const recs_cache_header *h, size_t body_len)
{
    uint64_t nrows = h->count[0], npages = h->count[1];

    return h->unit == sizeof(recs_uw_row) && nrows > 0 &&
           nrows <= UINT32_MAX && npages <= UINT32_MAX &&
           nrows * sizeof(recs_uw_row) + npages * 4 == body_len;
}

/* Sorted rows: what the builder wrote. Not a matter of bounds (a lookup
 * in unsorted rows stays inside them), so checked with the checksum, once
 * per file, not through a 6 MB table by every process. */
static bool rows_sorted(const recs_cache_header *h, const void *body,
                        size_t body_len)
{
    const recs_uw_row *rows = body;

    if (!sizes_ok(h, body_len))
        return false;
    for (uint64_t i = 1; i < h->count[0]; i++)
        if (rows[i].start < rows[i - 1].start)
            return false;
    return true;
}

recs_uw_table *recs__uwc_load(const char *build_id)
{
    const recs_cache_header *h;
    const void *body;
    size_t len, body_len;
    recs_uw_table *t;

    h = recs__cache_map(build_id, UWC_EXT, UWC_MAGIC, rows_sorted, &len,
                        &body, &body_len);
    if (!h)
        return NULL;
    uint64_t nrows = h->count[0], npages = h->count[1];
    const recs_uw_row *rows = body;
    const uint32_t *pages = (const uint32_t *)(rows + nrows);
    if (!sizes_ok(h, body_len))
        goto bad;
    for (uint64_t p = 0; p < npages; p++)
        if (pages[p] >= nrows)
            goto bad;
    if (!(t = calloc(1, sizeof *t)))
        goto bad;
    t->base = h->count[2];
    t->nrows = (size_t)nrows;
    t->npages = (size_t)npages;
    t->rows = rows;
    t->pages = pages;
    t->map = (void *)h;
    t->map_len = len;
    return t;
bad:
    munmap((void *)h, len);
    return NULL;
}

int recs__uwc_store(const char *build_id, const recs_uw_table *t)
{
    recs_cache_header h;
    const void *parts[2] = { t->rows, t->pages };
    size_t sizes[2] = { t->nrows * sizeof t->rows[0],
                        t->npages * sizeof t->pages[0] };

    if (!t->nrows)
        return REC_EINVAL;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, UWC_MAGIC, 8);
    h.unit = sizeof t->rows[0];
    h.count[0] = t->nrows;
    h.count[1] = t->npages;
    h.count[2] = t->base;
    return recs__cache_store(build_id, UWC_EXT, &h, parts, sizes, 2);
}
