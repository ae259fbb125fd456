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

/* Skip one complete data item (with its nested items, at most max_depth
 * levels deep). */
int rec__cdec_skip(rec__cdec *d, unsigned max_depth);

#endif
