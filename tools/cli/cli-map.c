/*
 * tools/cli/cli-map.c - the two tables every tool folds events with: a hash
 * map from a non-zero 64-bit key (a tid, a pool entry's address) to an
 * index, and an interning table that gives each distinct string a dense
 * index. Open addressing, linear probing, power-of-two capacities.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static inline uint64_t mix64(uint64_t x)
{
    /* splitmix64 finaliser: pointers and tids have low-entropy low bits. */
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* ---- map ----------------------------------------------------------- */

void cli_map_free(cli_map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

void cli_map_clear(cli_map *m)
{
    if (m->keys)
        memset(m->keys, 0, m->cap * sizeof *m->keys);
    m->n = 0;
}

bool cli_map_get(const cli_map *m, uint64_t key, uint32_t *val)
{
    if (!m->cap)
        return false;
    size_t mask = m->cap - 1;
    for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
        if (m->keys[i] == key) {
            *val = m->vals[i];
            return true;
        }
        if (m->keys[i] == 0)
            return false;
    }
}

/* Place key; true if it was not there. */
static bool map_insert(uint64_t *keys, uint32_t *vals, size_t cap,
                       uint64_t key, uint32_t val)
{
    size_t mask = cap - 1;
    size_t i = mix64(key) & mask;
    while (keys[i] != 0 && keys[i] != key)
        i = (i + 1) & mask;
    bool added = keys[i] == 0;
    keys[i] = key;
    vals[i] = val;
    return added;
}

int cli_map_put(cli_map *m, uint64_t key, uint32_t val)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 64;
        uint64_t *keys = calloc(cap, sizeof *keys);
        uint32_t *vals = calloc(cap, sizeof *vals);
        if (!keys || !vals) {
            free(keys);
            free(vals);
            return REC_ENOMEM;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i])
                map_insert(keys, vals, cap, m->keys[i], m->vals[i]);
        free(m->keys);
        free(m->vals);
        m->keys = keys;
        m->vals = vals;
        m->cap = cap;
    }
    if (map_insert(m->keys, m->vals, m->cap, key, val))
        m->n++;
    return 0;
}

void cli_map_xput(cli_map *m, uint64_t key, uint32_t val)
{
    if (cli_map_put(m, key, val) < 0)
        cli_out_of_memory();
}

/* ---- interning ----------------------------------------------------- */

int cli_slots_grow(uint32_t **slots, size_t *nslots, size_t first,
                   const uint64_t *hash, size_t n)
{
    size_t cap = *nslots ? *nslots * 2 : first;
    uint32_t *v = calloc(cap, sizeof *v);
    if (!v)
        return REC_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        size_t j = hash[i] & (cap - 1);
        while (v[j])
            j = (j + 1) & (cap - 1);
        v[j] = (uint32_t)i + 1;
    }
    free(*slots);
    *slots = v;
    *nslots = cap;
    return 0;
}

uint64_t cli_hash_bytes(const void *p, size_t len)
{
    const unsigned char *s = p;
    uint64_t h = 0xcbf29ce484222325ull;     /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= s[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

void cli_strtab_free(cli_strtab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->strs[i]);
    free(t->strs);
    free(t->hash);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

long cli_strtab_intern(cli_strtab *t, const char *s, size_t len)
{
    len = strnlen(s, len);      /* names are C strings from here on */
    if ((t->n + 1) * 2 > t->nslots
        && cli_slots_grow(&t->slots, &t->nslots, 256, t->hash, t->n) < 0)
        return REC_ENOMEM;
    uint64_t h = cli_hash_bytes(s, len);
    size_t mask = t->nslots - 1, j = h & mask;
    for (; t->slots[j]; j = (j + 1) & mask) {
        size_t i = t->slots[j] - 1;
        const char *c = t->strs[i];
        if (t->hash[i] == h && strncmp(c, s, len) == 0 && c[len] == '\0')
            return (long)i;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        char **strs = realloc(t->strs, cap * sizeof *strs);
        if (!strs)
            return REC_ENOMEM;
        t->strs = strs;
        uint64_t *hv = realloc(t->hash, cap * sizeof *hv);
        if (!hv)
            return REC_ENOMEM;
        t->hash = hv;
        t->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return REC_ENOMEM;
    memcpy(copy, s, len);
    copy[len] = '\0';
    t->strs[t->n] = copy;
    t->hash[t->n] = h;
    t->slots[j] = (uint32_t)++t->n;
    return (long)t->n - 1;
}
