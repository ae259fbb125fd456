/*
 * libsampler/session-throttle.h - parse the sampler's settings (durations, throttle
 * rates, byte sizes, signal names).
 *
 * Self-contained: session-throttle.c depends on libc only, so rec-start compiles it
 * in to validate the same strings the preloaded library will read from the
 * environment, and the tools' cli library compiles it in so that every
 * command reads durations the same way. Every function returns 0 or REC_EINVAL (-3); outputs are
 * written only on success.
 */
#ifndef RECS_THROTTLE_H
#define RECS_THROTTLE_H

#include <stdint.h>
#include <stdbool.h>

#ifndef REC_EINVAL
#define REC_EINVAL (-3)
#endif

/* Periods outside [RECS_MIN_PERIOD_NS, RECS_MAX_PERIOD_NS] are rejected. */
#define RECS_MIN_PERIOD_NS 10000ull            /* 10 us */
#define RECS_MAX_PERIOD_NS 10000000000ull      /* 10 s */

/* A duration, the one grammar of every rec command: an integer or decimal
 * number (up to nine decimals, exact) followed by a unit ns, us (or µs),
 * ms, s, m (or min) or h ("10ms", "500us", "1.5s", "10 ms"); a bare "0"
 * is zero. Callers check the range they accept. */
int recs__parse_duration(const char *s, uint64_t *ns);

/* A throttle: a duration (a fixed per-thread CPU-time period) or a rate
 * "N/s", "N/ms", "N/us", "N/m", "N/h" (samples per unit of wall time over the
 * whole machine; the period becomes ncpus * 1e9 / rate_per_second ns). */
typedef struct recs__throttle {
    bool     is_rate;
    uint64_t period_ns;     /* when !is_rate */
    double   rate_per_s;    /* when is_rate */
} recs__throttle;

int recs__parse_throttle(const char *s, recs__throttle *t);

/* The effective period for ncpus online processors (ncpus 0 counts as 1),
 * clamped to [RECS_MIN_PERIOD_NS, RECS_MAX_PERIOD_NS]. */
uint64_t recs__throttle_period(const recs__throttle *t, unsigned ncpus);

/* A byte size: an integer with an optional suffix k, m, g (powers of 1024,
 * an optional trailing "b"/"B" and "i" are accepted: 64M, 64MiB, 1k, 4096). */
int recs__parse_size(const char *s, uint64_t *bytes);

/* A signal: a number ("27") or a name with or without "SIG" ("SIGPROF",
 * "prof", "SIGRTMIN+3", "RTMAX-1"), case-insensitive. Rejects signals that
 * cannot carry samples (SIGKILL, SIGSTOP, and SIGSEGV, SIGBUS, SIGILL,
 * SIGFPE, SIGABRT, SIGCHLD, SIGCONT, SIGTSTP, SIGTTIN, SIGTTOU, SIGWINCH). */
int recs__parse_signal(const char *s, int *signo);

/* A non-negative integer (decimal) within [min, max]. */
int recs__parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/* A boolean: 1/0, yes/no, true/false, on/off (case-insensitive). */
int recs__parse_bool(const char *s, bool *out);

#endif
