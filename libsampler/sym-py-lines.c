/*
 * libsampler/sym-py-lines.c - the line of an instruction from a code object's
 * line table, in each version's format (unwind-python.h). Drain only; a table
 * out of step gives no line rather than a wrong one.
 */
#include <config.h>
#include "unwind-python.h"

static unsigned varint(const unsigned char *p, size_t n, size_t *i)
{
    unsigned v = 0, shift = 0;
    unsigned char b;

    do {
        if (*i >= n || shift > 28)
            return 0;
        b = p[(*i)++];
        v |= (unsigned)(b & 63) << shift;
        shift += 6;
    } while (b & 64);
    return v;
}

static int svarint(const unsigned char *p, size_t n, size_t *i)
{
    unsigned v = varint(p, n, i);
    return v & 1 ? -(int)(v >> 1) : (int)(v >> 1);
}

/* The line of instruction off (code units) from 3.9's co_lnotab: (bytes
 * advanced, lines advanced) pairs, the line counting from the pair's
 * address on (Objects/lnotab_notes.txt); 0 if off lies past a table cut
 * short. */
static unsigned lnotab_line(const unsigned char *t, size_t n, bool cut,
                            int first, uint32_t off)
{
    uint64_t addr = 0, at = (uint64_t)off * 2;
    int line = first;
    size_t i;

    for (i = 0; i + 1 < n; i += 2) {
        addr += t[i];
        if (addr > at)
            break;
        line += (signed char)t[i + 1];
    }
    return (cut && i + 1 >= n) || line <= 0 ? 0 : (unsigned)line;
}

/* The line of instruction off (code units) from 3.10's co_linetable:
 * (bytes covered, lines advanced) pairs, the line counting for the bytes
 * the pair covers; -128 lines: those bytes have none (PEP 626). */
static unsigned linetable_310(const unsigned char *t, size_t n, int first,
                              uint32_t off)
{
    uint64_t end = 0, at = (uint64_t)off * 2;
    int line = first;

    for (size_t i = 0; i + 1 < n; i += 2) {
        signed char d = (signed char)t[i + 1];
        end += t[i];
        if (d != -128)
            line += d;
        if (at < end)
            return d == -128 || line <= 0 ? 0 : (unsigned)line;
    }
    return 0;
}

/* The line of instruction off (code units) from a location table (the
 * format of 3.11 to 3.13, Objects/locations.md); 0 if it has none. */
static unsigned table_line(const unsigned char *t, size_t n, int first,
                           uint32_t off)
{
    int line = first;
    uint32_t at = 0;
    size_t i = 0;

    while (i < n) {
        unsigned char b = t[i++];
        unsigned code = b >> 3 & 15, len = (b & 7) + 1u;
        bool none = false;
        if (!(b & 0x80))
            return 0;              /* out of step: no line rather than a wrong one */
        if (code == 15) {
            none = true;
        } else if (code == 14) {
            line += svarint(t, n, &i);
            varint(t, n, &i);
            varint(t, n, &i);
            varint(t, n, &i);
        } else if (code == 13) {
            line += svarint(t, n, &i);
        } else if (code >= 10) {
            line += (int)code - 10;
            i += 2;
        } else {
            i += 1;
        }
        if (off < at + len)
            return none || line <= 0 ? 0 : (unsigned)line;
        at += len;
    }
    return 0;
}

unsigned recs__py_line(uint16_t version, const unsigned char *t, size_t n,
                       bool cut, int first, uint32_t off)
{
    if (version < 0x30a)
        return lnotab_line(t, n, cut, first, off);
    if (version == 0x30a)
        return linetable_310(t, n, first, off);
    return table_line(t, n, first, off);
}
