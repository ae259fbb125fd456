/*
 * tools/export/export-profile.c - fold recordings into the export profile
 * (tools/export/export.h): distinct frames and stacks, CPU time per thread and
 * stack, with failed and lost CPU as pseudo-stacks.
 *
 * Like rec-cpu, fields are read through the view of each chunk (cli.h),
 * and caches keyed by entry pointers are emptied when the chunk changes
 * (pointers are only valid within a chunk).
 */
#include <config.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rec/record.h>

#include "export.h"

/* ---- interned uint32 sequences -------------------------------------- */

void xp_seqtab_free(xp_seqtab *t)
{
    free(t->words);
    free(t->off);
    free(t->hash);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

/* Id of w[0..n), added if new; negative REC_E* on failure. */
long xp_seqtab_intern(xp_seqtab *t, const uint32_t *w, size_t n)
{
    if ((t->n + 1) * 2 > t->nslots
        && cli_slots_grow(&t->slots, &t->nslots, 1024, t->hash, t->n) < 0)
        return REC_ENOMEM;
    uint64_t h = cli_hash_bytes(w, n * sizeof *w);
    size_t mask = t->nslots - 1, j = h & mask;
    for (; t->slots[j]; j = (j + 1) & mask) {
        size_t i = t->slots[j] - 1;
        if (t->hash[i] == h && t->off[i + 1] - t->off[i] == n
            && memcmp(t->words + t->off[i], w, n * sizeof *w) == 0)
            return (long)i;
    }
    if (t->n + 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        t->off = cli_xrealloc(t->off, cap * sizeof *t->off);
        t->hash = cli_xrealloc(t->hash, cap * sizeof *t->hash);
        t->cap = cap;
        if (t->n == 0)
            t->off[0] = 0;
    }
    if (t->nwords + n > t->capwords) {
        size_t cap = t->capwords ? t->capwords * 2 : 1024;
        while (cap < t->nwords + n)
            cap *= 2;
        t->words = cli_xrealloc(t->words, cap * sizeof *t->words);
        t->capwords = cap;
    }
    if (n > UINT32_MAX - t->nwords)
        return REC_ETOOBIG;
    memcpy(t->words + t->nwords, w, n * sizeof *w);
    t->nwords += n;
    t->hash[t->n] = h;
    t->off[t->n + 1] = (uint32_t)t->nwords;
    t->slots[j] = (uint32_t)++t->n;
    return (long)t->n - 1;
}

/* ---- profile ----------------------------------------------------------- */

void xp_init(xp_profile *p, const xp_options *opt)
{
    memset(p, 0, sizeof *p);
    if (opt)
        p->opt = *opt;
    p->start_ns = UINT64_MAX;
    cli_strtab_intern(&p->strs, "", 0);
}

void xp_free(xp_profile *p)
{
    cli_strtab_free(&p->strs);
    free(p->frames);
    xp_seqtab_free(&p->frametab);
    xp_seqtab_free(&p->stacks);
    free(p->threads);
    cli_map_free(&p->thread_index);
    free(p->modules);
    cli_map_free(&p->module_index);
    free(p->cells);
    cli_map_free(&p->cell_index);
    free(p->jit);
    memset(p, 0, sizeof *p);
}

long xp_intern(xp_profile *p, const char *s)
{
    return cli_strtab_intern(&p->strs, s, strlen(s));
}

static long intern_n(xp_profile *p, const char *s, size_t n)
{
    return cli_strtab_intern(&p->strs, s, n);
}

static long add_frame(xp_profile *p, const xp_frame *f)
{
    uint32_t w[8] = { f->func, f->module, f->file, f->build_id, f->line,
                      f->flags, (uint32_t)f->offset,
                      (uint32_t)(f->offset >> 32) };
    long id = xp_seqtab_intern(&p->frametab, w, 8);
    if (id >= 0 && (size_t)id == p->nframes) {
        if (p->nframes == p->capframes) {
            p->capframes = p->capframes ? p->capframes * 2 : 256;
            p->frames = cli_xrealloc(p->frames,
                                     p->capframes * sizeof *p->frames);
        }
        p->frames[p->nframes++] = *f;
    }
    return id;
}

static long add_cell(xp_profile *p, uint32_t thread, uint32_t stack,
                     uint64_t ns, uint64_t count)
{
    uint64_t key = ((uint64_t)thread + 1) << 32 | stack;
    uint32_t i = xp_map_get(&p->cell_index, key);
    if (i == UINT32_MAX) {
        if (p->ncells == p->capcells) {
            p->capcells = p->capcells ? p->capcells * 2 : 256;
            p->cells = cli_xrealloc(p->cells, p->capcells * sizeof *p->cells);
        }
        i = (uint32_t)p->ncells;
        if (cli_map_put(&p->cell_index, key, i) < 0)
            return REC_ENOMEM;
        p->cells[i] = (xp_cell){ thread, stack, 0, 0 };
        p->ncells++;
    }
    p->cells[i].ns += ns;
    p->cells[i].count += count;
    return 0;
}

/* A pseudo frame named s. */
static long pseudo_frame(xp_profile *p, const char *s)
{
    long name = xp_intern(p, s);
    if (name < 0)
        return name;
    xp_frame f = { .func = (uint32_t)name, .flags = XP_F_PSEUDO };
    return add_frame(p, &f);
}

/* A one-frame stack of a pseudo frame named s. */
static long pseudo_stack(xp_profile *p, const char *s)
{
    long fid = pseudo_frame(p, s);
    if (fid < 0)
        return fid;
    uint32_t w = (uint32_t)fid;
    return xp_seqtab_intern(&p->stacks, &w, 1);
}

/* ---- reading --------------------------------------------------------- */

typedef struct rctx {
    xp_profile *p;
    cli_evview view;
    cli_map threads;            /* Thread entry -> thread index + 1 (0 no) */
    cli_map stacks;             /* StackTrace entry -> stack id */
    cli_map frames;             /* Frame entry -> frame id */
    uint32_t *scratch;
    size_t cap_scratch;
    uint64_t since, until;
} rctx;

/* String index of a String field (inline or a pool reference); 0 when
 * null or absent. */
static long entry_string(rctx *c, const rec_entry *e, long f)
{
    const char *s;
    size_t n;
    if (!cli_entry_text(&c->view, e, f, &s, &n))
        return 0;
    return intern_n(c->p, s, n);
}

static uint64_t entry_uint(const rec_entry *e, long f)
{
    uint64_t u = 0;
    cli_entry_uint(e, f, &u);
    return u;
}

static long event_thread(rctx *c, const rec_entry *e)
{
    if (!e)
        return -1;
    uint32_t i = xp_map_get(&c->threads, (uintptr_t)e);
    if (i != UINT32_MAX)
        return (long)i - 1;
    xp_profile *p = c->p;
    cli_thread_info ti;
    long idx = -1;
    cli_evview_thread(&c->view, e, &ti);
    uint64_t tid = ti.tid, pid = ti.pid;
    if (ti.have_tid) {
        long name = ti.name ? intern_n(p, ti.name, ti.name_len) : 0;
        if (name < 0)
            return name;
        const char *nm = xp_str(p, (uint32_t)name);
        if (c->p->opt.threads
            && !cli_threads_match(c->p->opt.threads, tid, name ? nm : NULL,
                                  strlen(nm))) {
            idx = -2;
        } else {
            uint64_t key = ((uint64_t)p->side << 62 | (pid & 0x3fffffff) << 32
                            | (tid & 0xffffffffu)) + 1;
            uint32_t t = xp_map_get(&p->thread_index, key);
            if (t == UINT32_MAX) {
                if (p->nthreads == p->capthreads) {
                    p->capthreads = p->capthreads ? p->capthreads * 2 : 64;
                    p->threads = cli_xrealloc(p->threads, p->capthreads
                                              * sizeof *p->threads);
                }
                t = (uint32_t)p->nthreads++;
                p->threads[t] = (xp_thread){ pid, tid, 0, p->side };
                if (cli_map_put(&p->thread_index, key, t) < 0)
                    return REC_ENOMEM;
            }
            if (name)       /* the latest name wins */
                p->threads[t].name = (uint32_t)name;
            idx = t;
        }
    }
    if (cli_map_put(&c->threads, (uintptr_t)e, (uint32_t)(idx + 1)) < 0)
        return REC_ENOMEM;
    return idx;
}

static long frame_of(rctx *c, const rec_entry *e)
{
    uint32_t i = xp_map_get(&c->frames, (uintptr_t)e);
    if (i != UINT32_MAX)
        return i;
    xp_profile *p = c->p;
    const cli_evtype *ft = cli_evview_entry(&c->view, e);
    xp_frame f = { 0 };
    long s;
    if ((s = entry_string(c, e, ft->function)) < 0)
        return s;
    f.func = (uint32_t)s;
    if ((s = entry_string(c, e, ft->module)) < 0)
        return s;
    f.module = (uint32_t)s;
    if ((s = entry_string(c, e, ft->file)) < 0)
        return s;
    f.file = (uint32_t)s;
    f.offset = entry_uint(e, ft->offset);
    uint64_t line = entry_uint(e, ft->line);
    f.line = line > UINT32_MAX ? 0 : (uint32_t)line;
    if (cli_entry_bool(e, ft->inlined))
        f.flags |= XP_F_INLINED;
    if ((s = entry_string(c, e, ft->frame_kind)) < 0)
        return s;
    if (s && strcmp(xp_str(p, (uint32_t)s), "python") == 0) {
        /* Shown as "qualname (file.py:12)", and grouped by its file as a
         * native function is by its module. */
        const char *fn = f.func ? xp_str(p, f.func) : NULL;
        const char *file = f.file ? xp_str(p, f.file) : NULL;
        char buf[1100];
        size_t len = cli_python_name(buf, sizeof buf, fn, fn ? strlen(fn) : 0,
                                     file, file ? strlen(file) : 0, f.line);
        if ((s = intern_n(p, buf, len)) < 0)
            return s;
        f.func = (uint32_t)s;
        f.module = f.file;
    }
    if (p->opt.debug && f.module) {
        const char *fn = xp_str(p, f.func), *mod = xp_str(p, f.module);
        const char *name = cli_debug_frame_name(p->opt.debug, fn, strlen(fn),
                                                mod, strlen(mod), f.offset);
        if (name && (s = xp_intern(p, name)) < 0)
            return s;
        if (name)
            f.func = (uint32_t)s;
    }
    if (!f.func) {
        /* Unresolved code is named by its module, like rec-cpu does. */
        const char *mod = xp_str(p, f.module), *base = strrchr(mod, '/');
        char buf[300];
        snprintf(buf, sizeof buf, "[%s]", f.module ? (base ? base + 1 : mod)
                                                   : "unknown");
        if ((s = xp_intern(p, buf)) < 0)
            return s;
        f.func = (uint32_t)s;
    }
    long id = add_frame(p, &f);
    if (id >= 0 && cli_map_put(&c->frames, (uintptr_t)e, (uint32_t)id) < 0)
        return REC_ENOMEM;
    return id;
}

static long stack_of(rctx *c, const rec_entry *e)
{
    uint32_t i = xp_map_get(&c->stacks, (uintptr_t)e);
    if (i != UINT32_MAX)
        return i;
    const rec_value *items = NULL;
    size_t n = cli_evview_frames(&c->view, e, &items);
    if (n + 1 > c->cap_scratch) {
        c->cap_scratch = n + 1;
        c->scratch = cli_xrealloc(c->scratch, (n + 1) * sizeof *c->scratch);
    }
    size_t k = 0;
    /* A stack the walk cut short, for a reason the recording gives, is
     * rooted at "[partial: REASON]" rather than passed off as whole. */
    int why = cli_evview_partial(&c->view, e);
    if (why >= 0 && why < CLI_PARTIAL_N - 2 && n) {
        char name[64];
        snprintf(name, sizeof name, "[partial: %s]", cli_partial_names[why]);
        long pf = pseudo_frame(c->p, name);
        if (pf < 0)
            return pf;
        c->scratch[k++] = (uint32_t)pf;
    }
    /* Innermost first in the recording; root first here. */
    for (size_t j = n; j-- > 0;) {
        const rec_value *it = &items[j];
        if (it->kind != REC_REF || !it->v.ref.entry)
            continue;
        long f = frame_of(c, it->v.ref.entry);
        if (f < 0)
            return f;
        c->scratch[k++] = (uint32_t)f;
    }
    long id = k ? xp_seqtab_intern(&c->p->stacks, c->scratch, k)
                : pseudo_stack(c->p, "[empty stack]");
    if (id >= 0 && cli_map_put(&c->stacks, (uintptr_t)e, (uint32_t)id) < 0)
        return REC_ENOMEM;
    return id;
}

static int add_module(rctx *c, const rec_entry *e)
{
    if (!e)
        return 0;
    xp_profile *p = c->p;
    const cli_evtype *mt = cli_evview_entry(&c->view, e);
    long path = entry_string(c, e, mt->path);
    long bid = entry_string(c, e, mt->build_id);
    if (path < 0 || bid < 0)
        return REC_ENOMEM;
    if (p->opt.debug && path && bid) {
        const char *ps = xp_str(p, (uint32_t)path), *bs = xp_str(p, (uint32_t)bid);
        if (cli_debug_add_module(p->opt.debug, ps, strlen(ps), bs,
                                 strlen(bs)) < 0)
            return REC_ENOMEM;
    }
    if (xp_map_get(&p->module_index, (uint64_t)path + 1) != UINT32_MAX)
        return 0;
    if (p->nmodules == p->capmodules) {
        p->capmodules = p->capmodules ? p->capmodules * 2 : 16;
        p->modules = cli_xrealloc(p->modules, p->capmodules
                                  * sizeof *p->modules);
    }
    p->modules[p->nmodules] = (xp_module){ (uint32_t)path, (uint32_t)bid,
        entry_uint(e, mt->base), entry_uint(e, mt->size) };
    return cli_map_put(&p->module_index, (uint64_t)path + 1,
                       (uint32_t)p->nmodules++);
}

static int fold(rctx *c, const rec_event *ev)
{
    xp_profile *p = c->p;
    const cli_evtype *s = cli_evview_event(&c->view, ev);
    const rec_value *vals = rec_event_values(ev);
    uint64_t ts = rec_event_time_ns(ev), a, b;
    const char *why;
    size_t wn;
    switch (s->kind) {
    case CLI_EV_MODULE_LOAD:
        return add_module(c, cli_ev_ref(vals, s->module));
    case CLI_EV_SETTINGS:
        if (!p->period_ns && cli_ev_uint(vals, s->period, &a))
            p->period_ns = a;
        return 0;
    case CLI_EV_JIT_NAME: {
        /* Kept for the end of the file: its samples came first. */
        long name;
        if (!cli_ev_uint(vals, s->address, &a) || !cli_ev_uint(vals, s->size, &b) ||
            !cli_ev_text(&c->view, vals, s->name, &why, &wn)) {
            p->skipped++;
            return 0;
        }
        if ((name = intern_n(p, why, wn)) < 0)
            return (int)name;
        if (p->njit == p->capjit) {
            p->capjit = p->capjit ? 2 * p->capjit : 64;
            p->jit = cli_xrealloc(p->jit, p->capjit * sizeof *p->jit);
        }
        p->jit[p->njit++] = (struct xp_jitname){ a, a + b, (uint32_t)name };
        return 0;
    }
    case CLI_EV_SAMPLE:
    case CLI_EV_LOST:
        break;
    default:
        return 0;
    }
    if (ts < c->since || ts >= c->until)
        return 0;
    long t = event_thread(c, cli_ev_ref(vals, s->thread));
    if (t == -2)
        return 0;               /* filtered out */
    if (t < 0) {
        if (t != -1)
            return (int)t;
        p->skipped++;
        return 0;
    }
    xp_event e = { .thread = (uint32_t)t, .ts_ns = ts };
    long st;
    if (s->kind == CLI_EV_SAMPLE) {
        if (!cli_ev_uint(vals, s->period, &a)) {
            p->skipped++;
            return 0;
        }
        e.kind = XP_SAMPLE;
        e.ns = a;
        e.count = 1;
        e.failed = cli_ev_bool(vals, s->failed);
        e.biased = cli_ev_bool(vals, s->biased);
        const rec_entry *se = cli_ev_ref(vals, s->stack);
        if (e.failed)
            st = pseudo_stack(p, "[failed]");
        else if (se)
            st = stack_of(c, se);
        else
            st = pseudo_stack(p, "[no stack]");
        p->sampled_ns += a;
        p->samples++;
    } else {
        if (!cli_ev_uint(vals, s->lost_samples, &a))
            a = 0;
        if (!cli_ev_uint(vals, s->lost_time, &b))
            b = 0;
        e.kind = XP_LOST;
        e.ns = b;
        e.count = a;
        if (!cli_ev_text(&c->view, vals, s->reason, &why, &wn)) {
            why = "unknown";
            wn = 7;
        }
        char buf[128];
        snprintf(buf, sizeof buf, "[lost: %.*s]", (int)(wn < 100 ? wn : 100),
                 why);
        long r = intern_n(p, why, wn);
        if (r < 0)
            return (int)r;
        e.reason = (uint32_t)r;
        st = pseudo_stack(p, buf);
        p->lost_ns += b;
        p->lost_samples += a;
    }
    if (st < 0)
        return (int)st;
    e.stack = (uint32_t)st;
    if (ts > p->end_ns)
        p->end_ns = ts;
    int rc = (int)add_cell(p, e.thread, e.stack, e.ns, e.count);
    if (rc == 0 && p->opt.on_event)
        rc = p->opt.on_event(p->opt.arg, &e);
    return rc;
}

/* Frames of JIT code written unnamed ([jit] in module [jit]) that the
 * file named later (JitCodeName: the runtime wrote its map at exit, or
 * late): named so, the latest name of an address winning. Only the file's
 * own frames: JIT addresses are a process's. */
static void name_jit_frames(xp_profile *p, size_t first_frame)
{
    long jit = xp_intern(p, "[jit]");

    if (!p->njit || jit < 0)
        return;
    for (size_t i = first_frame; i < p->nframes; i++) {
        xp_frame *f = &p->frames[i];
        if (f->func != (uint32_t)jit || f->module != (uint32_t)jit)
            continue;
        for (size_t k = p->njit; k-- > 0;)
            if (f->offset - p->jit[k].lo < p->jit[k].hi - p->jit[k].lo) {
                f->func = p->jit[k].name;
                break;
            }
    }
    p->njit = 0;
}

int xp_read(xp_profile *p, const char *prog, const char *path)
{
    size_t first_frame = p->nframes;
    rec_reader *r;
    const rec_event *ev;
    rec_chunk_info info;
    int rc = rec_reader_open(&r, path, 0), err = 0;
    if (rc < 0) {
        cli_reader_error(prog, path, NULL, rc);
        return 1;
    }
    rctx c = { .p = p, .until = UINT64_MAX };
    uint64_t last = UINT64_MAX;
    bool first = true;
    while ((rc = rec_reader_next(r, &ev)) > 0) {
        if (cli_chunk_changed(r, &last, &info)) {
            cli_evview_reset(&c.view);
            cli_map_clear(&c.threads);
            cli_map_clear(&c.stacks);
            cli_map_clear(&c.frames);
            if (info.start_ns < p->start_ns)
                p->start_ns = info.start_ns;
            if (first) {
                /* Relative times count from the recording's start. */
                first = false;
                if (p->opt.have_since)
                    c.since = cli_time_resolve(&p->opt.since, info.start_ns);
                if (p->opt.have_until)
                    c.until = cli_time_resolve(&p->opt.until, info.start_ns);
            }
        }
        if ((err = fold(&c, ev)) < 0)
            break;
    }
    if (err < 0)
        cli_error(prog, "%s: %s", path, rec_strerror(err));
    else if (rc < 0)
        cli_reader_error(prog, path, r, rc);
    else
        cli_reader_warning(prog, path, r);
    name_jit_frames(p, first_frame);
    if (p->skipped)
        cli_warn(prog, "%s: %" PRIu64 " events with unusable fields ignored",
                 path, p->skipped);
    p->skipped = 0;
    rec_reader_close(r);
    cli_evview_free(&c.view);
    cli_map_free(&c.threads);
    cli_map_free(&c.stacks);
    cli_map_free(&c.frames);
    free(c.scratch);
    return err < 0 ? -1 : rc < 0 ? 1 : 0;
}

/* ---- labels ---------------------------------------------------------- */

void xp_thread_label(const xp_profile *p, const xp_thread *t, char *buf,
                     size_t len)
{
    if (t->name)
        snprintf(buf, len, "%s %" PRIu64, xp_str(p, t->name), t->tid);
    else
        snprintf(buf, len, "%" PRIu64, t->tid);
}
