/*
 * libsampler/sym.h - module maps and symbolization for the sampler.
 *
 * Not async-signal-safe: called by the drain (sampler thread, or a thread at
 * its own safe point such as thread exit), never from the signal handler.
 * Every function is thread-safe (one mutex per recs__symbols).
 *
 * Built on elfutils (libelf + libdw), the library perf, systemtap and
 * eu-stack use: one dependency gives ELF symbol tables, DWARF line tables,
 * inlined-call scopes and the .eh_frame CFI that the frameless-leaf
 * correction needs.
 */
#ifndef RECS_SYMBOLS_H
#define RECS_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rec/record.h>
#include "sym-jit.h"

typedef struct recs__symbols recs__symbols;

/* Interns String/Module/Frame pool entries into w (the ids stay valid for the
 * writer's lifetime: the writer re-emits pools per chunk). Does not scan:
 * call recs__symbols_scan() next. */
int  recs__symbols_create(recs__symbols **out, rec_writer *w);
void recs__symbols_destroy(recs__symbols *s);

/* (Re)read the process's loaded modules, the vdso included, from the module
 * registry (recs__uw_modules: it walks the loader's list again only if
 * that changed).
 * New modules get a Module pool entry and are queued for
 * recs__symbols_emit_modules(); modules that were unloaded are forgotten.
 * Returns the number of new modules (>= 0) or a negative REC_E* code.
 * recs__symbols_frames() rescans by itself when it meets a pc outside every
 * known module (rate-limited to once per 100 ms). */
int recs__symbols_scan(recs__symbols *s);
/* The GNU build-id of a module, hex, from its mapped PT_NOTE segments
 * ("" if none). From a dl_iterate_phdr callback. */
struct dl_phdr_info;
void recs__phdr_build_id(const struct dl_phdr_info *info, char *hex,
                         size_t hexsize);
/* Whether the module was linked by Go (its "Go" build-id note). */
bool recs__phdr_is_go(const struct dl_phdr_info *info);

/* Emit one ModuleLoad event into st for every module found since the last
 * call (all modules known when all is true, e.g. after a chunk rotation if
 * one wants them in every chunk). Returns the number emitted or < 0. */
int recs__symbols_emit_modules(recs__symbols *s, rec_stream *st, bool all);

/* Emit a JitCodeName event for each JIT code range written unnamed that a
 * perf map or jitdump names now (read again at most every 50 ms, unless
 * final). Returns how many or < 0. */
int recs__symbols_emit_jit_names(recs__symbols *s, rec_stream *st, bool final);

/* Resolve one pc into Frame ids, innermost first: the inlined frames (from
 * DWARF, inlined=true) then the physical function. *n is set to the number of
 * ids written (>= 1 on success; at most max, the innermost kept). For a return
 * address (any frame but the interrupted one) the lookup uses pc - 1 so that
 * the call instruction, not the next statement, is reported; Frame.offset is
 * that lookup address minus the module's load bias (what addr2line takes).
 * A pc in no module gives one Frame with module and function null and offset
 * the absolute pc. Results are cached per (pc, is_return_address).
 * Returns 0; 1 if a name is provisional (a stripped module whose unwind
 * table, which gives function starts, is not built yet: not cached, and
 * the caller should not cache it either); or < 0.
 * JIT code is named by the latest names read; recs__symbols_frames_at()
 * names it as it was at w->t and narrows w (see sym-jit.h): such frames are
 * not cached here. */
int recs__symbols_frames(recs__symbols *s, uint64_t pc, bool is_return_address,
                        rec_id *frames, size_t max, size_t *n);
int recs__symbols_frames_at(recs__symbols *s, uint64_t pc,
                            bool is_return_address, recs__jit_when *w,
                            rec_id *frames, size_t max, size_t *n);

/* The Frame of a pc in no known code, unnamed: module and function null,
 * offset the pc (*n = 1). 0 or < 0. */
int recs__symbols_unknown_frame(recs__symbols *s, uint64_t pc, rec_id *frame,
                                size_t *n);

/* True if pc lies in an executable segment of a known module. */
bool recs__symbols_is_executable(recs__symbols *s, uint64_t pc);

/* Executable address ranges [start, end), sorted by start, for copying into
 * signal-safe memory. Copies up to max ranges into out (out may be NULL when
 * max is 0) and returns how many exist (so a caller can size its buffer).
 * *generation (if not NULL) changes whenever the set of ranges changes. */
typedef struct recs__range {
    uint64_t start, end;
} recs__range;
size_t recs__symbols_ranges(recs__symbols *s, recs__range *out, size_t max,
                           uint64_t *generation);

/* Frameless-leaf correction. A frame-pointer walk that starts in a function
 * that has not (yet) set up its frame - a frameless leaf, or any function in
 * its prologue/epilogue - skips that function's caller, because rbp still
 * belongs to the caller. The .eh_frame CFI of the function holding pc tells
 * whether the return address is still on the stack at CFA - 8 with
 * CFA = sp + k.
 *   0              *ret = the return address (the missing caller), read from
 *                  stack_window[(k - 8) / 8]; stack_window holds nwords
 *                  words copied from sp upwards by the signal handler.
 *   1              aarch64: the return address is still in the link register
 *                  (x30): the caller's frame is LR. (*ret untouched.)
 *   REC_ENOTFOUND  the function has its frame (CFA from the frame pointer):
 *                  the frame-pointer walk is right as it is.
 *   REC_ETRUNCATED the return address lies beyond the window.
 *   REC_EINVAL     no CFI for pc, or a rule this code does not evaluate.
 * sp is only used for documentation/diagnostics: offsets are relative to it. */
/* The word of the window AT bytes above sp, the return address of a rule:
 * 0 and *ret, REC_ETRUNCATED beyond the window, REC_EINVAL for an offset
 * no word starts at. Both CFI readers (libdw's, the unwinder's tables)
 * end here. */
static inline int recs__window_word(int64_t at, const uint64_t *window,
                                    size_t nwords, uint64_t *ret)
{
    if (at < 0 || at % 8)
        return REC_EINVAL;
    if ((uint64_t)at / 8 >= nwords)
        return REC_ETRUNCATED;
    *ret = window[at / 8];
    return 0;
}

int recs__symbols_leaf_return(recs__symbols *s, uint64_t pc, uint64_t sp,
                             const uint64_t *stack_window, size_t nwords,
                             uint64_t *ret);

/* Counters for tests and benchmarks. */
typedef struct recs__symbols_stats {
    uint64_t modules;        /* modules currently known */
    uint64_t scans;          /* recs__symbols_scan() runs (explicit + automatic) */
    uint64_t lookups;        /* recs__symbols_frames() calls */
    uint64_t misses;         /* of which not in the pc cache */
    uint64_t frames;         /* Frame entries interned */
} recs__symbols_stats;
void recs__symbols_get_stats(recs__symbols *s, recs__symbols_stats *st);

#endif
