/*
 * libsampler/unwind.h - CFI unwind tables and the stack walk that uses them
 * inside the signal handler.
 *
 *   unwind-build.c  .eh_frame / .debug_frame bytes -> one compact sorted
 *                   table per module (outside the handler)
 *   unwind-mods.c   the process's modules -> a published, immutable module
 *                   set (at start, on dlopen/dlclose, on rescans)
 *   unwind-walk.c   the walk itself (signal-safe)
 *
 * A table row says, from its start address to the next row's, how to find
 * the caller's frame: CFA = SP or FP + cfa_off, return address at CFA +
 * ra_off, caller's FP at CFA + fp_off (or unchanged). Rows the table cannot
 * express (DWARF expressions, other registers: PLT stubs, stack
 * realignment) and addresses without CFI use the frame-pointer rule; rows
 * of the signal trampoline take the registers from the ucontext on the
 * stack; an undefined return address marks the outermost frame.
 */
#ifndef RECS_UNWIND_H
#define RECS_UNWIND_H

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

typedef struct recs_uw_row {
    uint32_t start;          /* ELF vaddr - table base */
    int32_t cfa_off;
    int16_t fp_off;
    int8_t ra_off;
    uint8_t flags;
} recs_uw_row;

/* Rows per 4 KiB page of code: pages[p] is the row covering offset
 * p << RECS_UW_PAGE_SHIFT, so a lookup searches a handful of rows instead
 * of the whole table (fewer cache misses in the handler). */
#define RECS_UW_PAGE_SHIFT 12

typedef struct recs_uw_table {
    uint64_t base;           /* ELF vaddr of offset 0 */
    size_t nrows;
    size_t npages;
    const uint32_t *pages;   /* npages entries, after the rows */
    recs_uw_row rows[];      /* sorted by start; the last row is NONE */
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

/* Build a table (malloc'd, one block: free() it). 0, REC_ENOTFOUND when the
 * source holds no FDE, REC_ENOMEM. st may be NULL. */
int recs__uw_build(const recs_uw_source *src, recs_uw_table **out,
                   recs_uw_build_stats *st);

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
    const recs_uw_table *tab;      /* NULL: no CFI */
} recs_uw_seg;

typedef struct recs_uw_set {
    size_t n;
    recs_uw_seg segs[];            /* sorted by lo */
} recs_uw_set;

/* Rescan the loaded modules, build tables for new ones and publish the
 * set (not from the handler). Returns the number of new modules or < 0. */
int recs__uw_refresh(void);
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
/* Signal-safe. The handler's entry: walk the interrupted context with the
 * current set, by CFI (cfi true) or frame pointers (return addresses
 * checked against the executable segments). See recs__uw_walk(). */
RECS_UW_HIDDEN
unsigned recs__uw_stack(bool cfi, uint64_t pc, uint64_t sp, uint64_t fp,
                        uint64_t lo, uint64_t hi, uint64_t *out,
                        unsigned max, bool *truncated);
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
/* Table figures for benchmarks: modules, rows, bytes, build time. */
typedef struct recs_uw_stats {
    size_t modules, tables, rows, bytes;
    uint64_t build_ns;
} recs_uw_stats;
void recs__uw_get_stats(recs_uw_stats *st);

/* ---- the walk (unwind-walk.c) ---- */

/* Signal-safe. Walk from the interrupted registers with the CFI tables of
 * set; write up to max caller pcs (innermost first; return addresses, or
 * an interrupted pc + 1 past a signal trampoline so that the usual pc - 1
 * lookup lands on it) to out. Every stack read is checked against [lo,
 * hi). *truncated is set when max cut a walk that could go on, *root when
 * the outermost frame was reached. */
RECS_UW_HIDDEN
unsigned recs__uw_walk(const recs_uw_set *set, uint64_t pc, uint64_t sp,
                       uint64_t fp, uint64_t lo, uint64_t hi,
                       uint64_t *out, unsigned max, bool *truncated,
                       bool *root);

/* Signal-safe. Keep the leading frames that lie in an executable segment
 * of set (a frame-pointer chain through code that uses rbp as data yields
 * stack addresses); returns the new count. */
RECS_UW_HIDDEN
unsigned recs__uw_keep_code(const recs_uw_set *set, uint64_t *frames,
                            unsigned n);

#endif
