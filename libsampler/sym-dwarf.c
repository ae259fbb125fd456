/*
 * libsampler/sym-dwarf.c - source frames of an address from a module's
 * DWARF (opened by sym-elf.c): the inlined calls, then the physical
 * function, with files and lines. CUs and subprograms are indexed the
 * first time one of their pcs is resolved. The caller holds the
 * recs__symbols mutex.
 */
#include <config.h>
#include "sym-internal.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

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

/* The code [lo, hi) of a DIE (a CU, a subprogram). */
struct die_range {
    uint64_t lo, hi;
    Dwarf_Off off;                   /* of the DIE */
};

static int cmp_die_range(const void *a, const void *b)
{
    const struct die_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The DIE of the range in v (sorted by lo) that holds vaddr: the last
 * starting at or before it, or one of the few before that (ranges may
 * overlap). */
static bool die_at(Dwarf *dw, const struct die_range *v, size_t n,
                   uint64_t vaddr, Dwarf_Die *die)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].lo <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo, k = 0; i-- > 0 && k < 8; k++)
        if (vaddr < v[i].hi)
            return dwarf_offdie(dw, v[i].off, die) != NULL;
    return false;
}

/* Address ranges of every CU, for when .debug_aranges is missing or
 * incomplete (dwarf_addrdie fails): built once, then binary searched, so a
 * pc outside every CU (assembly, PLT) costs a lookup, not a pass over the
 * CUs. */
static void build_cu_table(recs__module *m)
{
    Dwarf_Off off = 0, next;
    size_t hsize, n = 0, cap = 0;
    struct die_range *v = NULL;

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
                    struct die_range *nv;
                    cap = cap ? 2 * cap : 256;
                    nv = realloc(v, cap * sizeof *v);
                    if (!nv) {
                        free(v);
                        return;
                    }
                    v = nv;
                }
                v[n++] = (struct die_range){ start, end, off + hsize };
            }
        }
        off = next;
    }
    if (n)
        qsort(v, n, sizeof *v, cmp_die_range);
    m->cus = v;
    m->ncus = n;
}

static bool find_cu(recs__module *m, uint64_t vaddr, Dwarf_Die *cudie)
{
    if (dwarf_addrdie(m->dwarf, vaddr, cudie))
        return true;
    if (!m->cus_built)
        build_cu_table(m);
    return die_at(m->dwarf, m->cus, m->ncus, vaddr, cudie);
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

struct fn_list {
    struct die_range *v;
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
                    struct die_range *v = realloc(l->v, cap * sizeof *v);
                    if (!v) {
                        l->nomem = true;
                        return;
                    }
                    l->v = v;
                    l->cap = cap;
                }
                l->v[l->n++] = (struct die_range){ start, end, dwarf_dieoffset(&child) };
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
    struct die_range *merged;
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
    qsort(l.v, l.n, sizeof *l.v, cmp_die_range);
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
    index_cu(m, cudie);
    return die_at(m->dwarf, m->fns, m->nfns, vaddr, fn);
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
