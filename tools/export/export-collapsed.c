/*
 * tools/export/export-collapsed.c - `rec-dump --format collapsed`: one line per
 * distinct stack, root-first frames joined by ';', a space and the weight
 * (CPU ns, or samples), the input of flamegraph.pl, inferno and speedscope.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

/* ';' separates frames and a line ends the record: neither may appear in
 * a name. Other control characters (a thread may name itself with a
 * terminal's escape sequences) are written as \xHH. */
static void add_name(cli_buf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == ';')
            cli_buf_addc(b, ':');
        else if (c == '\n' || c == '\r')
            cli_buf_addc(b, ' ');
        else if (c < 0x20 || c == 0x7f) {
            char esc[5];
            snprintf(esc, sizeof esc, "\\x%02x", c);
            cli_buf_adds(b, esc);
        } else
            cli_buf_addc(b, (char)c);
    }
}

/* Each function name once, cleaned: lines are then copies of these. */
typedef struct names {
    cli_buf text;
    size_t *off, *len;          /* by frame id */
} names;

static void names_init(names *nm, const xp_profile *p)
{
    memset(nm, 0, sizeof *nm);
    nm->off = cli_xrealloc(NULL, (p->nframes + 1) * sizeof *nm->off);
    nm->len = cli_xrealloc(NULL, (p->nframes + 1) * sizeof *nm->len);
    for (size_t i = 0; i < p->nframes; i++) {
        nm->off[i] = nm->text.len;
        add_name(&nm->text, xp_str(p, p->frames[i].func));
        nm->len[i] = nm->text.len - nm->off[i];
    }
}

static void names_free(names *nm)
{
    cli_buf_free(&nm->text);
    free(nm->off);
    free(nm->len);
}

static void root_frame(const xp_profile *p, const xp_thread *t,
                       enum xp_group g, cli_buf *b)
{
    char buf[300];
    if (g == XP_GROUP_THREAD) {
        if (t->name)
            snprintf(buf, sizeof buf, "[%s tid=%" PRIu64 "]",
                     xp_str(p, t->name), t->tid);
        else
            snprintf(buf, sizeof buf, "[tid=%" PRIu64 "]", t->tid);
    } else {
        snprintf(buf, sizeof buf, "[pid=%" PRIu64 "]", t->pid);
    }
    add_name(b, buf);
    cli_buf_addc(b, ';');
}

typedef struct line {
    size_t off, len;
    uint64_t w;
} line;

static int cmp_lines(const void *a, const void *b, void *arg)
{
    const char *base = arg;
    const line *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(base + x->off, base + y->off, n);
    return c ? c : x->len < y->len ? -1 : x->len > y->len;
}

int xp_write_collapsed(xp_profile *p, const xp_out *o)
{
    /* Lines of several threads read the same once the thread is not the
     * root frame: render every (thread, stack) cell, sort, merge. */
    cli_buf text = { 0 }, out = { 0 };
    line *v = cli_xrealloc(NULL, (p->ncells + 1) * sizeof *v);
    names nm;
    names_init(&nm, p);
    for (size_t i = 0; i < p->ncells; i++) {
        const xp_cell *c = &p->cells[i];
        v[i].off = text.len;
        if (o->group != XP_GROUP_NONE)
            root_frame(p, &p->threads[c->thread], o->group, &text);
        size_t n;
        const uint32_t *f = xp_stack(p, c->stack, &n);
        for (size_t k = 0; k < n; k++) {
            cli_buf_reserve(&text, nm.len[f[k]] + 1);
            if (k)
                text.p[text.len++] = ';';
            memcpy(text.p + text.len, nm.text.p + nm.off[f[k]], nm.len[f[k]]);
            text.len += nm.len[f[k]];
        }
        v[i].len = text.len - v[i].off;
        v[i].w = o->weight_samples ? c->count : c->ns;
    }
    qsort_r(v, p->ncells, sizeof *v, cmp_lines, text.p);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < p->ncells;) {
        uint64_t w = v[i].w;
        size_t j = i + 1;
        while (j < p->ncells && cmp_lines(&v[i], &v[j], text.p) == 0)
            w += v[j++].w;
        cli_buf_add(&out, text.p + v[i].off, v[i].len);
        cli_buf_addc(&out, ' ');
        cli_buf_add_u64(&out, w);
        cli_buf_addc(&out, '\n');
        if (out.len > (1u << 20) && cli_buf_flush(&out, o->f) < 0)
            rc = -1;
        i = j;
    }
    if (rc == 0 && cli_buf_flush(&out, o->f) < 0)
        rc = -1;
    if (rc < 0)
        cli_error(o->prog, "%s: %s", o->path, strerror(errno));
    free(v);
    names_free(&nm);
    cli_buf_free(&text);
    cli_buf_free(&out);
    return rc;
}
