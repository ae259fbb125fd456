/*
 * libsampler/unwind-walk.c - the CFI stack walk run inside the signal
 * handler (see unwind.h). It reads the interrupted thread's stack and our
 * own tables, nothing else: no code bytes of the modules (which dlclose may
 * unmap), no libdw, no allocation.
 */
#include <config.h>

#include "unwind.h"
#include "unwind-fp.h"

#include <stddef.h>
#include <ucontext.h>

/* Signal-safe. */
const recs_uw_seg *recs__uw_find(const recs_uw_set *set, uint64_t pc)
{
    size_t lo = 0, hi;

    if (!set)
        return NULL;
    hi = set->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (set->segs[mid].lo <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || pc >= set->segs[lo - 1].hi)
        return NULL;
    return &set->segs[lo - 1];
}

/* Signal-safe. One word of the stack, if it lies in [lo, hi). */
RECS_NO_SANITIZE static inline bool rd(uint64_t addr, uint64_t lo, uint64_t hi,
                                       uint64_t *v)
{
    if (!recs__in_stack(addr, 8, lo, hi))
        return false;
    *v = *(const volatile uint64_t *)(uintptr_t)addr;
    return true;
}

/* Signal-safe. */
unsigned recs__uw_keep_code(const recs_uw_set *set, uint64_t *frames,
                            unsigned n)
{
    if (!set)
        return n;
    for (unsigned i = 0; i < n; i++)
        if (frames[i] == 0 || !recs__uw_find(set, frames[i] - 1))
            return i;
    return n;
}

#if defined(__x86_64__)
#define UC_REG(r) \
    (offsetof(ucontext_t, uc_mcontext.gregs) + (r) * sizeof(greg_t))

/* Signal-safe. */
RECS_NO_SANITIZE unsigned recs__uw_walk(const recs_uw_set *set, uint64_t pc,
                       uint64_t sp, uint64_t fp, uint64_t bx, uint64_t lo,
                       uint64_t hi, uint64_t *out, unsigned max,
                       unsigned *stop)
{
    unsigned n = 0;
    bool exact = true;          /* pc is an interrupted pc, not a return */
    bool bx_ok = true;          /* bx is this frame's rbx */

    if (!set)
        return recs__fp_walk(fp, sp, hi, out, max, stop);
    /* Every way out below but the root's says why. */
    *stop = RECS_STOP_DEPTH;
    /* Each step moves sp strictly up the bounded stack, and at most max
     * frames are written: the loop ends. The bound below only caps the
     * cost of trampolines that emit nothing. */
    for (unsigned steps = 0; steps < max + 64; steps++) {
        uint64_t look = exact ? pc : pc - 1;
        const recs_uw_seg *seg = recs__uw_find(set, look);
        const recs_uw_row *row =
            seg ? recs__uw_lookup(seg->tab, look - seg->bias) : NULL;
        unsigned kind = row ? row->flags & RECS_UW_KIND : RECS_UW_NONE;
        uint64_t ra, nsp, nfp = fp, nbx = bx, cfa;
        bool nbx_ok = bx_ok;

        if (seg && seg->pending) {
            /* The walk ends here: the frame-pointer rule would skip the
             * callers of code built without frame pointers (most of a
             * distribution), and a short stack is better than a wrong
             * one. */
            recs__uw_want(set, seg);
            *stop = RECS_STOP_EARLY;
            break;
        }

        if (row && (row->flags & RECS_UW_OUTER)) {
            *stop = RECS_STOP_ROOT;
            break;
        }
        if (kind == RECS_UW_SIGNAL) {
            /* __restore_rt: sp is the ucontext the kernel pushed. The pc
             * found there was interrupted, not called: recorded as pc + 1
             * so that the return-address lookup (pc - 1) lands on it. */
            if (!rd(sp + UC_REG(REG_RIP), lo, hi, &ra) ||
                !rd(sp + UC_REG(REG_RSP), lo, hi, &nsp) ||
                !rd(sp + UC_REG(REG_RBP), lo, hi, &nfp)) {
                *stop = RECS_STOP_STACK_BOUND;
                break;
            }
            bx_ok = rd(sp + UC_REG(REG_RBX), lo, hi, &bx);
            if (nsp <= sp || !recs__uw_find(set, ra)) {
                *stop = nsp <= sp ? RECS_STOP_BAD_CFA : RECS_STOP_UNKNOWN_CODE;
                break;
            }
            if (n == max)
                break;
            out[n++] = ra + 1;
            pc = ra;
            sp = nsp;
            fp = nfp;
            exact = true;
            continue;
        }
        if (kind == RECS_UW_SP || kind == RECS_UW_FP) {
            if ((kind == RECS_UW_FP && fp == 0) || (row->cfa_bx && !bx_ok)) {
                *stop = RECS_STOP_BAD_CFA;
                break;
            }
            cfa = (row->cfa_bx ? bx : kind == RECS_UW_SP ? sp : fp) +
                  (uint64_t)(int64_t)row->cfa_off;
            if (!rd(cfa + (uint64_t)(int64_t)row->ra_off, lo, hi, &ra)) {
                *stop = RECS_STOP_STACK_BOUND;
                break;
            }
            if (row->flags & RECS_UW_FP_SAVED) {
                uint64_t at = cfa + (uint64_t)(int64_t)row->fp_off;
                /* A slot below sp was popped already (compilers do not
                 * restore the rule in epilogues): rbp holds the caller's
                 * value, and the slot may lie under our signal frame. */
                if (at >= sp && !rd(at, lo, hi, &nfp)) {
                    *stop = RECS_STOP_STACK_BOUND;
                    break;
                }
            } else if (row->flags & RECS_UW_FP_LOST) {
                nfp = 0;
            }
            if ((row->flags & RECS_UW_BX_SAVED) && row->bx_off == 0) {
                nbx_ok = false;
            } else if (row->flags & RECS_UW_BX_SAVED) {
                uint64_t at = cfa + (uint64_t)(int64_t)row->bx_off * 8;
                /* Below sp: popped already, rbx holds the caller's. */
                if (at >= sp && !rd(at, lo, hi, &nbx))
                    nbx_ok = false;
            }
            nsp = cfa;
        } else {
            /* No CFI here (code without it, PLT stubs, expressions): the
             * frame-pointer rule. A zero frame pointer is a chain's end;
             * any other that fails cuts it, in JIT code or in a module. */
            if (fp == 0) {
                *stop = RECS_STOP_ROOT;
                break;
            }
            if (fp < sp || (fp & 7) || !rd(fp, lo, hi, &nfp) ||
                !rd(fp + 8, lo, hi, &ra)) {
                *stop = seg && seg->mod == RECS_UW_JIT ? RECS_STOP_JIT
                                                       : RECS_STOP_NO_UNWIND;
                break;
            }
            nsp = fp + 16;
        }
        if (nsp <= sp) {
            *stop = RECS_STOP_BAD_CFA;
            break;
        }
        if (ra == 0) {
            *stop = RECS_STOP_ROOT;
            break;
        }
        /* A return address must point just after a call in known code. */
        if (!recs__uw_find(set, ra - 1)) {
            if (set->unknown)
                atomic_store_explicit(set->unknown, 1, memory_order_relaxed);
            *stop = RECS_STOP_UNKNOWN_CODE;
            break;
        }
        if (n == max)
            break;
        out[n++] = ra;
        pc = ra;
        sp = nsp;
        fp = nfp;
        bx = nbx;
        bx_ok = nbx_ok;
        exact = false;
    }
    return n;
}
#else
/* Signal-safe. CFI tables are built for x86-64 only: elsewhere the walk
 * is the frame-pointer one, its return addresses checked. */
unsigned recs__uw_walk(const recs_uw_set *set, uint64_t pc, uint64_t sp,
                       uint64_t fp, uint64_t bx, uint64_t lo, uint64_t hi,
                       uint64_t *out, unsigned max, unsigned *stop)
{
    unsigned n, k;

    (void)pc;
    (void)bx;
    (void)lo;
    n = recs__fp_walk(fp, sp, hi, out, max, stop);
    k = recs__uw_keep_code(set, out, n);
    if (k < n)
        *stop = RECS_STOP_UNKNOWN_CODE;
    return k;
}
#endif
