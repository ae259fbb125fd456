/*
 * tools/cpu/cpu-read.c - decode a recording's events for rec-cpu.
 *
 * Fields are read through the view of each chunk (cli.h). Type, thread
 * and stack pointers are only valid within one chunk, so the caches keyed
 * by them are emptied whenever the chunk changes.
 */
#include <config.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rec/record.h>

#include "cpu-model.h"

typedef struct reader_ctx {
    cpu_model *m;
    cpu_input *in;
    const char *prog;
    cli_evview view;
    cli_map threads;            /* Thread entry pointer -> thread index */
    cli_map stacks;             /* StackTrace entry pointer -> stack id */
    uint32_t *scratch;          /* function indexes of one stack */
    size_t cap_scratch;
    bool have_pid;
    uint64_t pid;               /* ProcessInfo of this recording */
    uint64_t skipped;           /* events with unusable fields */
    const char *name;           /* of a Thread entry just resolved, */
    size_t name_len;            /* applied once the row is final */
} reader_ctx;

static void reset_chunk(reader_ctx *c)
{
    cli_evview_reset(&c->view);
    cli_map_clear(&c->threads);
    cli_map_clear(&c->stacks);
}

/* Text of a String field of an entry; NULL when null or absent. */
static const char *entry_text(reader_ctx *c, const rec_entry *e, long f,
                              size_t *len)
{
    const char *s;
    return cli_entry_text(&c->view, e, f, &s, len) ? s : NULL;
}

/* The thread an event's eventThread field names. */
static cpu_thread *event_thread(reader_ctx *c, const rec_value *vals, long f)
{
    const rec_entry *e = cli_ev_ref(vals, f);
    cli_thread_info ti;
    uint32_t i;
    if (!e)
        return NULL;
    if (cli_map_get(&c->threads, (uintptr_t)e, &i))
        return c->m->threads[i];
    cli_evview_thread(&c->view, e, &ti);
    if (!ti.have_tid)
        return NULL;
    uint64_t pid = ti.have_pid ? ti.pid : c->have_pid ? c->pid : 0;
    cpu_thread *t = cpu_model_thread(c->m, pid, ti.tid);
    if (!t)
        return NULL;
    c->name = ti.name;
    c->name_len = ti.name_len;
    if (!c->have_pid) {
        /* No ProcessInfo yet: the first thread tells the process. */
        c->have_pid = true;
        c->pid = pid;
    }
    if (cli_map_put(&c->threads, (uintptr_t)e, t->index) < 0)
        return NULL;
    return t;
}

/* Length of the valid UTF-8 sequence at s[0..n), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80)
        return 1;
    size_t len = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
               : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
    if (!len || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    /* Overlong forms, surrogates and code points past U+10FFFF. */
    if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)
        || (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
        return 0;
    return len;
}

/* A NUL-terminated copy in valid UTF-8: each bad byte becomes U+FFFD, so
 * every output (text, CSV, SVG, JSON) can carry names as they are. */
static char *clean_utf8(const char *s, size_t n)
{
    char *out = malloc(3 * n + 1), *p = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n && s[i];) {
        size_t k = utf8_seq((const unsigned char *)s + i, n - i);
        if (k) {
            memcpy(p, s + i, k);
            p += k;
            i += k;
        } else {
            memcpy(p, "\xef\xbf\xbd", 3);
            p += 3;
            i++;
        }
    }
    *p = '\0';
    return out;
}

/* Names come from Thread entries (a rename is a new entry): the latest
 * non-null one wins. */
static void apply_name(reader_ctx *c, cpu_thread *t)
{
    if (!c->name)
        return;
    char *copy = clean_utf8(c->name, c->name_len);
    if (copy && (!t->name || strcmp(t->name, copy) != 0)) {
        free(t->name);
        t->name = copy;
    } else {
        free(copy);
    }
    c->name = NULL;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Function name of a frame: the symbol, else the module's file name in
 * brackets (unresolved code is grouped by module, not by address). */
static long frame_function(reader_ctx *c, const rec_entry *fr)
{
    const cli_evtype *ft = cli_evview_entry(&c->view, fr);
    size_t len = 0, mlen = 0, klen = 0;
    uint64_t off;
    const char *s = entry_text(c, fr, ft->function, &len);
    const char *mod = entry_text(c, fr, ft->module, &mlen), *dn;
    const char *kind = entry_text(c, fr, ft->frame_kind, &klen);
    if (kind && klen == 6 && memcmp(kind, "python", 6) == 0) {
        /* A function, whatever line: "qualname (file.py)". */
        size_t flen = 0;
        const char *file = entry_text(c, fr, ft->file, &flen);
        char name[1100];
        size_t n = cli_python_name(name, sizeof name, s, len, file, flen, 0);
        return cli_strtab_intern(&c->m->funcs, name, n);
    }
    if (c->m->opt.debug && mod && cli_entry_uint(fr, ft->offset, &off) &&
        (dn = cli_debug_frame_name(c->m->opt.debug, s, s ? len : 0, mod, mlen,
                                   off)))
        return cli_strtab_intern(&c->m->funcs, dn, strlen(dn));
    if (s && len)
        return cli_strtab_intern(&c->m->funcs, s, len);
    len = mlen;
    char buf[300];
    if (mod && len) {
        const char *base = mod;
        for (size_t i = 0; i < len; i++)
            if (mod[i] == '/')
                base = mod + i + 1;
        int n = snprintf(buf, sizeof buf, "[%.*s]",
                         (int)(len - (size_t)(base - mod)), base);
        return cli_strtab_intern(&c->m->funcs, buf,
                                 n < (int)sizeof buf ? (size_t)n : sizeof buf - 1);
    }
    return cli_strtab_intern(&c->m->funcs, "[unknown]", 9);
}

static long build_stack(reader_ctx *c, const rec_entry *e)
{
    const rec_value *items = NULL;
    size_t n = cli_evview_frames(&c->view, e, &items);
    if (n + 1 > c->cap_scratch) {     /* + 1: an empty stack's pseudo frame */
        uint32_t *s = realloc(c->scratch, (n + 1) * sizeof *s);
        if (!s)
            return REC_ENOMEM;
        c->scratch = s;
        c->cap_scratch = n + 1;
    }
    size_t k = 0;
    long self = -1;
    for (size_t i = 0; i < n; i++) {
        if (items[i].kind != REC_REF || !items[i].v.ref.entry)
            continue;
        long f = frame_function(c, items[i].v.ref.entry);
        if (f < 0)
            return f;
        if (self < 0)
            self = f;
        c->scratch[k++] = (uint32_t)f;
    }
    if (self < 0) {
        self = cli_strtab_intern(&c->m->funcs, "[empty stack]", 13);
        if (self < 0)
            return self;
        c->scratch[0] = (uint32_t)self;
        k = 1;
    }
    /* Recursion: a function counts once per stack for total time. */
    qsort(c->scratch, k, sizeof *c->scratch, cmp_u32);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (u == 0 || c->scratch[u - 1] != c->scratch[i])
            c->scratch[u++] = c->scratch[i];
    long id = cpu_stack_intern(&c->m->stacks, (uint32_t)self, c->scratch, u);
    if (id >= 0 && cli_map_put(&c->stacks, (uintptr_t)e, (uint32_t)id) < 0)
        return REC_ENOMEM;
    return id;
}

/* Failed samples and samples without a stack get a pseudo function so
 * that the hot-function view accounts for all sampled CPU time. Their keys
 * (1, 2) are never entry pointers. */
static long pseudo_stack(reader_ctx *c, uint64_t key, const char *name)
{
    uint32_t i;
    if (cli_map_get(&c->stacks, key, &i))
        return i;
    long f = cli_strtab_intern(&c->m->funcs, name, strlen(name));
    if (f < 0)
        return f;
    uint32_t fu = (uint32_t)f;
    long id = cpu_stack_intern(&c->m->stacks, fu, &fu, 1);
    if (id >= 0 && cli_map_put(&c->stacks, key, (uint32_t)id) < 0)
        return REC_ENOMEM;
    return id;
}

static int hot_sample(reader_ctx *c, cpu_thread *t, const rec_entry *e,
                      bool failed, uint64_t period)
{
    long si;
    if (failed) {
        si = pseudo_stack(c, 1, "[stack walk failed]");
    } else if (e) {
        uint32_t i;
        si = cli_map_get(&c->stacks, (uintptr_t)e, &i) ? (long)i
                                                       : build_stack(c, e);
    } else {
        si = pseudo_stack(c, 2, "[no stack]");
    }
    if (si < 0)
        return (int)si;
    return cpu_tstacks_add(&t->stacks, (uint32_t)si, period);
}

/* --debug-dir: the build-id each module path has, from ModuleLoad. */
static int note_module(reader_ctx *c, const rec_entry *e)
{
    if (!c->m->opt.debug || !e)
        return 0;
    const cli_evtype *mt = cli_evview_entry(&c->view, e);
    size_t plen, blen;
    const char *path = entry_text(c, e, mt->path, &plen);
    if (!path)
        return 0;
    /* The path's text may be overwritten by the next lookup: copy. */
    char *p = strndup(path, plen);
    const char *bid = p ? entry_text(c, e, mt->build_id, &blen) : NULL;
    int rc = p && bid ? cli_debug_add_module(c->m->opt.debug, p, plen, bid,
                                             blen) : 0;
    if (!p)
        return REC_ENOMEM;
    free(p);
    return rc < 0 ? REC_ENOMEM : 0;
}

static int fold(reader_ctx *c, const rec_event *ev)
{
    cpu_model *m = c->m;
    const cli_evtype *s = cli_evview_event(&c->view, ev);
    if (s->kind == CLI_EV_OTHER)
        return 0;
    uint64_t ts = rec_event_time_ns(ev);
    const rec_value *vals = rec_event_values(ev);
    uint64_t a, b;

    switch (s->kind) {
    case CLI_EV_PROCESS:
        if (cli_ev_uint(vals, s->pid, &a)) {
            c->pid = a;
            c->have_pid = true;
        }
        return 0;
    case CLI_EV_MODULE_LOAD:
        return note_module(c, cli_ev_ref(vals, s->module));
    case CLI_EV_SETTINGS:
        /* The period to judge by when no sample says it (a thread, or a
         * whole recording, whose every period was lost). */
        if (cli_ev_uint(vals, s->period, &a))
            cpu_model_period(m, a);
        return 0;
    case CLI_EV_USAGE:
        if (cli_ev_uint(vals, s->user_time, &a) &&
            cli_ev_uint(vals, s->system_time, &b)) {
            uint64_t own;
            /* Absent (older recordings) or null: unknown. */
            if (!cli_ev_uint(vals, s->sampler_time, &own))
                own = 0;
            cpu_model_usage(m, c->have_pid ? c->pid : 0, ts, a, b, own);
        }
        else
            c->skipped++;
        return 0;
    case CLI_EV_SAMPLE:
    case CLI_EV_LOST:
    case CLI_EV_THREAD_START:
    case CLI_EV_THREAD_END:
        break;
    default:
        return 0;
    }
    c->name = NULL;
    cpu_thread *t = event_thread(c, vals, s->thread);
    if (!t) {
        c->skipped++;
        return 0;
    }
    if (s->kind != CLI_EV_THREAD_START)
        apply_name(c, t);
    switch (s->kind) {
    case CLI_EV_SAMPLE: {
        if (!cpu_model_in_range(m, ts))
            return 0;
        if (!cli_ev_uint(vals, s->period, &a)) {
            c->skipped++;
            return 0;
        }
        bool failed = cli_ev_bool(vals, s->failed);
        const rec_entry *st = cli_ev_ref(vals, s->stack);
        int partial = !failed && st ? cli_evview_partial(&c->view, st) : -1;
        int rc = cpu_model_sample(m, t, ts, a, failed, cli_ev_bool(vals, s->biased),
                                  partial);
        if (rc == 0 && m->opt.hot)
            rc = hot_sample(c, t, st, failed, a);
        return rc;
    }
    case CLI_EV_LOST:
        if (!cpu_model_in_range(m, ts))
            return 0;
        if (!cli_ev_uint(vals, s->lost_samples, &a))
            a = 0;
        if (!cli_ev_uint(vals, s->lost_time, &b))
            b = 0;      /* JFR-style loss without CPU time */
        cpu_model_lost(m, t, ts, a, b);
        return 0;
    case CLI_EV_THREAD_START: {
        if (!cli_ev_uint(vals, s->cpu_time, &a)) {
            c->skipped++;
            return 0;
        }
        size_t before = m->nthreads;
        int rc = cpu_model_thread_start(m, &t, ts, a);
        if (m->nthreads != before)
            cli_map_clear(&c->threads);     /* a reused tid: re-resolve */
        apply_name(c, t);
        return rc;
    }
    default:    /* CLI_EV_THREAD_END */
        if (!cli_ev_uint(vals, s->cpu_time, &a)) {
            c->skipped++;
            return 0;
        }
        return cpu_model_thread_end(m, t, ts, a, cli_ev_bool(vals, s->snapshot));
    }
}

int cpu_input_open(cpu_input *in, const char *prog, const char *path)
{
    memset(in, 0, sizeof *in);
    in->path = path;
    int rc = cli_reader_open(path, 0, &in->r);
    if (rc < 0) {
        cli_reader_error(prog, path, NULL, rc);
        in->r = NULL;
        return rc;
    }
    in->status = rec_reader_next(in->r, &in->pending);
    rec_chunk_info ci;
    if (in->status > 0 && rec_reader_chunk(in->r, &ci) == 0)
        in->chunk_start_ns = ci.start_ns;
    return 0;
}

void cpu_input_close(cpu_input *in)
{
    if (in->r)
        rec_reader_close(in->r);
    in->r = NULL;
}

int cpu_input_read(cpu_model *m, cpu_input *in, const char *prog)
{
    reader_ctx c = { .m = m, .in = in, .prog = prog };
    uint64_t last_chunk = UINT64_MAX, prev_start = 0;
    int rc = in->status, err = 0;
    const rec_event *ev = in->pending;
    bool ordered = true;
    while (rc > 0) {
        rec_chunk_info ci;
        if (cli_chunk_changed(in->r, &last_chunk, &ci)) {
            /* Chunks of a concatenation out of time order would give
             * times before the origin and shares of CPU over 100%. */
            if (!cli_chunk_in_order(&ci, &prev_start)) {
                cli_chunk_order_error(prog, in->path, &ci, prev_start);
                ordered = false;
                break;
            }
            reset_chunk(&c);
        }
        err = fold(&c, ev);
        if (err < 0)
            break;
        rc = rec_reader_next(in->r, &ev);
    }
    if (c.skipped)
        cli_warn(prog, "%s: %" PRIu64 " events with unusable fields ignored",
                 in->path, c.skipped);
    if (!ordered) {
        rc = REC_ECORRUPT;      /* said above */
    } else if (err == REC_ETOOBIG) {
        cli_error(prog, "too many intervals: use a longer --interval");
        rc = err;
    } else if (err < 0) {
        cli_error(prog, "%s: %s", in->path, rec_strerror(err));
        rc = err;
    } else if (rc < 0) {
        cli_reader_error(prog, in->path, in->r, rc);
    } else {
        cli_reader_warning(prog, in->path, in->r);
    }
    cli_evview_free(&c.view);
    cli_map_free(&c.threads);
    cli_map_free(&c.stacks);
    free(c.scratch);
    return rc < 0 ? rc : 0;
}
