/*
 * librecord/cbordec.c - one CBOR item at a time with cbor_stream_decode.
 *
 * libcbor's streaming decoder calls back once per item and never allocates;
 * we copy what the callback saw into a small struct so that callers can
 * write ordinary sequential code. Sizes are checked here, before anyone can
 * act on them.
 */
#include <config.h>

#include "cbordec.h"
#include "rec/record.h"


#define IT(ctx) ((rec__citem *)(ctx))

static void cb_u8(void *c, uint8_t v)   { IT(c)->kind = RCK_UINT; IT(c)->u = v; }
static void cb_u16(void *c, uint16_t v) { IT(c)->kind = RCK_UINT; IT(c)->u = v; }
static void cb_u32(void *c, uint32_t v) { IT(c)->kind = RCK_UINT; IT(c)->u = v; }
static void cb_u64(void *c, uint64_t v) { IT(c)->kind = RCK_UINT; IT(c)->u = v; }
static void cb_n8(void *c, uint8_t v)   { IT(c)->kind = RCK_NEGINT; IT(c)->u = v; }
static void cb_n16(void *c, uint16_t v) { IT(c)->kind = RCK_NEGINT; IT(c)->u = v; }
static void cb_n32(void *c, uint32_t v) { IT(c)->kind = RCK_NEGINT; IT(c)->u = v; }
static void cb_n64(void *c, uint64_t v) { IT(c)->kind = RCK_NEGINT; IT(c)->u = v; }

static void cb_bytes(void *c, cbor_data p, size_t n)
{
    IT(c)->kind = RCK_BYTES;
    IT(c)->p = p;
    IT(c)->len = n;
}

static void cb_text(void *c, cbor_data p, size_t n)
{
    IT(c)->kind = RCK_TEXT;
    IT(c)->p = p;
    IT(c)->len = n;
}

static void cb_array(void *c, size_t n) { IT(c)->kind = RCK_ARRAY; IT(c)->u = n; }
static void cb_map(void *c, size_t n)   { IT(c)->kind = RCK_MAP; IT(c)->u = n; }
static void cb_tag(void *c, uint64_t v) { IT(c)->kind = RCK_TAG; IT(c)->u = v; }
static void cb_indef(void *c)           { IT(c)->kind = RCK_INDEF; }
static void cb_f4(void *c, float v)     { (void)v; IT(c)->kind = RCK_FLOAT; }
static void cb_f8(void *c, double v)    { (void)v; IT(c)->kind = RCK_FLOAT; }
static void cb_null(void *c)            { IT(c)->kind = RCK_NULL; }
static void cb_undef(void *c)           { IT(c)->kind = RCK_UNDEF; }
static void cb_bool(void *c, bool v)    { IT(c)->kind = RCK_BOOL; IT(c)->b = v; }

const struct cbor_callbacks rec__cdec_callbacks = {
    .uint8 = cb_u8, .uint16 = cb_u16, .uint32 = cb_u32, .uint64 = cb_u64,
    .negint8 = cb_n8, .negint16 = cb_n16, .negint32 = cb_n32, .negint64 = cb_n64,
    .byte_string_start = cb_indef, .byte_string = cb_bytes,
    .string = cb_text, .string_start = cb_indef,
    .indef_array_start = cb_indef, .array_start = cb_array,
    .indef_map_start = cb_indef, .map_start = cb_map,
    .tag = cb_tag,
    .float2 = cb_f4, .float4 = cb_f4, .float8 = cb_f8,
    .undefined = cb_undef, .null = cb_null, .boolean = cb_bool,
    .indef_break = cb_indef,
};

/* ---- straight into a rec_value (see rec__vdec_next) ---- */

#define VV(ctx) ((rec_value *)(ctx))

static void vu8(void *c, uint8_t v)   { VV(c)->kind = REC_UINT; VV(c)->v.u = v; }
static void vu16(void *c, uint16_t v) { VV(c)->kind = REC_UINT; VV(c)->v.u = v; }
static void vu32(void *c, uint32_t v) { VV(c)->kind = REC_UINT; VV(c)->v.u = v; }
static void vu64(void *c, uint64_t v) { VV(c)->kind = REC_UINT; VV(c)->v.u = v; }
static void vn8(void *c, uint8_t v)   { VV(c)->kind = REC__K_NEGINT; VV(c)->v.u = v; }
static void vn16(void *c, uint16_t v) { VV(c)->kind = REC__K_NEGINT; VV(c)->v.u = v; }
static void vn32(void *c, uint32_t v) { VV(c)->kind = REC__K_NEGINT; VV(c)->v.u = v; }
static void vn64(void *c, uint64_t v) { VV(c)->kind = REC__K_NEGINT; VV(c)->v.u = v; }
static void vbool(void *c, bool v)    { VV(c)->kind = REC_BOOL; VV(c)->v.b = v; }
static void vnull(void *c)            { VV(c)->kind = REC_NULL; }
static void vother(void *c)           { VV(c)->kind = REC__K_OTHER; }
static void vtag(void *c, uint64_t v) { (void)v; VV(c)->kind = REC__K_OTHER; }
static void vf4(void *c, float v)     { (void)v; VV(c)->kind = REC__K_OTHER; }
static void vf8(void *c, double v)    { (void)v; VV(c)->kind = REC__K_OTHER; }

/* Sizes are checked here, before anyone can act on them. */
static void vtext(void *c, cbor_data p, size_t n)
{
    if (n > REC_MAX_STRING) {
        VV(c)->kind = REC__K_TOOBIG;
        return;
    }
    VV(c)->kind = REC_STRING;
    VV(c)->v.str.s = (const char *)p;
    VV(c)->v.str.len = n;
}

static void vbytes(void *c, cbor_data p, size_t n)
{
    (void)p;
    VV(c)->kind = n > REC_MAX_STRING ? REC__K_TOOBIG : REC__K_OTHER;
}

static void varray(void *c, size_t n)
{
    if (n > REC_MAX_ARRAY) {
        VV(c)->kind = REC__K_TOOBIG;
        return;
    }
    VV(c)->kind = REC__K_ARRAY;
    VV(c)->v.array.items = NULL;
    VV(c)->v.array.n = n;
}

static void vmap(void *c, size_t n)
{
    VV(c)->kind = n > REC_MAX_ARRAY ? REC__K_TOOBIG : REC__K_OTHER;
}

const struct cbor_callbacks rec__vdec_callbacks = {
    .uint8 = vu8, .uint16 = vu16, .uint32 = vu32, .uint64 = vu64,
    .negint8 = vn8, .negint16 = vn16, .negint32 = vn32, .negint64 = vn64,
    .byte_string_start = vother, .byte_string = vbytes,
    .string = vtext, .string_start = vother,
    .indef_array_start = vother, .array_start = varray,
    .indef_map_start = vother, .map_start = vmap,
    .tag = vtag,
    .float2 = vf4, .float4 = vf4, .float8 = vf8,
    .undefined = vother, .null = vnull, .boolean = vbool,
    .indef_break = vother,
};

/* Declared length of a string item whose bytes are not all there, read from
 * its head; UINT64_MAX if the head itself is cut. */
static uint64_t declared_len(const uint8_t *p, size_t n)
{
    unsigned ai = p[0] & 0x1f;
    if (ai < 24)
        return ai;
    size_t w = ai == 24 ? 1 : ai == 25 ? 2 : ai == 26 ? 4 : ai == 27 ? 8 : 0;
    if (w == 0 || n < 1 + w)
        return UINT64_MAX;
    uint64_t v = 0;
    for (size_t i = 0; i < w; i++)
        v = v << 8 | p[1 + i];
    return v;
}

/* The error half of rec__cdec_next(). */
int rec__cdec_fail(const rec__cdec *d, struct cbor_decoder_result r)
{
    const uint8_t *p = d->buf + d->pos;
    size_t n = d->end - d->pos;
    unsigned major = p[0] >> 5;
    if (r.status == CBOR_DECODER_NEDATA && (major == 2 || major == 3)) {
        uint64_t len = declared_len(p, n);
        if (len != UINT64_MAX && len > REC_MAX_STRING)
            return REC_ETOOBIG;
    }
    return REC_ECORRUPT;
}

int rec__vdec_fail(const uint8_t *p, size_t n, struct cbor_decoder_result r)
{
    if (n == 0 || r.status == CBOR_DECODER_FINISHED)
        return REC_ECORRUPT;    /* nothing left, or libcbor read nothing */
    rec__cdec d = { .buf = p, .pos = 0, .end = n };
    return rec__cdec_fail(&d, r);
}

int rec__cdec_skip(rec__cdec *d, unsigned max_depth)
{
    rec__citem it;
    int rc = rec__cdec_next(d, &it);
    if (rc < 0)
        return rc;
    switch (it.kind) {
    case RCK_INDEF:
        return REC_ECORRUPT;
    case RCK_ARRAY:
    case RCK_MAP: {
        if (max_depth == 0)
            return REC_ECORRUPT;
        uint64_t n = it.kind == RCK_MAP ? 2 * it.u : it.u;
        for (uint64_t i = 0; i < n; i++)
            if ((rc = rec__cdec_skip(d, max_depth - 1)) < 0)
                return rc;
        return 0;
    }
    case RCK_TAG:
        if (max_depth == 0)
            return REC_ECORRUPT;
        return rec__cdec_skip(d, max_depth - 1);
    default:
        return 0;
    }
}
