/*
 * tests/test-unwind-table.c - the CFI table builder on hand-made .eh_frame and
 * .debug_frame bytes (every rule shape kept, and those turned into the
 * frame-pointer fallback or rejected), and the walk over a synthetic stack
 * (CFA from sp, fp and rbx, outermost frame, signal trampoline, depth
 * limit, corrupt pointers).
 */
#include <config.h>
#include "tap.h"
#include "unwind-fp.h"
#include "unwind.h"
#include <rec/record.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

/* ---- a tiny .eh_frame assembler ---- */

struct buf {
    uint8_t b[4096];
    size_t n;
};


/* The walk with its stop reason as the three flags these cases check;
 * the reason itself kept in last_stop. */
static unsigned last_stop;
static unsigned walk3(const recs_uw_set *set, uint64_t pc, uint64_t sp,
                      uint64_t fp, uint64_t bx, uint64_t lo, uint64_t hi,
                      uint64_t *out, unsigned max, bool *trunc, bool *root,
                      bool *early)
{
    unsigned n = recs__uw_walk(set, pc, sp, fp, bx, lo, hi, out, max, &last_stop);
    *trunc = last_stop == RECS_STOP_DEPTH;
    *root = last_stop == RECS_STOP_ROOT;
    *early = last_stop == RECS_STOP_EARLY;
    return n;
}

static void u8(struct buf *b, unsigned v) { b->b[b->n++] = (uint8_t)v; }
static void u32(struct buf *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        u8(b, (v >> (8 * i)) & 0xff);
}
static void u64(struct buf *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        u8(b, (unsigned)(v >> (8 * i)) & 0xff);
}
static void uleb(struct buf *b, uint64_t v)
{
    do {
        uint8_t c = v & 0x7f;
        v >>= 7;
        u8(b, c | (v ? 0x80 : 0));
    } while (v);
}
static void sleb(struct buf *b, int64_t v)
{
    for (;;) {
        uint8_t c = v & 0x7f;
        v >>= 7;
        if ((v == 0 && !(c & 0x40)) || (v == -1 && (c & 0x40))) {
            u8(b, c);
            return;
        }
        u8(b, c | 0x80);
    }
}
static void bytes(struct buf *b, const uint8_t *p, size_t n)
{
    if (n)
        memcpy(b->b + b->n, p, n);
    b->n += n;
}

#define EH_VADDR 0x10000u

/* A CIE ("zR" or "zRS", pcrel sdata4 pointers, ra = r16, data -8) with the
 * usual initial rules: CFA = rsp + 8, ra at CFA - 8. Returns its offset. */
static size_t cie(struct buf *b, bool signal, unsigned version)
{
    size_t at = b->n, len_at;
    u32(b, 0);
    len_at = b->n;
    u32(b, 0);                       /* CIE id */
    u8(b, version);
    bytes(b, (const uint8_t *)(signal ? "zRS" : "zR"), signal ? 4 : 3);
    uleb(b, 1);                      /* code align */
    sleb(b, -8);                     /* data align */
    u8(b, 16);                       /* ra register */
    uleb(b, 1);                      /* augmentation data length */
    u8(b, 0x1b);                     /* pcrel | sdata4 */
    u8(b, 0x0c); uleb(b, 7); uleb(b, 8);     /* def_cfa rsp, 8 */
    u8(b, 0x80 | 16); uleb(b, 1);           /* offset r16, cfa-8 */
    while ((b->n - len_at) % 8)
        u8(b, 0);
    uint32_t len = (uint32_t)(b->n - len_at);
    memcpy(b->b + at, &len, 4);
    return at;
}

static void fde(struct buf *b, size_t cie_at, uint64_t start, uint32_t range,
                const uint8_t *insns, size_t n)
{
    size_t at = b->n, len_at;
    u32(b, 0);
    len_at = b->n;
    u32(b, (uint32_t)(b->n - cie_at));
    /* pc-relative begin */
    u32(b, (uint32_t)(start - (EH_VADDR + b->n)));
    u32(b, range);
    uleb(b, 0);                      /* augmentation data */
    bytes(b, insns, n);
    while ((b->n - len_at) % 8)
        u8(b, 0);
    uint32_t len = (uint32_t)(b->n - len_at);
    memcpy(b->b + at, &len, 4);
}

static recs_uw_table *build(struct buf *b, recs_uw_build_stats *st, int *rc)
{
    recs_uw_source src = { b->b, b->n, EH_VADDR, NULL, 0 };
    recs_uw_table *t = NULL;
    u32(b, 0);                       /* terminator */
    src.eh_size = b->n;
    *rc = recs__uw_build(&src, &t, st);
    return t;
}

static const recs_uw_row *row_at(const recs_uw_table *t, uint64_t a)
{
    return recs__uw_lookup(t, a);
}

static bool is(const recs_uw_row *r, unsigned flags, int32_t cfa, int ra,
               int fp)
{
    if (!r)
        return false;
    if ((r->flags & ~RECS_UW_FUNC) != flags)
        return false;
    if ((flags & RECS_UW_KIND) <= RECS_UW_FP &&
        (r->cfa_off != cfa || r->ra_off != ra))
        return false;
    if ((flags & RECS_UW_FP_SAVED) && r->fp_off != fp)
        return false;
    return true;
}

/* ---- builder ---- */

static void test_rules(void)
{
    struct buf b = { .n = 0 };
    recs_uw_build_stats st;
    recs_uw_table *t;
    size_t c;
    int rc;
    uint64_t fs;

    c = cie(&b, false, 1);
    /* 0x1000: push rbp; mov rsp,rbp; ...; leave; ret (the -fno-omit shape) */
    static const uint8_t fpfn[] = {
        0x41, 0x0e, 16, 0x86, 2,          /* +1: cfa_off 16, rbp at cfa-16 */
        0x43, 0x0d, 6,                     /* +3: cfa = rbp + 16 */
        0x70, 0x0c, 7, 8,                  /* +48: cfa = rsp + 8 */
    };
    fde(&b, c, 0x1000, 0x40, fpfn, sizeof fpfn);
    /* 0x1100: frameless, pushes two registers, remember/restore around an
     * early return. */
    static const uint8_t leaf[] = {
        0x42, 0x0e, 16,                    /* +2 */
        0x42, 0x0e, 24,                    /* +4 */
        0x0a,                              /* remember */
        0x44, 0x0e, 8,                     /* +8: epilogue */
        0x41, 0x0b,                        /* +9: restore (cfa 24) */
        0x13, 0x7c,                        /* def_cfa_offset_sf -4*-8 = 32 */
    };
    fde(&b, c, 0x1100, 0x20, leaf, sizeof leaf);
    /* 0x1200: the outermost frame (ra undefined). */
    static const uint8_t outer[] = { 0x07, 16 };
    fde(&b, c, 0x1200, 0x10, outer, sizeof outer);
    /* 0x1300: a PLT-like CFA expression, then a register rule for ra. */
    static const uint8_t expr[] = {
        0x0f, 5, 0x77, 8, 0x80, 0x00, 0x22,   /* def_cfa_expression */
        0x48, 0x0c, 7, 8, 0x09, 16, 0,        /* +8: ra in r0 */
    };
    fde(&b, c, 0x1300, 0x10, expr, sizeof expr);
    /* 0x1400: rbp saved far from the CFA, and rbp rule by expression. */
    static const uint8_t far[] = {
        0x41, 0x0e, 0x90, 0x20,                /* cfa_off 4112 */
        0x05, 6, 0x80, 0x02,                   /* rbp at cfa - 2048 */
        0x41, 0x10, 6, 1, 0x9c,                /* +2: rbp by expression */
    };
    fde(&b, c, 0x1400, 0x10, far, sizeof far);
    /* 0x1500: unknown opcode: rejected. */
    static const uint8_t bad[] = { 0x41, 0x3f };
    fde(&b, c, 0x1500, 0x10, bad, sizeof bad);
    /* Discarded by the linker: begin 0. */
    fde(&b, c, 0, 0x10, NULL, 0);

    t = build(&b, &st, &rc);
    if (!tap_ok(rc == 0 && t, "table built (rc %d)", rc))
        return;
    tap_ok(st.fdes == 5 && st.rejected == 1, "5 FDEs kept, 1 rejected (%zu, %zu)",
           st.fdes, st.rejected);
    tap_ok(is(row_at(t, 0x1000), RECS_UW_SP, 8, -8, 0) &&
           (row_at(t, 0x1000)->flags & RECS_UW_FUNC),
           "entry: CFA = sp + 8, ra at CFA - 8, function start");
    tap_ok(is(row_at(t, 0x1002), RECS_UW_SP | RECS_UW_FP_SAVED, 16, -8, -16),
           "after push rbp: CFA = sp + 16, rbp saved at CFA - 16");
    tap_ok(is(row_at(t, 0x1004), RECS_UW_FP | RECS_UW_FP_SAVED, 16, -8, -16),
           "body: CFA = rbp + 16");
    tap_ok(is(row_at(t, 0x1034), RECS_UW_SP | RECS_UW_FP_SAVED, 8, -8, -16),
           "epilogue: CFA = sp + 8");
    tap_ok(is(row_at(t, 0x1040), RECS_UW_NONE | RECS_UW_GAP, 0, 0, 0),
           "gap after the FDE: no CFI");
    tap_ok(is(row_at(t, 0x1105), RECS_UW_SP, 24, -8, 0) &&
           is(row_at(t, 0x1108), RECS_UW_SP, 8, -8, 0) &&
           is(row_at(t, 0x1109), RECS_UW_SP, 32, -8, 0),
           "remember_state / restore_state, def_cfa_offset_sf");
    tap_ok(row_at(t, 0x1200) && (row_at(t, 0x1200)->flags & RECS_UW_OUTER),
           "undefined return address: outermost");
    tap_ok(is(row_at(t, 0x1300), RECS_UW_NONE, 0, 0, 0) &&
           is(row_at(t, 0x1308), RECS_UW_NONE, 0, 0, 0) &&
           st.fallback_rows >= 2,
           "CFA expression and ra in a register: frame-pointer fallback");
    tap_ok(is(row_at(t, 0x1401), RECS_UW_SP | RECS_UW_FP_SAVED, 4112, -8, -2048) &&
           is(row_at(t, 0x1403), RECS_UW_SP | RECS_UW_FP_LOST, 4112, -8, 0),
           "large offsets kept; rbp by expression: fp unknown");
    tap_ok(is(row_at(t, 0x1500), RECS_UW_NONE | RECS_UW_GAP, 0, 0, 0),
           "rejected FDE leaves no rows");
    tap_ok(recs__uw_func_start(t, 0x1030, &fs) && fs == 0x1000 &&
           recs__uw_func_start(t, 0x110a, &fs) && fs == 0x1100 &&
           !recs__uw_func_start(t, 0x1050, &fs),
           "function starts from the FDEs");
    tap_ok(row_at(t, 0xfff) == NULL && row_at(t, 0x100000) &&
           (row_at(t, 0x100000)->flags & RECS_UW_GAP),
           "outside the table: no row, or the final gap");
    free(t);
}

static void test_signal_and_dialects(void)
{
    struct buf b = { .n = 0 };
    recs_uw_build_stats st;
    recs_uw_table *t;
    size_t c;
    int rc;

    c = cie(&b, true, 1);
    static const uint8_t sig[] = { 0x0f, 2, 0x77, 0x00 };
    fde(&b, c, 0x2000, 0x10, sig, sizeof sig);
    c = cie(&b, false, 3);
    fde(&b, c, 0x2100, 0x10, NULL, 0);
    c = cie(&b, false, 2);               /* unknown version: rejected */
    fde(&b, c, 0x2200, 0x10, NULL, 0);
    t = build(&b, &st, &rc);
    if (!tap_ok(rc == 0 && t, "signal CIE table built"))
        return;
    tap_ok(row_at(t, 0x2005) &&
           (row_at(t, 0x2005)->flags & RECS_UW_KIND) == RECS_UW_SIGNAL,
           "'S' augmentation: signal trampoline rows");
    tap_ok(is(row_at(t, 0x2100), RECS_UW_SP, 8, -8, 0), "CIE version 3");
    tap_ok(st.rejected == 1, "CIE version 2 rejected");
    free(t);

    /* .debug_frame: CIE id 0xffffffff, absolute addresses, version 4. */
    struct buf d = { .n = 0 };
    u32(&d, 0); size_t cl = d.n;
    u32(&d, 0xffffffffu); u8(&d, 4); u8(&d, 0); u8(&d, 8); u8(&d, 0);
    uleb(&d, 1); sleb(&d, -8); uleb(&d, 16);
    u8(&d, 0x0c); uleb(&d, 7); uleb(&d, 8); u8(&d, 0x80 | 16); uleb(&d, 1);
    while ((d.n - cl) % 8) u8(&d, 0);
    uint32_t len = (uint32_t)(d.n - cl);
    memcpy(d.b, &len, 4);
    size_t fl_at = d.n;
    u32(&d, 0); size_t fl = d.n;
    u32(&d, 0);                          /* CIE at offset 0 */
    u64(&d, 0x3000); u64(&d, 0x20);
    u8(&d, 0x44); u8(&d, 0x0e); uleb(&d, 48);
    while ((d.n - fl) % 8) u8(&d, 0);
    len = (uint32_t)(d.n - fl);
    memcpy(d.b + fl_at, &len, 4);
    recs_uw_source src = { NULL, 0, 0, d.b, d.n };
    rc = recs__uw_build(&src, &t, &st);
    tap_ok(rc == 0 && t && is(recs__uw_lookup(t, 0x3005), RECS_UW_SP, 48, -8, 0),
           ".debug_frame (version 4, absolute addresses)");
    free(t);

    /* Both sections: .debug_frame only fills what .eh_frame leaves out
     * (here 0x4000, while 0x3000 keeps the .eh_frame rule). */
    fl_at = d.n;
    u32(&d, 0); fl = d.n;
    u32(&d, 0);
    u64(&d, 0x4000); u64(&d, 0x20);
    u8(&d, 0x44); u8(&d, 0x0e); uleb(&d, 48);
    while ((d.n - fl) % 8) u8(&d, 0);
    len = (uint32_t)(d.n - fl);
    memcpy(d.b + fl_at, &len, 4);
    struct buf e = { .n = 0 };
    c = cie(&e, false, 1);
    static const uint8_t e16[] = { 0x0e, 16 };
    fde(&e, c, 0x3000, 0x20, e16, sizeof e16);
    u32(&e, 0);
    recs_uw_source both = { e.b, e.n, EH_VADDR, d.b, d.n };
    rc = recs__uw_build(&both, &t, &st);
    tap_ok(rc == 0 && t && st.fdes == 2 &&
           is(recs__uw_lookup(t, 0x3005), RECS_UW_SP, 16, -8, 0) &&
           is(recs__uw_lookup(t, 0x4005), RECS_UW_SP, 48, -8, 0),
           ".eh_frame and .debug_frame: .debug_frame only where .eh_frame "
           "has no FDE (%zu FDEs)", st.fdes);
    free(t);

    /* Garbage: a length running past the end, then nothing. */
    struct buf g = { .n = 0 };
    u32(&g, 0x7fffffff); u32(&g, 0);
    recs_uw_source gs = { g.b, g.n, EH_VADDR, NULL, 0 };
    t = (recs_uw_table *)1;
    rc = recs__uw_build(&gs, &t, &st);
    tap_ok(rc == REC_ENOTFOUND && t == NULL, "truncated section: no table, no crash");
}

/* The page index gives the same rows as a plain scan, across pages. */
static void test_pages(void)
{
    struct buf b = { .n = 0 };
    recs_uw_build_stats st;
    recs_uw_table *t;
    size_t c;
    int rc, bad = 0;
    static const uint8_t fpfn[] = { 0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6 };

    c = cie(&b, false, 1);
    fde(&b, c, 0x1000, 0x40, fpfn, sizeof fpfn);
    fde(&b, c, 0x2ff8, 0x2010, fpfn, sizeof fpfn);   /* spans pages */
    fde(&b, c, 0x9100, 0x10, fpfn, sizeof fpfn);
    t = build(&b, &st, &rc);
    if (!tap_ok(rc == 0 && t && t->npages >= 8, "table over several pages"))
        return;
    for (uint64_t a = 0x1000; a < 0xa000; a++) {
        const recs_uw_row *want = NULL;
        for (size_t i = 0; i < t->nrows; i++)
            if (t->base + t->rows[i].start <= a)
                want = &t->rows[i];
        if (recs__uw_lookup(t, a) != want)
            bad++;
    }
    tap_ok(bad == 0, "page-indexed lookup equals a linear scan (%d differ)", bad);
    free(t);
}

/* ---- walker on a synthetic stack ---- */


/* A set of one module with one segment [lo, hi) (free() it). */
static _Atomic unsigned char want_flag;
static uint64_t one_serial = 1;
static recs_uw_set *one_seg_set(uint64_t lo, uint64_t hi, uint64_t bias,
                                const recs_uw_table *t)
{
    recs_uw_set *set = calloc(1, sizeof *set + sizeof set->segs[0]);

    if (!set)
        abort();
    set->n = set->nmods = 1;
    set->want = &want_flag;
    set->serial = &one_serial;
    set->segs[0].lo = lo;
    set->segs[0].hi = hi;
    set->segs[0].bias = bias;
    set->segs[0].tab = t;
    return set;
}

static void test_walk(void)
{
    struct buf b = { .n = 0 };
    recs_uw_build_stats st;
    recs_uw_table *t;
    size_t c;
    int rc;
    static uint64_t stack[512] __attribute__((aligned(16)));
    uint64_t lo = (uintptr_t)stack, hi = lo + sizeof stack;
    uint64_t out[16];
    bool trunc, root, early;
    unsigned n;

    c = cie(&b, false, 1);
    static const uint8_t fpfn[] = { 0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6,
                                    0x70, 0x0c, 7, 8 };
    fde(&b, c, 0x1000, 0x100, fpfn, sizeof fpfn);     /* A: frame pointer */
    static const uint8_t leaf[] = { 0x0e, 40 };
    fde(&b, c, 0x1100, 0x100, leaf, sizeof leaf);     /* B: sp + 40 */
    static const uint8_t outer[] = { 0x07, 16 };
    fde(&b, c, 0x1200, 0x100, outer, sizeof outer);   /* C: outermost */
    c = cie(&b, true, 1);
    fde(&b, c, 0x1300, 0x10, NULL, 0);                /* D: trampoline */
    t = build(&b, &st, &rc);
    if (!tap_ok(rc == 0 && t, "walk table built"))
        return;

    /* One module at bias 0x400000: code 0x401000..0x402000. */
    const uint64_t bias = 0x400000;
    recs_uw_set *set = one_seg_set(bias + 0x1000, bias + 0x2000, bias, t);

    /* Interrupted in B (leaf, CFA = sp + 40) called from A (rbp frame)
     * called from C (outermost). sp = &stack[10]. */
    uint64_t sp = (uintptr_t)&stack[10];
    memset(stack, 0, sizeof stack);
    stack[10 + 4] = bias + 0x1030;               /* B's ra -> A */
    /* A's frame: CFA = rbp + 16; rbp = &stack[30]; [rbp] = saved rbp,
     * [rbp + 8] = ra -> C. */
    uint64_t rbp = (uintptr_t)&stack[30];
    stack[30] = 0x1234;                          /* C's rbp (not a pointer) */
    stack[31] = bias + 0x1210;                   /* ra -> C */
    n = walk3(set, bias + 0x1120, sp, rbp, 0, sp, hi, out, 16, &trunc,
                      &root, &early);
    tap_ok(n == 2 && out[0] == bias + 0x1030 && out[1] == bias + 0x1210 &&
           root && !trunc, "leaf (sp rule) -> fp frame -> outermost (%u frames)", n);

    n = walk3(set, bias + 0x1120, sp, rbp, 0, sp, hi, out, 1, &trunc,
                      &root, &early);
    tap_ok(n == 1 && trunc && !root, "depth limit: truncated");

    /* In A's epilogue after pop rbp (0x1034: CFA = sp + 8, the rbp rule
     * still says CFA - 16, a slot below sp now): rbp is taken as is. */
    {
        uint64_t esp = (uintptr_t)&stack[40];
        stack[40] = bias + 0x1210;               /* ra -> C */
        n = walk3(set, bias + 0x1034, esp, 0x5555, 0, lo + 8 * 39, hi,
                          out, 16, &trunc, &root, &early);
        tap_ok(n == 1 && out[0] == bias + 0x1210 && root,
               "epilogue: a popped rbp slot below sp is not read (%u)", n);
    }

    /* A corrupt sp: outside the stack. */
    n = walk3(set, bias + 0x1120, hi + 4096, rbp, 0, hi + 4096, hi,
                      out, 16, &trunc, &root, &early);
    tap_ok(n == 0 && !trunc && !root && last_stop == RECS_STOP_STACK_BOUND,
           "sp outside the stack: no frame, no read, stack-bound");
    n = walk3(set, bias + 0x1120, (uint64_t)-64, rbp, 0, lo, hi,
                      out, 16, &trunc, &root, &early);
    tap_ok(n == 0, "sp near the top of the address space: no frame");

    /* A return address outside known code ends the walk. */
    stack[10 + 4] = (uintptr_t)&stack[100];
    n = walk3(set, bias + 0x1120, sp, rbp, 0, sp, hi, out, 16, &trunc,
                      &root, &early);
    tap_ok(n == 0 && last_stop == RECS_STOP_UNKNOWN_CODE,
           "stack address as return address: rejected, unknown-code");

    /* Frame-pointer chain that loops back down: stops. */
    stack[10 + 4] = bias + 0x1030;
    stack[31] = bias + 0x1030;                   /* A calls A ... */
    stack[30] = (uintptr_t)&stack[20];           /* ... with rbp going down */
    n = walk3(set, bias + 0x1120, sp, rbp, 0, sp, hi, out, 16, &trunc,
                      &root, &early);
    tap_ok(n <= 3 && last_stop == RECS_STOP_BAD_CFA,
           "descending frame pointer: walk ends, bad-cfa (%u)", n);

    /* Signal trampoline: A's ra is the trampoline D; the ucontext sits
     * at the CFA (D's sp), its rip in B and its rsp/rbp higher up. */
    memset(stack, 0, sizeof stack);
    stack[10 + 4] = bias + 0x1030;               /* B -> A */
    stack[30] = 0;
    stack[31] = bias + 0x1301;                   /* A -> trampoline */
    ucontext_t *uc = (ucontext_t *)&stack[32];
    uint64_t sp2 = (uintptr_t)&stack[400];
    uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(bias + 0x1110);
    uc->uc_mcontext.gregs[REG_RSP] = (greg_t)sp2;
    uc->uc_mcontext.gregs[REG_RBP] = 0;
    stack[400 + 4] = bias + 0x1210;              /* B (sp + 40) -> C */
    n = walk3(set, bias + 0x1120, sp, rbp, 0, sp, hi, out, 16, &trunc,
                      &root, &early);
    tap_ok(n == 4 && out[1] == bias + 0x1301 && out[2] == bias + 0x1111 &&
           out[3] == bias + 0x1210 && root,
           "signal trampoline crossed: interrupted pc recorded as pc + 1 (%u)", n);
    /* The ucontext beyond the stack: the walk stops there. */
    n = walk3(set, bias + 0x1120, sp, rbp, 0, sp,
                      (uintptr_t)&stack[33], out, 16, &trunc, &root, &early);
    tap_ok(n <= 2 && last_stop == RECS_STOP_STACK_BOUND,
           "ucontext out of bounds: stops, stack-bound (%u)", n);

    /* keep_code drops the first non-code address and what follows. */
    uint64_t fr[3] = { bias + 0x1030, (uintptr_t)stack, bias + 0x1210 };
    tap_ok(recs__uw_keep_code(set, fr, 3) == 1, "keep_code stops at a stack address");

    /* Its table not built yet: the walk asks for it and ends there. */
    tap_ok(!early && !atomic_load(&want_flag), "a built table: no early walk");
    set->segs[0].tab = NULL;
    set->segs[0].pending = 1;
    n = walk3(set, bias + 0x1120, sp, rbp, 0, sp, hi, out, 16, &trunc,
                      &root, &early);
    tap_ok(n == 0 && early && atomic_load(&want_flag) && !root,
           "table pending: the walk ends, the module is wanted (%u frames)", n);
    atomic_store(&want_flag, 0);
    free(set);
    free(t);
}

/* The dynamic linker's lazy-binding trampoline realigns the stack and
 * keeps its CFA in rbx, which the functions it calls save and restore. */
static void test_walk_bx(void)
{
    struct buf b = { .n = 0 };
    recs_uw_build_stats st;
    recs_uw_table *t;
    size_t c;
    int rc;
    static uint64_t stack[128] __attribute__((aligned(16)));
    uint64_t hi = (uintptr_t)stack + sizeof stack;
    uint64_t out[16];
    bool trunc, root, early;
    unsigned n;

    c = cie(&b, false, 1);
    /* E: push rbx; mov rbx, rsp (CFA = rbx + 16, rbx at CFA - 16). */
    static const uint8_t tramp[] = { 0x41, 0x0e, 16, 0x83, 2, 0x43, 0x0d, 3 };
    fde(&b, c, 0x1400, 0x100, tramp, sizeof tramp);
    /* F: push rbx (CFA = rsp + 16, rbx at CFA - 16), then rbx is scratch. */
    static const uint8_t savebx[] = { 0x41, 0x0e, 16, 0x83, 2 };
    fde(&b, c, 0x1500, 0x100, savebx, sizeof savebx);
    static const uint8_t outer[] = { 0x07, 16 };
    fde(&b, c, 0x1200, 0x100, outer, sizeof outer);   /* C: outermost */
    t = build(&b, &st, &rc);
    if (!tap_ok(rc == 0 && t, "rbx table built"))
        return;
    const recs_uw_row *r = row_at(t, 0x1410);
    tap_ok(r && (r->flags & RECS_UW_KIND) == RECS_UW_SP && r->cfa_bx &&
           r->cfa_off == 16 && (r->flags & RECS_UW_BX_SAVED) && r->bx_off == -2,
           "CFA = rbx + 16, rbx at CFA - 16: kept");
    r = row_at(t, 0x1510);
    tap_ok(r && !r->cfa_bx && r->cfa_off == 16 &&
           (r->flags & RECS_UW_BX_SAVED) && r->bx_off == -2,
           "CFA = rsp + 16, rbx saved at CFA - 16: kept");

    const uint64_t bias = 0x400000;
    recs_uw_set *set = one_seg_set(bias + 0x1000, bias + 0x2000, bias, t);

    /* Interrupted in F (sp = &stack[10]) called from E, whose rbx F saved
     * at stack[10]; E's CFA = rbx + 16 = &stack[52], far above F's frame
     * (the realignment gap), its ra -> C. */
    memset(stack, 0, sizeof stack);
    uint64_t sp = (uintptr_t)&stack[10], ebx = (uintptr_t)&stack[50];
    stack[10] = ebx;
    stack[11] = bias + 0x1430;                   /* F -> E */
    stack[50] = 0x77;                            /* E's caller's rbx */
    stack[51] = bias + 0x1210;                   /* E -> C */
    n = walk3(set, bias + 0x1510, sp, 0x5555, 0x9999, sp, hi, out, 16,
                      &trunc, &root, &early);
    tap_ok(n == 2 && out[0] == bias + 0x1430 && out[1] == bias + 0x1210 &&
           root, "rbx restored from the callee's save, CFA = rbx + 16 (%u)", n);
    n = walk3(set, bias + 0x1410, (uintptr_t)&stack[20], 0x5555, ebx,
                      (uintptr_t)&stack[20], hi, out, 16, &trunc, &root, &early);
    tap_ok(n == 1 && out[0] == bias + 0x1210 && root,
           "interrupted in the trampoline: rbx from the registers (%u)", n);
    /* rbx pointing outside the stack: no read, the walk stops. */
    stack[10] = hi + 4096;
    n = walk3(set, bias + 0x1510, sp, 0x5555, 0x9999, sp, hi, out, 16,
                      &trunc, &root, &early);
    tap_ok(n == 1 && !root, "rbx outside the stack: stops after E (%u)", n);
    free(set);
    free(t);
}

/* binutils' lazy PLT: plt0 (push; jmp), then 16-byte entries whose CFA
 * is rsp + 8 before their push (byte 11) and rsp + 16 after. */
static void test_plt(void)
{
    struct buf b = { .n = 0 };
    recs_uw_build_stats st;
    recs_uw_table *t;
    size_t c;
    int rc;
    static const uint8_t plt[] = {
        0x0e, 16, 0x46, 0x0e, 24, 0x4a,
        0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22,
    };

    c = cie(&b, false, 1);
    fde(&b, c, 0x2000, 0x40, plt, sizeof plt);
    t = build(&b, &st, &rc);
    if (!tap_ok(rc == 0 && t, "PLT table built"))
        return;
    tap_ok(is(row_at(t, 0x2000), RECS_UW_SP, 16, -8, 0) &&
           is(row_at(t, 0x2008), RECS_UW_SP, 24, -8, 0),
           "plt0: CFA = sp + 16, then sp + 24");
    bool good = true;
    for (uint64_t a = 0x2010; a < 0x2040; a++)
        good = good && is(row_at(t, a), RECS_UW_SP, (a & 15) < 11 ? 8 : 16,
                          -8, 0);
    tap_ok(good, "entries: CFA = sp + 8 before the push, sp + 16 after");
    tap_ok(st.fallback_rows == 0, "no frame-pointer fallback row (%zu)",
           st.fallback_rows);
    free(t);
}

int main(void)
{
    test_rules();
    test_signal_and_dialects();
    test_pages();
    test_walk();
    test_walk_bx();
    test_plt();
    return tap_done();
}
