/*
 * tools/losses.c - where the CPU time without stacks went, by reason, for
 * the one-line verdict rec-start and rec-summary print: the CPU time of
 * the recording is what the samples stand for (their periods) plus what
 * was counted lost; the share without a stack is the lost time plus the
 * periods of the samples whose stack could not be taken. The top reasons
 * are named with their share and how many threads they hit, so that the
 * user learns why (threads that block signals, threads too short for the
 * timer tick...) without reading the recording. Samples whose stack was
 * cut short (truncated, with the walk's reason) get a line of their own.
 */
#include <config.h>
#include "losses.h"
#include "cli.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REASONS 16

struct reason {
    char name[24];
    uint64_t ns;
    uint64_t *tids;            /* threads it hit (duplicates until sorted) */
    size_t ntids, ctids;
};

/* One set of reasons and the CPU time they took. */
struct reasons {
    uint64_t ns;
    struct reason r[MAX_REASONS];
    size_t nr;
};

struct cli_losses {
    uint64_t total_ns;
    struct reasons nostack, partial;
};

/* What each reason means to a user (libsampler(3) has the details). */
static const struct {
    const char *name, *what;
} meanings[] = {
    { "blocked", "threads blocking the sampling signal" },
    { "undelivered", "timer expiries never signalled, short or "
      "time-sliced threads" },
    { "unsafe", "signals where no stack can be taken" },
    { "queue-full", "full sample queues" },
    { "queue-busy", "busy sample queues" },
    { "timer-failed", "threads without a CPU-time timer" },
    { "untracked", "threads started before sampling" },
    { "failed", "stack walks that failed" },
    /* Partial stacks (StackTrace.truncationReason). */
    { "depth", "the stack depth limit" },
    { "early", "modules whose unwind table was not built yet" },
    { "no-unwind-info", "code without unwind information" },
    { "jit", "JIT code without frame pointers" },
    { "bad-cfa", "frames that do not go up the stack" },
    { "stack-bound", "frames outside the thread's stack" },
    { "unknown-code", "return addresses into unknown code" },
    { "foreign-read", "stacks the kernel would not read" },
};

static const char *meaning(const char *name, const char *other)
{
    for (size_t i = 0; i < sizeof meanings / sizeof meanings[0]; i++)
        if (!strcmp(meanings[i].name, name))
            return meanings[i].what;
    return other;
}

cli_losses *cli_losses_new(void)
{
    return calloc(1, sizeof(cli_losses));
}

void cli_losses_free(cli_losses *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->nostack.nr; i++)
        free(l->nostack.r[i].tids);
    for (size_t i = 0; i < l->partial.nr; i++)
        free(l->partial.r[i].tids);
    free(l);
}

static uint64_t tid_of(cli_evview *view, const rec_value *vals, long f)
{
    cli_thread_info ti;

    cli_evview_thread(view, cli_ev_ref(vals, f), &ti);
    return ti.tid;
}

static struct reason *reason_of(struct reasons *l, const char *name, size_t len)
{
    if (len >= sizeof l->r[0].name)
        len = sizeof l->r[0].name - 1;
    for (size_t i = 0; i < l->nr; i++)
        if (strlen(l->r[i].name) == len && !memcmp(l->r[i].name, name, len))
            return &l->r[i];
    if (l->nr == MAX_REASONS)
        return NULL;
    memcpy(l->r[l->nr].name, name, len);
    l->r[l->nr].name[len] = '\0';
    return &l->r[l->nr++];
}

static void hit(struct reasons *l, const char *name, size_t len, uint64_t ns,
                uint64_t tid)
{
    struct reason *r = reason_of(l, name, len);

    l->ns += ns;
    if (!r)
        return;
    r->ns += ns;
    if (r->ntids && r->tids[r->ntids - 1] == tid)
        return;
    if (r->ntids == r->ctids) {
        size_t nc = r->ctids ? r->ctids * 2 : 16;
        uint64_t *n = realloc(r->tids, nc * sizeof *n);
        if (!n)
            return;
        r->tids = n;
        r->ctids = nc;
    }
    r->tids[r->ntids++] = tid;
}

void cli_losses_event(cli_losses *l, cli_evview *view, const rec_event *ev)
{
    const cli_evtype *t = cli_evview_event(view, ev);
    const rec_value *vals;
    const rec_entry *st;
    const char *name = "none given";
    size_t len = 10;
    uint64_t ns = 0;

    if (t->kind != CLI_EV_SAMPLE && t->kind != CLI_EV_LOST)
        return;
    if (!(vals = rec_event_values(ev)))
        return;
    if (t->kind == CLI_EV_SAMPLE) {
        cli_ev_uint(vals, t->period, &ns);
        l->total_ns += ns;
        st = cli_ev_ref(vals, t->stack);
        if (cli_ev_bool(vals, t->failed) || !st) {
            hit(&l->nostack, "failed", 6, ns, tid_of(view, vals, t->thread));
        } else {
            /* A stack cut short, by its reason. */
            int why = cli_evview_partial(view, st);
            if (why >= 0)
                hit(&l->partial, cli_partial_names[why],
                    strlen(cli_partial_names[why]), ns,
                    tid_of(view, vals, t->thread));
        }
    } else {
        cli_ev_uint(vals, t->lost_time, &ns);
        l->total_ns += ns;
        cli_ev_text(view, vals, t->reason, &name, &len);
        if (ns)
            hit(&l->nostack, name, len, ns, tid_of(view, vals, t->thread));
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static size_t distinct(const struct reason *r)
{
    size_t n = 0;

    qsort(r->tids, r->ntids, sizeof *r->tids, cmp_u64);
    for (size_t i = 0; i < r->ntids; i++)
        n += i == 0 || r->tids[i] != r->tids[i - 1];
    return n;
}

/* "N% of CPU WHAT: the top three reasons", or "" at 1% or less. */
static char *line(const struct reasons *l, uint64_t total_ns, const char *what,
                  const char *other, char *buf, size_t size)
{
    const struct reason *top[3] = { 0 };
    size_t ntop = 0, off;
    double share;

    buf[0] = '\0';
    if (!total_ns || l->ns * 100 <= total_ns)
        return buf;
    share = 100.0 * (double)l->ns / (double)total_ns;
    off = (size_t)snprintf(buf, size, "%.0f%% of CPU %s:", share, what);
    for (size_t k = 0; k < 3; k++) {
        const struct reason *best = NULL;
        for (size_t i = 0; i < l->nr; i++) {
            bool taken = false;
            for (size_t j = 0; j < ntop; j++)
                taken |= top[j] == &l->r[i];
            if (!taken && l->r[i].ns && (!best || l->r[i].ns > best->ns))
                best = &l->r[i];
        }
        if (!best)
            break;
        top[ntop++] = best;
    }
    for (size_t j = 0; j < ntop && off < size; j++) {
        size_t nt = distinct(top[j]);
        off += (size_t)snprintf(buf + off, size - off,
                                "%s %.0f%% %s (%s, %zu thread%s)",
                                j ? ";" : "",
                                100.0 * (double)top[j]->ns / (double)total_ns,
                                meaning(top[j]->name, other), top[j]->name, nt,
                                nt == 1 ? "" : "s");
    }
    return buf;
}

char *cli_losses_line(const cli_losses *l, char *buf, size_t size)
{
    return line(&l->nostack, l->total_ns, "without stacks", "lost samples",
                buf, size);
}

char *cli_losses_partial_line(const cli_losses *l, char *buf, size_t size)
{
    return line(&l->partial, l->total_ns, "with partial stacks",
                "walks cut short", buf, size);
}

size_t cli_losses_partial(const cli_losses *l, const char **names,
                          uint64_t *ns, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < l->partial.nr && n < max; i++, n++) {
        names[n] = l->partial.r[i].name;
        ns[n] = l->partial.r[i].ns;
    }
    return n;
}
