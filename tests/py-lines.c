/*
 * tests/py-lines.c - the drain's line of each instruction
 * (libsampler/sym-py-lines.c) against the interpreter's own, over what
 * tests/runtimes/lines.py prints on standard input:
 *
 *   python3.X tests/runtimes/lines.py | tests/py-lines VERSION
 *
 * VERSION as in a layout row (30a for 3.10). Prints "instructions
 * mismatches", then the first mismatches; exits 1 on any.
 */
#include <config.h>
#include "unwind-python.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_BYTES (4u << 20)

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

int main(int argc, char **argv)
{
    char *buf = malloc(LINE_MAX_BYTES);
    unsigned char *t = malloc(LINE_MAX_BYTES / 2);
    unsigned long total = 0, bad = 0;
    uint16_t v;

    if (argc != 2 || !buf || !t) {
        fprintf(stderr, "usage: py-lines VERSION < lines\n");
        return 2;
    }
    v = (uint16_t)strtoul(argv[1], NULL, 16);
    while (fgets(buf, LINE_MAX_BYTES, stdin)) {
        char *p = buf, *end;
        long first = strtol(p, &end, 10);
        size_t n = (size_t)strtoul(end, &p, 10);
        while (*p == ' ')
            p++;
        if (n > LINE_MAX_BYTES / 2)
            return 2;
        for (size_t i = 0; i < n; i++, p += 2) {
            int hi = hexval(p[0]), lo = hi < 0 ? -1 : hexval(p[1]);
            if (lo < 0)
                return 2;
            t[i] = (unsigned char)(hi << 4 | lo);
        }
        if (!n)
            p++;                     /* "-" */
        for (;;) {
            long off = strtol(p, &end, 10), want;
            if (end == p || *end != ':')
                break;
            want = strtol(end + 1, &p, 10);
            unsigned got = recs__py_line(v, t, n, false, (int)first,
                                         (uint32_t)off);
            total++;
            if ((long)got != (want < 0 ? 0 : want) && ++bad <= 5)
                fprintf(stderr, "first line %ld, instruction %ld: line %u, "
                        "the interpreter's %ld\n", first, off, got, want);
        }
    }
    printf("%lu %lu\n", total, bad);
    free(buf);
    free(t);
    return bad ? 1 : 0;
}
