/*
 * bench/retention-prog.c - the workload and the chunk counter of
 * bench/retention.sh (recording size over time).
 *
 *   retention-prog burn SECONDS   burn one CPU for SECONDS of wall time in
 *                                 one thread (a short, fixed call chain),
 *                                 then exit 0
 *   retention-prog idle SECONDS   block in poll() on standard input's
 *                                 absence for SECONDS, then exit 0 (1 if
 *                                 woken early by a signal)
 *   retention-prog chunks [FILE]  read a recording (FILE, or standard input
 *                                 when FILE is absent or -: a stream) and
 *                                 print one line of "name value" pairs:
 *     bytes N       bytes read in all
 *     chunks N      chunk headers (each chunk starts with REC_MAGIC)
 *     events N      bytes of event blocks, their 16-byte headers included
 *     metadata N    the same for metadata blocks
 *     pool N        the same for pool blocks
 *     other N       the rest: chunk headers, blocks of other kinds, bytes
 *                   past the last whole chunk
 *
 * The layout is librecord/format.h's (man/rec-format.5): an 80-byte chunk
 * header with the chunk's size (header included) as a u64 at offset 24,
 * then blocks of a 16-byte header (kind u8 at 0, stored payload size u32
 * at 4) and their payload. Only the headers are read: payloads are not
 * decompressed nor checked.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAGIC "\x89REC\r\n\x1a\n"
#define CHUNK_HEADER 80
#define BLOCK_HEADER 16

static volatile uint64_t sink;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t step(uint64_t x)
{
    for (int i = 0; i < 20000; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

__attribute__((noinline)) static void burn(double secs)
{
    double end = now() + secs;
    uint64_t x = 1;

    while (now() < end)
        x = step(x);
    sink = x;
}

static uint64_t le(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Reads exactly n bytes (fewer only at the end of the input). */
static size_t get(FILE *f, unsigned char *buf, size_t n)
{
    size_t got = 0, r;
    while (got < n && (r = fread(buf + got, 1, n - got, f)) > 0)
        got += r;
    return got;
}

static int chunks(const char *path)
{
    FILE *f = (!path || strcmp(path, "-") == 0) ? stdin : fopen(path, "rb");
    uint64_t bytes = 0, nchunks = 0, kind_bytes[4] = { 0 }, other = 0;
    unsigned char h[CHUNK_HEADER], bh[BLOCK_HEADER], skip[65536];

    if (!f) {
        fprintf(stderr, "retention-prog: %s: %s\n", path, strerror(errno));
        return 1;
    }
    for (;;) {
        size_t n = get(f, h, CHUNK_HEADER);
        bytes += n;
        if (n < CHUNK_HEADER) {
            other += n;
            break;
        }
        if (memcmp(h, MAGIC, 8) != 0) {
            fprintf(stderr, "retention-prog: no chunk magic at byte %llu\n",
                    (unsigned long long)(bytes - n));
            return 1;
        }
        uint64_t size = le(h + 24, 8), hsize = le(h + 12, 4), left;
        if (size < hsize || hsize < CHUNK_HEADER) {
            fprintf(stderr, "retention-prog: chunk %llu: size %llu\n",
                    (unsigned long long)nchunks, (unsigned long long)size);
            return 1;
        }
        nchunks++;
        other += hsize;
        /* A streamed chunk (rec-format(5), 1.3): blocks up to its END
         * block, whose header-sized payload ends it. */
        bool streamed = (h[21] & 0x04) != 0;
        left = streamed ? UINT64_MAX : size - CHUNK_HEADER;
        /* a newer minor's longer header */
        for (uint64_t extra = hsize - CHUNK_HEADER; extra > 0;) {
            size_t k = extra < sizeof skip ? extra : sizeof skip;
            n = get(f, skip, k);
            bytes += n;
            extra -= n;
            left -= n;
            if (n < k)
                goto out;
        }
        while (left >= BLOCK_HEADER) {
            n = get(f, bh, BLOCK_HEADER);
            bytes += n;
            if (n < BLOCK_HEADER) {
                other += n;
                goto out;
            }
            uint64_t stored = le(bh + 4, 4), want = BLOCK_HEADER + stored;
            unsigned kind = bh[0];
            left -= BLOCK_HEADER;
            if (stored > left) {
                fprintf(stderr, "retention-prog: block of %llu bytes past its chunk\n",
                        (unsigned long long)stored);
                return 1;
            }
            for (uint64_t s = stored; s > 0;) {
                size_t k = s < sizeof skip ? s : sizeof skip;
                n = get(f, skip, k);
                bytes += n;
                s -= n;
                if (n < k) {
                    other += want - s;
                    goto out;
                }
            }
            left -= stored;
            if (kind >= 1 && kind <= 3)
                kind_bytes[kind] += want;
            else
                other += want;
            if (streamed && kind == 4) {
                left = 0;
                break;
            }
        }
        while (left > 0) {      /* slack shorter than a block header */
            size_t k = left < sizeof skip ? left : sizeof skip;
            n = get(f, skip, k);
            bytes += n;
            other += n;
            left -= n;
            if (n < k)
                goto out;
        }
    }
out:
    /* whatever follows a truncated chunk */
    for (size_t n; (n = get(f, skip, sizeof skip)) > 0;) {
        bytes += n;
        other += n;
    }
    printf("bytes %llu chunks %llu events %llu metadata %llu pool %llu other %llu\n",
           (unsigned long long)bytes, (unsigned long long)nchunks,
           (unsigned long long)kind_bytes[3], (unsigned long long)kind_bytes[1],
           (unsigned long long)kind_bytes[2], (unsigned long long)other);
    return 0;
}

static int idle(double secs)
{
    double end = now() + secs, left;

    while ((left = end - now()) > 0) {
        if (poll(NULL, 0, (int)(left * 1000) + 1) < 0 && errno != EINTR)
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "idle") == 0)
        return idle(atof(argv[2]));
    if (argc >= 3 && strcmp(argv[1], "burn") == 0) {
        burn(atof(argv[2]));
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "chunks") == 0)
        return chunks(argc >= 3 ? argv[2] : NULL);
    fprintf(stderr, "usage: retention-prog burn|idle SECONDS | chunks [FILE]\n");
    return 2;
}
