/*
 * tools/export/export-jfr.c - `rec-dump --format jfr`: a JDK Flight Recorder
 * file (one chunk) that `jfr print`, `jfr summary`, `jfr view` and JDK
 * Mission Control open.
 *
 * Layout: the 68-byte chunk header (big-endian, "FLR\0", version 2.0,
 * compressed integers), the events, one checkpoint event holding every
 * constant pool, then the metadata event describing the types. Integers
 * in events, pools and metadata are LEB128 (the JDK reads every long and
 * int that way); booleans are one byte; strings are inline UTF-8
 * (encoding 3). Ticks are nanoseconds (ticksPerSecond 10^9) from the
 * earliest chunk start.
 *
 * What maps to what (man/rec-dump.1 has the table):
 *   CPUTimeSample      -> jdk.CPUTimeSample (startTime, stackTrace,
 *                         eventThread, failed, samplingPeriod, biased)
 *   CPUTimeSampleLost  -> jdk.CPUTimeSamplesLost (startTime, lostSamples,
 *                         eventThread) plus lostTime and reason
 *   Thread             -> java.lang.Thread (osName and javaName = the
 *                         thread's name, osThreadId and javaThreadId =
 *                         its tid)
 *   StackTrace/Frame   -> jdk.types.StackTrace / jdk.types.StackFrame
 *                         (type "Native", or "Inlined"), the function is
 *                         a jdk.types.Method whose class (java.lang.Class)
 *                         is the module's file name
 * The JDK's own field order is kept: readers take the first field as the
 * start time.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

/* Type ids of the metadata below. */
enum {
    T_LONG = 1, T_INT, T_BOOLEAN, T_STRING,
    T_THREAD = 10, T_CLASS, T_METHOD, T_FRAME, T_STACK,
    T_SAMPLE = 20, T_LOST,
    T_A_TIMESTAMP = 30, T_A_TIMESPAN, T_A_LABEL,
};

struct xp_jfr {
    cli_buf events;             /* encoded events, in reading order */
    uint64_t origin_ns;         /* ticks 0 */
    bool have_origin;
    xp_profile *p;
    uint8_t *stack_used;        /* by stack id */
    size_t cap_used;
    uint8_t *thread_used;
    size_t cap_threads;
};

/* ---- encoding ----------------------------------------------------- */

static void leb(cli_buf *b, uint64_t v)
{
    cli_buf_reserve(b, 10);
    while (v >= 0x80) {
        b->p[b->len++] = (char)(v | 0x80);
        v >>= 7;
    }
    b->p[b->len++] = (char)v;
}

static void jstr(cli_buf *b, const char *s)
{
    if (!s) {
        cli_buf_addc(b, 0);     /* null */
        return;
    }
    size_t n = strlen(s);
    cli_buf_addc(b, n ? 3 : 1);  /* UTF-8, or the empty string */
    if (n) {
        leb(b, n);
        cli_buf_add(b, s, n);
    }
}

static void be(cli_buf *b, uint64_t v, int bytes)
{
    while (bytes-- > 0)
        cli_buf_addc(b, (char)(v >> (8 * bytes)));
}

/* An event is its size (LEB128, counting itself), then its body. */
static void put_event(cli_buf *out, const cli_buf *body)
{
    size_t n = body->len, total = n + 1;
    while (1) {
        size_t k = 1;
        for (uint64_t v = total; v >= 0x80; v >>= 7)
            k++;
        if (n + k == total)
            break;
        total = n + k;
    }
    leb(out, total);
    cli_buf_add(out, body->p, body->len);
}

/* ---- events, as they are read ---------------------------------------- */

xp_jfr *xp_jfr_new(xp_profile *p)
{
    xp_jfr *j = cli_xrealloc(NULL, sizeof *j);
    memset(j, 0, sizeof *j);
    j->p = p;
    return j;
}

void xp_jfr_free(xp_jfr *j)
{
    if (!j)
        return;
    cli_buf_free(&j->events);
    free(j->stack_used);
    free(j->thread_used);
    free(j);
}

static void mark(uint8_t **v, size_t *cap, size_t i)
{
    if (i >= *cap) {
        size_t n = *cap ? *cap : 256;
        while (n <= i)
            n *= 2;
        *v = cli_xrealloc(*v, n);
        memset(*v + *cap, 0, n - *cap);
        *cap = n;
    }
    (*v)[i] = 1;
}

int xp_jfr_event(void *arg, const xp_event *e)
{
    xp_jfr *j = arg;
    if (!j->have_origin) {
        /* The first chunk's start: xp_read sets it before any event. */
        j->have_origin = true;
        j->origin_ns = j->p->start_ns < e->ts_ns ? j->p->start_ns : e->ts_ns;
    }
    cli_buf body = { 0 };
    uint64_t ticks = e->ts_ns > j->origin_ns ? e->ts_ns - j->origin_ns : 0;
    mark(&j->thread_used, &j->cap_threads, e->thread);
    if (e->kind == XP_SAMPLE) {
        leb(&body, T_SAMPLE);
        leb(&body, ticks);
        /* Pseudo-stacks ([failed], [no stack]) are a null stack trace,
         * as in the JDK's own failed samples. */
        size_t n;
        const uint32_t *fr = xp_stack(j->p, e->stack, &n);
        bool pseudo = n == 1 && (j->p->frames[fr[0]].flags & XP_F_PSEUDO);
        leb(&body, pseudo ? 0 : (uint64_t)e->stack + 1);
        leb(&body, (uint64_t)e->thread + 1);
        cli_buf_addc(&body, e->failed);
        leb(&body, e->ns);
        cli_buf_addc(&body, e->biased);
        if (!pseudo)
            mark(&j->stack_used, &j->cap_used, e->stack);
    } else {
        leb(&body, T_LOST);
        leb(&body, ticks);
        leb(&body, e->count > INT32_MAX ? INT32_MAX : e->count);
        leb(&body, (uint64_t)e->thread + 1);
        leb(&body, e->ns);
        leb(&body, e->reason);      /* string index, resolved at the end */
    }
    put_event(&j->events, &body);
    cli_buf_free(&body);
    return 0;
}

/* ---- metadata ----------------------------------------------------------- */

/* The metadata is a tree of elements whose names and attributes are
 * indexes into a string table; built as text-like calls here. */
typedef struct meta {
    const char **strs;
    size_t n, cap;
    cli_buf tree;
} meta;

static uint64_t ms(meta *m, const char *s)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->strs[i], s) == 0)
            return i;
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->strs = cli_xrealloc(m->strs, m->cap * sizeof *m->strs);
    }
    m->strs[m->n] = s;
    return m->n++;
}

/* Element: name, attributes (nattr pairs), then nchildren follow. */
static void elem(meta *m, const char *name, int nattr, const char **attr,
                 int nchildren)
{
    leb(&m->tree, ms(m, name));
    leb(&m->tree, (uint64_t)nattr);
    for (int i = 0; i < nattr; i++) {
        leb(&m->tree, ms(m, attr[2 * i]));
        leb(&m->tree, ms(m, attr[2 * i + 1]));
    }
    leb(&m->tree, (uint64_t)nchildren);
}

static const char *id_str(int id)
{
    static char buf[64][8];
    snprintf(buf[id], sizeof buf[id], "%d", id);
    return buf[id];
}

/* A class with nfields fields (given next with field()). */
static void cls(meta *m, int id, const char *name, const char *super,
                int nchildren)
{
    const char *a[] = { "name", name, "id", id_str(id), "superType", super };
    elem(m, "class", super ? 3 : 2, a, nchildren);
}

/* A field; annotation (a class id and value) is optional. */
static void field(meta *m, const char *name, int type, bool cp, bool array,
                  int ann, const char *value)
{
    const char *a[8] = { "name", name, "class", id_str(type) };
    int n = 2;
    if (cp) {
        a[2 * n] = "constantPool";
        a[2 * n++ + 1] = "true";
    }
    if (array) {
        a[2 * n] = "dimension";
        a[2 * n++ + 1] = "1";
    }
    elem(m, "field", n, a, ann ? 1 : 0);
    if (ann) {
        const char *b[] = { "class", id_str(ann), "value", value };
        elem(m, "annotation", 2, b, 0);
    }
}

static void metadata(cli_buf *out, uint64_t ticks)
{
    meta m = { 0 };
    elem(&m, "root", 0, NULL, 2);
    elem(&m, "metadata", 0, NULL, 14);
    cls(&m, T_LONG, "long", NULL, 0);
    cls(&m, T_INT, "int", NULL, 0);
    cls(&m, T_BOOLEAN, "boolean", NULL, 0);
    cls(&m, T_STRING, "java.lang.String", NULL, 0);
    cls(&m, T_A_TIMESTAMP, "jdk.jfr.Timestamp",
        "java.lang.annotation.Annotation", 1);
    field(&m, "value", T_STRING, false, false, 0, NULL);
    cls(&m, T_A_TIMESPAN, "jdk.jfr.Timespan",
        "java.lang.annotation.Annotation", 1);
    field(&m, "value", T_STRING, false, false, 0, NULL);
    cls(&m, T_A_LABEL, "jdk.jfr.Label", "java.lang.annotation.Annotation", 1);
    field(&m, "value", T_STRING, false, false, 0, NULL);
    cls(&m, T_THREAD, "java.lang.Thread", NULL, 4);
    field(&m, "osName", T_STRING, false, false, 0, NULL);
    field(&m, "osThreadId", T_LONG, false, false, 0, NULL);
    field(&m, "javaName", T_STRING, false, false, 0, NULL);
    field(&m, "javaThreadId", T_LONG, false, false, 0, NULL);
    cls(&m, T_CLASS, "java.lang.Class", NULL, 3);
    field(&m, "name", T_STRING, false, false, 0, NULL);
    field(&m, "modifiers", T_INT, false, false, 0, NULL);
    field(&m, "hidden", T_BOOLEAN, false, false, 0, NULL);
    cls(&m, T_METHOD, "jdk.types.Method", NULL, 5);
    field(&m, "type", T_CLASS, true, false, 0, NULL);
    field(&m, "name", T_STRING, false, false, 0, NULL);
    field(&m, "descriptor", T_STRING, false, false, 0, NULL);
    field(&m, "modifiers", T_INT, false, false, 0, NULL);
    field(&m, "hidden", T_BOOLEAN, false, false, 0, NULL);
    cls(&m, T_FRAME, "jdk.types.StackFrame", NULL, 4);
    field(&m, "method", T_METHOD, true, false, 0, NULL);
    field(&m, "lineNumber", T_INT, false, false, 0, NULL);
    field(&m, "bytecodeIndex", T_INT, false, false, 0, NULL);
    field(&m, "type", T_STRING, false, false, 0, NULL);
    cls(&m, T_STACK, "jdk.types.StackTrace", NULL, 2);
    field(&m, "truncated", T_BOOLEAN, false, false, 0, NULL);
    field(&m, "frames", T_FRAME, false, true, 0, NULL);
    cls(&m, T_SAMPLE, "jdk.CPUTimeSample", "jdk.jfr.Event", 6);
    field(&m, "startTime", T_LONG, false, false, T_A_TIMESTAMP, "TICKS");
    field(&m, "stackTrace", T_STACK, true, false, 0, NULL);
    field(&m, "eventThread", T_THREAD, true, false, 0, NULL);
    field(&m, "failed", T_BOOLEAN, false, false, 0, NULL);
    field(&m, "samplingPeriod", T_LONG, false, false, T_A_TIMESPAN, "TICKS");
    field(&m, "biased", T_BOOLEAN, false, false, 0, NULL);
    cls(&m, T_LOST, "jdk.CPUTimeSamplesLost", "jdk.jfr.Event", 5);
    field(&m, "startTime", T_LONG, false, false, T_A_TIMESTAMP, "TICKS");
    field(&m, "lostSamples", T_INT, false, false, 0, NULL);
    field(&m, "eventThread", T_THREAD, true, false, 0, NULL);
    field(&m, "lostTime", T_LONG, false, false, T_A_TIMESPAN, "NANOSECONDS");
    field(&m, "reason", T_STRING, false, false, 0, NULL);
    const char *region[] = { "locale", "en_US", "gmtOffset", "0" };
    elem(&m, "region", 2, region, 0);

    cli_buf body = { 0 };
    leb(&body, 0);              /* type: metadata */
    leb(&body, ticks);          /* start */
    leb(&body, 0);              /* duration */
    leb(&body, 1);              /* metadata id */
    leb(&body, m.n);
    for (size_t i = 0; i < m.n; i++)
        jstr(&body, m.strs[i]);
    cli_buf_add(&body, m.tree.p, m.tree.len);
    put_event(out, &body);
    cli_buf_free(&body);
    cli_buf_free(&m.tree);
    free(m.strs);
}

/* ---- constant pools ------------------------------------------------ */

static const char *basename_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static void pools(xp_jfr *j, cli_buf *out, uint64_t ticks)
{
    xp_profile *p = j->p;
    cli_buf body = { 0 }, frames = { 0 }, methods = { 0 }, classes = { 0 };
    xp_seqtab mtab = { 0 };
    cli_map cl = { 0 };
    size_t nstacks = 0, nthreads = 0, nclasses = 0;
    for (size_t i = 0; i < j->cap_used; i++)
        nstacks += j->stack_used[i];
    for (size_t i = 0; i < j->cap_threads; i++)
        nthreads += j->thread_used[i];

    /* Stacks, innermost frame first as JFR has them; methods and classes
     * are collected on the way. */
    for (size_t i = 0; i < j->cap_used; i++) {
        if (!j->stack_used[i])
            continue;
        size_t n;
        const uint32_t *fr = xp_stack(p, (uint32_t)i, &n);
        leb(&frames, i + 1);
        cli_buf_addc(&frames, 0);               /* truncated */
        leb(&frames, n);
        for (size_t k = n; k-- > 0;) {
            const xp_frame *f = &p->frames[fr[k]];
            uint32_t key[2] = { f->func, f->module };
            size_t before = mtab.n;
            long mid = xp_seqtab_intern(&mtab, key, 2);
            if (mid < 0)
                mid = 0;
            if (mtab.n != before) {
                uint64_t ckey = (uint64_t)f->module + 1;
                if (xp_map_get(&cl, ckey) == UINT32_MAX) {
                    cli_map_put(&cl, ckey, 1);
                    leb(&classes, ckey);
                    jstr(&classes, f->module ? basename_of(xp_str(p, f->module))
                                             : "[native]");
                    leb(&classes, 0);           /* modifiers */
                    cli_buf_addc(&classes, 0);  /* hidden */
                    nclasses++;
                }
                leb(&methods, (uint64_t)mid + 1);
                leb(&methods, ckey);
                jstr(&methods, xp_str(p, f->func));
                jstr(&methods, "()V");
                leb(&methods, 0);
                cli_buf_addc(&methods, 0);
            }
            leb(&frames, (uint64_t)mid + 1);
            leb(&frames, f->line);
            leb(&frames, 0);
            jstr(&frames, f->flags & XP_F_INLINED ? "Inlined" : "Native");
        }
    }

    leb(&body, 1);              /* type: checkpoint */
    leb(&body, ticks);
    leb(&body, 0);              /* duration */
    leb(&body, 0);              /* delta to the previous checkpoint: none */
    cli_buf_addc(&body, 0);     /* checkpoint kind: generic */
    leb(&body, 4);              /* pools */
    leb(&body, T_THREAD);
    leb(&body, nthreads);
    for (size_t i = 0; i < j->cap_threads; i++) {
        if (!j->thread_used[i])
            continue;
        const xp_thread *t = &p->threads[i];
        const char *name = t->name ? xp_str(p, t->name) : NULL;
        leb(&body, i + 1);
        jstr(&body, name);
        leb(&body, t->tid);
        jstr(&body, name);
        leb(&body, t->tid);
    }
    leb(&body, T_STACK);
    leb(&body, nstacks);
    cli_buf_add(&body, frames.p, frames.len);
    leb(&body, T_METHOD);
    leb(&body, mtab.n);
    cli_buf_add(&body, methods.p, methods.len);
    leb(&body, T_CLASS);
    leb(&body, nclasses);
    cli_buf_add(&body, classes.p, classes.len);
    put_event(out, &body);
    cli_buf_free(&body);
    cli_buf_free(&frames);
    cli_buf_free(&methods);
    cli_buf_free(&classes);
    xp_seqtab_free(&mtab);
    cli_map_free(&cl);
}

/* Lost events carry the reason as a string index until the strings are
 * final: rewrite them with the text. */
static void resolve_reasons(xp_jfr *j, cli_buf *out)
{
    const unsigned char *s = (const unsigned char *)j->events.p;
    size_t pos = 0, len = j->events.len;
    cli_buf body = { 0 };
    while (pos < len) {
        uint64_t v[8];
        size_t start = pos;
        int k = 0;
        /* size, type, and for lost events 5 more varints */
        for (; k < 2; k++) {
            uint64_t x = 0;
            for (int sh = 0;; sh += 7) {
                x |= (uint64_t)(s[pos] & 0x7f) << sh;
                if (!(s[pos++] & 0x80))
                    break;
            }
            v[k] = x;
        }
        if (v[1] != T_LOST) {
            cli_buf_add(out, s + start, v[0]);
            pos = start + v[0];
            continue;
        }
        for (; k < 7; k++) {
            uint64_t x = 0;
            for (int sh = 0;; sh += 7) {
                x |= (uint64_t)(s[pos] & 0x7f) << sh;
                if (!(s[pos++] & 0x80))
                    break;
            }
            v[k] = x;
        }
        body.len = 0;
        for (k = 1; k < 6; k++)
            leb(&body, v[k]);
        jstr(&body, xp_str(j->p, (uint32_t)v[6]));
        put_event(out, &body);
        pos = start + v[0];
    }
    cli_buf_free(&body);
}

int xp_write_jfr(xp_profile *p, xp_jfr *j, const xp_out *o)
{
    if (!j->have_origin)
        j->origin_ns = p->start_ns != UINT64_MAX ? p->start_ns : 0;
    uint64_t end = p->end_ns > j->origin_ns ? p->end_ns : j->origin_ns;
    cli_buf out = { 0 };
    cli_buf_reserve(&out, 68);
    out.len = 68;
    resolve_reasons(j, &out);
    uint64_t cp_off = out.len;
    pools(j, &out, end - j->origin_ns);
    uint64_t meta_off = out.len;
    metadata(&out, end - j->origin_ns);
    cli_buf h = { 0 };
    cli_buf_add(&h, "FLR", 4);
    be(&h, 2, 2);               /* major */
    be(&h, 0, 2);               /* minor */
    be(&h, out.len, 8);         /* chunk size */
    be(&h, cp_off, 8);
    be(&h, meta_off, 8);
    be(&h, j->origin_ns, 8);    /* start, ns since the epoch */
    be(&h, end - j->origin_ns, 8);
    be(&h, 0, 8);               /* start ticks */
    be(&h, 1000000000, 8);      /* ticks per second */
    /* File state 0 (finished), flags: compressed integers, final chunk. */
    be(&h, 1 | 2, 4);
    memcpy(out.p, h.p, 68);
    cli_buf_free(&h);
    int rc = cli_buf_flush(&out, o->f);
    if (rc < 0)
        cli_error(o->prog, "%s: %s", o->path, strerror(errno));
    cli_buf_free(&out);
    return rc;
}
