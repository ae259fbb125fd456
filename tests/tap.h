/* tests/tap.h - minimal TAP producer for C unit tests (automake tap-driver). */
#ifndef REC_TESTS_TAP_H
#define REC_TESTS_TAP_H
#include <stdio.h>
#include <stdarg.h>
#include <stdlib.h>

static int tap_n, tap_failed;

static inline void tap_plan(int n) { printf("1..%d\n", n); fflush(stdout); }

/* Record one check; returns cond so callers can bail out on failure. */
static inline int tap_ok(int cond, const char *fmt, ...)
{
    va_list ap;
    printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    if (!cond)
        tap_failed++;
    return cond;
}

static inline void tap_diag(const char *fmt, ...)
{
    va_list ap;
    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

/* Plan at the end when the count is data dependent. */
static inline int tap_done(void)
{
    printf("1..%d\n", tap_n);
    return tap_failed ? 1 : 0;
}

#define TAP_BAIL(...) do { printf("Bail out! " __VA_ARGS__); printf("\n"); exit(1); } while (0)
#endif
