/* librecord/crc32c.c - CRC-32C with the SSE4.2 instruction when the CPU has
 * it (checked at run time: the library must run on any x86-64) and a
 * slicing-by-8 table otherwise. */
#include <config.h>
#include <string.h>
#include "crc32c.h"

#define POLY 0x82f63b78u   /* reflected Castagnoli polynomial */

/* Built on first use; the race between two first users is benign because
 * both compute identical contents and the flag is published last. */
static uint32_t table[8][256];
static int table_ready;     /* only through __atomic builtins */

static void table_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
        table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
    __atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

static uint32_t crc_sw(uint32_t crc, const unsigned char *p, size_t n)
{
    if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE))
        table_init();
    while (n && ((uintptr_t)p & 7)) {
        crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
        n--;
    }
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        v ^= crc;   /* little-endian: low 32 bits meet the crc */
        crc = table[7][v & 0xff] ^ table[6][(v >> 8) & 0xff] ^
              table[5][(v >> 16) & 0xff] ^ table[4][(v >> 24) & 0xff] ^
              table[3][(v >> 32) & 0xff] ^ table[2][(v >> 40) & 0xff] ^
              table[1][(v >> 48) & 0xff] ^ table[0][v >> 56];
        p += 8;
        n -= 8;
    }
    while (n--)
        crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc_hw(uint32_t crc, const unsigned char *p, size_t n)
{
    uint64_t c = crc;
    while (n && ((uintptr_t)p & 7)) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
        n--;
    }
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
        p += 8;
        n -= 8;
    }
    while (n--)
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
    return (uint32_t)c;
}
#endif

uint32_t rec__crc32c(uint32_t crc, const void *p, size_t n)
{
    crc = ~crc;
#if defined(__x86_64__)
    if (__builtin_cpu_supports("sse4.2"))
        return ~crc_hw(crc, p, n);
#endif
    return ~crc_sw(crc, p, n);
}
