/*
 * libsampler/sym-cfi.c - the frameless-leaf rule from a module's call-frame
 * information (.eh_frame, else .debug_frame) as libdw reads it, on the
 * architectures where the unwinder has no tables of its own (x86-64 takes
 * it from them: recs__uw_leaf_return): where the interrupted function's
 * return address is at the sampled pc (sym.h,
 * recs__symbols_leaf_return). The caller holds the recs__symbols mutex.
 */
#include <config.h>
#include "sym-internal.h"

#include <dwarf.h>
#include <stdlib.h>

/* DWARF register numbers of the stack pointer and frame pointer. */
#if defined(__x86_64__)
#define RECS_DW_SP 7
#define RECS_DW_FP 6
#elif defined(__aarch64__)
#define RECS_DW_SP 31
#define RECS_DW_FP 29
#else
#define RECS_DW_SP (-1)
#define RECS_DW_FP (-1)
#endif

/* Offset of a single register-relative rule; false for anything else. */
static bool breg_rule(const Dwarf_Op *ops, size_t nops, int *reg, int64_t *off)
{
    if (nops != 1)
        return false;
    if (ops[0].atom == DW_OP_bregx) {
        *reg = (int)ops[0].number;
        *off = (int64_t)ops[0].number2;
        return true;
    }
    if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
        *reg = ops[0].atom - DW_OP_breg0;
        *off = (int64_t)ops[0].number;
        return true;
    }
    return false;
}

/* Evaluate a location "CFA + constant" (the shapes libdw hands out for
 * offset(N) rules); false for other expressions. */
static bool cfa_relative(const Dwarf_Op *ops, size_t nops, int64_t *off)
{
    uint64_t stack[4];
    size_t sp = 0;
    bool has_cfa = false;

    for (size_t i = 0; i < nops; i++) {
        uint8_t a = ops[i].atom;
        if (a == DW_OP_call_frame_cfa && sp < 4) {
            stack[sp++] = 0;
            has_cfa = true;
        } else if (a == DW_OP_plus_uconst && sp >= 1) {
            stack[sp - 1] += ops[i].number;
        } else if ((a == DW_OP_consts || a == DW_OP_constu) && sp < 4) {
            stack[sp++] = ops[i].number;
        } else if (a >= DW_OP_lit0 && a <= DW_OP_lit31 && sp < 4) {
            stack[sp++] = a - DW_OP_lit0;
        } else if ((a == DW_OP_plus || a == DW_OP_minus) && sp >= 2) {
            sp--;
            stack[sp - 1] = a == DW_OP_plus ? stack[sp - 1] + stack[sp]
                                            : stack[sp - 1] - stack[sp];
        } else {
            return false;     /* includes DW_OP_stack_value: a value rule */
        }
    }
    if (!has_cfa || sp != 1)
        return false;
    *off = (int64_t)stack[0];
    return true;
}

int recs__module_leaf_return(recs__module *m, uint64_t vaddr,
                             const uint64_t *window, size_t nwords,
                             uint64_t *ret)
{
    Dwarf_Frame *fr = NULL;
    Dwarf_Op *ops, ops_mem[3];
    size_t nops;
    Dwarf_Addr start, end;
    bool signalp;
    int ra, reg, rc = REC_EINVAL;
    int64_t cfa_off, ra_off, at;

    if (RECS_DW_SP < 0)
        return REC_EINVAL;
    if (!(m->eh_cfi && dwarf_cfi_addrframe(m->eh_cfi, vaddr, &fr) == 0) &&
        !(m->dbg_cfi && dwarf_cfi_addrframe(m->dbg_cfi, vaddr, &fr) == 0))
        return REC_EINVAL;
    ra = dwarf_frame_info(fr, &start, &end, &signalp);
    if (ra < 0 || dwarf_frame_cfa(fr, &ops, &nops) != 0 ||
        !breg_rule(ops, nops, &reg, &cfa_off))
        goto out;
    if (reg != RECS_DW_SP) {
        /* CFA from the frame pointer: the frame is set up and the walk is
         * right. Other registers (stack realignment) are not evaluated. */
        rc = reg == RECS_DW_FP ? REC_ENOTFOUND : REC_EINVAL;
        goto out;
    }
    if (dwarf_frame_register(fr, ra, ops_mem, &ops, &nops) != 0)
        goto out;
    if (nops == 0) {
        /* same_value: still in the link register; undefined: outermost. */
        rc = ops == NULL ? 1 : REC_ENOTFOUND;
        goto out;
    }
    if (!cfa_relative(ops, nops, &ra_off))
        goto out;
    at = cfa_off + ra_off;            /* bytes above sp */
    rc = recs__window_word(at, window, nwords, ret);
out:
    free(fr);
    return rc;
}
