/*
 * tools/cpu-follow.c - rec-cpu --follow: a live per-thread view of a
 * recording being written (like top -H, from the samples), refreshed
 * every interval: CPU share of the interval, samples, lost samples and
 * the function on top of most of the thread's stacks.
 *
 * On a terminal the view is redrawn in place; otherwise each interval is
 * plain lines (or, with --json, one JSON object per line). Memory is
 * bounded by the number of threads: per thread and interval at most
 * HOT_SLOTS distinct functions are counted (the rest as "other").
 *
 * Intervals are the recording's time since the attach, not the times its
 * flushes land: a sample's period is spread over the intervals it covers,
 * so no thread shows more than the interval's length, and an interval is
 * shown LAG_NS after its end, when the sampler (which writes at least
 * once a second while samples arrive) has written its samples. What the
 * file held before the attach is not shown: it is not "now".
 */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rec/record.h>

#include "cli.h"
#include "cpu-follow.h"

#define HOT_SLOTS 32
#define NB        16                 /* intervals open at once */
#define LAG_NS    1000000000ull      /* the sampler's longest nap */

struct hot {
    char *fn;
    uint64_t n;
};

struct bucket {                      /* one thread, one interval */
    uint64_t cpu_ns, samples, lost;
    struct hot hot[HOT_SLOTS];
    size_t nhot;
};

struct thr {
    uint64_t tid;
    char *name;
    struct bucket b[NB];             /* by interval % NB */
    uint64_t cpu_ns, samples, lost;  /* the interval being shown */
    const char *hot;                 /* its hottest function */
};

struct view {
    struct thr *t;
    size_t n, cap;
    uint64_t attach_ns, interval_ns;
    uint64_t first;                  /* the next interval to show */
    uint64_t last;                   /* the latest interval with data */
    uint64_t before;                 /* samples from before the attach */
    uint64_t lag;                    /* an interval is shown after */
    cli_evview ev;                   /* of the chunk */
    enum cpu_follow_style style;
    FILE *out;
    const cli_threads *filter;
    const char *prog, *path;
};


static struct thr *thread_of(struct view *v, const rec_entry *e,
                             const cli_threads *filter)
{
    cli_thread_info ti;
    if (!e)
        return NULL;
    cli_evview_thread(&v->ev, e, &ti);
    uint64_t tid = ti.tid;
    const char *name = ti.name;
    size_t nlen = ti.name_len;
    if (filter && !cli_threads_match(filter, tid, name, nlen))
        return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (v->t[i].tid == tid) {
            if (name && (!v->t[i].name || strncmp(v->t[i].name, name, nlen) ||
                         v->t[i].name[nlen])) {
                free(v->t[i].name);     /* renamed */
                v->t[i].name = strndup(name, nlen);
            }
            return &v->t[i];
        }
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 16;
        v->t = cli_xrealloc(v->t, v->cap * sizeof *v->t);
    }
    struct thr *t = &v->t[v->n++];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->name = name ? strndup(name, nlen) : NULL;
    return t;
}

/* The function of the top frame of a StackTrace entry. */
static bool top_function(cli_evview *view, const rec_entry *st,
                         const char **s, size_t *len)
{
    const rec_value *frames;
    const rec_entry *top;
    if (!st || !cli_evview_frames(view, st, &frames) ||
        !(top = cli_value_ref(&frames[0])))
        return false;
    return cli_entry_text(view, top, cli_evview_entry(view, top)->function,
                          s, len);
}

static void count_hot(struct bucket *t, const char *s, size_t len)
{
    for (size_t i = 0; i < t->nhot; i++)
        if (strncmp(t->hot[i].fn, s, len) == 0 && !t->hot[i].fn[len]) {
            t->hot[i].n++;
            return;
        }
    if (t->nhot < HOT_SLOTS) {
        t->hot[t->nhot].fn = strndup(s, len);
        t->hot[t->nhot++].n = 1;
    }
}

/* The interval of time at (>= the attach). */
static uint64_t interval_of(const struct view *v, uint64_t at)
{
    return (at - v->attach_ns) / v->interval_ns;
}

/* Thread th's bucket of interval k: one shown already counts in the first
 * still open, one too far ahead in the last. */
static struct bucket *bucket(struct view *v, struct thr *th, uint64_t k)
{
    if (k < v->first)
        k = v->first;
    if (k >= v->first + NB)
        k = v->first + NB - 1;
    if (k > v->last)
        v->last = k;
    return &th->b[k % NB];
}

/* A sample at time at stands for the CPU time p before it: each interval
 * it covers (after the attach) gets its part. */
static void spread(struct view *v, struct thr *th, uint64_t at, uint64_t p)
{
    uint64_t lo = at > p ? at - p : 0;

    if (lo < v->attach_ns)
        lo = v->attach_ns;
    while (at > lo) {
        uint64_t k = interval_of(v, at - 1);
        uint64_t start = v->attach_ns + k * v->interval_ns;
        uint64_t from = start > lo ? start : lo;
        bucket(v, th, k)->cpu_ns += at - from;
        at = from;
    }
}

static void fold(struct view *v, const rec_event *ev, const cli_threads *filter)
{
    const cli_evtype *t = cli_evview_event(&v->ev, ev);
    const rec_value *vals = rec_event_values(ev);
    const char *s;
    size_t len;
    uint64_t n = 0;
    if (!vals || (t->kind != CLI_EV_SAMPLE && t->kind != CLI_EV_LOST) ||
        t->thread < 0)
        return;
    uint64_t at = rec_event_time_ns(ev);
    if (t->kind == CLI_EV_SAMPLE) {
        if (at < v->attach_ns) {
            v->before++;
            return;
        }
        struct thr *th = thread_of(v, cli_ev_ref(vals, t->thread), filter);
        if (!th)
            return;
        struct bucket *b = bucket(v, th, interval_of(v, at));
        b->samples++;
        cli_ev_uint(vals, t->period, &n);
        spread(v, th, at, n);
        if (top_function(&v->ev, cli_ev_ref(vals, t->stack), &s, &len))
            count_hot(b, s, len);
    } else if (at >= v->attach_ns) {
        struct thr *th = thread_of(v, cli_ev_ref(vals, t->thread), filter);
        if (th && cli_ev_uint(vals, t->lost_samples, &n))
            bucket(v, th, interval_of(v, at))->lost += n;
    }
}

static const char *hottest(const struct bucket *t)
{
    const struct hot *best = NULL;
    for (size_t i = 0; i < t->nhot; i++)
        if (!best || t->hot[i].n > best->n)
            best = &t->hot[i];
    return best ? best->fn : "-";
}

static int by_cpu(const void *a, const void *b)
{
    const struct thr *x = a, *y = b;
    return x->cpu_ns < y->cpu_ns ? 1 : x->cpu_ns > y->cpu_ns ? -1 : 0;
}

/* Control characters (any thread may name itself with an escape
 * sequence) would reach the viewer's terminal: '?' instead. */
static const char *printable(char *buf, size_t size, const char *s)
{
    snprintf(buf, size, "%s", s);
    for (char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    return buf;
}

/* Print interval v->first (its buckets), then free them. */
static void show(struct view *v, enum cpu_follow_style style, FILE *out)
{
    cli_buf b = { 0 };
    char line[512], nm[64], hot[256];
    uint64_t k = v->first, interval_ns = v->interval_ns;
    double elapsed_s = (double)((k + 1) * interval_ns) / 1e9;

    for (size_t i = 0; i < v->n; i++) {
        struct thr *t = &v->t[i];
        struct bucket *bk = &t->b[k % NB];
        /* A thread uses at most the interval's length: more is samples
         * signalled late (a tick, a busy machine) whose CPU time their
         * timestamps place too early; it goes to the next interval. */
        if (bk->cpu_ns > interval_ns) {
            t->b[(k + 1) % NB].cpu_ns += bk->cpu_ns - interval_ns;
            bk->cpu_ns = interval_ns;
            if (v->last < k + 1)
                v->last = k + 1;
        }
        t->cpu_ns = bk->cpu_ns;
        t->samples = bk->samples;
        t->lost = bk->lost;
        t->hot = hottest(bk);
    }
    if (v->n)
        qsort(v->t, v->n, sizeof *v->t, by_cpu);
    if (style == CPU_FOLLOW_JSON) {
        snprintf(line, sizeof line, "{\"elapsed\":%.3f,\"intervalNs\":%llu,\"threads\":[",
                 elapsed_s, (unsigned long long)interval_ns);
        cli_buf_adds(&b, line);
    } else {
        if (style == CPU_FOLLOW_TTY)
            cli_buf_adds(&b, "\033[H\033[J");
        snprintf(line, sizeof line, "%9.1fs %8s %6s %8s %6s %-16s %s\n",
                 elapsed_s, "TID", "CPU%",
                 "SAMPLES", "LOST", "THREAD", "HOTTEST");
        cli_buf_adds(&b, line);
    }
    size_t shown = 0;
    for (size_t i = 0; i < v->n; i++) {
        struct thr *t = &v->t[i];
        if (!t->samples && !t->lost && !t->cpu_ns)
            continue;
        double share = 100.0 * (double)t->cpu_ns / (double)interval_ns;
        if (style == CPU_FOLLOW_JSON) {
            snprintf(line, sizeof line, "%s{\"tid\":%llu,\"cpuShare\":%.1f,"
                     "\"cpuNs\":%llu,\"samples\":%llu,\"lost\":%llu,\"name\":",
                     shown ? "," : "", (unsigned long long)t->tid, share,
                     (unsigned long long)t->cpu_ns, (unsigned long long)t->samples,
                     (unsigned long long)t->lost);
            cli_buf_adds(&b, line);
            const char *n = t->name ? t->name : "";
            cli_buf_add_json_string(&b, n, strlen(n));
            cli_buf_adds(&b, ",\"hottest\":");
            cli_buf_add_json_string(&b, t->hot, strlen(t->hot));
            cli_buf_addc(&b, '}');
        } else {
            snprintf(line, sizeof line, "%10s %8llu %6.1f %8llu %6llu %-16.16s %.60s\n",
                     "", (unsigned long long)t->tid, share,
                     (unsigned long long)t->samples, (unsigned long long)t->lost,
                     t->name ? printable(nm, sizeof nm, t->name) : "-",
                     printable(hot, sizeof hot, t->hot));
            cli_buf_adds(&b, line);
        }
        shown++;
    }
    if (style == CPU_FOLLOW_JSON)
        cli_buf_adds(&b, "]}\n");
    cli_buf_flush(&b, out);
    fflush(out);
    cli_buf_free(&b);
    for (size_t i = 0; i < v->n; i++) {
        struct bucket *bk = &v->t[i].b[k % NB];
        for (size_t h = 0; h < bk->nhot; h++)
            free(bk->hot[h].fn);
        memset(bk, 0, sizeof *bk);
        v->t[i].hot = NULL;
    }
    v->first++;
}

static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Show the intervals due; the ms until the next one is. */
static int follow_due(void *ctx)
{
    struct view *v = ctx;
    uint64_t now = wall_ns();
    while (v->attach_ns + (v->first + 1) * v->interval_ns + v->lag <= now)
        show(v, v->style, v->out);
    uint64_t due = v->attach_ns + (v->first + 1) * v->interval_ns + v->lag;
    uint64_t ms = (due - now + 999999) / 1000000;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

static void follow_chunk(void *ctx, const rec_chunk_info *info)
{
    struct view *v = ctx;
    (void)info;
    cli_evview_reset(&v->ev);
}

static int follow_event(void *ctx, const rec_event *ev)
{
    struct view *v = ctx;
    fold(v, ev, v->filter);
    return 0;
}

/* What the last intervals saw, the partial one included. */
static void follow_end(void *ctx)
{
    struct view *v = ctx;
    uint64_t end = interval_of(v, wall_ns());
    /* (v->last grows when an interval passes its excess on.) */
    while (v->first <= end || v->first <= v->last)
        show(v, v->style, v->out);
    if (v->before)
        fprintf(stderr, "%s: %llu samples from before the follow began are not "
                "shown (rec-cpu %s reports them)\n", v->prog,
                (unsigned long long)v->before, v->path);
}

int cpu_follow(const char *prog, const char *path, const cli_follow_opts *fo,
               uint64_t interval_ns, enum cpu_follow_style style,
               const cli_threads *filter, FILE *out)
{
    struct view v = { .interval_ns = interval_ns, .style = style, .out = out,
                      .filter = filter, .prog = prog, .path = path };
    cli_follow_cb cb = { .ctx = &v, .chunk = follow_chunk,
                         .event = follow_event, .due = follow_due,
                         .end = follow_end };
    v.attach_ns = wall_ns();
    /* Interval k is shown when the sampler has written it, LAG_NS after
     * its end (but never more than the open buckets allow). */
    v.lag = LAG_NS < (NB - 2) * interval_ns ? LAG_NS : (NB - 2) * interval_ns;
    int status = cli_follow(prog, path, fo, &cb);
    for (size_t i = 0; i < v.n; i++) {
        for (size_t k = 0; k < NB; k++)
            for (size_t h = 0; h < v.t[i].b[k].nhot; h++)
                free(v.t[i].b[k].hot[h].fn);
        free(v.t[i].name);
    }
    free(v.t);
    cli_evview_free(&v.ev);
    if (ferror(out)) {
        cli_error(prog, "output: %s", strerror(errno));
        status = CLI_EXIT_DATA;
    }
    return status;
}
