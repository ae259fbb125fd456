/*
 * libsampler/jit.h - code outside every module (jit.c).
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

/* Read the lines appended to /tmp/perf-PID.map since the last poll. */
void recs__jit_poll(void);

/* The perf map's name for pc, or NULL. Valid until the next poll. */
const char *recs__jit_name(uint64_t pc);

/* The name for pc, reading the map again (at most every 50 ms) if it has
 * none; *provisional set if a map exists that may name it later. */
const char *recs__jit_lookup(uint64_t pc, bool *provisional);

/* How many JIT code addresses no map named (no map at all). */
size_t recs__jit_unnamed(void);

/* A JIT code address written unnamed ([jit]): recs__jit_late() looks for
 * its name again. At most JIT_LATE_MAX are kept. */
void recs__jit_unnamed_pc(uint64_t pc);
/* For each address written unnamed that a map or jitdump names now: fn
 * with the named range, once per range; the address is then forgotten.
 * Reads the files again first (at most every 50 ms, unless final).
 * Returns how many ranges fn got. */
typedef void recs__jit_name_fn(uint64_t lo, uint64_t hi, const char *name,
                               void *arg);
size_t recs__jit_late(bool final, recs__jit_name_fn *fn, void *arg);
/* Addresses written unnamed that nothing named yet. */
size_t recs__jit_still_unnamed(void);

/* In a fork child: forget the parent's names without calling free() (the
 * parent's sampler thread may have been changing them). */
void recs__jit_abandon(void);

#endif
