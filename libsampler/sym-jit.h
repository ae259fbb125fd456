/*
 * libsampler/sym-jit.h - code outside every module (sym-jit.c).
 */
#ifndef RECS_JIT_H
#define RECS_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct recs__jit_range {
    uint64_t lo, hi;
} recs__jit_range;

/* The executable mappings no file backs, from /proc/self/maps (up to max);
 * how many. */
size_t recs__jit_ranges(recs__jit_range *out, size_t max);

/* A lookup at a sample's time. t: the sample's CLOCK_MONOTONIC time (the
 * clock of jitdump records); [from, until): narrowed to the sample times
 * for which the answer stays the same, as far as the files read tell;
 * jit, gen: set at the first lookup, with recs__jit_generation() then (the
 * answer holds while it stays that); gone: set when code was there and
 * had moved away. */
typedef struct recs__jit_when {
    uint64_t t, from, until, gen;
    bool jit, gone;
} recs__jit_when;

/* Read what was appended to /tmp/perf-PID.map and the jitdump since the
 * last poll. */
void recs__jit_poll(void);
/* Poll unless the files were read after time t: a sample's names then
 * know every record written before it. */
void recs__jit_refresh(uint64_t t);
/* Changes whenever records read may change a name already given (code
 * moved, named again over code named before). */
uint64_t recs__jit_generation(void);

/* The latest name for pc, or NULL. Valid until the next poll. */
const char *recs__jit_name(uint64_t pc);

/* The name for pc at w->t (the latest if w is NULL), reading the files
 * again first if the sample is later than their last read, or (at most
 * every 50 ms) if nothing names pc; *provisional set if a map exists
 * that may name it later. */
const char *recs__jit_lookup(uint64_t pc, recs__jit_when *w, bool *provisional);

/* How many JIT code addresses no map named (no map at all). */
size_t recs__jit_unnamed(void);
/* Entries kept; entries not kept, for want of room. */
size_t recs__jit_entries(void);
size_t recs__jit_dropped(void);
/* Why the jitdump's times are not used (its names then go by address
 * alone, each holding from when it was read), or NULL. */
const char *recs__jit_untimed(void);

/* A JIT code address written unnamed ([jit]) by a sample at time t:
 * recs__jit_late() looks for its name again. At most JIT_LATE_MAX are
 * kept. */
void recs__jit_unnamed_pc(uint64_t pc, uint64_t t);
/* For each address written unnamed that a map or jitdump names now (as
 * it was at its sample's time): fn with the named range, once per range;
 * the address is then forgotten. Reads the files again first (at most
 * every 50 ms, unless final). Returns how many ranges fn got. */
typedef void recs__jit_name_fn(uint64_t lo, uint64_t hi, const char *name,
                               void *arg);
size_t recs__jit_late(bool final, recs__jit_name_fn *fn, void *arg);
/* Addresses written unnamed that nothing named yet. */
size_t recs__jit_still_unnamed(void);

/* In a fork child: forget the parent's names without calling free() (the
 * parent's sampler thread may have been changing them). */
void recs__jit_abandon(void);

#endif
