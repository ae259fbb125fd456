/*
 * libsampler/sym-python.c - a Python frame named: the code object the
 * handler saw, read through the kernel (it may have been freed since:
 * then its type no longer matches and the frame is "[python]"), its
 * qualified name, file, and the line of the instruction from its location
 * table. Drain only.
 */
#include <config.h>
#include "internal.h"
#include "python.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define NAME_MAX_CHARS 512
#define TABLE_MAX      (64u << 10)   /* bytes of a location table read */
#define CACHE_MAX      (1u << 16)    /* frames kept before starting over */

/* (code, instruction) -> Frame id, open addressing; 0 keys are empty. */
struct slot {
    uint64_t key;
    rec_id id;
};
static struct slot *slots;
static size_t nslots, used;

void recs__py_names_free(void)
{
    free(slots);
    slots = NULL;
    nslots = used = 0;
}

void recs__py_names_abandon(void)
{
    slots = NULL;
    nslots = used = 0;
}

static bool read_mem(void *dst, uint64_t addr, size_t n)
{
    struct iovec local = { dst, n };
    struct iovec remote = { (void *)(uintptr_t)addr, n };
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n;
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

static unsigned varint(const unsigned char *p, size_t n, size_t *i)
{
    unsigned v = 0, shift = 0;
    unsigned char b;

    do {
        if (*i >= n || shift > 28)
            return 0;
        b = p[(*i)++];
        v |= (unsigned)(b & 63) << shift;
        shift += 6;
    } while (b & 64);
    return v;
}

static int svarint(const unsigned char *p, size_t n, size_t *i)
{
    unsigned v = varint(p, n, i);
    return v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
}

/* The line of instruction off (code units) from a location table (the
 * format of 3.11 to 3.13, Objects/locations.md); 0 if it has none. */
static unsigned table_line(const unsigned char *t, size_t n, int first,
                           uint32_t off)
{
    int line = first;
    uint32_t at = 0;
    size_t i = 0;

    while (i < n) {
        unsigned char b = t[i++];
        unsigned code = b >> 3 & 15, len = (b & 7) + 1u;
        bool none = false;
        if (!(b & 0x80))
            return 0;              /* out of step: no line rather than a wrong one */
        if (code == 15) {
            none = true;
        } else if (code == 14) {
            line += svarint(t, n, &i);
            varint(t, n, &i);
            varint(t, n, &i);
            varint(t, n, &i);
        } else if (code == 13) {
            line += svarint(t, n, &i);
        } else if (code >= 10) {
            line += (int)code - 10;
            i += 2;
        } else {
            i += 1;
        }
        if (off < at + len)
            return none || line <= 0 ? 0 : (unsigned)line;
        at += len;
    }
    return 0;
}

static int intern_str(rec_writer *w, const char *s, rec_id *id)
{
    return rec_intern_cstr(w, s, id);
}

static int make_frame(rec_writer *w, uint64_t code, uint32_t off, rec_id *id)
{
    const recs__py_layout *l = recs__py.layout;
    unsigned char co[256], *table = NULL;
    char name[NAME_MAX_CHARS * 4 + 1], file[NAME_MAX_CHARS * 4 + 1];
    uint64_t type, ptr, tlen;
    int32_t firstline;
    struct rec_Frame f;
    int rc;

    memset(&f, 0, sizeof f);
    f.offset = (uint64_t)off * 2;
    if ((rc = intern_str(w, "python", &f.kind)) < 0)
        return rc;
    if (l->co_code > sizeof co || !read_mem(co, code, l->co_code) ||
        (memcpy(&type, co + 8, 8), type != recs__py.code_type)) {
        /* Freed since the sample: the kind says what it was. */
        if ((rc = intern_str(w, "[python]", &f.function)) < 0)
            return rc;
        return rec_intern_Frame(w, &f, id);
    }
    memcpy(&ptr, co + l->co_qualname, 8);
    if (read_str(ptr, name, sizeof name) &&
        (rc = intern_str(w, name, &f.function)) < 0)
        return rc;
    memcpy(&ptr, co + l->co_filename, 8);
    if (read_str(ptr, file, sizeof file) &&
        (rc = intern_str(w, file, &f.file)) < 0)
        return rc;
    memcpy(&firstline, co + l->co_firstlineno, 4);
    memcpy(&ptr, co + l->co_linetable, 8);
    /* A bytes object: its size at 16, its bytes at 32. */
    if (f.file && ptr && !(ptr & 7) && read_mem(&tlen, ptr + 16, 8)) {
        if (tlen > TABLE_MAX)
            tlen = TABLE_MAX;
        table = malloc(tlen ? tlen : 1);
        if (table && read_mem(table, ptr + 32, tlen))
            f.line = table_line(table, tlen, firstline, off);
        free(table);
    }
    return rec_intern_Frame(w, &f, id);
}

static size_t find(uint64_t key)
{
    size_t i = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (nslots - 1);
    while (slots[i].key && slots[i].key != key)
        i = (i + 1) & (nslots - 1);
    return i;
}

int recs__py_frame(rec_writer *w, uint64_t word, rec_id *id)
{
    uint64_t key = (word & ~RECS_PY_END) | 1ull << 63;
    size_t i;
    int rc;

    if (!atomic_load_explicit(&recs__py.on, memory_order_acquire))
        return REC_EINVAL;
    if (used >= nslots / 4 * 3) {
        size_t n = nslots ? nslots * 2 : 256;
        struct slot *v;
        if (n > CACHE_MAX) {
            memset(slots, 0, nslots * sizeof *slots);
            used = 0;
        } else if ((v = calloc(n, sizeof *v)) != NULL) {
            struct slot *old = slots;
            size_t nold = nslots;
            slots = v;
            nslots = n;
            for (size_t k = 0; k < nold; k++)
                if (old[k].key)
                    slots[find(old[k].key)] = old[k];
            free(old);
        } else if (!nslots) {
            return REC_ENOMEM;
        }
    }
    i = find(key);
    if (slots[i].key) {
        *id = slots[i].id;
        return 0;
    }
    rc = make_frame(w, recs__py_code(word), recs__py_off(word), id);
    if (rc < 0)
        return rc;
    slots[i] = (struct slot){ key, *id };
    used++;
    return 0;
}
