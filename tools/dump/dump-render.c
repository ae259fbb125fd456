/*
 * tools/dump/dump-render.c - schema-driven JSON rendering of events.
 *
 * Rules (the NDJSON contract of rec-dump(1)):
 *  - an event is {"type": <name>, "startTime": <ns since the epoch>, then
 *    every other field by its schema name in schema order};
 *  - a reference to a pool type whose only field is a string (String)
 *    renders as that string; other references render as objects of their
 *    fields, recursively up to MAX_LEVEL; an undefined reference is null;
 *  - a pool type with a boolean "truncated" and an array "frames" (the
 *    StackTrace) prints at most stack_depth frames and says truncated when
 *    frames were cut;
 *  - ticks fields other than startTime render as ns since the epoch;
 *  - with debug files (dump_render_set_debug), a frame-like pool type
 *    (function, module, offset) whose function is null or a
 *    module+0xSTART name gets the name the module's debug file gives.
 */
#include <config.h>

#include "dump-render.h"

#include <stdlib.h>
#include <string.h>

/* Pool nesting below an event: StackTrace > Frame > String needs 3. Deeper
 * references (only possible in damaged or hostile files, e.g. a cycle)
 * render as their id. */
#define MAX_LEVEL 6

/* Largest text of one object or array (a deep stack of long C++ names is
 * well below); more is cut (null, or fewer array items). */
#define MAX_TEXT (8u << 20)

struct field_info {
    char *key;          /* "\"name\":" */
    size_t key_len;
    bool skip;          /* startTime, printed first */
    bool ticks;         /* a ticks field to convert to wall time */
};

struct type_info {
    const rec_type *type;
    char *prefix;       /* events: {"type":"Name","startTime": */
    size_t prefix_len;
    size_t nfields;
    struct field_info *f;
    bool as_string;     /* pool type rendered as its single string field */
    long truncated, frames;  /* stack-like pool type: field indexes, or -1 */
    long fn, mod, off;       /* frame-like pool type: field indexes, or -1 */
};

/* Rendered entry text, stored in arena blocks that are never moved. */
struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    char data[];
};

struct dump_render {
    unsigned stack_depth;
    uint64_t ticks_per_second;
    cli_debug *dbg;            /* not owned */
    cli_evview view;           /* what --debug-dir reads of modules */

    cli_map types;           /* rec_type* -> index in tinfo */
    struct type_info **tinfo;   /* never moved: rendering recurses */
    size_t ntinfo, captinfo;

    cli_map entries;         /* rec_entry* -> index in rendered */
    struct { const char *s; size_t len; } *rendered;
    size_t nrendered, caprendered;
    struct arena_block *arena;

    cli_buf scratch[MAX_LEVEL + 1];
};

/* ",\"name\":" - objects skip the comma for their first key. */
static char *json_key(const char *name)
{
    char *q = cli_json_quote(name, strlen(name));
    size_t l = strlen(q);
    char *k = cli_xrealloc(NULL, l + 3);
    k[0] = ',';
    memcpy(k + 1, q, l);
    k[l + 1] = ':';
    k[l + 2] = '\0';
    free(q);
    return k;
}

dump_render *dump_render_new(unsigned stack_depth)
{
    dump_render *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->stack_depth = stack_depth;
    d->ticks_per_second = 1000000;
    return d;
}

static void free_types(dump_render *d)
{
    for (size_t i = 0; i < d->ntinfo; i++) {
        struct type_info *t = d->tinfo[i];
        free(t->prefix);
        for (size_t k = 0; k < t->nfields; k++)
            free(t->f[k].key);
        free(t->f);
        free(t);
    }
    d->ntinfo = 0;
    cli_map_clear(&d->types);
}

/* Free the arena; keep_one keeps the head block (emptied) for reuse. */
static void free_arena(dump_render *d, bool keep_one)
{
    struct arena_block *b = d->arena;
    if (keep_one && b) {
        struct arena_block *rest = b->next;
        b->next = NULL;
        b->used = 0;
        b = rest;
    } else {
        d->arena = NULL;
    }
    while (b) {
        struct arena_block *next = b->next;
        free(b);
        b = next;
    }
}

void dump_render_free(dump_render *d)
{
    if (!d)
        return;
    free_types(d);
    free(d->tinfo);
    cli_evview_free(&d->view);
    cli_map_free(&d->types);
    cli_map_free(&d->entries);
    free(d->rendered);
    free_arena(d, false);
    for (int i = 0; i <= MAX_LEVEL; i++)
        cli_buf_free(&d->scratch[i]);
    free(d);
}

void dump_render_reset(dump_render *d, const rec_chunk_info *info)
{
    free_types(d);
    cli_evview_reset(&d->view);
    cli_map_clear(&d->entries);
    d->nrendered = 0;
    free_arena(d, true);
    d->ticks_per_second = info && info->ticks_per_second ?
                          info->ticks_per_second : 1000000;
}

static const char *arena_store(dump_render *d, const char *s, size_t len)
{
    struct arena_block *b = d->arena;
    if (!b || b->cap - b->used < len) {
        size_t cap = len > (64u << 10) ? len : (64u << 10);
        struct arena_block *nb = cli_xrealloc(NULL, sizeof *nb + cap);
        nb->used = 0;
        nb->cap = cap;
        /* The head is the block being filled; older ones follow. */
        nb->next = b;
        d->arena = b = nb;
    }
    char *p = b->data + b->used;
    memcpy(p, s, len);
    b->used += len;
    return p;
}

static struct type_info *type_info(dump_render *d, const rec_type *t)
{
    uint32_t idx;
    if (cli_map_get(&d->types, (uintptr_t)t, &idx))
        return d->tinfo[idx];
    if (d->ntinfo == d->captinfo) {
        d->captinfo = d->captinfo ? d->captinfo * 2 : 16;
        d->tinfo = cli_xrealloc(d->tinfo, d->captinfo * sizeof *d->tinfo);
    }
    struct type_info *ti = cli_xrealloc(NULL, sizeof *ti);
    memset(ti, 0, sizeof *ti);
    d->tinfo[d->ntinfo] = ti;
    ti->type = t;
    ti->nfields = rec_type_nfields(t);
    ti->f = cli_xrealloc(NULL, ti->nfields * sizeof *ti->f);
    ti->truncated = ti->frames = -1;
    ti->fn = ti->mod = ti->off = -1;
    bool event = rec_type_is_event(t);
    for (size_t i = 0; i < ti->nfields; i++) {
        const rec_field_info *fi = rec_type_field(t, i);
        const char *name = fi && fi->name ? fi->name : "";
        ti->f[i].key = json_key(name);
        ti->f[i].key_len = strlen(ti->f[i].key);
        ti->f[i].skip = event && strcmp(name, "startTime") == 0;
        ti->f[i].ticks = fi && fi->type && strcmp(fi->type, "ticks") == 0;
        if (fi && fi->type && !fi->array && strcmp(name, "truncated") == 0 &&
            strcmp(fi->type, "boolean") == 0)
            ti->truncated = (long)i;
        if (fi && fi->array && strcmp(name, "frames") == 0)
            ti->frames = (long)i;
        if (!event && fi && !fi->array && strcmp(name, "function") == 0)
            ti->fn = (long)i;
        if (!event && fi && !fi->array && strcmp(name, "module") == 0)
            ti->mod = (long)i;
        if (!event && fi && !fi->array && strcmp(name, "offset") == 0)
            ti->off = (long)i;
    }
    if (ti->fn < 0 || ti->mod < 0 || ti->off < 0)
        ti->fn = -1;
    if (!event && ti->nfields == 1) {
        const rec_field_info *fi = rec_type_field(t, 0);
        ti->as_string = fi && !fi->array && fi->type &&
                        strcmp(fi->type, "string") == 0;
    }
    if (event) {
        cli_buf b = { 0 };
        const char *name = rec_type_name(t);
        cli_buf_adds(&b, "{\"type\":");
        cli_buf_add_json_string(&b, name ? name : "", name ? strlen(name) : 0);
        cli_buf_adds(&b, ",\"startTime\":");
        cli_buf_addc(&b, '\0');
        ti->prefix = b.p;
        ti->prefix_len = b.len - 1;
    }
    cli_map_xput(&d->types, (uintptr_t)t, (uint32_t)(d->ntinfo++));
    return ti;
}

static void render_entry(dump_render *d, const rec_entry *e, rec_id id,
                         int level, cli_buf *out, size_t base);

void dump_render_set_debug(dump_render *d, cli_debug *s)
{
    d->dbg = s;
}

void dump_render_note_modules(dump_render *d, const rec_event *ev)
{
    const rec_entry *me;
    const char *path, *bid;
    size_t plen, blen;

    if (!d->dbg ||
        !(me = cli_ev_ref(rec_event_values(ev),
                          cli_evview_event(&d->view, ev)->module)))
        return;
    const cli_evtype *mt = cli_evview_entry(&d->view, me);
    if (mt->path < 0 || mt->build_id < 0 ||
        !cli_entry_text(&d->view, me, mt->path, &path, &plen) ||
        !cli_entry_text(&d->view, me, mt->build_id, &bid, &blen))
        return;
    if (cli_debug_add_module(d->dbg, path, plen, bid, blen) > 0) {
        /* Frames rendered before this mapping was known are redone. */
        cli_map_clear(&d->entries);
        d->nrendered = 0;
        free_arena(d, true);
    }
}

/* The debug file's name for a frame entry whose function is unknown or
 * only module+0xSTART, or NULL. */
static const char *offline_name(dump_render *d, const rec_entry *e,
                                const struct type_info *ti)
{
    const char *s, *bid, *fs = NULL;
    size_t len, blen, flen = 0;
    const rec_entry *me;
    uint64_t off;
    rec_value v;

    if (cli_entry_text(&d->view, e, ti->fn, &fs, &flen) &&
        !memmem(fs, flen, "+0x", 3))
        return NULL;
    if (!cli_entry_uint(e, ti->off, &off) ||
        rec_entry_get(e, (size_t)ti->mod, &v) < 0)
        return NULL;
    if (cli_value_text(&d->view, &v, &s, &len))     /* the module's path */
        return cli_debug_frame_name(d->dbg, fs, flen, s, len, off);
    /* A reference to a Module entry (a schema that has one). */
    if (!(me = cli_value_ref(&v)) ||
        !cli_entry_text(&d->view, me, cli_evview_entry(&d->view, me)->build_id,
                        &bid, &blen))
        return NULL;
    return cli_debug_lookup(d->dbg, bid, blen, off);
}

/* Appends text to the object or array that starts at out->p + base, or null
 * if that would make it larger than MAX_TEXT. */
static void add_capped(cli_buf *out, size_t base, const char *text, size_t n)
{
    if (out->len - base + n > MAX_TEXT)
        cli_buf_add(out, "null", 4);
    else
        cli_buf_add(out, text, n);
}

/* Appends v (at most limit items of an array) to the text that starts at
 * out->p + base. */
static void render_value(dump_render *d, const rec_value *v, int level,
                         cli_buf *out, size_t base, size_t limit)
{
    switch (v->kind) {
    case REC_BOOL:
        if (v->v.b)
            cli_buf_add(out, "true", 4);
        else
            cli_buf_add(out, "false", 5);
        break;
    case REC_UINT:
        cli_buf_add_u64(out, v->v.u);
        break;
    case REC_INT:
        cli_buf_add_i64(out, v->v.i);
        break;
    case REC_STRING:
        if (out->len - base + v->v.str.len > MAX_TEXT)
            cli_buf_add(out, "null", 4);
        else
            cli_buf_add_json_string(out, v->v.str.s, v->v.str.len);
        break;
    case REC_REF:
        render_entry(d, v->v.ref.entry, v->v.ref.id, level, out, base);
        break;
    case REC_ARRAY: {
        size_t n = v->v.array.n < limit ? v->v.array.n : limit;
        cli_buf_addc(out, '[');
        /* Items stop at the size cap: the array stays valid JSON. */
        for (size_t i = 0; i < n && out->len - base < MAX_TEXT; i++) {
            if (i)
                cli_buf_addc(out, ',');
            if (v->v.array.items[i].kind == REC_ARRAY)
                cli_buf_add(out, "null", 4);   /* no nested arrays in the format */
            else
                render_value(d, &v->v.array.items[i], level, out, base, SIZE_MAX);
        }
        cli_buf_addc(out, ']');
        break;
    }
    case REC_NULL:
    default:
        cli_buf_add(out, "null", 4);
        break;
    }
}

/* Renders entry e (cached for the chunk) into out. Every entry is rendered
 * once per chunk, even a damaged one (a reference cycle is cut at
 * MAX_LEVEL and a huge entry at MAX_TEXT): hostile files cost time and
 * memory linear in their size, and the output stays deterministic. */
static void render_entry(dump_render *d, const rec_entry *e, rec_id id,
                         int level, cli_buf *out, size_t base)
{
    uint32_t idx;
    if (!e) {
        cli_buf_add(out, "null", 4);   /* dangling reference */
        return;
    }
    if (cli_map_get(&d->entries, (uintptr_t)e, &idx)) {
        add_capped(out, base, d->rendered[idx].s, d->rendered[idx].len);
        return;
    }
    if (level >= MAX_LEVEL) {
        cli_buf_add_u64(out, id);
        return;
    }
    const rec_type *t = rec_entry_type(e);
    cli_buf *b = &d->scratch[level];
    b->len = 0;
    if (!t) {
        cli_buf_add(b, "null", 4);
    } else {
        struct type_info *ti = type_info(d, t);
        rec_value v;
        if (ti->as_string) {
            if (rec_entry_get(e, 0, &v) == 0 && v.kind == REC_STRING)
                render_value(d, &v, level + 1, b, 0, SIZE_MAX);
            else
                cli_buf_add(b, "null", 4);
        } else {
            size_t limit = SIZE_MAX;
            bool cut = false;
            if (ti->frames >= 0 && ti->truncated >= 0 && d->stack_depth &&
                rec_entry_get(e, (size_t)ti->frames, &v) == 0 &&
                v.kind == REC_ARRAY && v.v.array.n > d->stack_depth) {
                cut = true;
                limit = d->stack_depth;
            }
            cli_buf_addc(b, '{');
            for (size_t i = 0; i < ti->nfields; i++) {
                const struct field_info *f = &ti->f[i];
                cli_buf_add(b, f->key + (i == 0), f->key_len - (i == 0));
                const char *name;
                if (cut && (long)i == ti->truncated)
                    cli_buf_add(b, "true", 4);
                else if ((long)i == ti->fn && d->dbg &&
                         (name = offline_name(d, e, ti)) != NULL)
                    cli_buf_add_json_string(b, name, strlen(name));
                else if (rec_entry_get(e, i, &v) < 0)
                    cli_buf_add(b, "null", 4);
                else
                    render_value(d, &v, level + 1, b, 0,
                                 (long)i == ti->frames ? limit : SIZE_MAX);
            }
            cli_buf_addc(b, '}');
        }
    }
    if (d->nrendered == d->caprendered) {
        d->caprendered = d->caprendered ? d->caprendered * 2 : 256;
        d->rendered = cli_xrealloc(d->rendered, d->caprendered * sizeof *d->rendered);
    }
    /* A cycle may have cached e deeper down already: the outermost
     * rendering, finished last, wins. */
    d->rendered[d->nrendered].s = arena_store(d, b->p, b->len);
    d->rendered[d->nrendered].len = b->len;
    cli_map_xput(&d->entries, (uintptr_t)e, (uint32_t)(d->nrendered++));
    add_capped(out, base, b->p, b->len);
}

/* A ticks value of the event's chunk as ns since the epoch, through the
 * event's own (ticks, time) pair so that the reader's tick base is used. */
static uint64_t ticks_to_ns(const dump_render *d, const rec_event *ev,
                            int64_t ticks)
{
    __int128 delta = (__int128)ticks - (__int128)rec_event_ticks(ev);
    __int128 ns = (__int128)rec_event_time_ns(ev) +
                  delta * 1000000000 / (__int128)d->ticks_per_second;
    if (ns < 0)
        return 0;
    if (ns > (__int128)UINT64_MAX)
        return UINT64_MAX;
    return (uint64_t)ns;
}

void dump_render_event(dump_render *d, const rec_event *ev, cli_buf *out)
{
    const rec_type *t = rec_event_type(ev);
    rec_value v;
    size_t base = out->len;
    if (!t) {
        cli_buf_adds(out, "{\"type\":null,\"startTime\":");
        cli_buf_add_u64(out, rec_event_time_ns(ev));
        cli_buf_addc(out, '}');
        return;
    }
    struct type_info *ti = type_info(d, t);
    cli_buf_add(out, ti->prefix, ti->prefix_len);
    cli_buf_add_u64(out, rec_event_time_ns(ev));
    for (size_t i = 0; i < ti->nfields; i++) {
        const struct field_info *f = &ti->f[i];
        if (f->skip)
            continue;
        cli_buf_add(out, f->key, f->key_len);
        if (rec_event_get(ev, i, &v) < 0)
            cli_buf_add(out, "null", 4);
        else if (f->ticks && v.kind == REC_UINT)
            cli_buf_add_u64(out, ticks_to_ns(d, ev, (int64_t)v.v.u));
        else if (f->ticks && v.kind == REC_INT)
            cli_buf_add_u64(out, ticks_to_ns(d, ev, v.v.i));
        else
            render_value(d, &v, 0, out, base, SIZE_MAX);
    }
    cli_buf_addc(out, '}');
}
