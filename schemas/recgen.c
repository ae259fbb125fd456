/*
 * schemas/recgen.c - turn schemas/events.json into C: the public
 * <rec/events.h> (type ids, structs, rec_intern_* and rec_emit_*
 * prototypes) and librecord's events.c (their encoders and the METADATA
 * block, the CBOR form of the schema without "comment").
 *
 *   recgen SCHEMA.json OUT_HEADER.h OUT_SOURCE.c
 *
 * The schema is validated first: a bad schema fails the build with a
 * message naming the type and field.
 */
#include <config.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>

#define MAX_TYPE_ID 65535

enum ftype { F_BOOL, F_UINT, F_INT, F_TICKS, F_STRING, F_REF };

struct field {
    const char *name, *typename, *label, *desc, *unit;
    enum ftype t;
    int ref;            /* index into types for F_REF */
    bool array, nullable;
    bool optional;      /* appended: older recordings and callers lack it */
};

struct type {
    const char *name, *label, *desc;
    long id;
    bool event;
    int pool_index;     /* dense index among pools, -1 for events */
    struct field *f;
    size_t nf;
};

static const char *schema_path;
static struct type *types;
static size_t ntypes;

static void die(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "recgen: %s: ", schema_path);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static bool is_ident(const char *s)
{
    static const char *const kw[] = {
        "auto", "bool", "break", "case", "char", "const", "continue", "default",
        "do", "double", "else", "enum", "extern", "false", "float", "for", "goto",
        "if", "inline", "int", "long", "register", "restrict", "return", "short",
        "signed", "sizeof", "static", "struct", "switch", "true", "typedef",
        "union", "unsigned", "void", "volatile", "while", NULL
    };
    if (!s || !*s || !(isalpha((unsigned char)*s) || *s == '_') || strlen(s) > 64)
        return false;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            return false;
    for (int i = 0; kw[i]; i++)
        if (!strcmp(s, kw[i]))
            return false;
    return true;
}

static const char *req_string(json_t *o, const char *key, const char *what)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v) || !*json_string_value(v))
        die("%s: missing or empty string \"%s\"", what, key);
    return json_string_value(v);
}

static bool opt_bool(json_t *o, const char *key, const char *what)
{
    json_t *v = json_object_get(o, key);
    if (!v)
        return false;
    if (!json_is_boolean(v))
        die("%s: \"%s\" must be true or false", what, key);
    return json_is_true(v);
}

static void check_keys(json_t *o, const char *const *allowed, const char *what)
{
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v) {
        bool ok = false;
        for (int i = 0; allowed[i]; i++)
            ok |= !strcmp(key, allowed[i]);
        if (!ok)
            die("%s: unknown key \"%s\"", what, key);
    }
}

static void load(json_t *root)
{
    static const char *const top_keys[] = { "comment", "version", "types", NULL };
    static const char *const type_keys[] = { "comment", "id", "name", "kind", "label",
                                             "description", "fields", NULL };
    static const char *const field_keys[] = { "comment", "name", "type", "unit", "label",
                                              "description", "array", "nullable",
                                              "optional", NULL };
    if (!json_is_object(root))
        die("top level must be an object");
    check_keys(root, top_keys, "top level");
    if (!json_is_integer(json_object_get(root, "version")) ||
        json_integer_value(json_object_get(root, "version")) < 1)
        die("\"version\" must be a positive integer");
    json_t *jt = json_object_get(root, "types");
    if (!json_is_array(jt) || json_array_size(jt) == 0)
        die("\"types\" must be a non-empty array");
    ntypes = json_array_size(jt);
    types = calloc(ntypes, sizeof *types);
    if (!types)
        die("out of memory");
    char what[256];
    int npools = 0;
    /* Pass 1: names, ids, kinds (fields may reference later pool types). */
    for (size_t i = 0; i < ntypes; i++) {
        json_t *o = json_array_get(jt, i);
        struct type *t = &types[i];
        snprintf(what, sizeof what, "types[%zu]", i);
        if (!json_is_object(o))
            die("%s: must be an object", what);
        t->name = req_string(o, "name", what);
        snprintf(what, sizeof what, "type \"%s\"", t->name);
        check_keys(o, type_keys, what);
        if (!is_ident(t->name))
            die("%s: name is not a valid C identifier", what);
        json_t *id = json_object_get(o, "id");
        if (!json_is_integer(id) || json_integer_value(id) < 1 ||
            json_integer_value(id) > MAX_TYPE_ID)
            die("%s: \"id\" must be an integer in 1..%d", what, MAX_TYPE_ID);
        t->id = (long)json_integer_value(id);
        const char *kind = req_string(o, "kind", what);
        if (!strcmp(kind, "event"))
            t->event = true;
        else if (strcmp(kind, "pool"))
            die("%s: \"kind\" must be \"event\" or \"pool\", not \"%s\"", what, kind);
        t->pool_index = t->event ? -1 : npools++;
        t->label = req_string(o, "label", what);
        t->desc = req_string(o, "description", what);
        for (size_t j = 0; j < i; j++) {
            if (types[j].id == t->id)
                die("%s: duplicate id %ld (also type \"%s\")", what, t->id, types[j].name);
            if (!strcmp(types[j].name, t->name))
                die("%s: duplicate name", what);
        }
        if (!strcmp(t->name, "boolean") || !strcmp(t->name, "uint") ||
            !strcmp(t->name, "int") || !strcmp(t->name, "ticks") || !strcmp(t->name, "string"))
            die("%s: name clashes with a built-in field type", what);
    }
    if (ntypes > 1024)
        die("more than 1024 types");
    /* Pass 2: fields. */
    for (size_t i = 0; i < ntypes; i++) {
        json_t *o = json_array_get(jt, i);
        struct type *t = &types[i];
        json_t *jf = json_object_get(o, "fields");
        snprintf(what, sizeof what, "type \"%s\"", t->name);
        if (!json_is_array(jf) || json_array_size(jf) == 0)
            die("%s: \"fields\" must be a non-empty array", what);
        t->nf = json_array_size(jf);
        if (t->nf > 200)
            die("%s: too many fields", what);
        t->f = calloc(t->nf, sizeof *t->f);
        if (!t->f)
            die("out of memory");
        bool has_ticks = false;
        for (size_t j = 0; j < t->nf; j++) {
            json_t *fo = json_array_get(jf, j);
            struct field *f = &t->f[j];
            snprintf(what, sizeof what, "type \"%s\" fields[%zu]", t->name, j);
            if (!json_is_object(fo))
                die("%s: must be an object", what);
            f->name = req_string(fo, "name", what);
            snprintf(what, sizeof what, "type \"%s\" field \"%s\"", t->name, f->name);
            check_keys(fo, field_keys, what);
            if (!is_ident(f->name))
                die("%s: name is not a valid C identifier", what);
            for (size_t k = 0; k < j; k++)
                if (!strcmp(t->f[k].name, f->name))
                    die("%s: duplicate field name", what);
            f->typename = req_string(fo, "type", what);
            f->label = req_string(fo, "label", what);
            f->desc = req_string(fo, "description", what);
            json_t *u = json_object_get(fo, "unit");
            if (u && !json_is_string(u))
                die("%s: \"unit\" must be a string", what);
            f->unit = u ? json_string_value(u) : NULL;
            f->array = opt_bool(fo, "array", what);
            f->nullable = opt_bool(fo, "nullable", what);
            f->optional = opt_bool(fo, "optional", what);
            f->ref = -1;
            if (!strcmp(f->typename, "boolean"))
                f->t = F_BOOL;
            else if (!strcmp(f->typename, "uint"))
                f->t = F_UINT;
            else if (!strcmp(f->typename, "int"))
                f->t = F_INT;
            else if (!strcmp(f->typename, "ticks"))
                f->t = F_TICKS;
            else if (!strcmp(f->typename, "string"))
                f->t = F_STRING;
            else {
                f->t = F_REF;
                for (size_t k = 0; k < ntypes; k++)
                    if (!strcmp(types[k].name, f->typename))
                        f->ref = (int)k;
                if (f->ref < 0)
                    die("%s: unknown type \"%s\"", what, f->typename);
                if (types[f->ref].event)
                    die("%s: \"%s\" is an event type; fields can only reference pool types",
                        what, f->typename);
            }
            if (f->t == F_TICKS) {
                if (!t->event)
                    die("%s: ticks fields are only allowed in events (they are block-relative)", what);
                if (f->array || f->nullable)
                    die("%s: a ticks field cannot be an array or nullable", what);
                has_ticks = true;
            }
            if (f->nullable && (f->t == F_BOOL || f->t == F_INT))
                die("%s: %s fields cannot be nullable (no value is free to mean null)",
                    what, f->typename);
            if (f->nullable && f->array)
                die("%s: arrays cannot be nullable (use an empty array)", what);
            /* An optional field is appended: a caller built before it
             * passes a struct without it, read as zero, and older
             * recordings lack it. */
            if (j == 0 && f->optional)
                die("%s: the first field cannot be optional", what);
            if (j > 0 && t->f[j - 1].optional && !f->optional)
                die("%s: follows an optional field: fields are appended as "
                    "optional", what);
            if (f->optional && !f->array && !f->nullable &&
                (f->t == F_REF || f->t == F_STRING))
                die("%s: an optional %s field must be nullable (an older "
                    "caller's struct leaves it zero)", what,
                    f->t == F_REF ? "reference" : "string");
        }
        if (t->event && !has_ticks)
            die("type \"%s\": an event needs a ticks field", t->name);
    }
}

/* ---- CBOR of the schema (the METADATA block) ---- */

struct bytes {
    unsigned char *p;
    size_t n, cap;
};

static void put(struct bytes *b, const void *p, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        if (!(b->p = realloc(b->p, b->cap)))
            die("out of memory");
    }
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

static void cbor_head(struct bytes *b, unsigned major, uint64_t v)
{
    unsigned char h[9];
    size_t n;
    if (v < 24) {
        h[0] = (unsigned char)(major << 5 | v);
        n = 1;
    } else if (v < 0x100) {
        h[0] = (unsigned char)(major << 5 | 24);
        h[1] = (unsigned char)v;
        n = 2;
    } else if (v < 0x10000) {
        h[0] = (unsigned char)(major << 5 | 25);
        h[1] = (unsigned char)(v >> 8);
        h[2] = (unsigned char)v;
        n = 3;
    } else if (v < 0x100000000ull) {
        h[0] = (unsigned char)(major << 5 | 26);
        for (int i = 0; i < 4; i++)
            h[1 + i] = (unsigned char)(v >> (24 - 8 * i));
        n = 5;
    } else {
        h[0] = (unsigned char)(major << 5 | 27);
        for (int i = 0; i < 8; i++)
            h[1 + i] = (unsigned char)(v >> (56 - 8 * i));
        n = 9;
    }
    put(b, h, n);
}

static void cbor_json(struct bytes *b, json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *key;
        json_t *x;
        size_t n = 0;
        json_object_foreach(v, key, x)
            n += strcmp(key, "comment") != 0;
        cbor_head(b, 5, n);
        json_object_foreach(v, key, x) {
            if (!strcmp(key, "comment"))
                continue;
            cbor_head(b, 3, strlen(key));
            put(b, key, strlen(key));
            cbor_json(b, x);
        }
        break;
    }
    case JSON_ARRAY:
        cbor_head(b, 4, json_array_size(v));
        for (size_t i = 0; i < json_array_size(v); i++)
            cbor_json(b, json_array_get(v, i));
        break;
    case JSON_STRING:
        cbor_head(b, 3, json_string_length(v));
        put(b, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER: {
        json_int_t i = json_integer_value(v);
        if (i >= 0)
            cbor_head(b, 0, (uint64_t)i);
        else
            cbor_head(b, 1, (uint64_t)(-1 - i));
        break;
    }
    case JSON_TRUE:
        put(b, "\xf5", 1);
        break;
    case JSON_FALSE:
        put(b, "\xf4", 1);
        break;
    case JSON_NULL:
        put(b, "\xf6", 1);
        break;
    case JSON_REAL:
        die("real numbers are not allowed in the schema");
    }
}

/* ---- C output ---- */

/* Text for a C comment: no comment terminator, one line. */
static void comment_text(FILE *o, const char *s)
{
    for (; *s; s++) {
        if (s[0] == '*' && s[1] == '/')
            fputs("* ", o);
        else if (*s == '\n')
            fputc(' ', o);
        else
            fputc(*s, o);
    }
}

static const char *ctype(const struct field *f)
{
    switch (f->t) {
    case F_BOOL:   return "bool";
    case F_UINT:   return "uint64_t";
    case F_INT:    return "int64_t";
    case F_TICKS:  return "uint64_t";
    case F_STRING: return "const char *";
    case F_REF:    return "rec_id";
    }
    return "?";
}

static void gen_header(FILE *o, json_t *root)
{
    fprintf(o, "/* rec/events.h - generated by schemas/recgen from schemas/events.json: do not edit.\n"
               " * Included by <rec/record.h>. Conventions: pool references are rec_id\n"
               " * (0 = null where nullable, an error otherwise); a nullable uint encodes\n"
               " * 0 as null; a NULL string is null where nullable; ticks fields take\n"
               " * CLOCK_MONOTONIC ns (rec_now_ns(); 0 means now); arrays are a pointer\n"
               " * and a <name>_count. rec_emit_<Event>() and rec_intern_<Type>() pass\n"
               " * the caller's sizeof of the struct: members an older caller's struct\n"
               " * lacks (the schema's optional fields, each on an 8-byte boundary past\n"
               " * the struct before it) are written as zero, that is null. */\n"
               "#ifndef REC_EVENTS_H\n#define REC_EVENTS_H\n\n"
               "#ifndef REC_RECORD_H\n#error \"include <rec/record.h>, not <rec/events.h>\"\n#endif\n\n");
    fprintf(o, "#define REC_SCHEMA_VERSION %lld\n\n",
            (long long)json_integer_value(json_object_get(root, "version")));
    fprintf(o, "enum {\n");
    for (size_t i = 0; i < ntypes; i++)
        fprintf(o, "    REC_TYPE_%s = %ld,\n", types[i].name, types[i].id);
    fprintf(o, "};\n");
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < ntypes; i++) {
            const struct type *t = &types[i];
            if (t->event != (pass == 1))
                continue;
            fprintf(o, "\n/* %s (%s %ld): ", t->label, t->event ? "event" : "pool", t->id);
            comment_text(o, t->desc);
            fprintf(o, " */\nstruct rec_%s {\n", t->name);
            for (size_t j = 0; j < t->nf; j++) {
                const struct field *f = &t->f[j];
                const char *ct = ctype(f);
                const char *sp = ct[strlen(ct) - 1] == '*' ? "" : " ";
                /* Past the sizeof of the struct without it, tail padding
                 * included: no older caller's struct reaches it. */
                const char *appended =
                    f->optional ? " __attribute__((aligned(8)))" : "";
                if (f->array && f->t == F_STRING)
                    fprintf(o, "    const char *const *%s%s;", f->name, appended);
                else if (f->array)
                    fprintf(o, "    const %s%s*%s%s;", ct, sp, f->name, appended);
                else
                    fprintf(o, "    %s%s%s%s;", ct, sp, f->name, appended);
                fprintf(o, "   /* ");
                if (f->t == F_REF)
                    fprintf(o, "%s%s ", f->typename, f->array ? "[]" : "");
                if (f->unit)
                    fprintf(o, "[%s] ", f->t == F_TICKS ? "ns" : f->unit);
                if (f->nullable)
                    fprintf(o, "(nullable) ");
                comment_text(o, f->desc);
                fprintf(o, " */\n");
                if (f->array)
                    fprintf(o, "    size_t %s_count;\n", f->name);
            }
            fprintf(o, "};\n");
            if (t->event)
                fprintf(o, "int rec_emit_%s_sized(rec_stream *s, const struct rec_%s *e,\n"
                           "    size_t size);\n"
                           "static inline int rec_emit_%s(rec_stream *s, const struct rec_%s *e)\n"
                           "{\n    return rec_emit_%s_sized(s, e, sizeof *e);\n}\n",
                        t->name, t->name, t->name, t->name, t->name);
            else
                fprintf(o, "int rec_intern_%s_sized(rec_writer *w, const struct rec_%s *v,\n"
                           "    rec_id *id, size_t size);\n"
                           "static inline int rec_intern_%s(rec_writer *w, const struct rec_%s *v,\n"
                           "    rec_id *id)\n"
                           "{\n    return rec_intern_%s_sized(w, v, id, sizeof *v);\n}\n",
                        t->name, t->name, t->name, t->name, t->name);
        }
    }
    fprintf(o, "\n#endif\n");
}

/* Bound of one encoded item of the field (array items for arrays). */
static unsigned item_max(const struct field *f)
{
    switch (f->t) {
    case F_BOOL:   return 1;
    case F_REF:    return 5;     /* uint32 */
    case F_STRING: return 9;     /* plus the length */
    default:       return 9;
    }
}

static void gen_sink_item(FILE *o, const struct field *f, const char *val, bool nullable)
{
    switch (f->t) {
    case F_BOOL:
        fprintf(o, "rec__sink_bool(&k, %s);\n", val);
        break;
    case F_UINT:
        if (nullable)
            fprintf(o, "if (%s) rec__sink_uint(&k, %s); else rec__sink_null(&k);\n", val, val);
        else
            fprintf(o, "rec__sink_uint(&k, %s);\n", val);
        break;
    case F_INT:
        fprintf(o, "rec__sink_int(&k, %s);\n", val);
        break;
    case F_STRING:
        fprintf(o, "rec__sink_string(&k, %s, %s);\n", val, nullable ? "true" : "false");
        break;
    case F_REF:
        fprintf(o, "rec__sink_ref(&k, %s, %s);\n", val, nullable ? "true" : "false");
        break;
    case F_TICKS:
        break;
    }
}

/* The caller's struct of `size` bytes, its sizeof as the caller compiled
 * it: used in place when it is this library's, else copied into one that
 * has the members an older caller's lacks zeroed (REC_EINVAL for a size
 * without every field that is not optional, REC_ETOOBIG for a newer
 * caller's that sets a member this library does not know). */
static void gen_sized(FILE *o, const struct type *t, const char *p)
{
    size_t last = 0;
    for (size_t j = 0; j < t->nf; j++)
        if (!t->f[j].optional)
            last = j;
    fprintf(o, "    if (size != sizeof copy_) {\n"
               "        int rc_ = rec__sized_in(&copy_, sizeof copy_, %s, size,\n"
               "                                REC__SIZE_TO(struct rec_%s, %s%s));\n"
               "        if (rc_)\n            return rc_;\n"
               "        %s = &copy_;\n"
               "    }\n", p, t->name, t->f[last].name, t->f[last].array ? "_count" : "", p);
}

static void gen_intern(FILE *o, const struct type *t)
{
    bool refs = false;
    for (size_t j = 0; j < t->nf; j++)
        refs |= t->f[j].t == F_REF;
    if (refs) {
        fprintf(o, "\nstatic void refs_%s(const void *vp, struct rec__sink *k)\n{\n"
                   "    const struct rec_%s *v = vp;\n", t->name, t->name);
        for (size_t j = 0; j < t->nf; j++) {
            const struct field *f = &t->f[j];
            if (f->t != F_REF)
                continue;
            if (f->array)
                fprintf(o, "    for (size_t i = 0; i < v->%s_count; i++)\n"
                           "        rec__sink_addref(k, REC__POOL_%s, v->%s[i]);\n",
                        f->name, types[f->ref].name, f->name);
            else
                fprintf(o, "    if (v->%s)\n        rec__sink_addref(k, REC__POOL_%s, v->%s);\n",
                        f->name, types[f->ref].name, f->name);
        }
        fprintf(o, "}\n");
    }
    fprintf(o, "\nint rec_intern_%s_sized(rec_writer *w, const struct rec_%s *v, rec_id *id,\n"
               "    size_t size)\n{\n"
               "    struct rec__sink k;\n"
               "    struct rec_%s copy_;\n"
               "    if (!v)\n        return REC_EINVAL;\n", t->name, t->name, t->name);
    gen_sized(o, t, "v");
    fprintf(o, "    rec__sink_init(&k);\n");
    for (size_t j = 0; j < t->nf; j++) {
        const struct field *f = &t->f[j];
        char val[128];
        if (f->array && (f->t == F_REF || f->t == F_UINT)) {
            /* One capacity check for the whole array (stacks are long);
             * locals so that stores through p need not reload v. */
            fprintf(o, "    {\n"
                       "        const %s *a = v->%s;\n"
                       "        size_t n = v->%s_count;\n"
                       "        unsigned char *p;\n"
                       "        if (n > REC_MAX_ARRAY || (n && !a)) {\n"
                       "            k.err = k.err ? k.err : a ? REC_ETOOBIG : REC_EINVAL;\n"
                       "        } else if ((p = rec__sink_room(&k, REC__MAX_UINT + REC__SLACK + n * %u))) {\n"
                       "            unsigned zero = 0;\n"
                       "            p += rec__enc_array(p, n);\n"
                       "            for (size_t i = 0; i < n; i++) {\n",
                    f->t == F_REF ? "rec_id" : "uint64_t", f->name, f->name, item_max(f));
            if (f->t == F_REF)
                fprintf(o, "                zero |= a[i] == 0;\n");
            fprintf(o, "                p += %s(p, a[i]);\n"
                       "            }\n"
                       "            k.len = (size_t)(p - k.buf);\n"
                       "            if (zero && !k.err)\n"
                       "                k.err = REC_EINVAL;\n"
                       "        }\n"
                       "    }\n", f->t == F_REF ? "rec__enc_u32_nb" : "rec__enc_uint");
            continue;
        } else if (f->array) {
            fprintf(o, "    if (v->%s_count && !v->%s)\n        k.err = REC_EINVAL;\n"
                       "    rec__sink_array(&k, v->%s_count);\n"
                       "    for (size_t i = 0; !k.err && i < v->%s_count; i++)\n        ",
                    f->name, f->name, f->name, f->name);
            snprintf(val, sizeof val, "v->%s[i]", f->name);
        } else {
            fprintf(o, "    ");
            snprintf(val, sizeof val, "v->%s", f->name);
        }
        gen_sink_item(o, f, val, f->nullable);
    }
    if (refs)
        fprintf(o, "    return rec__intern(w, REC__POOL_%s, %zu, &k, v, refs_%s, id);\n}\n",
                t->name, t->nf, t->name);
    else
        fprintf(o, "    return rec__intern(w, REC__POOL_%s, %zu, &k, v, NULL, id);\n}\n",
                t->name, t->nf);
}

static size_t uint_len(uint64_t v)
{
    return v < 24 ? 1 : v < 0x100 ? 2 : v < 0x10000 ? 3 : v < 0x100000000ull ? 5 : 9;
}

static void gen_enc_item(FILE *o, const struct field *f, const char *val, bool nullable,
                         const char *ind)
{
    switch (f->t) {
    case F_BOOL:
        fprintf(o, "%sp += rec__enc_bool(p, %s);\n", ind, val);
        break;
    case F_UINT:
        if (nullable)
            fprintf(o, "%sp += %s ? rec__enc_uint(p, %s) : rec__enc_null(p);\n", ind, val, val);
        else
            fprintf(o, "%sp += rec__enc_uint(p, %s);\n", ind, val);
        break;
    case F_INT:
        fprintf(o, "%sp += rec__enc_int(p, %s);\n", ind, val);
        break;
    case F_STRING:
        fprintf(o, "%sp += %s ? rec__enc_string(p, %s, strlen(%s)) : rec__enc_null(p);\n",
                ind, val, val, val);
        break;
    case F_REF:
        if (nullable)
            fprintf(o, "%sp += %s ? rec__enc_uint(p, %s) : rec__enc_null(p);\n", ind, val, val);
        else
            fprintf(o, "%sp += rec__enc_uint(p, %s);\n", ind, val);
        break;
    case F_TICKS:
        break;
    }
}

static void gen_emit(FILE *o, const struct type *t)
{
    size_t fixed = uint_len(t->nf + 1) + uint_len((uint64_t)t->id);
    for (size_t j = 0; j < t->nf; j++)
        fixed += t->f[j].array ? 9 : item_max(&t->f[j]);
    fprintf(o, "\nint rec_emit_%s_sized(rec_stream *s, const struct rec_%s *e, size_t size)\n{\n"
               "    struct rec_%s copy_;\n"
               "    if (!s || !e)\n        return REC_EINVAL;\n", t->name, t->name, t->name);
    gen_sized(o, t, "e");
    fprintf(o, "    size_t need = %zu;\n", fixed);
    /* Validate everything before taking the stream. */
    for (size_t j = 0; j < t->nf; j++) {
        const struct field *f = &t->f[j];
        if (f->array) {
            fprintf(o, "    if (e->%s_count > REC_MAX_ARRAY)\n        return REC_ETOOBIG;\n"
                       "    if (e->%s_count && !e->%s)\n        return REC_EINVAL;\n"
                       "    need += e->%s_count * %u;\n",
                    f->name, f->name, f->name, f->name, item_max(f));
            if (f->t == F_STRING)
                fprintf(o, "    for (size_t i = 0; i < e->%s_count; i++) {\n"
                           "        if (!e->%s[i])\n            return REC_EINVAL;\n"
                           "        size_t n = strlen(e->%s[i]);\n"
                           "        if (n > REC_MAX_STRING)\n            return REC_ETOOBIG;\n"
                           "        need += n;\n    }\n", f->name, f->name, f->name);
            if (f->t == F_REF)
                fprintf(o, "    for (size_t i = 0; i < e->%s_count; i++)\n"
                           "        if (!e->%s[i])\n            return REC_EINVAL;\n",
                        f->name, f->name);
        } else if (f->t == F_STRING) {
            fprintf(o, "    if (e->%s) {\n        size_t n = strlen(e->%s);\n"
                       "        if (n > REC_MAX_STRING)\n            return REC_ETOOBIG;\n"
                       "        need += n;\n    }", f->name, f->name);
            if (!f->nullable)
                fprintf(o, " else {\n        return REC_EINVAL;\n    }");
            fprintf(o, "\n");
        } else if (f->t == F_REF && !f->nullable) {
            fprintf(o, "    if (!e->%s)\n        return REC_EINVAL;\n", f->name);
        }
    }
    const char *first_ticks = NULL;
    for (size_t j = 0; j < t->nf; j++)
        if (t->f[j].t == F_TICKS) {
            fprintf(o, "    uint64_t t_%s = rec__ticks(s, e->%s);\n", t->f[j].name, t->f[j].name);
            if (!first_ticks)
                first_ticks = t->f[j].name;
        }
    /* Validation guarantees an event has a ticks field. */
    fprintf(o, "    unsigned char *p;\n    int rc = rec__emit_begin(s, need, t_%s, &p);\n"
               "    if (rc)\n        return rc;\n", first_ticks ? first_ticks : "0");
    /* Mark referenced pool entries inside the critical section. */
    bool marks = false;
    for (size_t j = 0; j < t->nf; j++) {
        const struct field *f = &t->f[j];
        if (f->t != F_REF)
            continue;
        marks = true;
        if (f->array)
            fprintf(o, "    for (size_t i = 0; i < e->%s_count; i++)\n"
                       "        if ((rc = rec__emit_mark(s, REC__POOL_%s, e->%s[i])))\n"
                       "            goto abort;\n", f->name, types[f->ref].name, f->name);
        else if (f->nullable)
            fprintf(o, "    if (e->%s && (rc = rec__emit_mark(s, REC__POOL_%s, e->%s)))\n"
                       "        goto abort;\n", f->name, types[f->ref].name, f->name);
        else
            fprintf(o, "    if ((rc = rec__emit_mark(s, REC__POOL_%s, e->%s)))\n"
                       "        goto abort;\n", types[f->ref].name, f->name);
    }
    fprintf(o, "    p += rec__enc_array(p, %zu);\n    p += rec__enc_uint(p, %ld);\n",
            t->nf + 1, t->id);
    for (size_t j = 0; j < t->nf; j++) {
        const struct field *f = &t->f[j];
        char val[128];
        if (f->t == F_TICKS) {
            fprintf(o, "    p += rec__emit_ticks(s, p, t_%s);\n", f->name);
            continue;
        }
        if (f->array) {
            fprintf(o, "    p += rec__enc_array(p, e->%s_count);\n"
                       "    for (size_t i = 0; i < e->%s_count; i++)\n", f->name, f->name);
            snprintf(val, sizeof val, "e->%s[i]", f->name);
            gen_enc_item(o, f, val, false, "        ");
        } else {
            snprintf(val, sizeof val, "e->%s", f->name);
            gen_enc_item(o, f, val, f->nullable, "    ");
        }
    }
    fprintf(o, "    return rec__emit_commit(s, p);\n");
    if (marks)
        fprintf(o, "abort:\n    rec__emit_abort(s);\n    return rc;\n");
    fprintf(o, "}\n");
}

static void gen_source(FILE *o, const struct bytes *meta)
{
    fprintf(o, "/* librecord/events.c - generated by schemas/recgen from schemas/events.json: do not edit. */\n"
               "#include <config.h>\n#include <string.h>\n#include \"internal.h\"\n"
               "#include \"sized.h\"\n\n");
    fprintf(o, "enum {\n");
    for (size_t i = 0; i < ntypes; i++)
        if (!types[i].event)
            fprintf(o, "    REC__POOL_%s = %d,\n", types[i].name, types[i].pool_index);
    fprintf(o, "};\n\nconst struct rec__pool_desc rec__pool_descs[] = {\n");
    unsigned npools = 0;
    for (size_t i = 0; i < ntypes; i++)
        if (!types[i].event) {
            fprintf(o, "    { %ld, \"%s\" },\n", types[i].id, types[i].name);
            npools++;
        }
    if (!npools)
        fprintf(o, "    { 0, NULL },\n");
    fprintf(o, "};\nconst unsigned rec__npools = %u;\n\n", npools);
    fprintf(o, "/* The METADATA block: schemas/events.json as CBOR, without \"comment\". */\n"
               "const unsigned char rec__metadata[%zu] = {", meta->n);
    for (size_t i = 0; i < meta->n; i++)
        fprintf(o, "%s0x%02x,", i % 16 ? " " : "\n    ", meta->p[i]);
    fprintf(o, "\n};\nconst size_t rec__metadata_len = sizeof rec__metadata;\n");
    const struct type *str = NULL;
    for (size_t i = 0; i < ntypes; i++) {
        if (types[i].event)
            continue;
        gen_intern(o, &types[i]);
        if (!strcmp(types[i].name, "String") && types[i].nf == 1 &&
            types[i].f[0].t == F_STRING && !types[i].f[0].array)
            str = &types[i];
    }
    fprintf(o, "\nint rec_intern_cstr(rec_writer *w, const char *s, rec_id *id)\n{\n");
    if (str)
        fprintf(o, "    struct rec_String v = { .%s = s };\n"
                   "    return rec_intern_String(w, &v, id);\n}\n", str->f[0].name);
    else
        fprintf(o, "    (void)w;\n    (void)s;\n    (void)id;\n    return REC_ENOTFOUND;\n}\n");
    for (size_t i = 0; i < ntypes; i++)
        if (types[i].event)
            gen_emit(o, &types[i]);
}

static void write_out(const char *path, void (*gen)(FILE *, void *), void *arg)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= (int)sizeof tmp)
        die("output path too long");
    FILE *o = fopen(tmp, "w");
    if (!o)
        die("cannot create %s: %s", tmp, strerror(errno));
    gen(o, arg);
    if (fflush(o) || ferror(o) || fclose(o))
        die("cannot write %s: %s", tmp, strerror(errno));
    if (rename(tmp, path))
        die("cannot rename %s to %s: %s", tmp, path, strerror(errno));
}

static void gen_header_cb(FILE *o, void *arg) { gen_header(o, arg); }
static void gen_source_cb(FILE *o, void *arg) { gen_source(o, arg); }

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: recgen SCHEMA.json OUT_HEADER.h OUT_SOURCE.c\n");
        return 2;
    }
    schema_path = argv[1];
    json_error_t err;
    json_t *root = json_load_file(argv[1], JSON_REJECT_DUPLICATES, &err);
    if (!root)
        die("line %d column %d: %s", err.line, err.column, err.text);
    load(root);
    struct bytes meta = { 0 };
    cbor_json(&meta, root);
    if (meta.n > (1u << 20))
        die("the schema's CBOR form exceeds the 1 MiB metadata limit");
    write_out(argv[2], gen_header_cb, root);
    write_out(argv[3], gen_source_cb, &meta);
    free(meta.p);
    for (size_t i = 0; i < ntypes; i++)
        free(types[i].f);
    free(types);
    json_decref(root);
    return 0;
}
