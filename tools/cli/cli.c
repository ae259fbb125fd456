/*
 * tools/cli/cli.c - helpers shared by the rec command-line tools.
 */
#include <config.h>

#include "cli.h"
#include "session-throttle.h"   /* recs__parse_duration: the shared grammar */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

/* ------------------------------------------------------------------ */
/* Messages                                                           */
/* ------------------------------------------------------------------ */

static void message(const char *prog, const char *kind, const char *fmt,
                    va_list ap)
{
    fprintf(stderr, "%s: %s", prog, kind);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_error(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    message(prog, "", fmt, ap);
    va_end(ap);
}

void cli_warn(const char *prog, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    message(prog, "warning: ", fmt, ap);
    va_end(ap);
}

/* The message names path, or a file of the directory recording path. */
static bool starts_with_path(const char *msg, const char *path)
{
    size_t n = strlen(path);
    if (strncmp(msg, path, n) != 0)
        return false;
    return msg[n] == ':' || msg[n] == '/' || (n && path[n - 1] == '/');
}

void cli_reader_error(const char *prog, const char *path,
                      const rec_reader *r, int code)
{
    const char *msg = r ? rec_reader_message(r) : NULL;
    if (msg && *msg) {
        if (starts_with_path(msg, path))
            fprintf(stderr, "%s: %s\n", prog, msg);
        else
            fprintf(stderr, "%s: %s: %s\n", prog, path, msg);
    } else if (code == REC_EIO) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
    } else {
        fprintf(stderr, "%s: %s: %s\n", prog, path, rec_strerror(code));
    }
}

bool cli_is_stdin(const char *path)
{
    return path && !strcmp(path, "-");
}

bool cli_is_stream(const char *path)
{
    struct stat st;
    if (cli_is_stdin(path))
        return true;
    return path && stat(path, &st) == 0 &&
           (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ||
            S_ISCHR(st.st_mode));
}

int cli_reader_open(const char *path, unsigned flags, rec_reader **r)
{
    if (!cli_is_stdin(path))
        return rec_reader_open(r, path, flags);
    int fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
    if (fd < 0) {
        *r = NULL;
        return REC_EIO;
    }
    return rec_reader_open_fd(r, fd, "-", flags);
}

void cli_reader_warning(const char *prog, const char *path,
                        const rec_reader *r)
{
    const char *msg = rec_reader_warning(r);
    if (!msg)
        return;
    if (starts_with_path(msg, path))
        fprintf(stderr, "%s: warning: %s\n", prog, msg);
    else
        fprintf(stderr, "%s: warning: %s: %s\n", prog, path, msg);
}

/* ------------------------------------------------------------------ */
/* Allocation                                                         */
/* ------------------------------------------------------------------ */

_Noreturn void cli_out_of_memory(void)
{
    fputs("out of memory\n", stderr);
    abort();
}

void *cli_xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        cli_out_of_memory();
    return p;
}

/* ------------------------------------------------------------------ */
/* Numbers, durations and times                                       */
/* ------------------------------------------------------------------ */

int cli_parse_uint(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!s || !*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

/* Parse ".<digits>" at *sp (at the dot): the fraction scaled to 1e9
 * (digits past the ninth are dropped). At least one digit. */
static int parse_fraction(const char **sp, uint64_t *frac_e9)
{
    const char *s = *sp + 1;
    uint64_t f = 0;
    int nf = 0;
    for (; *s >= '0' && *s <= '9'; s++, nf++)
        if (nf < 9)
            f = f * 10 + (uint64_t)(*s - '0');
    if (nf == 0)
        return -1;
    for (int k = nf < 9 ? nf : 9; k < 9; k++)
        f *= 10;
    *sp = s;
    *frac_e9 = f;
    return 0;
}

/* The grammar shared with rec-start and the sampler (session-throttle.h). */
int cli_parse_duration(const char *s, uint64_t *ns)
{
    return recs__parse_duration(s, ns) < 0 ? -1 : 0;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static int digits(const char **sp, int n, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*sp)[i];
        if (c < '0' || c > '9')
            return -1;
        v = v * 10 + (unsigned)(c - '0');
    }
    *sp += n;
    *out = v;
    return 0;
}

static int parse_rfc3339(const char *s, uint64_t *ns)
{
    unsigned Y, M, D, h, mi, sec, oh = 0, om = 0;
    uint64_t frac = 0;
    int sign = 0;
    if (digits(&s, 4, &Y) < 0 || *s++ != '-' || digits(&s, 2, &M) < 0 ||
        *s++ != '-' || digits(&s, 2, &D) < 0)
        return -1;
    if (*s != 'T' && *s != 't' && *s != ' ')
        return -1;
    s++;
    if (digits(&s, 2, &h) < 0 || *s++ != ':' || digits(&s, 2, &mi) < 0 ||
        *s++ != ':' || digits(&s, 2, &sec) < 0)
        return -1;
    if (*s == '.' && parse_fraction(&s, &frac) < 0)
        return -1;
    if (*s == 'Z' || *s == 'z') {
        s++;
    } else if (*s == '+' || *s == '-') {
        sign = *s++ == '+' ? 1 : -1;
        if (digits(&s, 2, &oh) < 0 || *s++ != ':' || digits(&s, 2, &om) < 0)
            return -1;
    } else {
        return -1;
    }
    if (*s || M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || mi > 59 ||
        sec > 60 || oh > 23 || om > 59)
        return -1;
    int64_t t = days_from_civil(Y, M, D) * 86400 + h * 3600 + mi * 60 + sec;
    t -= sign * (int64_t)(oh * 3600 + om * 60);
    if (t < 0 || (uint64_t)t > (UINT64_MAX - frac) / 1000000000u)
        return -1;
    *ns = (uint64_t)t * 1000000000u + frac;
    return 0;
}

int cli_parse_time(const char *s, cli_time *out)
{
    if (!s || !*s)
        return -1;
    out->before_end = false;
    if (*s == '+') {
        out->relative = true;
        return cli_parse_duration(s + 1, &out->ns);
    }
    out->relative = false;
    if (*s == '-') {
        out->before_end = true;
        return cli_parse_duration(s + 1, &out->ns);
    }
    /* A bare number is a time (ns since the epoch); a number with a unit
     * is a duration back from the end. */
    if (cli_parse_uint(s, &out->ns) == 0 || parse_rfc3339(s, &out->ns) == 0)
        return 0;
    out->before_end = true;
    return cli_parse_duration(s, &out->ns);
}

uint64_t cli_time_resolve(const cli_time *t, uint64_t recording_start_ns)
{
    if (t->before_end)
        return 0;
    if (!t->relative)
        return t->ns;
    if (recording_start_ns > UINT64_MAX - t->ns)
        return UINT64_MAX;
    return recording_start_ns + t->ns;
}

char *cli_format_time(uint64_t ns, char *buf, size_t size)
{
    uint64_t secs = ns / 1000000000u;
    unsigned frac = (unsigned)(ns % 1000000000u);
    int64_t y;
    unsigned mo, d;
    civil_from_days((int64_t)(secs / 86400), &y, &mo, &d);
    unsigned sod = (unsigned)(secs % 86400);
    char fs[16] = "";
    if (frac % 1000000 == 0 && frac)
        snprintf(fs, sizeof fs, ".%03u", frac / 1000000);
    else if (frac % 1000 == 0 && frac)
        snprintf(fs, sizeof fs, ".%06u", frac / 1000);
    else if (frac)
        snprintf(fs, sizeof fs, ".%09u", frac);
    snprintf(buf, size, "%04" PRId64 "-%02u-%02uT%02u:%02u:%02u%sZ", y, mo, d,
             sod / 3600, sod / 60 % 60, sod % 60, fs);
    return buf;
}

char *cli_format_duration(uint64_t ns, char *buf, size_t size)
{
    if (ns < 1000)
        snprintf(buf, size, "%" PRIu64 " ns", ns);
    else if (ns < 1000000)
        snprintf(buf, size, "%.3g us", (double)ns / 1e3);
    else if (ns < 1000000000)
        snprintf(buf, size, "%.3g ms", (double)ns / 1e6);
    else if (ns < 60000000000ull)
        snprintf(buf, size, "%.3f s", (double)ns / 1e9);
    else
        snprintf(buf, size, "%" PRIu64 " min %.3f s", ns / UINT64_C(60000000000),
                 (double)(ns % 60000000000ull) / 1e9);
    return buf;
}

/* ------------------------------------------------------------------ */
/* Globs                                                              */
/* ------------------------------------------------------------------ */

/* Match one bracket expression at p against c; *pp is advanced past ']'.
 * Returns -1 for an unterminated bracket (then '[' is a literal). */
static int bracket(const char **pp, unsigned char c)
{
    const char *p = *pp + 1;
    bool neg = false, hit = false;
    if (*p == '!' || *p == '^') {
        neg = true;
        p++;
    }
    const char *first = p;
    while (*p && (*p != ']' || p == first)) {
        unsigned char lo = (unsigned char)*p, hi = lo;
        if (*p == '\\' && p[1])
            lo = hi = (unsigned char)*++p;
        if (p[1] == '-' && p[2] && p[2] != ']') {
            hi = (unsigned char)p[2];
            p += 2;
        }
        if (c >= lo && c <= hi)
            hit = true;
        p++;
    }
    if (*p != ']')
        return -1;
    *pp = p + 1;
    return hit != neg;
}

bool cli_glob_match(const char *pat, const char *s, size_t len)
{
    const char *star_p = NULL;
    size_t star_i = 0, i = 0;
    /* Iterative matching with one backtrack point: linear in practice and
     * never exponential. */
    while (i < len || *pat) {
        if (*pat == '*') {
            while (*pat == '*')
                pat++;
            star_p = pat;
            star_i = i;
            continue;
        }
        if (i < len) {
            const char *p = pat;
            int ok;
            if (*p == '?') {
                ok = 1;
                p++;
            } else if (*p == '[' && (ok = bracket(&p, (unsigned char)s[i])) >= 0) {
                /* p advanced by bracket() */
            } else {
                if (*p == '\\' && p[1])
                    p++;
                ok = *p && *p == s[i];
                if (*p)
                    p++;
            }
            if (ok) {
                pat = p;
                i++;
                continue;
            }
        }
        if (!star_p || star_i >= len)
            return false;
        pat = star_p;
        i = ++star_i;
    }
    return true;
}

struct cli_patterns {
    size_t n;
    char **pat;
};

static char **split_commas(const char *spec, size_t *n)
{
    size_t cap = 1;
    for (const char *c = spec; *c; c++)
        cap += *c == ',';
    char **v = calloc(cap, sizeof *v);
    if (!v)
        return NULL;
    *n = 0;
    const char *s = spec;
    for (;;) {
        const char *e = strchr(s, ',');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        if (l) {
            v[*n] = strndup(s, l);
            if (!v[*n]) {
                while (*n)
                    free(v[--*n]);
                free(v);
                return NULL;
            }
            ++*n;
        }
        if (!e)
            break;
        s = e + 1;
    }
    return v;
}

int cli_patterns_parse(const char *spec, cli_patterns **out)
{
    cli_patterns *p = calloc(1, sizeof *p);
    if (!p || !spec || !(p->pat = split_commas(spec, &p->n)) || p->n == 0) {
        cli_patterns_free(p);
        return -1;
    }
    *out = p;
    return 0;
}

bool cli_patterns_match(const cli_patterns *p, const char *s, size_t len)
{
    for (size_t i = 0; i < p->n; i++)
        if (cli_glob_match(p->pat[i], s, len))
            return true;
    return false;
}

size_t cli_patterns_count(const cli_patterns *p)
{
    return p ? p->n : 0;
}

const char *cli_patterns_get(const cli_patterns *p, size_t i)
{
    return p && i < p->n ? p->pat[i] : NULL;
}

void cli_patterns_free(cli_patterns *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        free(p->pat[i]);
    free(p->pat);
    free(p);
}

struct cli_threads {
    size_t ntids;
    uint64_t *tids;
    cli_patterns names;   /* n may be 0 */
};

int cli_threads_parse(const char *spec, cli_threads **out)
{
    size_t n;
    char **items;
    cli_threads *f = calloc(1, sizeof *f);
    if (!f || !spec || !(items = split_commas(spec, &n))) {
        free(f);
        return -1;
    }
    f->tids = calloc(n ? n : 1, sizeof *f->tids);
    f->names.pat = calloc(n ? n : 1, sizeof *f->names.pat);
    if (!f->tids || !f->names.pat || n == 0) {
        for (size_t i = 0; i < n; i++)
            free(items[i]);
        free(items);
        free(f->tids);
        free(f->names.pat);
        free(f);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t tid;
        if (cli_parse_uint(items[i], &tid) == 0) {
            f->tids[f->ntids++] = tid;
            free(items[i]);
        } else {
            f->names.pat[f->names.n++] = items[i];
        }
    }
    free(items);
    *out = f;
    return 0;
}

bool cli_threads_match(const cli_threads *f, uint64_t tid, const char *name,
                       size_t name_len)
{
    for (size_t i = 0; i < f->ntids; i++)
        if (f->tids[i] == tid)
            return true;
    return name && cli_patterns_match(&f->names, name, name_len);
}

void cli_threads_free(cli_threads *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->names.n; i++)
        free(f->names.pat[i]);
    free(f->names.pat);
    free(f->tids);
    free(f);
}

/* ------------------------------------------------------------------ */
/* Buffers and JSON text                                              */
/* ------------------------------------------------------------------ */

void cli_buf_free(cli_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

void cli_buf_grow(cli_buf *b, size_t more)
{
    if (b->cap - b->len >= more)
        return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < more) {
        if (cap > SIZE_MAX / 2)
            cli_out_of_memory();
        cap *= 2;
    }
    b->p = cli_xrealloc(b->p, cap);
    b->cap = cap;
}

void cli_buf_adds(cli_buf *b, const char *s)
{
    cli_buf_add(b, s, strlen(s));
}

/* Two digits per step: integers are most of an event's text. */
static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "6869707172737475767778798081828384858687888990919293949596979899";

void cli_buf_add_u64(cli_buf *b, uint64_t v)
{
    char tmp[24];
    char *p = tmp + sizeof tmp;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100);
        v /= 100;
        p -= 2;
        memcpy(p, digit_pairs + 2 * d, 2);
    }
    if (v >= 10) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * v, 2);
    } else {
        *--p = (char)('0' + v);
    }
    cli_buf_add(b, p, (size_t)(tmp + sizeof tmp - p));
}

void cli_buf_add_i64(cli_buf *b, int64_t v)
{
    if (v < 0) {
        cli_buf_addc(b, '-');
        cli_buf_add_u64(b, (uint64_t)0 - (uint64_t)v);
    } else {
        cli_buf_add_u64(b, (uint64_t)v);
    }
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return len;
}

/* Escaping is jansson's; we only replace invalid UTF-8 (which jansson
 * refuses) so that damaged or foreign thread names still print. */
void cli_buf_add_json_string(cli_buf *b, const char *s, size_t len)
{
    cli_buf fixed = { 0 };
    json_t *j = json_stringn(s, len);
    if (!j) {
        const unsigned char *u = (const unsigned char *)s;
        for (size_t i = 0; i < len;) {
            size_t l = utf8_seq(u + i, len - i);
            if (l) {
                cli_buf_add(&fixed, u + i, l);
                i += l;
            } else {
                cli_buf_add(&fixed, "\xef\xbf\xbd", 3);
                i++;
            }
        }
        j = json_stringn(fixed.p ? fixed.p : "", fixed.len);
    }
    if (!j)
        cli_out_of_memory();
    size_t need = json_dumpb(j, NULL, 0, JSON_ENCODE_ANY);
    cli_buf_reserve(b, need);
    b->len += json_dumpb(j, b->p + b->len, need, JSON_ENCODE_ANY);
    json_decref(j);
    cli_buf_free(&fixed);
}

char *cli_json_quote(const char *s, size_t len)
{
    cli_buf b = { 0 };
    cli_buf_add_json_string(&b, s, len);
    cli_buf_addc(&b, '\0');
    return b.p;
}

int cli_buf_flush(cli_buf *b, FILE *f)
{
    size_t n = b->len;
    b->len = 0;
    if (n && fwrite(b->p, 1, n, f) != n)
        return -1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* Chunks                                                             */
/* ------------------------------------------------------------------ */

bool cli_chunk_changed(const rec_reader *r, uint64_t *last,
                       rec_chunk_info *info)
{
    rec_chunk_info tmp;
    if (!info)
        info = &tmp;
    if (rec_reader_chunk(r, info) < 0)
        return false;
    uint64_t key = cli_chunk_key(info);
    if (key == *last)
        return false;
    *last = key;
    return true;
}
