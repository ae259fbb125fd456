/*
 * librecord/cbordec.h - bounded one-item-at-a-time CBOR decoding over a
 * buffer, driven by libcbor's cbor_stream_decode (never cbor_load: file data
 * must not decide what we allocate). Internal to librecord.
 */
#ifndef REC_CBORDEC_H
#define REC_CBORDEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <cbor.h>

#include "format.h"
#include "rec/record.h"

#pragma GCC visibility push(hidden)

enum rec__ckind {
    RCK_UINT,     /* u */
    RCK_NEGINT,   /* value is -1 - u */
    RCK_BYTES,    /* p, len */
    RCK_TEXT,     /* p, len */
    RCK_ARRAY,    /* u = item count (definite) */
    RCK_MAP,      /* u = pair count (definite) */
    RCK_TAG,      /* u */
    RCK_FLOAT,
    RCK_BOOL,     /* b */
    RCK_NULL,
    RCK_UNDEF,
    RCK_INDEF     /* indefinite-length start or break: never valid here */
};

typedef struct rec__citem {
    enum rec__ckind kind;
    bool b;
    uint64_t u;
    const uint8_t *p;
    size_t len;
} rec__citem;

typedef struct rec__cdec {
    const uint8_t *buf;
    size_t pos, end;
} rec__cdec;

static inline void rec__cdec_init(rec__cdec *d, const void *buf, size_t n)
{
    d->buf = buf;
    d->pos = 0;
    d->end = n;
}

static inline bool rec__cdec_done(const rec__cdec *d) { return d->pos >= d->end; }

extern const struct cbor_callbacks rec__cdec_callbacks;
int rec__cdec_fail(const rec__cdec *d, struct cbor_decoder_result r);

/* Decode the next item. Returns 0, REC_ECORRUPT for malformed data or an
 * item that runs past the end of the buffer, REC_ETOOBIG when a string
 * declares more than REC_MAX_STRING bytes or a collection (array or map)
 * more than REC_MAX_ARRAY items. On error d->pos is left at the item's
 * start. Inline: this is the reader's inner loop. */
static inline int rec__cdec_next(rec__cdec *d, rec__citem *it)
{
    if (__builtin_expect(d->pos >= d->end, 0))
        return REC_ECORRUPT;
    struct cbor_decoder_result r = cbor_stream_decode(d->buf + d->pos, d->end - d->pos,
                                                      &rec__cdec_callbacks, it);
    if (__builtin_expect(r.status != CBOR_DECODER_FINISHED || r.read == 0, 0))
        return rec__cdec_fail(d, r);
    if (__builtin_expect(it->kind >= RCK_BYTES && it->kind <= RCK_MAP, 0)) {
        if ((it->kind <= RCK_TEXT ? it->len > REC_MAX_STRING : it->u > REC_MAX_ARRAY))
            return REC_ETOOBIG;
    }
    d->pos += r.read;
    return 0;
}

/* The reader's hot path decodes each item straight into a rec_value: the
 * callbacks of rec__vdec_callbacks store REC_UINT, REC_BOOL, REC_NULL,
 * REC_STRING as they are, and the kinds below for what a field must
 * convert or reject. None of them ever reaches a caller of the API. */
#define REC__K_NEGINT  ((enum rec_kind)16)  /* v.u: the value is -1 - v.u */
#define REC__K_ARRAY   ((enum rec_kind)17)  /* definite array head, v.array.n */
#define REC__K_TOOBIG  ((enum rec_kind)18)  /* string or collection over the limits */
#define REC__K_OTHER   ((enum rec_kind)19)  /* anything else (maps, floats, tags...) */

extern const struct cbor_callbacks rec__vdec_callbacks;
/* The error half of rec__vdec_at(): p[0..n) is what was left, n may be 0. */
int rec__vdec_fail(const uint8_t *p, size_t n, struct cbor_decoder_result r);

/* Decode the item at *p (before end) into *v and move *p past it. Returns
 * 0 (v->kind may then be any kind, REC__K_TOOBIG included: callers check
 * the kind they need) or REC_ECORRUPT / REC_ETOOBIG when libcbor cannot
 * decode it (*p is then unchanged). The position is a pointer so that a
 * loop can keep it in a register across the calls into libcbor. */
static inline __attribute__((always_inline)) int
rec__vdec_at(const uint8_t **p, const uint8_t *end, rec_value *v)
{
    /* libcbor documents that it reports FINISHED only after calling back
     * once, and that read is 0 for any other status (NEDATA for an empty
     * buffer too): 1 <= read <= n is the whole test. */
    size_t n = (size_t)(end - *p);
    struct cbor_decoder_result r = cbor_stream_decode(*p, n, &rec__vdec_callbacks, v);
    if (__builtin_expect(r.read - 1 >= n, 0))
        return rec__vdec_fail(*p, n, r);
    *p += r.read;
    return 0;
}

static inline int rec__vdec_next(rec__cdec *d, rec_value *v)
{
    const uint8_t *p = d->buf + d->pos;
    int rc = rec__vdec_at(&p, d->buf + d->end, v);
    d->pos = (size_t)(p - d->buf);
    return rc;
}

/* Skip one complete data item (with its nested items, at most max_depth
 * levels deep). */
int rec__cdec_skip(rec__cdec *d, unsigned max_depth);

#pragma GCC visibility pop

#endif
