/*
 * tools/cli/cli-types.c - the event types a tool folds, resolved once per
 * type pointer (valid within a chunk): which of the tool's kinds it is and
 * the indexes of the fields that kind reads. And reading those fields out
 * of rec_event_values().
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

const cli_type_slot *cli_type_lookup(cli_type_slot *slots, size_t nslots,
                                     const rec_type *type,
                                     const cli_kind *kinds, size_t nkinds)
{
    cli_type_slot *s = &slots[((uintptr_t)type >> 4) % nslots];
    const char *name;

    if (s->type == type)
        return s;
    name = rec_type_name(type);
    s->type = type;
    s->kind = 0;
    for (size_t i = 1; name && i < nkinds; i++)
        if (kinds[i].type && strcmp(name, kinds[i].type) == 0)
            s->kind = (int)i;
    for (size_t i = 0; i < CLI_KIND_FIELDS; i++) {
        const char *f = kinds[s->kind].fields[i];
        s->f[i] = f ? rec_type_field_index(type, f) : -1;
    }
    return s;
}

bool cli_value_uint(const rec_value *v, uint64_t *out)
{
    if (v->kind == REC_UINT)
        *out = v->v.u;
    else if (v->kind == REC_INT && v->v.i >= 0)
        *out = (uint64_t)v->v.i;
    else
        return false;
    return true;
}

bool cli_field_uint(const rec_value *vals, long f, uint64_t *out)
{
    return f >= 0 && cli_value_uint(&vals[f], out);
}

bool cli_field_bool(const rec_value *vals, long f)
{
    return f >= 0 && vals[f].kind == REC_BOOL && vals[f].v.b;
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

int cli_stack_partial(const rec_entry *st)
{
    /* Looked up once per type: this runs for every sample. */
    static const rec_type *last;
    static long ft, fr;
    const rec_type *t = rec_entry_type(st);
    rec_value v;

    if (t && t != last) {
        last = t;
        ft = rec_type_field_index(t, "truncated");
        fr = rec_type_field_index(t, "truncationReason");
    }
    if (!t || ft < 0 ||
        rec_entry_get(st, (size_t)ft, &v) || v.kind != REC_BOOL || !v.v.b)
        return -1;
    if (fr < 0 ||
        rec_entry_get(st, (size_t)fr, &v) || v.kind != REC_REF || !v.v.ref.entry ||
        rec_entry_get(v.v.ref.entry, 0, &v) || v.kind != REC_STRING)
        return CLI_PARTIAL_N - 2;
    for (int i = 0; i < CLI_PARTIAL_N - 2; i++)
        if (strlen(cli_partial_names[i]) == v.v.str.len &&
            !memcmp(cli_partial_names[i], v.v.str.s, v.v.str.len))
            return i;
    return CLI_PARTIAL_N - 1;
}
