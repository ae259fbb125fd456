/*
 * tests/workloads/demo.c - the README's demo: three named threads doing
 * different, recognisable CPU work while main waits for them.
 *
 *   "hasher"  FNV-1a over a buffer, again and again   (hash_buffer)
 *   "sorter"  sorts pseudo-random arrays with qsort    (sort_round, cmp_u32)
 *   "matrix"  multiplies 160x160 matrices              (matrix_multiply)
 *
 * The amounts of work are fixed (about 2-3 s of CPU on a current core), so
 * the output - one checksum line per thread - is the same on every run.
 * Usage: demo [SCALE]   (SCALE multiplies the work, default 1)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* clang has no noipa: noinline is the closest it offers. */
#ifdef __clang__
#define NOIPA __attribute__((noinline))
#else
#define NOIPA __attribute__((noipa))
#endif

static double scale = 1;
static char result[3][96];   /* printed by main in thread order */

static uint32_t rng_next(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*s >> 33);
}

NOIPA static uint64_t hash_buffer(const unsigned char *p, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static void *hasher(void *arg)
{
    static unsigned char buf[1 << 16];
    uint64_t s = 1, h = 0xcbf29ce484222325ull;
    unsigned rounds = (unsigned)(9000 * scale);

    (void)arg;
    pthread_setname_np(pthread_self(), "hasher");
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)rng_next(&s);
    for (unsigned r = 0; r < rounds; r++)
        h = hash_buffer(buf, sizeof buf, h);
    snprintf(result[0], sizeof result[0], "hasher: %u rounds, hash %016llx\n",
             rounds, (unsigned long long)h);
    return NULL;
}

NOIPA static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

NOIPA static uint64_t sort_round(uint32_t *v, size_t n, uint64_t *s)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        v[i] = rng_next(s);
    qsort(v, n, sizeof *v, cmp_u32);
    for (size_t i = 0; i < n; i += n / 16)
        sum = sum * 31 + v[i];
    return sum;
}

static void *sorter(void *arg)
{
    enum { N = 100000 };
    uint32_t *v = malloc(N * sizeof *v);
    uint64_t s = 2, sum = 0;
    unsigned rounds = (unsigned)(90 * scale);

    (void)arg;
    pthread_setname_np(pthread_self(), "sorter");
    if (!v)
        return NULL;
    for (unsigned r = 0; r < rounds; r++)
        sum += sort_round(v, N, &s);
    free(v);
    snprintf(result[1], sizeof result[1], "sorter: %u rounds, sum %016llx\n",
             rounds, (unsigned long long)sum);
    return NULL;
}

#define M 160

NOIPA static void matrix_multiply(const double *a, const double *b, double *c)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < M; j++) {
            double t = 0;
            for (int k = 0; k < M; k++)
                t += a[i * M + k] * b[k * M + j];
            c[i * M + j] = t;
        }
}

static void *matrix(void *arg)
{
    static double a[M * M], b[M * M], c[M * M];
    uint64_t s = 3;
    unsigned rounds = (unsigned)(180 * scale);
    double trace = 0;

    (void)arg;
    pthread_setname_np(pthread_self(), "matrix");
    for (int i = 0; i < M * M; i++) {
        a[i] = (rng_next(&s) % 1000) / 1000.0;
        b[i] = (rng_next(&s) % 1000) / 1000.0;
    }
    for (unsigned r = 0; r < rounds; r++) {
        matrix_multiply(a, b, c);
        /* Feed back a little so no round can be skipped. */
        a[r % (M * M)] = c[(r * 7) % (M * M)] / M;
    }
    for (int i = 0; i < M; i++)
        trace += c[i * M + i];
    snprintf(result[2], sizeof result[2], "matrix: %u rounds, trace %.6f\n",
             rounds, trace);
    return NULL;
}

int main(int argc, char **argv)
{
    void *(*fn[3])(void *) = { hasher, sorter, matrix };
    pthread_t th[3];

    if (argc > 1) {
        scale = atof(argv[1]);
        if (!(scale > 0 && scale <= 100)) {
            fprintf(stderr, "usage: demo [SCALE]\n");
            return 2;
        }
    }
    for (int i = 0; i < 3; i++)
        if (pthread_create(&th[i], NULL, fn[i], NULL)) {
            perror("demo: pthread_create");
            return 1;
        }
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 3; i++)
        fputs(result[i], stdout);
    return 0;
}
