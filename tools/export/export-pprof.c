/*
 * tools/export/export-pprof.c - `rec-dump --format pprof`: a gzipped
 * profile.proto (github.com/google/pprof/proto/profile.proto) for
 * `go tool pprof`, Pyroscope, Parca and OpenTelemetry importers.
 *
 * The encoder is written by hand rather than generated with protobuf-c:
 * profile.proto needs only varints and length-delimited fields, so forty
 * lines replace a protoc code-generation step, a runtime library and the
 * copy of every sample into generated structs (the message is streamed
 * straight from the export profile's tables).
 *
 * Mapping: sample types cpu/nanoseconds (default) and samples/count; one
 * Sample per (thread, stack) with labels thread (name), thread_id and
 * pid; a Location per physical frame, whose Lines are the frames inlined
 * into it (innermost first, the physical function last, as the proto
 * says); Functions by (name, file); Mappings from the ModuleLoad events
 * with build-ids. Failed and lost CPU are one-frame stacks "[failed]" and
 * "[lost: REASON]" without a mapping, so the totals are rec-cpu's.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "export.h"

/* ---- protobuf wire format ------------------------------------------- */

enum { WT_VARINT = 0, WT_LEN = 2 };

static void pb_varint(cli_buf *b, uint64_t v)
{
    cli_buf_reserve(b, 10);
    while (v >= 0x80) {
        b->p[b->len++] = (char)(v | 0x80);
        v >>= 7;
    }
    b->p[b->len++] = (char)v;
}

static void pb_tag(cli_buf *b, unsigned field, unsigned wt)
{
    pb_varint(b, (uint64_t)field << 3 | wt);
}

/* Zero is the default of every scalar: omitted, as protobuf encoders do. */
static void pb_uint(cli_buf *b, unsigned field, uint64_t v)
{
    if (v) {
        pb_tag(b, field, WT_VARINT);
        pb_varint(b, v);
    }
}

static void pb_bytes(cli_buf *b, unsigned field, const void *p, size_t n)
{
    pb_tag(b, field, WT_LEN);
    pb_varint(b, n);
    cli_buf_add(b, p, n);
}

/* A nested message built in m, appended to b and m emptied. */
static void pb_msg(cli_buf *b, unsigned field, cli_buf *m)
{
    pb_bytes(b, field, m->p, m->len);
    m->len = 0;
}

/* ---- the profile ----------------------------------------------------- */

typedef struct pctx {
    xp_profile *p;
    cli_buf body, m, sub;
    xp_seqtab funcs;            /* (name, file) -> function id - 1 */
    xp_seqtab locs;             /* frame ids, innermost first -> loc id - 1 */
    uint32_t *loc_of_stack;     /* per stack: scratch */
    uint32_t *scratch;
    size_t cap_scratch;
} pctx;

static long intern_seq(xp_seqtab *t, const uint32_t *w, size_t n, bool *added)
{
    size_t before = t->n;
    long id = xp_seqtab_intern(t, w, n);
    *added = id >= 0 && t->n != before;
    return id;
}

static void value_type(pctx *c, unsigned field, const char *type,
                       const char *unit)
{
    pb_uint(&c->sub, 1, (uint64_t)xp_intern(c->p, type));
    pb_uint(&c->sub, 2, (uint64_t)xp_intern(c->p, unit));
    pb_msg(&c->body, field, &c->sub);
}

/* Function id for a frame, writing the Function message when new. */
static uint64_t function_id(pctx *c, const xp_frame *f)
{
    uint32_t key[2] = { f->func, f->file };
    bool added;
    long id = intern_seq(&c->funcs, key, 2, &added);
    if (added) {
        pb_uint(&c->m, 1, (uint64_t)id + 1);
        pb_uint(&c->m, 2, f->func);
        pb_uint(&c->m, 3, f->func);
        pb_uint(&c->m, 4, f->file);
        pb_msg(&c->body, 5, &c->m);
    }
    return (uint64_t)id + 1;
}

/* Location id for frames fr[0..n) (innermost first, the last physical),
 * writing the Location (and its Functions) when new. */
static uint64_t location_id(pctx *c, const uint32_t *fr, size_t n)
{
    bool added;
    long id = intern_seq(&c->locs, fr, n, &added);
    if (!added)
        return (uint64_t)id + 1;
    xp_profile *p = c->p;
    const xp_frame *phys = &p->frames[fr[n - 1]];
    uint32_t mi = phys->module
        ? xp_map_get(&p->module_index, (uint64_t)phys->module + 1)
        : UINT32_MAX;
    cli_buf loc = { 0 };
    pb_uint(&loc, 1, (uint64_t)id + 1);
    if (mi != UINT32_MAX) {
        pb_uint(&loc, 2, (uint64_t)mi + 1);
        pb_uint(&loc, 3, p->modules[mi].base + phys->offset);
    } else if (!(phys->flags & XP_F_PSEUDO)) {
        pb_uint(&loc, 3, phys->offset);
    }
    for (size_t k = 0; k < n; k++) {
        const xp_frame *f = &p->frames[fr[k]];
        pb_uint(&c->sub, 1, function_id(c, f));
        pb_uint(&c->sub, 2, f->line);
        pb_msg(&loc, 4, &c->sub);
    }
    pb_msg(&c->body, 4, &loc);
    cli_buf_free(&loc);
    return (uint64_t)id + 1;
}

static void mappings(pctx *c)
{
    xp_profile *p = c->p;
    for (size_t i = 0; i < p->nmodules; i++) {
        const xp_module *mo = &p->modules[i];
        pb_uint(&c->m, 1, i + 1);
        pb_uint(&c->m, 2, mo->base);
        pb_uint(&c->m, 3, mo->base + (mo->size ? mo->size : 1));
        pb_uint(&c->m, 5, mo->path);
        pb_uint(&c->m, 6, mo->build_id);
        /* rec symbolized every frame it could: consumers need not. */
        pb_uint(&c->m, 7, 1);
        pb_uint(&c->m, 8, 1);
        pb_uint(&c->m, 9, 1);
        pb_uint(&c->m, 10, 1);
        pb_msg(&c->body, 3, &c->m);
    }
}

static void label(pctx *c, cli_buf *s, uint64_t key, uint64_t str,
                  uint64_t num)
{
    pb_uint(&c->sub, 1, key);
    pb_uint(&c->sub, 2, str);
    if (!str) {
        /* num 0 is a valid thread id only in theory; keep it explicit */
        pb_tag(&c->sub, 3, WT_VARINT);
        pb_varint(&c->sub, num);
    }
    pb_msg(s, 3, &c->sub);
}

static void samples(pctx *c)
{
    xp_profile *p = c->p;
    uint64_t k_thread = (uint64_t)xp_intern(p, "thread"),
             k_tid = (uint64_t)xp_intern(p, "thread_id"),
             k_pid = (uint64_t)xp_intern(p, "pid");
    cli_buf locs = { 0 }, vals = { 0 };
    for (size_t i = 0; i < p->ncells; i++) {
        const xp_cell *ce = &p->cells[i];
        const xp_thread *t = &p->threads[ce->thread];
        size_t n;
        const uint32_t *fr = xp_stack(p, ce->stack, &n);
        if (n > c->cap_scratch) {
            c->cap_scratch = n;
            c->scratch = cli_xrealloc(c->scratch, n * sizeof *c->scratch);
        }
        /* Leaf first; a run of inlined frames joins the physical frame
         * that follows it (towards the root). */
        locs.len = 0;
        size_t k = 0;
        for (size_t j = n; j-- > 0;) {
            c->scratch[k++] = fr[j];
            if (!(p->frames[fr[j]].flags & XP_F_INLINED) || j == 0) {
                pb_varint(&locs, location_id(c, c->scratch, k));
                k = 0;
            }
        }
        vals.len = 0;
        pb_varint(&vals, ce->ns);
        pb_varint(&vals, ce->count);
        cli_buf s = { 0 };
        pb_bytes(&s, 1, locs.p, locs.len);
        pb_bytes(&s, 2, vals.p, vals.len);
        if (t->name)
            label(c, &s, k_thread, t->name, 0);
        label(c, &s, k_tid, 0, t->tid);
        label(c, &s, k_pid, 0, t->pid);
        pb_msg(&c->body, 2, &s);
        cli_buf_free(&s);
    }
    cli_buf_free(&locs);
    cli_buf_free(&vals);
}

static int gzip_out(const xp_out *o, const cli_buf *b)
{
    z_stream z = { 0 };
    /* 15 + 16: a gzip wrapper, what pprof readers expect. Level 1: the
     * profile of distinct stacks compresses well already, and level 6
     * took a third of the export time for a 5% smaller file. */
    if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK) {
        cli_error(o->prog, "zlib: cannot initialise");
        return -1;
    }
    unsigned char out[1 << 16] = { 0 };
    z.next_in = (unsigned char *)b->p;
    z.avail_in = (uInt)b->len;
    int zr;
    do {
        z.next_out = out;
        z.avail_out = sizeof out;
        zr = deflate(&z, Z_FINISH);
        size_t n = sizeof out - z.avail_out;
        if (n && fwrite(out, 1, n, o->f) != n) {
            deflateEnd(&z);
            cli_error(o->prog, "%s: %s", o->path, strerror(errno));
            return -1;
        }
    } while (zr == Z_OK || zr == Z_BUF_ERROR);
    deflateEnd(&z);
    if (zr != Z_STREAM_END) {
        cli_error(o->prog, "zlib: compression failed");
        return -1;
    }
    return 0;
}

int xp_write_pprof(xp_profile *p, const xp_out *o)
{
    /* Cells stay in reading order (deterministic): pprof readers do not
     * care about order, and sorting a million distinct stacks costs more
     * than writing them. */
    pctx c = { .p = p };
    value_type(&c, 1, "cpu", "nanoseconds");
    value_type(&c, 1, "samples", "count");
    mappings(&c);
    samples(&c);
    /* Strings last: every table above interned its strings by now. */
    for (size_t i = 0; i < p->strs.n; i++)
        pb_bytes(&c.body, 6, p->strs.strs[i], strlen(p->strs.strs[i]));
    if (p->start_ns != UINT64_MAX) {
        pb_uint(&c.body, 9, p->start_ns);
        if (p->end_ns > p->start_ns)
            pb_uint(&c.body, 10, p->end_ns - p->start_ns);
    }
    value_type(&c, 11, "cpu", "nanoseconds");
    pb_uint(&c.body, 12, p->period_ns);
    /* Readers default to the last sample type otherwise (samples). */
    pb_uint(&c.body, 14, (uint64_t)xp_intern(p, "cpu"));
    /* One deflate call takes at most 4 GiB (uInt): far beyond a profile
     * of distinct stacks, but say so rather than wrap. */
    int rc = -1;
    if (c.body.len > UINT32_MAX)
        cli_error(o->prog, "profile too large for pprof (%zu bytes)",
                  c.body.len);
    else
        rc = gzip_out(o, &c.body);
    cli_buf_free(&c.body);
    cli_buf_free(&c.m);
    cli_buf_free(&c.sub);
    free(c.scratch);
    xp_seqtab_free(&c.funcs);
    xp_seqtab_free(&c.locs);
    return rc;
}
