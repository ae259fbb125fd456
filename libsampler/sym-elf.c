/*
 * libsampler/sym-elf.c - what one module's files say about an address:
 * ELF symbol tables, DWARF lines and inlined scopes, .eh_frame CFI.
 *
 * Everything is read lazily, the first time a pc of the module needs it, and
 * stays mapped (ELF_C_READ_MMAP) so that names can point into the string
 * tables. The caller holds the recs__symbols mutex: libdw handles are not
 * shared between threads otherwise.
 */
#include <config.h>
#include "sym-internal.h"

#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#define DEBUG_ROOT "/usr/lib/debug"

/* DWARF whose compressed sections would inflate beyond this is not opened
 * inside the profiled process (Debian's libc debug file inflates to 10 MB;
 * with libdw's tables the demo's RSS grew by 18 MB): the module keeps its
 * symbol table names, and its build-id allows offline symbolization. */
#define RECS_MAX_INFLATED_DWARF (4u << 20)

static bool has_debug_info(Elf *elf)
{
    GElf_Shdr sh;
    Elf_Scn *scn = recs__elf_section(elf, ".debug_info", &sh);
    return scn && sh.sh_type != SHT_NOBITS && sh.sh_size > 0;
}

/* Bytes libdw would allocate to decompress elf's compressed debug sections
 * (it inflates them all when the Dwarf is opened). Uncompressed sections
 * are mapped and cost only the pages touched. */
static uint64_t inflated_debug_bytes(Elf *elf)
{
    size_t shstrndx;
    Elf_Scn *scn = NULL;
    uint64_t total = 0;

    if (elf_getshdrstrndx(elf, &shstrndx) < 0)
        return 0;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        GElf_Chdr ch;
        const char *n;
        if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED))
            continue;
        n = elf_strptr(elf, shstrndx, sh.sh_name);
        if (n && !strncmp(n, ".debug_", 7) && gelf_getchdr(scn, &ch))
            total += ch.ch_size;
    }
    return total;
}

static Dwarf *open_dwarf(Elf *elf)
{
    if (inflated_debug_bytes(elf) > RECS_MAX_INFLATED_DWARF)
        return NULL;
    return dwarf_begin_elf(elf, DWARF_C_READ, NULL);
}

static void hex_build_id(Elf *elf, char *hex, size_t size)
{
    const void *id;
    ssize_t n = dwelf_elf_gnu_build_id(elf, &id);

    hex[0] = '\0';
    if (n <= 0 || (size_t)n * 2 + 1 > size)
        return;
    for (ssize_t i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", ((const unsigned char *)id)[i]);
}

/* Open path as a debug file for m: an ELF with DWARF and, when both carry
 * one, the same build-id (a stale debug file gives wrong lines). */
static bool try_debug_file(recs__module *m, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    Elf *elf;
    char id[sizeof m->build_id];

    if (fd < 0)
        return false;
    elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (elf && elf_kind(elf) == ELF_K_ELF && has_debug_info(elf)) {
        hex_build_id(elf, id, sizeof id);
        if (!m->build_id[0] || !id[0] || !strcmp(id, m->build_id)) {
            m->dbg_fd = fd;
            m->dbg_elf = elf;
            return true;
        }
    }
    if (elf)
        elf_end(elf);
    close(fd);
    return false;
}

/* The .gnu_debuglink name of m's file (no directory part), or NULL. */
const char *recs__module_debuglink(recs__module *m)
{
    GElf_Shdr sh;
    Elf_Scn *scn = m->elf ? recs__elf_section(m->elf, ".gnu_debuglink", &sh) : NULL;
    Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
    const char *link = d && d->d_buf ? d->d_buf : NULL;

    if (!link || !memchr(link, '\0', d->d_size) || !link[0] || strchr(link, '/'))
        return NULL;
    return link;
}

/* The standard places (gdb's and elfutils' order): the .build-id tree, then
 * the .gnu_debuglink name next to the file, in .debug/, and under the debug
 * root. No debuginfod: the sampler runs inside the profiled program.
 * Candidate i of m (LINK: its debuglink name, or NULL) in path; false past
 * the last, or for a place that does not apply. */
static bool debug_candidate(const recs__module *m, const char *link, int i,
                            char *path, size_t size)
{
    const char *slash = strrchr(m->path, '/');
    int dirlen = slash ? (int)(slash - m->path) : 0;

    if (i == 0)
        return m->build_id[0] && m->build_id[1] && m->build_id[2] &&
               snprintf(path, size, DEBUG_ROOT "/.build-id/%.2s/%s.debug",
                        m->build_id, m->build_id + 2) < (int)size;
    if (!link || m->path[0] != '/')
        return false;
    switch (i) {
    case 1:
        return snprintf(path, size, "%.*s/%s", dirlen, m->path, link) < (int)size &&
               strcmp(path, m->path);
    case 2:
        return snprintf(path, size, "%.*s/.debug/%s", dirlen, m->path, link) < (int)size;
    case 3:
        return snprintf(path, size, DEBUG_ROOT "%.*s/%s", dirlen, m->path, link) < (int)size;
    }
    return false;
}

#define DEBUG_CANDIDATES 4

static void find_debug_file(recs__module *m)
{
    const char *link = recs__module_debuglink(m);
    char path[4096];

    for (int i = 0; i < DEBUG_CANDIDATES; i++)
        if (debug_candidate(m, link, i, path, sizeof path) &&
            try_debug_file(m, path))
            return;
}

bool recs__module_debug_file_may_exist(const recs__module *m, const char *link)
{
    char path[4096];

    for (int i = 0; i < DEBUG_CANDIDATES; i++)
        if (debug_candidate(m, link, i, path, sizeof path) &&
            access(path, F_OK) == 0)
            return true;
    return false;
}

int recs__module_load(recs__module *m)
{
    if (m->load_state)
        return m->load_state > 0 ? 0 : REC_ENOTFOUND;
    m->load_state = -1;
    /* What the shared cache says of the file spares opening it, and
     * loading libdw at all in a process whose modules all have tables. */
    if (!m->want_elf && recs__module_load_cached(m)) {
        m->load_state = 1;
        return 0;
    }
    if (!recs__dw_load())
        return REC_ENOTFOUND;    /* named by offsets */
    m->fd = m->dbg_fd = -1;
    if (m->image) {
        m->elf = elf_memory((char *)m->image, m->image_size);
    } else {
        m->fd = open(m->path, O_RDONLY | O_CLOEXEC);
        if (m->fd < 0)
            return REC_EIO;
        m->elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
    }
    if (!m->elf || elf_kind(m->elf) != ELF_K_ELF)
        goto fail;
    if (m->build_id[0]) {
        /* The file on disk must be the one mapped (not replaced since). */
        char id[sizeof m->build_id];
        hex_build_id(m->elf, id, sizeof id);
        if (id[0] && strcmp(id, m->build_id))
            goto fail;
    }

    if (has_debug_info(m->elf))
        m->dwarf = open_dwarf(m->elf);
    else if (!m->image)
        find_debug_file(m);
    if (!m->dwarf && m->dbg_elf)
        m->dwarf = open_dwarf(m->dbg_elf);
    m->eh_cfi = dwarf_getcfi_elf(m->elf);
    if (m->dwarf)
        m->dbg_cfi = dwarf_getcfi(m->dwarf);

    if (recs__module_load_syms(m) < 0)
        goto fail;
    m->load_state = 1;
    return 0;

fail:
    recs__module_unload(m);
    m->load_state = -1;
    return REC_ENOTFOUND;
}

int recs__module_load_elf(recs__module *m)
{
    if (!m->want_elf) {
        m->want_elf = true;
        /* Loaded from the cache alone: open the file now. */
        if (m->load_state > 0 && !m->elf && !m->image)
            recs__module_unload(m);
    }
    return recs__module_load(m);
}

void recs__module_unload(recs__module *m)
{
    /* dwarf_end also frees the dbg_cfi it owns; eh_cfi belongs to elf. */
    if (m->dwarf)
        dwarf_end(m->dwarf);
    if (m->eh_cfi)
        dwarf_cfi_end(m->eh_cfi);
    if (m->dbg_elf)
        elf_end(m->dbg_elf);
    if (m->mini_elf)
        elf_end(m->mini_elf);
    free(m->mini_image);
    m->mini_elf = NULL;
    m->mini_image = NULL;
    if (m->elf)
        elf_end(m->elf);
    if (m->dbg_fd >= 0)
        close(m->dbg_fd);
    if (m->fd >= 0)
        close(m->fd);
    recs__module_free_syms(m);
    free(m->cus);
    free(m->fns);
    free(m->fn_cus);
    m->fns = NULL;
    m->fn_cus = NULL;
    m->nfns = m->nfn_cus = 0;
    m->cus = NULL;
    m->ncus = 0;
    m->cus_built = false;
    m->dwarf = NULL;
    m->eh_cfi = m->dbg_cfi = NULL;
    m->elf = m->dbg_elf = NULL;
    m->fd = m->dbg_fd = -1;
    m->load_state = 0;
}

static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    const char *n;

    n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
    if (!n)
        n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
    if (!n)
        n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
    return n;
}

struct cu_range {
    uint64_t lo, hi;
    Dwarf_Off off;                   /* of the CU DIE */
};

static int cmp_cu_range(const void *a, const void *b)
{
    const struct cu_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Address ranges of every CU, for when .debug_aranges is missing or
 * incomplete (dwarf_addrdie fails): built once, then binary searched, so a
 * pc outside every CU (assembly, PLT) costs a lookup, not a pass over the
 * CUs. */
static void build_cu_table(recs__module *m)
{
    Dwarf_Off off = 0, next;
    size_t hsize, n = 0, cap = 0;
    struct cu_range *v = NULL;

    m->cus_built = true;
    while (dwarf_nextcu(m->dwarf, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        Dwarf_Addr base, start, end;
        ptrdiff_t it = 0;

        if (dwarf_offdie(m->dwarf, off + hsize, &cu)) {
            while ((it = dwarf_ranges(&cu, it, &base, &start, &end)) > 0) {
                if (end <= start)
                    continue;
                if (n == cap) {
                    struct cu_range *nv;
                    cap = cap ? 2 * cap : 256;
                    nv = realloc(v, cap * sizeof *v);
                    if (!nv) {
                        free(v);
                        return;
                    }
                    v = nv;
                }
                v[n++] = (struct cu_range){ start, end, off + hsize };
            }
        }
        off = next;
    }
    if (n)
        qsort(v, n, sizeof *v, cmp_cu_range);
    m->cus = v;
    m->ncus = n;
}

static bool find_cu(recs__module *m, uint64_t vaddr, Dwarf_Die *cudie)
{
    const struct cu_range *v;
    size_t lo = 0, hi;

    if (dwarf_addrdie(m->dwarf, vaddr, cudie))
        return true;
    if (!m->cus_built)
        build_cu_table(m);
    v = m->cus;
    hi = m->ncus;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].lo <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo, k = 0; i-- > 0 && k < 8; k++)
        if (vaddr < v[i].hi)
            return dwarf_offdie(m->dwarf, v[i].off, cudie) != NULL;
    return false;
}

#define MAX_NEST 64

/* The chain of DIEs under parent that contain vaddr (inlined calls, through
 * lexical blocks), appended to chain; returns the new depth. (dwarf_getscopes
 * would follow an inlined call into its abstract definition and lose the
 * subprogram that holds the code, the frame needed most.) */
static int pc_chain(Dwarf_Die *parent, uint64_t vaddr, Dwarf_Die *chain, int depth)
{
    Dwarf_Die child;

    if (dwarf_child(parent, &child) != 0)
        return depth;
    do {
        int tag = dwarf_tag(&child);
        if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block ||
             tag == DW_TAG_try_block || tag == DW_TAG_catch_block) &&
            dwarf_haspc(&child, vaddr) > 0) {
            if (tag == DW_TAG_inlined_subroutine) {
                if (depth >= MAX_NEST)
                    return depth;
                chain[depth++] = child;
            }
            return pc_chain(&child, vaddr, chain, depth);
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return depth;
}

struct fn_range {
    uint64_t lo, hi;
    Dwarf_Off off;                   /* of the subprogram DIE */
};

static int cmp_fn_range(const void *a, const void *b)
{
    const struct fn_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

struct fn_list {
    struct fn_range *v;
    size_t n, cap;
    bool nomem;
};

static void collect_fns(Dwarf_Die *parent, struct fn_list *l)
{
    Dwarf_Die child;

    if (dwarf_child(parent, &child) != 0)
        return;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_subprogram) {
            Dwarf_Addr base, start, end;
            ptrdiff_t it = 0;
            while ((it = dwarf_ranges(&child, it, &base, &start, &end)) > 0) {
                if (end <= start)
                    continue;
                if (l->n == l->cap) {
                    size_t cap = l->cap ? 2 * l->cap : 64;
                    struct fn_range *v = realloc(l->v, cap * sizeof *v);
                    if (!v) {
                        l->nomem = true;
                        return;
                    }
                    l->v = v;
                    l->cap = cap;
                }
                l->v[l->n++] = (struct fn_range){ start, end, dwarf_dieoffset(&child) };
            }
        } else if (tag == DW_TAG_namespace || tag == DW_TAG_module) {
            collect_fns(&child, l);   /* functions of a namespace are its children */
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

/* Index the subprograms of a CU the first time one of its pcs is resolved:
 * one pass over the CU instead of one per pc (walking a CU's top-level DIEs
 * means skipping every type and declaration of its headers). */
static void index_cu(recs__module *m, Dwarf_Die *cudie)
{
    Dwarf_Off off = dwarf_dieoffset(cudie);
    struct fn_list l = { 0 };
    struct fn_range *merged;
    Dwarf_Off *cus;
    size_t i, j, k;

    for (i = 0; i < m->nfn_cus; i++)
        if (m->fn_cus[i] == off)
            return;
    cus = realloc(m->fn_cus, (m->nfn_cus + 1) * sizeof *cus);
    if (!cus)
        return;
    m->fn_cus = cus;
    m->fn_cus[m->nfn_cus++] = off;
    collect_fns(cudie, &l);
    if (l.nomem || l.n == 0) {
        free(l.v);
        return;
    }
    qsort(l.v, l.n, sizeof *l.v, cmp_fn_range);
    merged = malloc((m->nfns + l.n) * sizeof *merged);
    if (!merged) {
        free(l.v);
        return;
    }
    for (i = j = k = 0; i < m->nfns || j < l.n;)
        merged[k++] = j >= l.n || (i < m->nfns && m->fns[i].lo <= l.v[j].lo)
                          ? m->fns[i++] : l.v[j++];
    free(l.v);
    free(m->fns);
    m->fns = merged;
    m->nfns = k;
}

/* The subprogram DIE whose code holds vaddr. */
static bool find_fn(recs__module *m, Dwarf_Die *cudie, uint64_t vaddr, Dwarf_Die *fn)
{
    size_t lo = 0, hi;

    index_cu(m, cudie);
    hi = m->nfns;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->fns[mid].lo <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo, k = 0; i-- > 0 && k < 8; k++)
        if (vaddr < m->fns[i].hi)
            return dwarf_offdie(m->dwarf, m->fns[i].off, fn) != NULL;
    return false;
}

size_t recs__module_srcframes(recs__module *m, uint64_t vaddr,
                              recs__srcframe *out, size_t max)
{
    Dwarf_Die cudie, chain[MAX_NEST];
    Dwarf_Line *line;
    Dwarf_Files *files = NULL;
    const char *file = NULL;
    int lineno = 0, depth;
    size_t n = 0, nfiles = 0;

    if (!m->dwarf || max == 0 || !find_cu(m, vaddr, &cudie))
        return 0;
    line = dwarf_getsrc_die(&cudie, vaddr);
    if (line) {
        file = dwarf_linesrc(line, NULL, NULL);
        if (dwarf_lineno(line, &lineno) != 0 || lineno < 0)
            lineno = 0;
    }
    depth = 0;
    if (find_fn(m, &cudie, vaddr, &chain[0]))
        depth = pc_chain(&chain[0], vaddr, chain, 1);
    /* Innermost first; the outermost (physical) function always kept. */
    for (int i = depth - 1; i >= 0; i--) {
        bool inlined = dwarf_tag(&chain[i]) == DW_TAG_inlined_subroutine;
        Dwarf_Attribute a;
        Dwarf_Word w;

        if (!inlined || n + 1 < max)
            out[n++] = (recs__srcframe){ die_name(&chain[i]), file,
                                        (unsigned)lineno, inlined };
        if (!inlined)
            break;
        /* The outer frame is at the call site of this inlined call. */
        file = NULL;
        lineno = 0;
        if (dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_file, &a), &w) == 0) {
            if (!files)
                dwarf_getsrcfiles(&cudie, &files, &nfiles);
            if (files && w < nfiles)
                file = dwarf_filesrc(files, w, NULL, NULL);
        }
        if (dwarf_formudata(dwarf_attr(&chain[i], DW_AT_call_line, &a), &w) == 0)
            lineno = (int)w;
    }
    if (n == 0 && file)   /* code covered by the line table only */
        out[n++] = (recs__srcframe){ NULL, file, (unsigned)lineno, false };
    return n;
}
