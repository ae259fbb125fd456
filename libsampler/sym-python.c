/*
 * libsampler/sym-python.c - a Python frame named: the code object the
 * handler saw, read through the kernel (it may have been freed since:
 * then its type no longer matches and the frame is "[python]"), its
 * qualified name (its name before 3.11), file, and the line of the
 * instruction from its line table. Drain only.
 */
#include <config.h>
#include "internal.h"
#include "unwind-python.h"
#include "unwind-fp.h"

#include <stdlib.h>
#include <string.h>

#define NAME_MAX_CHARS 512
#define TABLE_MAX      (64u << 10)   /* bytes of a location table read */
#define CACHE_MAX      (1u << 14)    /* code objects kept before starting over */
#define FRAMES_MAX     (1u << 16)    /* frames kept before starting over */

/* An open-addressing table whose slots (size bytes each) start with their
 * key, 0 when empty: twice as many slots at three quarters full, up to
 * max, then emptied (drop frees what a slot holds). */
struct table {
    void *v;
    size_t n, used, size, max;
    void (*drop)(void *slot);
};

static uint64_t *key_at(const struct table *t, size_t i)
{
    return (uint64_t *)(void *)((char *)t->v + i * t->size);
}

static size_t probe(const struct table *t, uint64_t key)
{
    size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (t->n - 1);
    while (*key_at(t, i) && *key_at(t, i) != key)
        i = (i + 1) & (t->n - 1);
    return i;
}

static void table_free(struct table *t)
{
    for (size_t i = 0; t->drop && i < t->n; i++)
        if (*key_at(t, i))
            t->drop(key_at(t, i));
    free(t->v);
    t->v = NULL;
    t->n = t->used = 0;
}

/* The slot of key: its own, or the empty one to fill (then the caller
 * sets the key and counts it in used); NULL without memory. */
static void *table_slot(struct table *t, uint64_t key)
{
    if (t->used >= t->n / 4 * 3) {
        size_t n = t->n ? 2 * t->n : 256;
        struct table old = *t;
        void *v = n <= t->max ? calloc(n, t->size) : NULL;
        if (!v) {
            table_free(t);
            if (!(v = calloc(n = 256, t->size)))
                return NULL;
            old.v = NULL;
            old.n = 0;
        }
        t->v = v;
        t->n = n;
        t->used = 0;
        for (size_t k = 0; k < old.n; k++)
            if (*key_at(&old, k)) {
                memcpy(key_at(t, probe(t, *key_at(&old, k))), key_at(&old, k),
                       t->size);
                t->used++;
            }
        free(old.v);
    }
    return key_at(t, probe(t, key));
}

/* What a code object was named by when last read: kept past its end, for
 * samples the drain meets after the interpreter freed it (a script's own
 * code object goes when the script ends, and most samples of a short
 * program are named at its end). Keyed by address: a code object at the
 * same address with other names replaces it. */
struct code_info {
    uint64_t code;                   /* the key */
    uint64_t qualname, filename;     /* the str objects' addresses */
    rec_id func, file;
    int32_t firstline;
    unsigned char *table;            /* the line table */
    size_t tlen;
    bool lines;                      /* the table read, maybe empty */
    bool cut;                        /* longer than TABLE_MAX */
};

static void drop_code(void *slot)
{
    free(((struct code_info *)slot)->table);
}

static struct table codes = { .size = sizeof(struct code_info),
                              .max = CACHE_MAX, .drop = drop_code };

/* (code, instruction) -> Frame: a frame seen again costs no read of its
 * code object (most new stacks differ from others by an instruction). */
struct frame_slot {
    uint64_t key;                    /* the frame word, end bit clear */
    rec_id id;
};
static struct table frames = { .size = sizeof(struct frame_slot),
                               .max = FRAMES_MAX };

void recs__py_names_free(void)
{
    table_free(&codes);
    table_free(&frames);
}

void recs__py_names_abandon(void)
{
    codes.v = frames.v = NULL;
    codes.n = codes.used = frames.n = frames.used = 0;
}

static bool read_mem(void *dst, uint64_t addr, size_t n)
{
    return recs__read_self(dst, addr, n) == (long)n;
}

static void put_utf8(char *out, size_t *o, size_t cap, uint32_t c)
{
    unsigned char b[4];
    size_t k;

    if (c < 0x80) {
        b[0] = (unsigned char)c;
        k = 1;
    } else if (c < 0x800) {
        b[0] = (unsigned char)(0xc0 | c >> 6);
        b[1] = (unsigned char)(0x80 | (c & 0x3f));
        k = 2;
    } else if (c < 0x10000) {
        b[0] = (unsigned char)(0xe0 | c >> 12);
        b[1] = (unsigned char)(0x80 | (c >> 6 & 0x3f));
        b[2] = (unsigned char)(0x80 | (c & 0x3f));
        k = 3;
    } else {
        b[0] = (unsigned char)(0xf0 | (c >> 18 & 7));
        b[1] = (unsigned char)(0x80 | (c >> 12 & 0x3f));
        b[2] = (unsigned char)(0x80 | (c >> 6 & 0x3f));
        b[3] = (unsigned char)(0x80 | (c & 0x3f));
        k = 4;
    }
    if (*o + k < cap) {
        memcpy(out + *o, b, k);
        *o += k;
    }
}

/* A str object's text as UTF-8 (compact strings only: what code objects
 * hold); false if addr is not one. */
static bool read_str(uint64_t addr, char *out, size_t cap)
{
    const recs__py_layout *l = recs__py.layout;
    unsigned char hdr[64], data[NAME_MAX_CHARS * 4];
    uint64_t len, type;
    uint32_t state, kind;
    size_t o = 0, off;

    if (!addr || (addr & 7) || !read_mem(hdr, addr, 40))
        return false;
    memcpy(&len, hdr + 16, 8);
    memcpy(&state, hdr + 32, 4);
    kind = state >> 2 & 7;
    if (!(state & 0x20) || !(kind == 1 || kind == 2 || kind == 4))
        return false;              /* not compact: not a code object's */
    memcpy(&type, hdr + 8, 8);
    (void)type;
    if (len > NAME_MAX_CHARS)
        len = NAME_MAX_CHARS;
    off = state & 0x40 ? l->str_ascii : l->str_compact;
    if (len && !read_mem(data, addr + off, (size_t)len * kind))
        return false;
    for (size_t i = 0; i < len; i++) {
        uint32_t c;
        if (kind == 1)
            c = data[i];
        else if (kind == 2)
            c = (uint32_t)data[2 * i] | (uint32_t)data[2 * i + 1] << 8;
        else
            c = (uint32_t)data[4 * i] | (uint32_t)data[4 * i + 1] << 8 |
                (uint32_t)data[4 * i + 2] << 16 | (uint32_t)data[4 * i + 3] << 24;
        if (c > 0x10ffff)
            return false;
        put_utf8(out, &o, cap, c);
    }
    out[o] = '\0';
    return true;
}

/* The line of instruction off in ci's code. */
static unsigned line_of(const struct code_info *ci, uint32_t off)
{
    return recs__py_line(recs__py.layout->version, ci->table, ci->tlen,
                         ci->cut, ci->firstline, off);
}

/* Read the code object at code into ci (names interned, table copied);
 * false if it is no code object now. */
static bool read_code(rec_writer *w, uint64_t code, struct code_info *ci,
                      int *err)
{
    const recs__py_layout *l = recs__py.layout;
    unsigned char co[256];
    char text[NAME_MAX_CHARS * 4 + 1];
    uint64_t type, qn, fn, ptr, tlen;
    int32_t firstline;
    size_t need = 16;

    /* The fields read, wherever the version has them. */
    need = l->co_filename + 8u > need ? l->co_filename + 8u : need;
    need = l->co_qualname + 8u > need ? l->co_qualname + 8u : need;
    need = l->co_linetable + 8u > need ? l->co_linetable + 8u : need;
    need = l->co_firstlineno + 4u > need ? l->co_firstlineno + 4u : need;
    if (need > sizeof co || !read_mem(co, code, need))
        return false;
    memcpy(&type, co + 8, 8);
    if (type != recs__py.code_type)
        return false;
    memcpy(&qn, co + l->co_qualname, 8);
    memcpy(&fn, co + l->co_filename, 8);
    if (ci->code == code && ci->qualname == qn && ci->filename == fn)
        return true;                 /* the same one, named already */
    free(ci->table);
    memset(ci, 0, sizeof *ci);
    ci->code = code;
    ci->qualname = qn;
    ci->filename = fn;
    if (read_str(qn, text, sizeof text) && (*err = rec_intern_cstr(w, text, &ci->func)) < 0)
        return false;
    if (read_str(fn, text, sizeof text) && (*err = rec_intern_cstr(w, text, &ci->file)) < 0)
        return false;
    memcpy(&firstline, co + l->co_firstlineno, 4);
    ci->firstline = firstline;
    memcpy(&ptr, co + l->co_linetable, 8);
    /* A bytes object: its size at 16, its bytes at 32. */
    if (ptr && !(ptr & 7) && read_mem(&tlen, ptr + 16, 8)) {
        ci->cut = tlen > TABLE_MAX;
        if (ci->cut)
            tlen = TABLE_MAX;
        ci->table = tlen ? malloc(tlen) : NULL;
        if (!tlen || (ci->table && read_mem(ci->table, ptr + 32, tlen))) {
            ci->tlen = tlen;
            ci->lines = true;
        } else {
            free(ci->table);
            ci->table = NULL;
        }
    }
    return true;
}

int recs__py_frame(rec_writer *w, uint64_t word, rec_id *id)
{
    uint64_t code = recs__py_code(word), key = word & ~RECS_PY_END;
    uint32_t off = recs__py_off(word);
    struct code_info *ci;
    struct frame_slot *fs;
    struct rec_Frame f;
    bool fresh;
    int rc = 0;

    if (!atomic_load_explicit(&recs__py.on, memory_order_acquire))
        return REC_EINVAL;
    fs = table_slot(&frames, key);
    if (fs && fs->key) {
        *id = fs->id;
        return 0;
    }
    memset(&f, 0, sizeof f);
    f.offset = (uint64_t)off * 2;
    if ((rc = rec_intern_cstr(w, "python", &f.kind)) < 0)
        return rc;
    ci = table_slot(&codes, code);
    if (!ci)
        return REC_ENOMEM;
    fresh = ci->code == 0;
    if (!read_code(w, code, ci, &rc) && rc < 0)
        return rc;
    codes.used += fresh && ci->code;
    if (ci->code == code) {
        /* Named now, or when it was alive. */
        f.function = ci->func;
        f.file = ci->file;
        /* An empty table too: 3.9 has one for a one-line function. */
        if (ci->file && ci->lines)
            f.line = line_of(ci, off);
    } else if ((rc = rec_intern_cstr(w, "[python]", &f.function)) < 0) {
        return rc;
    }
    if ((rc = rec_intern_Frame(w, &f, id)) < 0)
        return rc;
    /* Named: kept (a "[python]" one may be named later, when the
     * interpreter lets the address serve another code object). */
    if (fs && ci->code == code) {
        fs->key = key;
        fs->id = *id;
        frames.used++;
    }
    return 0;
}
