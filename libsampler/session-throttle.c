/*
 * libsampler/session-throttle.c - parsing of the sampler's settings; libc only so
 * that rec-start can compile it in (see session-throttle.h).
 */
#include <config.h>
#include "session-throttle.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *skip_space(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

/* A decimal number without sign or exponent; strtod would accept "inf",
 * hex and exponents, which are not durations. */
static int parse_number(const char **sp, double *out)
{
    const char *s = skip_space(*sp);
    const char *p = s;
    double v = 0, scale = 0.1;
    int digits = 0;

    while (isdigit((unsigned char)*p)) {
        v = v * 10 + (*p - '0');
        p++;
        digits++;
    }
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p)) {
            v += (*p - '0') * scale;
            scale /= 10;
            p++;
            digits++;
        }
    }
    if (!digits || v > 1e18)
        return REC_EINVAL;
    *out = v;
    *sp = skip_space(p);
    return 0;
}

struct unit { const char *name; double ns; };

static const struct unit time_units[] = {
    { "ns", 1 }, { "us", 1e3 }, { "\xc2\xb5s", 1e3 }, { "ms", 1e6 },
    { "s", 1e9 }, { "m", 60e9 }, { "min", 60e9 }, { "h", 3600e9 },
};

static int parse_time_unit(const char *s, double *ns)
{
    for (size_t i = 0; i < sizeof time_units / sizeof time_units[0]; i++) {
        size_t n = strlen(time_units[i].name);
        if (!strncmp(s, time_units[i].name, n) && *skip_space(s + n) == '\0') {
            *ns = time_units[i].ns;
            return 0;
        }
    }
    return REC_EINVAL;
}

/* Exact: integer part and up to nine decimals in integer arithmetic, so
 * "0.1s" is 100000000 ns and not one off after a trip through double. */
int recs__parse_duration(const char *s, uint64_t *ns)
{
    uint64_t ip = 0, frac = 0, unit;
    double u;
    int nd = 0, nf = 0;

    if (!s)
        return REC_EINVAL;
    s = skip_space(s);
    for (; isdigit((unsigned char)*s); s++, nd++) {
        unsigned d = (unsigned)(*s - '0');
        if (ip > (UINT64_MAX - d) / 10)
            return REC_EINVAL;
        ip = ip * 10 + d;
    }
    if (*s == '.') {
        for (s++; isdigit((unsigned char)*s); s++, nf++)
            if (nf < 9)
                frac = frac * 10 + (uint64_t)(*s - '0');
        if (!nf)
            return REC_EINVAL;
        for (int k = nf < 9 ? nf : 9; k < 9; k++)
            frac *= 10;
    }
    if (!nd && !nf)
        return REC_EINVAL;
    s = skip_space(s);
    if (*s == '\0') {       /* a bare 0 needs no unit */
        if (ip || frac)
            return REC_EINVAL;
        *ns = 0;
        return 0;
    }
    if (parse_time_unit(s, &u) < 0)
        return REC_EINVAL;
    unit = (uint64_t)u;
    if (ip > UINT64_MAX / unit)
        return REC_EINVAL;
    {
        uint64_t v = ip * unit;
        uint64_t fv = (uint64_t)((unsigned __int128)frac * unit / 1000000000u);
        if (v > UINT64_MAX - fv)
            return REC_EINVAL;
        *ns = v + fv;
    }
    return 0;
}

int recs__parse_throttle(const char *s, recs__throttle *t)
{
    const char *slash;
    double v, unit;

    if (!s)
        return REC_EINVAL;
    slash = strchr(s, '/');
    if (!slash) {
        uint64_t ns;
        if (recs__parse_duration(s, &ns) < 0 || ns < RECS_MIN_PERIOD_NS ||
            ns > RECS_MAX_PERIOD_NS)
            return REC_EINVAL;
        t->is_rate = false;
        t->period_ns = ns;
        t->rate_per_s = 0;
        return 0;
    }
    if (parse_number(&s, &v) < 0 || s != slash || v <= 0)
        return REC_EINVAL;
    if (parse_time_unit(skip_space(slash + 1), &unit) < 0)
        return REC_EINVAL;
    t->is_rate = true;
    t->rate_per_s = v * 1e9 / unit;
    t->period_ns = 0;
    return 0;
}

uint64_t recs__throttle_period(const recs__throttle *t, unsigned ncpus)
{
    double p;

    if (!t->is_rate)
        p = (double)t->period_ns;
    else
        p = (ncpus ? ncpus : 1) * 1e9 / t->rate_per_s;
    if (!(p >= RECS_MIN_PERIOD_NS))   /* also catches NaN */
        return RECS_MIN_PERIOD_NS;
    if (p > RECS_MAX_PERIOD_NS)
        return RECS_MAX_PERIOD_NS;
    return (uint64_t)p;
}

int recs__parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (!s)
        return REC_EINVAL;
    s = skip_space(s);
    if (!isdigit((unsigned char)*s))
        return REC_EINVAL;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || *skip_space(end) != '\0' || v < min || v > max)
        return REC_EINVAL;
    *out = v;
    return 0;
}

int recs__parse_size(const char *s, uint64_t *bytes)
{
    char *end;
    unsigned long long v;
    unsigned shift = 0;

    if (!s)
        return REC_EINVAL;
    s = skip_space(s);
    if (!isdigit((unsigned char)*s))
        return REC_EINVAL;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno)
        return REC_EINVAL;
    end = (char *)skip_space(end);
    switch (tolower((unsigned char)*end)) {
    case 'k': shift = 10; end++; break;
    case 'm': shift = 20; end++; break;
    case 'g': shift = 30; end++; break;
    default: break;
    }
    if (shift && *end == 'i')
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*skip_space(end) != '\0' || (shift && v > (~0ull >> shift)))
        return REC_EINVAL;
    *bytes = (uint64_t)v << shift;
    return 0;
}

int recs__parse_bool(const char *s, bool *out)
{
    static const char *yes[] = { "1", "yes", "true", "on" };
    static const char *no[] = { "0", "no", "false", "off" };

    if (!s)
        return REC_EINVAL;
    for (size_t i = 0; i < 4; i++) {
        if (!strcasecmp(s, yes[i])) { *out = true; return 0; }
        if (!strcasecmp(s, no[i])) { *out = false; return 0; }
    }
    return REC_EINVAL;
}

static const struct { const char *name; int signo; } signals[] = {
    { "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT },
    { "TRAP", SIGTRAP }, { "USR1", SIGUSR1 }, { "USR2", SIGUSR2 },
    { "PIPE", SIGPIPE }, { "ALRM", SIGALRM }, { "TERM", SIGTERM },
    { "STKFLT", SIGSTKFLT }, { "URG", SIGURG }, { "XCPU", SIGXCPU },
    { "XFSZ", SIGXFSZ }, { "VTALRM", SIGVTALRM }, { "PROF", SIGPROF },
    { "IO", SIGIO }, { "PWR", SIGPWR }, { "SYS", SIGSYS },
};

static bool usable_signal(int signo)
{
    switch (signo) {
    case SIGKILL: case SIGSTOP: case SIGSEGV: case SIGBUS: case SIGILL:
    case SIGFPE: case SIGABRT: case SIGCHLD: case SIGCONT: case SIGTSTP:
    case SIGTTIN: case SIGTTOU: case SIGWINCH:
        return false;
    default:
        return signo >= 1 && signo <= SIGRTMAX;
    }
}

int recs__parse_signal(const char *s, int *signo)
{
    uint64_t n;
    int sig = -1;

    if (!s)
        return REC_EINVAL;
    s = skip_space(s);
    if (isdigit((unsigned char)*s)) {
        if (recs__parse_uint(s, 1, 64, &n) < 0)
            return REC_EINVAL;
        sig = (int)n;
    } else {
        if (!strncasecmp(s, "SIG", 3))
            s += 3;
        if (!strncasecmp(s, "RTMIN", 5) || !strncasecmp(s, "RTMAX", 5)) {
            bool max = !strncasecmp(s, "RTMAX", 5);
            const char *p = skip_space(s + 5);
            int off = 0;
            if (*p == '+' || *p == '-') {
                if (recs__parse_uint(p + 1, 0, 64, &n) < 0)
                    return REC_EINVAL;
                off = (*p == '-') ? -(int)n : (int)n;
            } else if (*p) {
                return REC_EINVAL;
            }
            sig = (max ? SIGRTMAX : SIGRTMIN) + off;
            if (sig < SIGRTMIN || sig > SIGRTMAX)
                return REC_EINVAL;
        } else {
            for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
                if (!strcasecmp(s, signals[i].name))
                    sig = signals[i].signo;
        }
    }
    if (!usable_signal(sig))
        return REC_EINVAL;
    *signo = sig;
    return 0;
}
