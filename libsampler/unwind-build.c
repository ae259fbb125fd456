/*
 * libsampler/unwind-build.c - call-frame information (.eh_frame,
 * .debug_frame) -> the compact unwind table of unwind.h.
 *
 * Runs outside the signal handler, on bytes the caller mapped or read. Our
 * own parser rather than libdw's dwarf_cfi_addrframe: building a table
 * needs every row of every FDE once, which the per-address libdw call
 * would recompute row by row, allocating each time. Every read is bounds
 * checked: a malformed entry is skipped (counted in rejected), never
 * trusted.
 */
#include <config.h>

#include "unwind.h"
#include <rec/record.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* DWARF register numbers (x86-64 psABI): rbx, rbp, rsp. */
#define DW_BX 3
#define DW_FP 6
#define DW_SP 7
#define STATE_STACK 8            /* DW_CFA_remember_state nesting kept */

enum rule { R_SAME, R_UNDEF, R_OFFSET, R_OTHER };

struct regrule {
    enum rule kind;
    int64_t off;
};

/* cfa_reg of the PLT's expression: CFA = rsp + 8, + 8 more from byte
 * plt_split of each 16-byte entry on (after its push). */
#define CFA_PLT (-2)

struct state {
    int cfa_reg;                 /* -1: expression, CFA_PLT */
    int plt_split;
    int64_t cfa_off;
    struct regrule fp, ra, bx;
};

struct cie {
    uint64_t code_align;
    int64_t data_align;
    unsigned ra_reg;
    uint8_t fde_enc;
    bool signal;
    const uint8_t *insns, *insns_end;
};

struct reader {
    const uint8_t *p, *end;
    bool bad;
};

struct rows {
    recs_uw_row *v;
    size_t n, cap;
    uint64_t *addr;              /* absolute start of each row (pre-base) */
    uint32_t *seq;
    bool nomem;
    /* [begin, end) of the .eh_frame FDEs, sorted once .debug_frame is
     * read: its FDEs only fill the gaps (a module may have both for the
     * same code; .eh_frame is what the program's own unwinder uses). */
    uint64_t (*eh)[2];
    size_t neh, capeh;
};

static void eh_range(struct rows *rs, uint64_t begin, uint64_t end)
{
    if (rs->neh == rs->capeh) {
        size_t cap = rs->capeh ? rs->capeh * 2 : 256;
        uint64_t (*v)[2] = realloc(rs->eh, cap * sizeof *v);
        if (!v) {
            rs->nomem = true;
            return;
        }
        rs->eh = v;
        rs->capeh = cap;
    }
    rs->eh[rs->neh][0] = begin;
    rs->eh[rs->neh][1] = end;
    rs->neh++;
}

static int cmp_range(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* True if [begin, end) overlaps an .eh_frame FDE (ranges sorted). */
static bool eh_covers(const struct rows *rs, uint64_t begin, uint64_t end)
{
    size_t lo = 0, hi = rs->neh;

    while (lo < hi) {                /* first range starting at >= end */
        size_t mid = lo + (hi - lo) / 2;
        if (rs->eh[mid][0] < end)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Ranges may nest or overlap: look back over those that start
     * before end (FDEs are few per address, the scan stays short). */
    for (size_t i = lo; i-- > 0;)
        if (rs->eh[i][1] > begin)
            return true;
        else if (lo - i > 64)
            break;
    return false;
}

static uint64_t rd_u(struct reader *r, unsigned n)
{
    uint64_t v = 0;

    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = true;
        return 0;
    }
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += n;
    return v;
}

static uint64_t rd_uleb(struct reader *r)
{
    uint64_t v = 0;
    unsigned shift = 0;

    while (!r->bad) {
        if (r->p >= r->end) {
            r->bad = true;
            break;
        }
        uint8_t b = *r->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            break;
    }
    return v;
}

static int64_t rd_sleb(struct reader *r)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0;

    while (!r->bad) {
        if (r->p >= r->end) {
            r->bad = true;
            return 0;
        }
        b = *r->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80))
            break;
    }
    if (shift < 64 && (b & 0x40))
        v |= ~0ull << shift;
    return (int64_t)v;
}

/* An encoded pointer (DW_EH_PE_*). vaddr_of_p: the ELF address of r->p
 * (pc-relative encodings); datarel/textrel/indirect are rejected. */
static uint64_t rd_ptr(struct reader *r, uint8_t enc, uint64_t vaddr_of_p)
{
    uint64_t v;

    if (enc == 0xff)
        return 0;
    switch (enc & 0x0f) {
    case 0x00: v = rd_u(r, 8); break;
    case 0x01: v = rd_uleb(r); break;
    case 0x02: v = rd_u(r, 2); break;
    case 0x03: v = rd_u(r, 4); break;
    case 0x04: v = rd_u(r, 8); break;
    case 0x09: v = (uint64_t)rd_sleb(r); break;
    case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_u(r, 2); break;
    case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_u(r, 4); break;
    case 0x0c: v = rd_u(r, 8); break;
    default: r->bad = true; return 0;
    }
    switch (enc & 0x70) {
    case 0x00: break;
    case 0x10: v += vaddr_of_p; break;
    default: r->bad = true; return 0;
    }
    if (enc & 0x80)
        r->bad = true;
    return v;
}

/* Parse the CIE at [p, end). eh: .eh_frame dialect. */
static bool parse_cie(const uint8_t *p, const uint8_t *end, bool eh,
                      const uint8_t *sec, uint64_t sec_vaddr, struct cie *c)
{
    struct reader r = { p, end, false };
    const char *aug;
    unsigned version;
    bool z = false;

    memset(c, 0, sizeof *c);
    c->fde_enc = 0;                 /* absptr */
    version = (unsigned)rd_u(&r, 1);
    if (r.bad || (version != 1 && version != 3 && version != 4))
        return false;
    aug = (const char *)r.p;
    while (r.p < r.end && *r.p)
        r.p++;
    if (r.p >= r.end)
        return false;
    r.p++;
    if (version == 4) {
        unsigned asize = (unsigned)rd_u(&r, 1);
        rd_u(&r, 1);                 /* segment selector size */
        if (asize != 8)
            return false;
    }
    c->code_align = rd_uleb(&r);
    c->data_align = rd_sleb(&r);
    c->ra_reg = version == 1 ? (unsigned)rd_u(&r, 1) : (unsigned)rd_uleb(&r);
    if (aug[0] == 'z') {
        uint64_t len = rd_uleb(&r);
        const uint8_t *data_end;
        if (r.bad || len > (uint64_t)(r.end - r.p))
            return false;
        data_end = r.p + len;
        z = true;
        for (const char *a = aug + 1; *a && !r.bad; a++) {
            if (*a == 'L') {
                rd_u(&r, 1);
            } else if (*a == 'P') {
                uint8_t penc = (uint8_t)rd_u(&r, 1);
                /* Only its size matters: strip what rd_ptr rejects. */
                rd_ptr(&r, penc & 0x0f, 0);
            } else if (*a == 'R') {
                c->fde_enc = (uint8_t)rd_u(&r, 1);
            } else if (*a == 'S') {
                c->signal = true;
            } else {
                break;               /* unknown: the length skips it */
            }
        }
        if (r.bad)
            return false;
        r.p = data_end;
    } else if (aug[0] != '\0') {
        return false;                /* "eh" and other ancient dialects */
    }
    (void)z;
    if (!eh)
        c->fde_enc = 0;
    (void)sec;
    (void)sec_vaddr;
    if (r.bad || c->code_align == 0)
        return false;
    c->insns = r.p;
    c->insns_end = end;
    return true;
}

static void rows_push(struct rows *rs, uint64_t addr, const recs_uw_row *row,
                      uint32_t seq)
{
    if (rs->nomem)
        return;
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? rs->cap * 2 : 1024;
        recs_uw_row *v = realloc(rs->v, cap * sizeof *v);
        uint64_t *a = v ? realloc(rs->addr, cap * sizeof *a) : NULL;
        uint32_t *s = a ? realloc(rs->seq, cap * sizeof *s) : NULL;
        if (v)
            rs->v = v;
        if (a)
            rs->addr = a;
        if (!s) {
            rs->nomem = true;
            return;
        }
        rs->seq = s;
        rs->cap = cap;
    }
    rs->v[rs->n] = *row;
    rs->addr[rs->n] = addr;
    rs->seq[rs->n] = seq;
    rs->n++;
}

/* The row for state s (start filled later). */
static recs_uw_row make_row(const struct state *s, bool signal,
                            recs_uw_build_stats *st)
{
    recs_uw_row row;
    unsigned kind;

    memset(&row, 0, sizeof row);
    if (signal) {
        row.flags = RECS_UW_SIGNAL;
        return row;
    }
    if (s->ra.kind == R_UNDEF) {
        row.flags = RECS_UW_NONE | RECS_UW_OUTER;
        return row;
    }
    if (s->cfa_reg == DW_SP || s->cfa_reg == DW_BX)
        kind = RECS_UW_SP;
    else if (s->cfa_reg == DW_FP)
        kind = RECS_UW_FP;
    else
        kind = RECS_UW_NONE;
    if (kind != RECS_UW_NONE &&
        (s->cfa_off < -RECS_UW_CFA_MAX || s->cfa_off > RECS_UW_CFA_MAX ||
         s->ra.kind != R_OFFSET || s->ra.off < INT8_MIN ||
         s->ra.off > INT8_MAX))
        kind = RECS_UW_NONE;
    row.flags = (uint8_t)kind;
    if (kind == RECS_UW_NONE) {
        if (st)
            st->fallback_rows++;
        return row;
    }
    /* Bit-fields: the ranges were checked above (and below for bx). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
    row.cfa_off = (int32_t)s->cfa_off;
#pragma GCC diagnostic pop
    row.cfa_bx = s->cfa_reg == DW_BX;
    row.ra_off = (int8_t)s->ra.off;
    if (s->bx.kind == R_OFFSET && s->bx.off % 8 == 0 && s->bx.off != 0 &&
        s->bx.off >= -128 * 8 && s->bx.off <= 127 * 8) {
        row.flags |= RECS_UW_BX_SAVED;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
        row.bx_off = (int32_t)(s->bx.off / 8);
#pragma GCC diagnostic pop
    } else if (s->bx.kind != R_SAME) {
        row.flags |= RECS_UW_BX_SAVED;      /* bx_off 0: unknown */
    }
    if (s->fp.kind == R_OFFSET && s->fp.off >= INT16_MIN &&
        s->fp.off <= INT16_MAX) {
        row.flags |= RECS_UW_FP_SAVED;
        row.fp_off = (int16_t)s->fp.off;
    } else if (s->fp.kind != R_SAME) {
        row.flags |= RECS_UW_FP_LOST;
    }
    return row;
}

static void set_reg(struct state *s, uint64_t reg, enum rule kind, int64_t off,
                    unsigned ra_reg)
{
    struct regrule *rr = reg == DW_FP ? &s->fp : reg == DW_BX ? &s->bx
                       : reg == ra_reg ? &s->ra : NULL;
    if (rr) {
        rr->kind = kind;
        rr->off = off;
    }
}

/* Rows for [from, to) in state s: one, or two per 16-byte PLT entry. */
static void push_range(struct rows *rs, const struct state *s, bool signal,
                       uint64_t from, uint64_t to, bool *first, uint32_t seq,
                       recs_uw_build_stats *st)
{
    recs_uw_row row;

    if (s->cfa_reg != CFA_PLT) {
        row = make_row(s, signal, st);
        if (*first)
            row.flags |= RECS_UW_FUNC;
        *first = false;
        rows_push(rs, from, &row, seq);
        return;
    }
    struct state e = *s;
    e.cfa_reg = DW_SP;
    for (uint64_t a = from; a < to && !rs->nomem;) {
        uint64_t entry = a & ~(uint64_t)15, split = entry + (uint64_t)s->plt_split;
        e.cfa_off = a < split ? 8 : 16;
        row = make_row(&e, signal, st);
        if (*first)
            row.flags |= RECS_UW_FUNC;
        *first = false;
        rows_push(rs, a, &row, seq);
        a = a < split ? split : entry + 16;
    }
}

/* The expression binutils gives the lazy PLT, CFA = rsp + 8 + ((rip & 15)
 * >= N) << 3: N, or 0 for any other expression. */
static int plt_expression(const uint8_t *p, uint64_t len)
{
    static const uint8_t head[] = { 0x77, 8, 0x80, 0, 0x3f, 0x1a };
    static const uint8_t tail[] = { 0x2a, 0x33, 0x24, 0x22 };

    if (len != sizeof head + 1 + sizeof tail || memcmp(p, head, sizeof head) ||
        memcmp(p + sizeof head + 1, tail, sizeof tail))
        return 0;
    uint8_t lit = p[sizeof head];
    return lit > 0x30 && lit < 0x30 + 16 ? lit - 0x30 : 0;
}

/* DW_CFA_restore: reg's rule as the CIE's initial instructions left it. */
static void restore_reg(struct state *s, const struct state *init,
                        uint64_t reg, unsigned ra_reg)
{
    const struct regrule *rr = reg == DW_FP ? &init->fp
                             : reg == DW_BX ? &init->bx : &init->ra;
    set_reg(s, reg, rr->kind, rr->off, ra_reg);
}

/* Run a CFA program. With rs == NULL (the CIE's initial instructions) only
 * the state changes; otherwise a row is pushed for every address range.
 * Returns false on a malformed program. */
static bool run_program(const uint8_t *p, const uint8_t *end,
                        const struct cie *c, struct state *s,
                        const struct state *init, uint64_t *loc,
                        uint64_t fde_end, struct rows *rs, uint32_t seq,
                        bool *first, recs_uw_build_stats *st)
{
    struct reader r = { p, end, false };
    struct state stack[STATE_STACK];
    unsigned depth = 0;

    while (r.p < r.end && !r.bad) {
        uint8_t op = *r.p++;
        uint8_t hi = op & 0xc0, low = op & 0x3f;
        uint64_t reg, newloc = *loc;
        int64_t off;

        if (op == 0x01)
            return false;    /* set_loc: hand-written code only; not kept */
        if (hi == 0x40 || op == 0x02 || op == 0x03 || op == 0x04) {
            if (hi == 0x40)
                newloc += low * c->code_align;
            else
                newloc += rd_u(&r, op == 0x02 ? 1 : op == 0x03 ? 2 : 4) *
                          c->code_align;
            if (r.bad)
                break;
            if (newloc > fde_end)
                newloc = fde_end;
            if (rs && newloc > *loc)
                push_range(rs, s, c->signal, *loc, newloc, first, seq, st);
            if (newloc > *loc)
                *loc = newloc;
            continue;
        }
        if (hi == 0x80) {
            off = (int64_t)rd_uleb(&r) * c->data_align;
            set_reg(s, low, R_OFFSET, off, c->ra_reg);
            continue;
        }
        if (hi == 0xc0) {
            if (init)
                restore_reg(s, init, low, c->ra_reg);
            continue;
        }
        switch (op) {
        case 0x00:                                   /* nop */
        case 0x2e:                                   /* GNU_args_size */
            if (op == 0x2e)
                rd_uleb(&r);
            break;
        case 0x05:                                   /* offset_extended */
            reg = rd_uleb(&r);
            off = (int64_t)rd_uleb(&r) * c->data_align;
            set_reg(s, reg, R_OFFSET, off, c->ra_reg);
            break;
        case 0x11:                                   /* offset_extended_sf */
            reg = rd_uleb(&r);
            off = rd_sleb(&r) * c->data_align;
            set_reg(s, reg, R_OFFSET, off, c->ra_reg);
            break;
        case 0x2f:                            /* GNU_negative_offset_ext */
            reg = rd_uleb(&r);
            off = -(int64_t)rd_uleb(&r) * c->data_align;
            set_reg(s, reg, R_OFFSET, off, c->ra_reg);
            break;
        case 0x06:                                   /* restore_extended */
            reg = rd_uleb(&r);
            if (init)
                restore_reg(s, init, reg, c->ra_reg);
            break;
        case 0x07:                                   /* undefined */
            set_reg(s, rd_uleb(&r), R_UNDEF, 0, c->ra_reg);
            break;
        case 0x08:                                   /* same_value */
            set_reg(s, rd_uleb(&r), R_SAME, 0, c->ra_reg);
            break;
        case 0x09:                                   /* register */
            reg = rd_uleb(&r);
            rd_uleb(&r);
            set_reg(s, reg, R_OTHER, 0, c->ra_reg);
            break;
        case 0x0a:                                   /* remember_state */
            if (depth == STATE_STACK)
                return false;
            stack[depth++] = *s;
            break;
        case 0x0b:                                   /* restore_state */
            if (depth == 0)
                return false;
            {
                /* The CFA is not part of the remembered state in the
                 * DWARF text, but every producer (and libgcc) treats it
                 * as such. */
                *s = stack[--depth];
            }
            break;
        case 0x0c:                                   /* def_cfa */
            s->cfa_reg = (int)rd_uleb(&r);
            s->cfa_off = (int64_t)rd_uleb(&r);
            break;
        case 0x12:                                   /* def_cfa_sf */
            s->cfa_reg = (int)rd_uleb(&r);
            s->cfa_off = rd_sleb(&r) * c->data_align;
            break;
        case 0x0d:                                   /* def_cfa_register */
            s->cfa_reg = (int)rd_uleb(&r);
            break;
        case 0x0e:                                   /* def_cfa_offset */
            s->cfa_off = (int64_t)rd_uleb(&r);
            break;
        case 0x13:                                   /* def_cfa_offset_sf */
            s->cfa_off = rd_sleb(&r) * c->data_align;
            break;
        case 0x0f: {                                 /* def_cfa_expression */
            uint64_t len = rd_uleb(&r);
            if (r.bad || len > (uint64_t)(r.end - r.p))
                return false;
            s->plt_split = plt_expression(r.p, len);
            s->cfa_reg = s->plt_split ? CFA_PLT : -1;
            r.p += len;
            break;
        }
        case 0x10:                                   /* expression */
        case 0x16: {                                 /* val_expression */
            uint64_t len;
            reg = rd_uleb(&r);
            len = rd_uleb(&r);
            if (r.bad || len > (uint64_t)(r.end - r.p))
                return false;
            r.p += len;
            set_reg(s, reg, R_OTHER, 0, c->ra_reg);
            break;
        }
        case 0x14:                                   /* val_offset */
            reg = rd_uleb(&r);
            rd_uleb(&r);
            set_reg(s, reg, R_OTHER, 0, c->ra_reg);
            break;
        case 0x15:                                   /* val_offset_sf */
            reg = rd_uleb(&r);
            rd_sleb(&r);
            set_reg(s, reg, R_OTHER, 0, c->ra_reg);
            break;
        default:
            return false;            /* unknown opcode: cannot go on */
        }
    }
    return !r.bad;
}

/* One FDE: rows for [pc_begin, pc_begin + range), and a NONE row at its
 * end (a gap until the next FDE, if any). */
static bool do_fde(const struct cie *c, uint64_t pc_begin, uint64_t range,
                   const uint8_t *insns, const uint8_t *end, struct rows *rs,
                   uint32_t seq, recs_uw_build_stats *st)
{
    struct state s, init;
    uint64_t loc = pc_begin, fde_end = pc_begin + range;
    bool first = true;
    recs_uw_row row;

    memset(&s, 0, sizeof s);
    s.cfa_reg = -1;
    s.fp.kind = R_SAME;
    s.ra.kind = R_SAME;
    if (!run_program(c->insns, c->insns_end, c, &s, NULL, &loc, fde_end,
                     NULL, seq, &first, st))
        return false;
    init = s;
    loc = pc_begin;
    if (!run_program(insns, end, c, &s, &init, &loc, fde_end, rs, seq,
                     &first, st))
        return false;
    if (loc < fde_end)
        push_range(rs, &s, c->signal, loc, fde_end, &first, seq, st);
    memset(&row, 0, sizeof row);
    row.flags = RECS_UW_NONE | RECS_UW_GAP;
    /* After every row of the FDEs that start there (see cmp_rows). */
    rows_push(rs, fde_end, &row, UINT32_MAX);
    return true;
}

/* Walk one section's entries. */
static void do_section(const uint8_t *sec, size_t size, uint64_t vaddr,
                       bool eh, struct rows *rs, uint32_t *seq,
                       recs_uw_build_stats *st)
{
    const uint8_t *p = sec, *end = sec + size;

    while ((size_t)(end - p) >= 4) {
        struct reader r = { p, end, false };
        uint64_t len = rd_u(&r, 4), id;
        const uint8_t *body, *next;
        bool is_cie;

        if (len == 0) {
            if (eh)
                break;                    /* the .eh_frame terminator */
            p = r.p;
            continue;
        }
        if (len == 0xffffffffu) {         /* 64-bit DWARF */
            len = rd_u(&r, 8);
            if (r.bad)
                break;
        }
        if (len > (uint64_t)(end - r.p))
            break;
        next = r.p + len;
        body = r.p;
        r.end = next;
        if (len == 0xffffffffu || (size_t)(next - body) < 4)
            break;
        id = rd_u(&r, 4);
        is_cie = eh ? id == 0 : id == 0xffffffffu;
        if (!is_cie) {
            const uint8_t *cp = eh ? body - id : sec + id;
            struct reader cr = { 0 };
            struct cie c = { 0 };
            uint64_t clen, begin, range;
            bool ok = false;

            if (cp >= sec && cp + 4 <= end) {
                cr = (struct reader){ cp, end, false };
                clen = rd_u(&cr, 4);
                if (clen != 0xffffffffu && clen <= (uint64_t)(end - cr.p) &&
                    clen >= 4) {
                    cr.end = cr.p + clen;
                    uint64_t cid = rd_u(&cr, 4);
                    if ((eh ? cid == 0 : cid == 0xffffffffu) &&
                        parse_cie(cr.p, cr.end, eh, sec, vaddr, &c))
                        ok = true;
                }
            }
            if (ok) {
                begin = rd_ptr(&r, c.fde_enc, vaddr + (uint64_t)(r.p - sec));
                range = rd_ptr(&r, c.fde_enc & 0x0f, 0);
                /* The augmentation data is present when the CIE has 'z'. */
                if (!r.bad && eh) {
                    const char *aug = (const char *)cr.p + 1;
                    if (aug[0] == 'z') {
                        uint64_t alen = rd_uleb(&r);
                        if (r.bad || alen > (uint64_t)(r.end - r.p))
                            r.bad = true;
                        else
                            r.p += alen;
                    }
                }
                if (r.bad) {
                    ok = false;
                } else if (begin == 0 || range == 0 || begin + range < begin) {
                    /* Discarded by the linker (relocated to 0), or empty. */
                } else if (!eh && eh_covers(rs, begin, begin + range)) {
                    /* .eh_frame describes this code already. */
                } else {
                    size_t mark = rs->n;
                    if (do_fde(&c, begin, range, r.p, r.end, rs, (*seq)++,
                               st)) {
                        if (eh)
                            eh_range(rs, begin, begin + range);
                        if (st)
                            st->fdes++;
                    } else {
                        rs->n = mark;        /* none of its rows */
                        ok = false;
                    }
                }
            }
            if (!ok && st)
                st->rejected++;
        }
        p = next;
    }
}

static const uint64_t *sort_addr;
static const uint32_t *sort_seq;

static int cmp_idx(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    if (sort_addr[i] != sort_addr[j])
        return sort_addr[i] < sort_addr[j] ? -1 : 1;
    if (sort_seq[i] != sort_seq[j])
        return sort_seq[i] < sort_seq[j] ? -1 : 1;
    return i < j ? -1 : i > j;
}

static bool same_rule(const recs_uw_row *a, const recs_uw_row *b)
{
    return a->cfa_off == b->cfa_off && a->fp_off == b->fp_off &&
           a->ra_off == b->ra_off && a->cfa_bx == b->cfa_bx &&
           a->bx_off == b->bx_off &&
           (a->flags & ~RECS_UW_FUNC) == (b->flags & ~RECS_UW_FUNC);
}

int recs__uw_build(const recs_uw_source *src, recs_uw_table **out,
                   recs_uw_build_stats *st)
{
    struct rows rs = { 0 };
    uint32_t seq = 0;
    size_t *idx = NULL, n = 0;
    recs_uw_table *t = NULL;
    recs_uw_row *rows;
    uint64_t base, last = 0;
    int rc = REC_ENOMEM;

    *out = NULL;
    if (st)
        memset(st, 0, sizeof *st);
    if (src->eh_frame && src->eh_size)
        do_section(src->eh_frame, src->eh_size, src->eh_vaddr, true, &rs,
                   &seq, st);
    /* .debug_frame after, for the code .eh_frame leaves out. */
    if (src->debug_frame && src->debug_size) {
        if (rs.neh)
            qsort(rs.eh, rs.neh, sizeof *rs.eh, cmp_range);
        do_section(src->debug_frame, src->debug_size, 0, false, &rs, &seq, st);
    }
    if (rs.nomem)
        goto out;
    if (rs.n == 0) {
        rc = REC_ENOTFOUND;
        goto out;
    }
    idx = malloc(rs.n * sizeof *idx);
    if (!idx)
        goto out;
    for (size_t i = 0; i < rs.n; i++)
        idx[i] = i;
    /* Single-threaded use of the comparator's globals: the builder runs
     * under the module lock (unwind-mods.c). */
    sort_addr = rs.addr;
    sort_seq = rs.seq;
    qsort(idx, rs.n, sizeof *idx, cmp_idx);
    base = rs.addr[idx[0]];
    /* Rows, then the page index (sized for the largest offset). */
    uint64_t span = 0;
    for (size_t k = 0; k < rs.n; k++)
        if (rs.addr[k] - base > span && rs.addr[k] - base <= UINT32_MAX)
            span = rs.addr[k] - base;
    size_t npages = (size_t)(span >> RECS_UW_PAGE_SHIFT) + 1;
    size_t rows_bytes = (sizeof *t + rs.n * sizeof *rows + 7) & ~(size_t)7;
    t = malloc(rows_bytes + npages * sizeof(uint32_t));
    if (!t)
        goto out;
    memset(t, 0, sizeof *t);
    rows = (recs_uw_row *)(t + 1);
    t->rows = rows;
    t->base = base;
    for (size_t k = 0; k < rs.n; k++) {
        size_t i = idx[k];
        recs_uw_row row = rs.v[i];
        uint64_t a = rs.addr[i];
        if (a - base > UINT32_MAX)
            break;                        /* code beyond 4 GiB: not covered */
        /* One row per address: the first FDE starting there wins over the
         * end marker of the previous one. */
        if (n && a == last)
            continue;
        if (n && !(row.flags & RECS_UW_FUNC) &&
            same_rule(&rows[n - 1], &row))
            continue;
        row.start = (uint32_t)(a - base);
        rows[n++] = row;
        last = a;
    }
    t->nrows = n;
    /* Compact: the page index moves down to follow the kept rows. */
    size_t kept = (sizeof *t + n * sizeof *rows + 7) & ~(size_t)7;
    uint32_t *pages = (uint32_t *)((char *)t + kept);
    for (size_t p = 0, r = 0; p < npages; p++) {
        uint64_t off = (uint64_t)p << RECS_UW_PAGE_SHIFT;
        while (r + 1 < n && rows[r + 1].start <= off)
            r++;
        pages[p] = (uint32_t)r;
    }
    t->pages = pages;
    t->npages = npages;
    *out = t;
    t = NULL;
    rc = 0;
out:
    free(t);
    free(idx);
    free(rs.v);
    free(rs.addr);
    free(rs.seq);
    free(rs.eh);
    return rc;
}

/* Signal-safe. */
void recs__uw_table_free(recs_uw_table *t)
{
    if (t && t->map)
        munmap(t->map, t->map_len);
    free(t);
}

size_t recs__uw_table_bytes(const recs_uw_table *t)
{
    return t ? t->nrows * sizeof t->rows[0] + t->npages * sizeof t->pages[0]
             : 0;
}

const recs_uw_row *recs__uw_lookup(const recs_uw_table *t, uint64_t vaddr)
{
    size_t lo = 0, hi;
    uint64_t off;

    if (!t || vaddr < t->base || vaddr - t->base > UINT32_MAX || !t->nrows)
        return NULL;
    off = vaddr - t->base;
    hi = t->nrows;
    if ((off >> RECS_UW_PAGE_SHIFT) < t->npages) {
        size_t p = (size_t)(off >> RECS_UW_PAGE_SHIFT);
        lo = t->pages[p];    /* rows[lo].start <= off (or lo == 0) */
        if (p + 1 < t->npages)
            hi = t->pages[p + 1] + 1;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->rows[mid].start <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? &t->rows[lo - 1] : NULL;
}

bool recs__uw_func_start(const recs_uw_table *t, uint64_t vaddr,
                         uint64_t *start)
{
    const recs_uw_row *r = recs__uw_lookup(t, vaddr);

    if (!r || (r->flags & RECS_UW_GAP))
        return false;
    while (r > t->rows && !(r->flags & RECS_UW_FUNC)) {
        r--;
        if (r->flags & RECS_UW_GAP)
            return false;
    }
    if (!(r->flags & RECS_UW_FUNC))
        return false;
    *start = t->base + r->start;
    return true;
}
