/*
 * libsampler/unwind.h - CFI unwind tables and the stack walk that uses them
 * inside the signal handler.
 *
 *   unwind-build.c  .eh_frame / .debug_frame bytes -> one compact sorted
 *                   table per module (outside the handler)
 *   unwind-cache.c  tables shared across processes, by build-id
 *   unwind-mods.c   the process's modules -> a published, immutable module
 *                   set (at start, on dlopen/dlclose, on rescans); tables
 *                   built when a walk first needs them
 *   unwind-walk.c   the walk itself (signal-safe)
 *
 * A table row says, from its start address to the next row's, how to find
 * the caller's frame: CFA = SP, FP or BX (rbx) + cfa_off, return address at
 * CFA + ra_off, caller's FP and BX at CFA + fp_off and bx_off (or
 * unchanged). BX is tracked because the dynamic linker's lazy-binding
 * trampoline (_dl_runtime_resolve) realigns the stack and keeps its CFA in
 * rbx: without it every sample under a first call through the PLT stopped
 * there. Rows the table cannot express (DWARF expressions, other
 * registers: PLT stubs) and addresses without CFI use the frame-pointer
 * rule; rows
 * of the signal trampoline take the registers from the ucontext on the
 * stack; an undefined return address marks the outermost frame.
 */
#ifndef RECS_UNWIND_H
#define RECS_UNWIND_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The handler calls these directly, never through the PLT (no
 * interposition, no lazy binding inside a signal handler). */
#define RECS_UW_HIDDEN __attribute__((visibility("hidden")))

/* Row kinds (flags & RECS_UW_KIND). */
#define RECS_UW_SP      0u   /* CFA = sp + cfa_off */
#define RECS_UW_FP      1u   /* CFA = fp + cfa_off */
#define RECS_UW_NONE    2u   /* no usable CFI: frame-pointer rule */
#define RECS_UW_SIGNAL  3u   /* signal trampoline: ucontext at sp */
#define RECS_UW_KIND    3u
/* Row flags. */
#define RECS_UW_FP_SAVED 0x04u  /* caller's fp at CFA + fp_off */
#define RECS_UW_FP_LOST  0x08u  /* fp rule not expressible: fp unknown */
#define RECS_UW_OUTER    0x10u  /* return address undefined: outermost */
#define RECS_UW_FUNC     0x20u  /* first row of an FDE (a function start) */
#define RECS_UW_GAP      0x40u  /* between FDEs (kind NONE) */
#define RECS_UW_BX_SAVED 0x80u  /* caller's BX at CFA + 8 * bx_off; bx_off
                                   0: BX not expressible, unknown */
/* Largest |cfa_off| a row holds (a larger frame: frame-pointer rule). */
#define RECS_UW_CFA_MAX  ((1 << 22) - 1)

typedef struct recs_uw_row {
    uint32_t start;          /* ELF vaddr - table base */
    int32_t cfa_off : 23;
    uint32_t cfa_bx : 1;     /* CFA = BX + cfa_off (kind SP) */
    int32_t bx_off : 8;      /* in 8-byte words */
    int16_t fp_off;
    int8_t ra_off;
    uint8_t flags;
} recs_uw_row;
_Static_assert(sizeof(recs_uw_row) == 12, "a table row stays 12 bytes");

/* Rows per 4 KiB page of code: pages[p] is the row covering offset
 * p << RECS_UW_PAGE_SHIFT, so a lookup searches a handful of rows instead
 * of the whole table (fewer cache misses in the handler). */
#define RECS_UW_PAGE_SHIFT 12

typedef struct recs_uw_table {
    uint64_t base;           /* ELF vaddr of offset 0 */
    size_t nrows;
    size_t npages;
    const uint32_t *pages;   /* npages entries, each < nrows */
    const recs_uw_row *rows; /* sorted by start; the last row is NONE */
    void *map;               /* the shared cache file mapped (unwind-cache.c), */
    size_t map_len;          /* where rows and pages lie; NULL: they follow */
} recs_uw_table;

/* What to build from. eh_frame is .eh_frame as mapped (or read), its
 * first byte at ELF virtual address eh_vaddr (pc-relative pointers);
 * debug_frame is .debug_frame (absolute addresses). Either may be NULL. */
typedef struct recs_uw_source {
    const uint8_t *eh_frame;
    size_t eh_size;
    uint64_t eh_vaddr;
    const uint8_t *debug_frame;
    size_t debug_size;
} recs_uw_source;

typedef struct recs_uw_build_stats {
    size_t fdes;             /* FDEs turned into rows */
    size_t rejected;         /* CIEs/FDEs that could not be parsed */
    size_t fallback_rows;    /* rows with the frame-pointer rule */
} recs_uw_build_stats;

/* Build a table (malloc'd, one block with its rows and pages: free() it,
 * or recs__uw_table_free()). 0, REC_ENOTFOUND when the source holds no
 * FDE, REC_ENOMEM. st may be NULL. */
int recs__uw_build(const recs_uw_source *src, recs_uw_table **out,
                   recs_uw_build_stats *st);
/* Free a built or a cached table (NULL: nothing). */
void recs__uw_table_free(recs_uw_table *t);
/* Bytes of a table's rows and pages (its memory, shared or not). */
size_t recs__uw_table_bytes(const recs_uw_table *t);

/* Signal-safe. The row covering vaddr, or NULL outside the table. */
RECS_UW_HIDDEN
const recs_uw_row *recs__uw_lookup(const recs_uw_table *t, uint64_t vaddr);

/* Start (ELF vaddr) of the function holding vaddr according to the FDEs;
 * false if no FDE covers it. */
bool recs__uw_func_start(const recs_uw_table *t, uint64_t vaddr,
                         uint64_t *start);

/* ---- the module set (unwind-mods.c) ---- */

/* One executable segment [lo, hi) of a module, runtime addresses. */
typedef struct recs_uw_seg {
    uint64_t lo, hi;
    uint64_t bias;                 /* runtime - ELF vaddr */
    const recs_uw_table *tab;      /* NULL: no CFI, or not built yet */
    uint32_t mod;                  /* its module's index in want[], or
                                      RECS_UW_JIT: code of no module */
    uint32_t pending;              /* 1: the table is not built yet */
} recs_uw_seg;

#define RECS_UW_JIT UINT32_MAX

/* Tables are built lazily, on the sampler thread: a walk that meets a
 * module whose table is pending sets its want[] flag and ends there (its
 * frames so far kept); the next refresh builds the wanted tables. */
typedef struct recs_uw_set {
    size_t n, nmods;
    _Atomic unsigned char *want;   /* nmods flags, after segs[] */
    /* Set by a walk that met a return address outside every segment (code
     * made since the last scan of JIT mappings, or a bad stack); NULL:
     * not asked. */
    _Atomic unsigned char *unknown;
    const uint64_t *serial;        /* nmods module serials, after want */
    recs_uw_seg segs[];            /* sorted by lo */
} recs_uw_set;

/* Signal-safe. Ask the next refresh for the table of seg's module
 * (pending in set). Relaxed: a flag lost to a set swap is set again by
 * the next walk through the module. */
static inline void recs__uw_want(const recs_uw_set *set,
                                 const recs_uw_seg *seg)
{
    if (seg->mod < set->nmods &&
        !atomic_load_explicit(&set->want[seg->mod], memory_order_relaxed))
        atomic_store_explicit(&set->want[seg->mod], 1, memory_order_relaxed);
}

/* Rescan the loaded modules and publish the set (not from the handler),
 * building the tables a walk asked for. Returns the number of new modules
 * or < 0. recs__uw_refresh_all() builds every table now (benchmarks). */
int recs__uw_refresh(void);
int recs__uw_refresh_all(void);

/* The module registry: every module of the loader's list that has code,
 * as of its last scan (scanned again first if the loader's counters moved
 * or a walk flagged the set stale), passed to fn under the registry's
 * lock: fn copies what it needs and calls neither the loader nor rec. The
 * symbolizer's modules come from here. */
struct recs__uw_modinfo {
    const char *name;                /* the loader's; "" for the program */
    uint64_t bias;
    const recs_uw_seg *segs;         /* executable segments */
    unsigned nseg;
    const char *build_id;            /* hex; "" if none */
    bool main;                       /* the program */
    bool vdso;
    bool go;                         /* the program, built by Go's linker */
};
typedef void recs__uw_module_fn(const struct recs__uw_modinfo *m, void *arg);
int recs__uw_modules(recs__uw_module_fn *fn, void *arg);
/* Where the shared tables are (REC_CACHE_DIR; NULL: the default), taken
 * into account by the next refresh. */
void recs__uw_configure(const char *cache_dir);
/* Free sets and tables no handler can still read (sampler thread); first
 * refresh if the loader's module counts changed or a handler asked. */
void recs__uw_reclaim(void);
/* In a fork child: forget the parent's sets and tables without freeing
 * them (another thread may have been building one, or held the allocator's
 * lock); the next refresh starts over. */
void recs__uw_abandon(void);
/* Around fork(): the parent waits (boundedly) for a table being built, so
 * that the child can keep the tables, the child's copy of the same code,
 * instead of rebuilding them all before it runs on. prepare takes the
 * tables' lock last, after every other lock of the sampler; parent and
 * child release it; a child that could not have it abandons the tables
 * (recs__uw_abandon()). */
void recs__uw_fork_prepare(void);
void recs__uw_fork_parent(void);
void recs__uw_fork_child(void);
/* Signal-safe. Ask the sampler thread for a refresh (code outside every
 * known segment was seen). */
RECS_UW_HIDDEN
void recs__uw_mark_stale(void);
/* A handler or the symbolizer asked for a refresh not yet made. */
RECS_UW_HIDDEN
bool recs__uw_stale(void);
/* Signal-safe. The handler's entry: walk the interrupted context with the
 * current set, by CFI (cfi true) or frame pointers (return addresses
 * checked against the executable segments). See recs__uw_walk(). */
RECS_UW_HIDDEN
unsigned recs__uw_stack(bool cfi, uint64_t pc, uint64_t sp, uint64_t fp,
                        uint64_t bx, uint64_t lo, uint64_t hi, uint64_t *out,
                        unsigned max, unsigned *stop);
/* Signal-safe. The current set (NULL before the first refresh). */
RECS_UW_HIDDEN
const recs_uw_set *recs__uw_current(void);
/* Signal-safe. The segment holding pc in set, or NULL. */
RECS_UW_HIDDEN
const recs_uw_seg *recs__uw_find(const recs_uw_set *set, uint64_t pc);
/* Start of the function holding the runtime address pc, as an ELF vaddr of
 * its module (the module's load bias subtracted): 1 found, 0 no FDE covers
 * pc, -1 pc lies in no module of the current set (not scanned yet). */
int recs__uw_symbolic_start(uint64_t pc, uint64_t *vaddr);
/* What the current set says of pc: in no segment, in a module's (one the
 * symbolizer may not have scanned yet), or in an executable mapping of no
 * file that the last scan found (JIT code). */
enum { RECS_CODE_NONE, RECS_CODE_MODULE, RECS_CODE_JIT };
int recs__uw_code(uint64_t pc);
/* The frame-pointer mode's leaf rule, from the tables (x86-64): where the
 * return address of the function interrupted at pc is, read from window,
 * a copy of the nwords words at sp. 0 and *ret; REC_ENOTFOUND when the
 * function's frame is set up (the walk is right) or nothing called it;
 * REC_ETRUNCATED beyond the window; REC_EINVAL without a rule (no table
 * row, a trampoline). A pending table is built first. */
int recs__uw_leaf_return(uint64_t pc, const uint64_t *window, size_t nwords,
                         uint64_t *ret);
/* Table figures for benchmarks: modules, rows, bytes, build time;
 * modules whose table is pending, tables taken from the shared cache and
 * tables stored there. */
typedef struct recs_uw_stats {
    size_t modules, tables, rows, bytes;
    uint64_t build_ns;
    size_t pending, cached, stored;
    size_t jit_ranges;             /* executable mappings of no file */
} recs_uw_stats;
void recs__uw_get_stats(recs_uw_stats *st);

/* ---- the shared cache (unwind-cache.c, over cache.h) ---- */

/* The cached table of the module with this build-id (mapped), or NULL. */
recs_uw_table *recs__uwc_load(const char *build_id);
/* Share a built table. 0 or a negative REC_E* code. */
int recs__uwc_store(const char *build_id, const recs_uw_table *t);

/* ---- the walk (unwind-walk.c) ---- */

/* Signal-safe. Walk from the interrupted registers (bx: rbx) with the CFI tables of
 * set; write up to max caller pcs (innermost first; return addresses, or
 * an interrupted pc + 1 past a signal trampoline so that the usual pc - 1
 * lookup lands on it) to out. Every stack read is checked against [lo,
 * hi). *stop says why the walk ended (unwind-fp.h): RECS_STOP_ROOT at the
 * outermost frame, RECS_STOP_DEPTH when max cut a walk that could go on,
 * RECS_STOP_EARLY at a module whose table is pending (its want[] flag is
 * set), else what cut it. */
RECS_UW_HIDDEN
unsigned recs__uw_walk(const recs_uw_set *set, uint64_t pc, uint64_t sp,
                       uint64_t fp, uint64_t bx, uint64_t lo, uint64_t hi,
                       uint64_t *out, unsigned max, unsigned *stop);

/* Signal-safe. Keep the leading frames that lie in an executable segment
 * of set (a frame-pointer chain through code that uses rbp as data yields
 * stack addresses); returns the new count. */
RECS_UW_HIDDEN
unsigned recs__uw_keep_code(const recs_uw_set *set, uint64_t *frames,
                            unsigned n);

#endif
