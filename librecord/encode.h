/*
 * librecord/encode.h - CBOR encoders writing into a caller buffer that the
 * caller has already sized (REC__MAX_* below), so they never check space.
 * Small values, the overwhelming majority in events, are encoded inline;
 * everything else goes through libcbor's cbor_encode_* functions.
 */
#ifndef REC_ENCODE_H
#define REC_ENCODE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <cbor.h>

#define REC__MAX_UINT 9
#define REC__ENC_LIKELY(x) __builtin_expect(!!(x), 1)            /* largest encoded uint/int/header */

static inline size_t rec__enc_uint(unsigned char *p, uint64_t v)
{
    if (v < 24) {
        p[0] = (unsigned char)v;
        return 1;
    }
    if (v < 256) {
        p[0] = 0x18;
        p[1] = (unsigned char)v;
        return 2;
    }
    if (v < 65536) {
        p[0] = 0x19;
        p[1] = (unsigned char)(v >> 8);
        p[2] = (unsigned char)v;
        return 3;
    }
    if (v <= UINT32_MAX) {     /* periods in ns */
        uint32_t be = __builtin_bswap32((uint32_t)v);
        p[0] = 0x1a;
        memcpy(p + 1, &be, 4);
        return 5;
    }
    return cbor_encode_uint(v, p, REC__MAX_UINT);
}

/* Branch-free form for 32-bit values (pool ids in long arrays, where the
 * size class changes unpredictably from item to item). Stores 8 bytes:
 * the caller leaves REC__SLACK bytes after the reserved space. */
#define REC__SLACK 8
static inline size_t rec__enc_u32_nb(unsigned char *p, uint32_t v)
{
    if (REC__ENC_LIKELY(v - 256 < 65536 - 256)) {   /* most ids of a big pool */
        p[0] = 0x19;
        p[1] = (unsigned char)(v >> 8);
        p[2] = (unsigned char)v;
        return 3;
    }
    unsigned c = (v >= 24) + (v >= 256) + (v >= 65536);
    unsigned k = (0x04020100u >> (8 * c)) & 0xff;          /* payload bytes */
    uint64_t payload = (uint64_t)__builtin_bswap32(v) >> (32 - 8 * k);
    uint64_t head = c ? (0x1a191800u >> (8 * c)) & 0xff : v;
    uint64_t word = head | payload << 8;
    memcpy(p, &word, 8);       /* little-endian: head first, then big-endian payload */
    return 1 + k;
}

static inline size_t rec__enc_int(unsigned char *p, int64_t v)
{
    if (v >= 0)
        return rec__enc_uint(p, (uint64_t)v);
    uint64_t n = (uint64_t)(-1 - v);   /* CBOR negative: -1 - n */
    if (n < 24) {
        p[0] = (unsigned char)(0x20 | n);
        return 1;
    }
    return cbor_encode_negint(n, p, REC__MAX_UINT);
}

static inline size_t rec__enc_bool(unsigned char *p, bool v)
{
    p[0] = v ? 0xf5 : 0xf4;
    return 1;
}

static inline size_t rec__enc_null(unsigned char *p)
{
    p[0] = 0xf6;
    return 1;
}

static inline size_t rec__enc_array(unsigned char *p, size_t n)
{
    if (n < 24) {
        p[0] = (unsigned char)(0x80 | n);
        return 1;
    }
    return cbor_encode_array_start(n, p, REC__MAX_UINT);
}

/* Text string of len bytes: needs REC__MAX_UINT + len. */
static inline size_t rec__enc_string(unsigned char *p, const char *s, size_t len)
{
    size_t h = cbor_encode_string_start(len, p, REC__MAX_UINT);
    memcpy(p + h, s, len);
    return h + len;
}

#endif
