/*
 * tools/cli/cli-types.c - the events of a chunk as the tools read them:
 * each type (event or pool) resolved once per chunk into its kind and the
 * indexes of the fields the tools know by name, and those fields read as
 * typed values. A recording carries its own schema: a field the tools
 * know may be absent from it, or a value of another kind in it, and then
 * reads as absent, the same way in every tool.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const kind_names[] = {
    [CLI_EV_SAMPLE] = "CPUTimeSample",
    [CLI_EV_LOST] = "CPUTimeSampleLost",
    [CLI_EV_THREAD_START] = "ThreadStart",
    [CLI_EV_THREAD_END] = "ThreadEnd",
    [CLI_EV_SETTINGS] = "RecordingSettings",
    [CLI_EV_PROCESS] = "ProcessInfo",
    [CLI_EV_USAGE] = "ProcessUsage",
    [CLI_EV_MODULE_LOAD] = "ModuleLoad",
    [CLI_EV_JIT_NAME] = "JitCodeName",
};

static const struct {
    const char *name;
    size_t off;
} fields[] = {
#define CLI_EV_FIELD(member, name) { name, offsetof(cli_evtype, member) },
    CLI_EV_FIELDS(CLI_EV_FIELD)
#undef CLI_EV_FIELD
};

static void resolve(cli_evtype *r, const rec_type *t)
{
    const char *name = t ? rec_type_name(t) : NULL;

    r->type = t;
    r->kind = CLI_EV_OTHER;
    for (size_t i = 1; name && i < sizeof kind_names / sizeof *kind_names; i++)
        if (strcmp(name, kind_names[i]) == 0)
            r->kind = (enum cli_ev_kind)i;
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        *(long *)((char *)r + fields[i].off) =
            rec_type_field_index(t, fields[i].name);
}

void cli_evview_reset(cli_evview *v)
{
    cli_map_clear(&v->index);
    v->n = 0;
    memset(v->recent, 0, sizeof v->recent);
}

void cli_evview_free(cli_evview *v)
{
    for (size_t i = 0; i < v->cap; i++)
        free(v->types[i]);
    free(v->types);
    cli_map_free(&v->index);
    memset(v, 0, sizeof *v);
}

const cli_evtype *cli_evview_lookup(cli_evview *v, const rec_type *t)
{
    static const cli_evtype none = {
#define CLI_EV_NONE(member, name) .member = -1,
        CLI_EV_FIELDS(CLI_EV_NONE)
#undef CLI_EV_NONE
    };
    uint32_t i;

    if (!t)
        return &none;
    if (cli_map_get(&v->index, (uintptr_t)t, &i))
        return v->recent[cli_evview_slot(t)] = v->types[i];
    if (v->n == v->cap) {
        size_t cap = v->cap ? 2 * v->cap : 16;
        v->types = cli_xrealloc(v->types, cap * sizeof *v->types);
        memset(v->types + v->cap, 0, (cap - v->cap) * sizeof *v->types);
        v->cap = cap;
    }
    /* The structures of a chunk before are reused. */
    if (!v->types[v->n])
        v->types[v->n] = cli_xrealloc(NULL, sizeof **v->types);
    resolve(v->types[v->n], t);
    cli_map_xput(&v->index, (uintptr_t)t, (uint32_t)v->n);
    return v->recent[cli_evview_slot(t)] = v->types[v->n++];
}

bool cli_value_text(cli_evview *view, const rec_value *v, const char **s,
                    size_t *len)
{
    rec_value x;

    if (v->kind == REC_REF && v->v.ref.entry) {
        const rec_entry *e = v->v.ref.entry;
        long f = cli_evview_entry(view, e)->value;
        if (f < 0 || rec_entry_get(e, (size_t)f, &x) < 0)
            return false;
        v = &x;
    }
    if (v->kind != REC_STRING)
        return false;
    *s = v->v.str.s;
    *len = v->v.str.len;
    return true;
}

bool cli_ev_text_copy(cli_evview *view, const rec_value *vals, long f,
                      char *buf, size_t size)
{
    const char *s;
    size_t n;

    if (!size || !cli_ev_text(view, vals, f, &s, &n))
        return false;
    if (n > size - 1)
        n = size - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return true;
}

/* Field f of entry e, of kind REC_NULL when absent. */
static rec_value entry_value(const rec_entry *e, long f)
{
    rec_value v = { .kind = REC_NULL };

    if (f >= 0 && rec_entry_get(e, (size_t)f, &v) < 0)
        v.kind = REC_NULL;
    return v;
}

bool cli_entry_uint(const rec_entry *e, long f, uint64_t *out)
{
    rec_value v = entry_value(e, f);
    return cli_value_uint(&v, out);
}

bool cli_entry_bool(const rec_entry *e, long f)
{
    rec_value v = entry_value(e, f);
    return cli_value_bool(&v);
}

const rec_entry *cli_entry_ref(const rec_entry *e, long f)
{
    rec_value v = entry_value(e, f);
    return cli_value_ref(&v);
}

bool cli_entry_text(cli_evview *view, const rec_entry *e, long f,
                    const char **s, size_t *len)
{
    rec_value v = entry_value(e, f);
    return cli_value_text(view, &v, s, len);
}

void cli_evview_thread(cli_evview *view, const rec_entry *e,
                       cli_thread_info *out)
{
    memset(out, 0, sizeof *out);
    if (!e)
        return;
    const cli_evtype *t = cli_evview_entry(view, e);
    out->have_tid = cli_entry_uint(e, t->tid, &out->tid);
    out->have_pid = cli_entry_uint(e, t->pid, &out->pid);
    if (!cli_entry_text(view, e, t->name, &out->name, &out->name_len))
        out->name = NULL;
}

size_t cli_evview_frames(cli_evview *view, const rec_entry *st,
                         const rec_value **items)
{
    rec_value v = entry_value(st, cli_evview_entry(view, st)->frames);

    if (v.kind != REC_ARRAY || !v.v.array.n)
        return 0;
    *items = v.v.array.items;
    return v.v.array.n;
}

size_t cli_python_name(char *buf, size_t size, const char *func, size_t flen,
                       const char *file, size_t filelen, uint64_t line)
{
    const char *base = file;
    char at[32] = "";
    int n;

    for (size_t i = 0; file && i < filelen; i++)
        if (file[i] == '/')
            base = file + i + 1;
    if (line)
        snprintf(at, sizeof at, ":%" PRIu64, line);
    if (!func) {
        func = "[python]";
        flen = 8;
    }
    if (file && filelen)
        n = snprintf(buf, size, "%.*s (%.*s%s)", (int)flen, func,
                     (int)(filelen - (size_t)(base - file)), base, at);
    else
        n = snprintf(buf, size, "%.*s", (int)flen, func);
    if (n < 0)
        n = 0;
    return (size_t)n < size ? (size_t)n : size - 1;
}

const char *const cli_partial_names[CLI_PARTIAL_N] = {
    "depth", "early", "no-unwind-info", "jit", "bad-cfa", "stack-bound",
    "unknown-code", "foreign-read", "none given", "other",
};

int cli_evview_partial(cli_evview *view, const rec_entry *st)
{
    const cli_evtype *t = cli_evview_entry(view, st);
    const char *s;
    size_t len;

    if (!cli_entry_bool(st, t->truncated))
        return -1;
    if (!cli_entry_text(view, st, t->why_truncated, &s, &len))
        return CLI_PARTIAL_N - 2;
    for (int i = 0; i < CLI_PARTIAL_N - 2; i++)
        if (strlen(cli_partial_names[i]) == len &&
            !memcmp(cli_partial_names[i], s, len))
            return i;
    return CLI_PARTIAL_N - 1;
}
