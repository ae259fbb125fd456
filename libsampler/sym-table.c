/*
 * libsampler/sym-table.c - a module's function symbols, sorted for lookup
 * by address: from its .symtab, its separate debug file's, its
 * MiniDebugInfo (with .dynsym) or its .dynsym, in that order, plus the
 * PLT entries. Built once per module build-id and shared across processes
 * (cache.h): each process of a build would otherwise read and sort the
 * compiler's 100,000 symbols again.
 *
 * The table: records of { addr, size, name offset } sorted by address
 * (the larger first at one address: a lookup takes the last that covers),
 * then the names, each NUL-terminated. The caller holds the recs__symbols
 * mutex.
 */
#include <config.h>
#include "sym-internal.h"
#include "cache.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <lzma.h>

#define SYM_MAGIC "RECSYM\0\3"
#define SYM_EXT   "sym"

/* Where a module's symbols come from (part of what a cached table must
 * match: a debug file installed since gives better names). */
enum { SRC_SYMTAB = 1, SRC_DEBUG = 2, SRC_MINI = 3, SRC_DYNSYM = 4 };
/* The header's count[2]: the source, and in its next byte what else the
 * file held when the table was built. The names start with the file's
 * .gnu_debuglink name ("" if none: the places a debug file would be
 * found), then its identity (file_ident: copies of a module with one
 * build-id may be stripped differently), checked without opening it, then
 * the debug file's path and identity ("" and "" if none was used). */
#define SYM_HAD_DWARF 0x100u        /* DWARF opened: lines and inlines */

Elf_Scn *recs__elf_section(Elf *elf, const char *name, GElf_Shdr *shdr)
{
    size_t shstrndx;
    Elf_Scn *scn = NULL;

    if (elf_getshdrstrndx(elf, &shstrndx) < 0)
        return NULL;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        const char *n;
        if (!gelf_getshdr(scn, shdr))
            continue;
        n = elf_strptr(elf, shstrndx, shdr->sh_name);
        if (n && !strcmp(n, name))
            return scn;
    }
    return NULL;
}

/* Which of several names of one address to show: a plain global name
 * before a weak one before a local one, and any before a versioned alias
 * of the static table ("clock_gettime@@GLIBC_2.17"). */
static int sym_rank(const GElf_Sym *sym, const char *name)
{
    int bind = GELF_ST_BIND(sym->st_info);
    int r = bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
    if (GELF_ST_VISIBILITY(sym->st_other) != STV_DEFAULT)
        r += 3;
    if (strchr(name, '@'))
        r += 6;
    return r;
}

/* A symbol while the table is built: its name still in the ELF data. */
struct tmp_sym {
    uint64_t addr, size;
    const char *name;
};

struct raw_sym {
    struct tmp_sym s;
    int rank;
};

/* The table being built. */
struct symbuild {
    struct tmp_sym *v;
    size_t n;
    char *plt_names;                 /* names of the PLT entries' symbols */
};

static int cmp_raw_sym(const void *a, const void *b)
{
    const struct raw_sym *x = a, *y = b;
    if (x->s.addr != y->s.addr)
        return x->s.addr < y->s.addr ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank - y->rank;
    return (x->s.size < y->s.size) - (x->s.size > y->s.size);  /* bigger first */
}

/* A MiniDebugInfo image larger than this once inflated is not used (the
 * ones distributions ship hold a symbol table: well below). */
#define RECS_MAX_MINI_DEBUGINFO (16u << 20)

/* MiniDebugInfo: .gnu_debugdata is an xz-compressed ELF whose .symtab
 * names the functions .dynsym does not (Fedora ships it; a stripped
 * binary is then named without debug files). */
static void open_mini_debuginfo(recs__module *m)
{
    GElf_Shdr sh;
    Elf_Scn *scn = recs__elf_section(m->elf, ".gnu_debugdata", &sh);
    Elf_Data *d = scn && sh.sh_type == SHT_PROGBITS ? elf_rawdata(scn, NULL)
                                                      : NULL;
    lzma_stream z = LZMA_STREAM_INIT;
    unsigned char *out = NULL;
    size_t cap = 0;
    lzma_ret r;

    if (!d || !d->d_buf || d->d_size == 0 ||
        lzma_stream_decoder(&z, 64u << 20, 0) != LZMA_OK)
        return;
    z.next_in = d->d_buf;
    z.avail_in = d->d_size;
    do {
        if (z.avail_out == 0) {
            size_t ncap = cap ? 2 * cap : 4 * d->d_size + 4096;
            unsigned char *v;
            if (ncap > RECS_MAX_MINI_DEBUGINFO || !(v = realloc(out, ncap)))
                goto fail;
            out = v;
            z.next_out = out + cap;
            z.avail_out = ncap - cap;
            cap = ncap;
        }
        r = lzma_code(&z, LZMA_FINISH);
    } while (r == LZMA_OK);
    if (r != LZMA_STREAM_END)
        goto fail;
    m->mini_elf = elf_memory((char *)out, cap - z.avail_out);
    if (!m->mini_elf || elf_kind(m->mini_elf) != ELF_K_ELF) {
        if (m->mini_elf)
            elf_end(m->mini_elf);
        m->mini_elf = NULL;
        goto fail;
    }
    m->mini_image = out;
    lzma_end(&z);
    return;
fail:
    lzma_end(&z);
    free(out);
}

/* The first symbol table of type in elf, and its entry count. */
static Elf_Data *symtab_data(Elf *elf, Elf32_Word type, GElf_Shdr *sh,
                             size_t *n)
{
    Elf_Scn *scn = NULL;
    Elf_Data *d;

    while (elf && (scn = elf_nextscn(elf, scn)) != NULL) {
        if (!gelf_getshdr(scn, sh) || sh->sh_type != type || !sh->sh_entsize)
            continue;
        d = elf_getdata(scn, NULL);
        *n = d ? sh->sh_size / sh->sh_entsize : 0;
        if (*n)
            return d;
    }
    return NULL;
}

/* Function symbols of the first table of the given type, with those of the
 * first table of type2 in elf2 if elf2 is not NULL (MiniDebugInfo's .symtab
 * holds only what .dynsym lacks), sorted by address, one per address
 * (global before weak before local: aliases share it). 1 if there was a
 * table, 0 if not, < 0 on failure. */
static int load_symtab2(struct symbuild *b, Elf *elf, Elf32_Word type,
                        Elf *elf2, Elf32_Word type2)
{
    GElf_Shdr sh, sh2 = { 0 };
    size_t n = 0, n2 = 0, k = 0;
    Elf_Data *d = symtab_data(elf, type, &sh, &n);
    Elf_Data *d2 = elf2 ? symtab_data(elf2, type2, &sh2, &n2) : NULL;
    struct raw_sym *raw;

    if (!d)
        return 0;
    if (!d2)
        n2 = 0;
    raw = malloc((n + n2) * sizeof *raw);
    if (!raw)
        return REC_ENOMEM;
    for (int pass = 0; pass < 2; pass++) {
        Elf *e = pass ? elf2 : elf;
        Elf_Data *dd = pass ? d2 : d;
        size_t nn = pass ? n2 : n;
        size_t link = pass ? sh2.sh_link : sh.sh_link;
        for (size_t i = 1; i < nn; i++) {
            GElf_Sym sym;
            const char *name;
            int t;
            if (!gelf_getsym(dd, (int)i, &sym))
                continue;
            t = GELF_ST_TYPE(sym.st_info);
            if ((t != STT_FUNC && t != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
                sym.st_value == 0)
                continue;
            name = elf_strptr(e, link, sym.st_name);
            if (!name || !name[0])
                continue;
            raw[k].s.addr = sym.st_value;
            raw[k].s.size = sym.st_size;
            raw[k].s.name = name;
            raw[k].rank = sym_rank(&sym, name);
            k++;
        }
    }
    qsort(raw, k, sizeof *raw, cmp_raw_sym);
    b->v = malloc((k ? k : 1) * sizeof *b->v);
    if (!b->v) {
        free(raw);
        return REC_ENOMEM;
    }
    b->n = 0;
    for (size_t i = 0; i < k; i++)
        if (i == 0 || raw[i].s.addr != raw[i - 1].s.addr)
            b->v[b->n++] = raw[i].s;
    free(raw);
    return 1;
}

static int load_symtab(struct symbuild *b, Elf *elf, Elf32_Word type)
{
    return load_symtab2(b, elf, type, NULL, 0);
}

static int cmp_sym(const void *a, const void *b)
{
    const struct tmp_sym *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    /* The larger first: a lookup takes the last one that covers vaddr. */
    return x->size > y->size ? -1 : x->size < y->size;
}

/* PLT stubs have no symbols: without these, a pc in one takes the name of
 * the nearest unsized symbol before it (_init). Entries of .plt (after its
 * header) and .plt.sec are named target@plt from .rela.plt, as binutils
 * and perf do; the rest of the PLT sections is "[plt]". */
static int add_plt_syms(struct symbuild *m, Elf *elf)
{
    size_t shstrndx, nrel = 0, nplt = 0, namebytes = 0, k = 0;
    Elf_Scn *scn = NULL, *rela = NULL, *dynsym = NULL;
    GElf_Shdr sh, rsh = { 0 }, dsh = { 0 };
    struct { uint64_t addr, size, ent; bool sec; } plt[3];
    struct tmp_sym *v;
    Elf_Data *rd = NULL, *dd = NULL;
    char *names, *p;

    if (elf_getshdrstrndx(elf, &shstrndx) < 0)
        return 0;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        const char *n;
        if (!gelf_getshdr(scn, &sh))
            continue;
        n = elf_strptr(elf, shstrndx, sh.sh_name);
        if (!n)
            continue;
        if (!strcmp(n, ".rela.plt") && sh.sh_type == SHT_RELA && sh.sh_entsize) {
            rela = scn;
            rsh = sh;
        } else if ((!strcmp(n, ".plt") || !strcmp(n, ".plt.sec") ||
                    !strcmp(n, ".plt.got")) && sh.sh_size && nplt < 3) {
            plt[nplt].addr = sh.sh_addr;
            plt[nplt].size = sh.sh_size;
            plt[nplt].ent = !strcmp(n, ".plt.got") ? 0 : 16;
            plt[nplt].sec = !strcmp(n, ".plt.sec");
            nplt++;
        }
    }
    if (nplt == 0)
        return 0;
    if (rela && (dynsym = elf_getscn(elf, rsh.sh_link)) &&
        gelf_getshdr(dynsym, &dsh) && (rd = elf_getdata(rela, NULL)) &&
        (dd = elf_getdata(dynsym, NULL)))
        nrel = rsh.sh_size / rsh.sh_entsize;
    for (size_t i = 0; i < nrel; i++) {
        GElf_Rela r;
        GElf_Sym s;
        const char *n;
        if (gelf_getrela(rd, (int)i, &r) &&
            gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &s) &&
            (n = elf_strptr(elf, dsh.sh_link, s.st_name)))
            namebytes += strlen(n) + 5;
    }
    v = realloc(m->v, (m->n + 2 * nrel + nplt) * sizeof *v);
    names = malloc(namebytes + 1);
    if (!v || !names) {
        if (v)
            m->v = v;
        free(names);
        return REC_ENOMEM;
    }
    m->v = v;
    p = names;
    for (size_t j = 0; j < nplt; j++) {
        uint64_t first = plt[j].sec ? 0 : 16;   /* .plt: header first */
        for (size_t i = 0; plt[j].ent && i < nrel &&
             first + (i + 1) * plt[j].ent <= plt[j].size; i++) {
            GElf_Rela r;
            GElf_Sym s;
            const char *n;
            if (!gelf_getrela(rd, (int)i, &r) ||
                !gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &s) ||
                !(n = elf_strptr(elf, dsh.sh_link, s.st_name)))
                continue;
            size_t len = strlen(n);
            memcpy(p, n, len);
            memcpy(p + len, "@plt", 5);
            v[m->n + k].addr = plt[j].addr + first + i * plt[j].ent;
            v[m->n + k].size = plt[j].ent;
            v[m->n + k].name = p;
            p += len + 5;
            k++;
        }
    }
    /* The sections themselves, sized, for what no entry covers. Sorted
     * before the entries at the same address (the lookup takes the last). */
    for (size_t j = 0; j < nplt; j++) {
        v[m->n + k].addr = plt[j].addr;
        v[m->n + k].size = plt[j].size;
        v[m->n + k].name = "[plt]";
        k++;
    }
    m->n += k;
    qsort(m->v, m->n, sizeof *m->v, cmp_sym);
    m->plt_names = names;
    return 0;
}

/* The source load_symbols() would read, decided from section headers
 * alone. */
static int source_of(recs__module *m)
{
    GElf_Shdr sh;
    size_t n;

    if (symtab_data(m->elf, SHT_SYMTAB, &sh, &n))
        return SRC_SYMTAB;
    if (m->dbg_elf && symtab_data(m->dbg_elf, SHT_SYMTAB, &sh, &n))
        return SRC_DEBUG;
    if (!m->image && recs__elf_section(m->elf, ".gnu_debugdata", &sh))
        return SRC_MINI;
    return SRC_DYNSYM;
}

/* Whether m's table is kept in the shared cache: the vdso (copied from
 * memory) and modules without a build-id are not. */
static bool cacheable(const recs__module *m)
{
    return m->build_id[0] && !m->image && recs__cache_enabled();
}

/* The identity of the file at path (recs__cache_file_ident), or "". */
static void file_ident(const char *path, char *out, size_t size)
{
    struct stat st;

    out[0] = '\0';
    if (path[0] == '/' && stat(path, &st) == 0)
        recs__cache_file_ident(&st, out, size);
}

/* The next of the NUL-terminated strings that start the names (s, before
 * end), or NULL. */
static const char *next_str(const char *s, const char *end)
{
    if (!s || s >= end)
        return NULL;
    s += strlen(s) + 1;      /* the names end with a NUL: checked */
    return s < end ? s : NULL;
}

/* Whether the files the cached table was built from are still the ones a
 * load would read: the module's own, and the debug file found first (none,
 * if none was used), each by its identity. A table built with DWARF is
 * not enough: lines need the file. */
static bool cached_files_unchanged(recs__module *m, const char *text,
                                   const char *end, uint64_t what)
{
    const char *ident = next_str(text, end), *dbg = next_str(ident, end);
    const char *dbg_ident = next_str(dbg, end), *first;
    char now[RECS_FILE_IDENT_MAX], path[4096];

    if ((what & SYM_HAD_DWARF) || !dbg_ident)
        return false;
    file_ident(m->path, now, sizeof now);
    if (!now[0] || strcmp(now, ident))
        return false;
    first = recs__module_debug_file_first(m, text[0] ? text : NULL, path,
                                          sizeof path);
    if ((what & 0xff) != SRC_DEBUG)
        return !first && !dbg[0];
    if (!first || strcmp(first, dbg))
        return false;
    file_ident(first, now, sizeof now);
    return now[0] && !strcmp(now, dbg_ident);
}

/* The table of m from the shared cache, if it holds one of source SRC; or
 * with SRC < 0, without the module's file: if it had no DWARF that was
 * opened, and the files it was built from are unchanged. */
static bool from_cache(recs__module *m, int src)
{
    const recs_cache_header *h;
    const void *body;
    size_t len, body_len;

    h = recs__cache_map(m->build_id, SYM_EXT, SYM_MAGIC, NULL, &len, &body,
                        &body_len);
    if (!h)
        return false;
    uint64_t n = h->count[0], names = h->count[1], what = h->count[2];
    const struct recs__sym *v = body;
    const char *text = (const char *)(v + n);
    if (h->unit != sizeof *v || n > body_len / sizeof *v ||
        n * sizeof *v + names != body_len || names == 0 ||
        text[names - 1] != '\0')
        goto bad;
    if (src >= 0 && (what & 0xff) != (uint64_t)src)
        goto bad;
    if (src < 0 && !cached_files_unchanged(m, text, text + names, what))
        goto bad;
    for (uint64_t i = 0; i < n; i++)
        if (v[i].name >= names || (i && v[i].addr < v[i - 1].addr))
            goto bad;
    m->syms = v;
    m->nsyms = (size_t)n;
    m->sym_names = text;
    m->sym_map = (void *)h;
    m->sym_map_len = len;
    return true;
bad:
    munmap((void *)h, len);
    return false;
}

bool recs__module_load_cached(recs__module *m)
{
    return cacheable(m) && from_cache(m, -1);
}

/* The built table as the module keeps it (names copied out of the ELF
 * data), and shared. */
static int finish(recs__module *m, struct symbuild *b, int src)
{
    const char *link = m->image ? NULL : recs__module_debuglink(m);
    const char *dbg = m->dbg_path && src == SRC_DEBUG ? m->dbg_path : "";
    char ident[RECS_FILE_IDENT_MAX], dbg_ident[RECS_FILE_IDENT_MAX];
    size_t llen = link ? strlen(link) + 1 : 1, ilen, dlen, dilen, names;
    struct recs__sym *v;
    char *text;

    file_ident(m->path, ident, sizeof ident);
    dbg_ident[0] = '\0';
    if (dbg[0])
        file_ident(dbg, dbg_ident, sizeof dbg_ident);
    ilen = strlen(ident) + 1;
    dlen = strlen(dbg) + 1;
    dilen = strlen(dbg_ident) + 1;
    names = llen + ilen + dlen + dilen;
    for (size_t i = 0; i < b->n; i++)
        names += strlen(b->v[i].name) + 1;
    if (!(v = malloc((b->n ? b->n : 1) * sizeof *v + names)))
        return REC_ENOMEM;
    text = (char *)(v + (b->n ? b->n : 1));
    memcpy(text, link ? link : "", llen);
    memcpy(text + llen, ident, ilen);
    memcpy(text + llen + ilen, dbg, dlen);
    memcpy(text + llen + ilen + dlen, dbg_ident, dilen);
    names = llen + ilen + dlen + dilen;
    for (size_t i = 0; i < b->n; i++) {
        size_t len = strlen(b->v[i].name) + 1;
        memcpy(text + names, b->v[i].name, len);
        v[i].addr = b->v[i].addr;
        v[i].size = b->v[i].size;
        v[i].name = (uint32_t)names;
        v[i].pad = 0;
        names += len;
    }
    m->syms = v;
    m->nsyms = b->n;
    m->sym_names = text;
    m->sym_own = v;
    if (cacheable(m) && names <= UINT32_MAX) {
        recs_cache_header h;
        const void *parts[2] = { v, text };
        size_t sizes[2] = { b->n * sizeof *v, names };
        memset(&h, 0, sizeof h);
        memcpy(h.magic, SYM_MAGIC, 8);
        h.unit = sizeof *v;
        h.count[0] = b->n;
        h.count[1] = names;
        h.count[2] = (uint64_t)src | (m->dwarf ? SYM_HAD_DWARF : 0);
        recs__cache_store(m->build_id, SYM_EXT, &h, parts, sizes, 2);
    }
    return 0;
}

int recs__module_load_syms(recs__module *m)
{
    struct symbuild b = { 0 };
    int src = source_of(m), rc;

    if (cacheable(m) && from_cache(m, src))
        return 0;
    rc = load_symtab(&b, m->elf, SHT_SYMTAB);
    if (rc == 0 && m->dbg_elf)
        rc = load_symtab(&b, m->dbg_elf, SHT_SYMTAB);
    if (rc == 0 && !m->image) {
        open_mini_debuginfo(m);
        if (m->mini_elf)
            rc = load_symtab2(&b, m->mini_elf, SHT_SYMTAB, m->elf, SHT_DYNSYM);
    }
    if (rc == 0)
        rc = load_symtab(&b, m->elf, SHT_DYNSYM);
    if (rc >= 0)
        rc = add_plt_syms(&b, m->elf);
    if (rc >= 0)
        rc = finish(m, &b, src);
    free(b.v);
    free(b.plt_names);
    return rc < 0 ? rc : 0;
}

void recs__module_free_syms(recs__module *m)
{
    if (m->sym_map)
        munmap(m->sym_map, m->sym_map_len);
    free(m->sym_own);
    m->sym_map = NULL;
    m->sym_map_len = 0;
    m->sym_own = NULL;
    m->syms = NULL;
    m->nsyms = 0;
    m->sym_names = NULL;
}

const char *recs__module_symbol(recs__module *m, uint64_t vaddr)
{
    size_t lo = 0, hi = m->nsyms;

    /* Last symbol starting at or before vaddr. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->syms[mid].addr <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    /* A few predecessors too: a sized function can contain a nested symbol
     * (assembly entry points) that ends before vaddr. */
    for (size_t i = lo, k = 0; i-- > 0 && k < 4; k++) {
        const struct recs__sym *s = &m->syms[i];
        if (vaddr - s->addr < s->size)
            return m->sym_names + s->name;
        if (s->size == 0 && i == lo - 1)
            return m->sym_names + s->name;   /* unsized (hand-written)
                                                symbol: nearest wins */
    }
    return NULL;
}
