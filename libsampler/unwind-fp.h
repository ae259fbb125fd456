/*
 * libsampler/unwind-fp.h - bounds-checked frame-pointer walk, run inside the
 * signal handler.
 *
 * Frame layout (x86-64 and aarch64 with frame pointers): fp points at the
 * saved caller fp, the return address is the next word. Every read is
 * checked to lie inside [lo, hi) (the thread's stack, recorded when the
 * thread was registered) and to be aligned, and the chain must strictly
 * grow towards hi, so a corrupt or foreign chain (code built without frame
 * pointers using rbp as a general register) ends the walk instead of
 * faulting or looping.
 */
#ifndef RECS_FPWALK_H
#define RECS_FPWALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Reads of another frame's stack memory are deliberate (redzones
 * included): keep the sanitizers out of them. */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize)
#define RECS_NO_SANITIZE __attribute__((no_sanitize("address", "undefined")))
#endif
#endif
#ifndef RECS_NO_SANITIZE
#define RECS_NO_SANITIZE
#endif

/* Why a walk ended: RECS_STOP_ROOT at the chain's natural end (the
 * thread's root: a frame that marks itself outermost, a zero return
 * address or frame pointer); any other value is why the stack is cut
 * short, recorded as its truncationReason (drain-stacks.c names them). */
enum {
    RECS_STOP_ROOT = 0,
    RECS_STOP_DEPTH,         /* the depth limit */
    RECS_STOP_EARLY,         /* a module whose table is not built yet */
    RECS_STOP_NO_UNWIND,     /* module code without unwind information,
                                and no frame pointer to follow */
    RECS_STOP_JIT,           /* JIT code whose frame-pointer chain ends */
    RECS_STOP_BAD_CFA,       /* a rule gave a frame that does not go up
                                the stack */
    RECS_STOP_STACK_BOUND,   /* a frame outside the thread's stack */
    RECS_STOP_UNKNOWN_CODE,  /* a return address into no known code */
    RECS_STOP_FOREIGN,       /* another stack: the kernel refused a read */
    RECS_STOP_N
};

/* Signal-safe. Copy n words from the stack at addr (bounds checked by the
 * caller); a loop, not memcpy, which a sanitizer would intercept. */
RECS_NO_SANITIZE static inline void recs__copy_stack(uint64_t *dst, uint64_t addr,
                                                   unsigned n)
{
    const volatile uint64_t *src = (const volatile uint64_t *)(uintptr_t)addr;
    for (unsigned i = 0; i < n; i++)
        dst[i] = src[i];
}

/* Signal-safe. Walk from fp; write up to max return addresses (innermost
 * first) to out. Returns the number written; *stop says why the walk
 * ended (RECS_STOP_*). Hidden: the handler calls it directly, never
 * through the PLT (lazy binding, interposition). */
__attribute__((visibility("hidden")))
unsigned recs__fp_walk(uint64_t fp, uint64_t lo, uint64_t hi,
                      uint64_t *out, unsigned max, unsigned *stop);

/* Signal-safe. The same walk on a stack whose bounds are not known (a
 * goroutine's, a coroutine's): memory is read through the kernel
 * (process_vm_readv on this process), in chunks from sp and then from the
 * frame the chain reaches, so an unmapped page ends the walk instead of
 * faulting. At most RECS_FOREIGN_READS reads. The first words from sp go
 * to window (up to nwindow words; *got: how many were read). Returns the
 * number of return addresses written; -1 if the kernel refuses the read
 * (a seccomp filter, an old kernel). */
#define RECS_FOREIGN_READS 8
__attribute__((visibility("hidden")))
int recs__fp_walk_foreign(uint64_t fp, uint64_t sp, uint64_t *out,
                          unsigned max, unsigned *stop, uint64_t *window,
                          unsigned nwindow, unsigned *got);

/* Signal-safe. Up to bytes of this process's memory at addr into dst,
 * through the kernel (process_vm_readv): an unmapped page stops the copy
 * instead of faulting. The bytes read, or -1 if the kernel refuses (a
 * seccomp filter, an old kernel). errno is kept. Hidden, as the walks. */
__attribute__((visibility("hidden")))
long recs__read_self(void *dst, uint64_t addr, size_t bytes);

/* Signal-safe. True if [addr, addr + len) lies inside [lo, hi). */
static inline bool recs__in_stack(uint64_t addr, uint64_t len,
                                 uint64_t lo, uint64_t hi)
{
    return addr >= lo && addr < hi && len <= hi - addr;
}

#endif
