/*
 * tools/cpu/cpu-svg.c - the timeline picture: one lane per thread, one bar per
 * interval whose height and colour give the thread's CPU use in it (100% =
 * one CPU busy for the whole interval). Self-contained SVG, optionally
 * wrapped in an HTML page with a summary table; no external resources.
 */
#include <config.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rec/record.h>

#include "cpu-model.h"

#define LABEL_W   240   /* thread names */
#define PLOT_W    900
#define LANE_H    26
#define LANE_GAP  4
#define TOP       72    /* title, legend and axis */
#define SCALE_W   70    /* y-scale labels right of the plot */
#define MAX_COLS  PLOT_W /* merge intervals beyond one per pixel */

static void xml_str(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default:
            /* Control characters are not allowed in XML 1.0. */
            fputc((unsigned char)*s < 0x20 ? '?' : *s, f);
        }
    }
}

/* A 1-2-5 step near span/8 for axis ticks. */
static uint64_t nice_step(uint64_t span)
{
    uint64_t target = span / 8 ? span / 8 : 1, step = 1;
    while (step * 10 <= target)
        step *= 10;
    if (step * 5 <= target)
        return step * 5;
    if (step * 2 <= target)
        return step * 2;
    return step;
}

/* Axis label: seconds from the origin with as many decimals as the step
 * needs (2, 0.5, 0.25, 0.001). */
static const char *axis_label(char *buf, size_t len, uint64_t x, uint64_t step)
{
    int dec = 0;
    for (uint64_t unit = 1000000000; dec < 9 && step % unit; unit /= 10)
        dec++;
    uint64_t div = 1;
    for (int i = dec; i < 9; i++)
        div *= 10;
    snprintf(buf, len, "%" PRIu64, x / 1000000000);
    if (dec) {
        size_t n = strlen(buf);
        snprintf(buf + n, len - n, ".%0*" PRIu64, dec,
                 x % 1000000000 / div);
    }
    return buf;
}

/* Lost CPU (no stack) the model placed in intervals k0..k1. */
static uint64_t lv_sum(const cpu_thread *t, int64_t k0, int64_t k1)
{
    uint64_t s = 0;
    for (int64_t k = k0; k <= k1; k++)
        if (t->lv && k >= t->iv_lo && k < t->iv_lo + (int64_t)t->iv_n)
            s += t->lv[k - t->iv_lo];
    return s;
}

static uint64_t iv_sum(const cpu_thread *t, int64_t k0, int64_t k1)
{
    uint64_t s = 0;
    int64_t end = t->iv_lo + (int64_t)t->iv_n - 1;
    for (int64_t k = k0 > t->iv_lo ? k0 : t->iv_lo; k <= k1 && k <= end; k++)
        s += t->iv[k - t->iv_lo];
    return s;
}

/* ---- lanes ------------------------------------------------------------ */

/* A lane is one thread, or with more than MAX_LANES threads a group of
 * threads of one process whose names differ only in digits (a pool:
 * worker-1 ... worker-2000), so that 2,000 threads stay a picture of a
 * few dozen lanes instead of a 60,000 px one. Past MAX_LANES groups the
 * smallest are merged into one "other threads" lane. */
#define MAX_LANES 100

typedef struct lane {
    char label[300];
    uint64_t pid, tid;          /* tid of a one-thread lane */
    size_t nthreads;
    uint64_t sampled_ns, lost_ns, total_ns;
    uint64_t *col;              /* ns per column */
    uint64_t *lcol;             /* lost ns per column (drawn grey) */
    double full;                /* CPUs a full lane height stands for */
} lane;

/* "worker-12" -> "worker-#": digits runs become one '#'. */
static void pool_name(char *out, size_t len, const char *name)
{
    size_t k = 0;
    for (; name && *name && k + 2 < len; name++) {
        if (*name >= '0' && *name <= '9') {
            if (k == 0 || out[k - 1] != '#')
                out[k++] = '#';
        } else {
            out[k++] = *name;
        }
    }
    out[k] = '\0';
}

static void lane_add(lane *l, const cpu_thread *t, int64_t lo, uint64_t cols,
                     uint64_t merge)
{
    l->nthreads++;
    l->sampled_ns += t->sampled_ns;
    l->lost_ns += t->lost_ns;
    for (uint64_t c = 0; c < cols; c++) {
        int64_t k0 = lo + (int64_t)(c * merge);
        uint64_t ns = iv_sum(t, k0, k0 + (int64_t)merge - 1);
        l->col[c] += ns;
        l->lcol[c] += lv_sum(t, k0, k0 + (int64_t)merge - 1);
        l->total_ns += ns;
    }
}

static int cmp_lane_cpu(const void *a, const void *b)
{
    const lane *x = a, *y = b;
    if (x->total_ns != y->total_ns)
        return x->total_ns > y->total_ns ? -1 : 1;
    return strcmp(x->label, y->label);
}

/* The lanes for threads v[0..n); *nl set. NULL on ENOMEM. */
static lane *make_lanes(cpu_thread **v, size_t n, int64_t lo, uint64_t cols,
                        uint64_t merge, size_t *nl)
{
    lane *l = calloc(n ? n : 1, sizeof *l);
    uint64_t *cells = calloc(2 * n * cols + 1, sizeof *cells);
    cli_strtab keys = { 0 };
    size_t k = 0;
    if (!l || !cells)
        goto fail;
    for (size_t i = 0; i < n; i++) {
        const cpu_thread *t = v[i];
        size_t j = k;
        if (n > MAX_LANES) {
            char key[300], pool[256];
            pool_name(pool, sizeof pool, t->name ? t->name : "?");
            int len = snprintf(key, sizeof key, "%" PRIu64 "/%s", t->pid, pool);
            long id = cli_strtab_intern(&keys, key, (size_t)len);
            if (id < 0)
                goto fail;
            j = (size_t)id;
            if (j == k)
                snprintf(l[j].label, sizeof l[j].label, "%s", key);
        } else {
            cpu_thread_label(l[j].label, sizeof l[j].label, t);
        }
        if (j == k) {
            l[k].col = cells + k * cols;
            l[k].lcol = cells + (n + k) * cols;
            l[k].pid = t->pid;
            l[k].tid = t->tid;
            k++;
        }
        lane_add(&l[j], t, lo, cols, merge);
    }
    if (k > MAX_LANES) {
        /* Keep the busiest groups; the rest become one lane. */
        qsort(l, k, sizeof *l, cmp_lane_cpu);
        lane *o = &l[MAX_LANES - 1];
        size_t threads = o->nthreads;
        for (size_t j = MAX_LANES; j < k; j++) {
            threads += l[j].nthreads;
            o->sampled_ns += l[j].sampled_ns;
            o->lost_ns += l[j].lost_ns;
            o->total_ns += l[j].total_ns;
            for (uint64_t c = 0; c < cols; c++) {
                o->col[c] += l[j].col[c];
                o->lcol[c] += l[j].lcol[c];
            }
        }
        o->nthreads = threads;
        snprintf(o->label, sizeof o->label, "other threads");
        k = MAX_LANES;
    }
    cli_strtab_free(&keys);
    *nl = k;
    return l;
fail:
    cli_strtab_free(&keys);
    free(cells);
    free(l);
    return NULL;
}

static void free_lanes(lane *l)
{
    if (l)
        free(l[0].col);
    free(l);
}

/* End of the recording: its latest event (a thread's end snapshot, the
 * process usage), so that the axis does not stop at the last sample. */
static uint64_t recording_end(const cpu_model *m)
{
    uint64_t end = 0;
    for (size_t i = 0; i < m->nthreads; i++) {
        const cpu_thread *t = m->threads[i];
        if (t->last_ns > end)
            end = t->last_ns;
        if (t->has_end && t->end_ns > end)
            end = t->end_ns;
    }
    for (size_t i = 0; i < m->nprocs; i++)
        if (m->procs[i].has_usage && m->procs[i].usage_time_ns > end)
            end = m->procs[i].usage_time_ns;
    if (m->hi_ns != UINT64_MAX && end >= m->hi_ns)
        end = m->hi_ns - 1;
    return end;
}

static void bar_rgb(double share, int *r, int *g, int *b)
{
    double h = share > 1.0 ? 1.0 : share;
    *r = (int)(230 - 20 * h);
    *g = (int)(200 - 170 * h);
    *b = (int)(120 - 100 * h);
}

static void legend(FILE *f, int y)
{
    static const double shares[] = { 0.1, 0.25, 0.5, 0.75, 1.0 };
    int x = 8;
    fprintf(f, "<g class=\"legend\">\n<text x=\"%d\" y=\"%d\">CPU use in "
            "an interval:</text>\n", x, y + 11);
    x += 150;
    for (size_t i = 0; i < sizeof shares / sizeof *shares; i++) {
        int r, g, b;
        bar_rgb(shares[i], &r, &g, &b);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" "
                "fill=\"rgb(%d,%d,%d)\"/><text x=\"%d\" y=\"%d\">%d%%</text>\n",
                x, y + 1, r, g, b, x + 18, y + 11, (int)(shares[i] * 100));
        x += 62;
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#555\">of the lane's scale "
            "(right: 1 CPU, or the CPUs a thread group used at most)</text>\n"
            "</g>\n", x + 8, y + 11);
}

static void svg_body(FILE *f, const cpu_model *m, cpu_thread **v, size_t n)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        if (v[i]->iv_min < lo)
            lo = v[i]->iv_min;
        if (v[i]->iv_max > hi)
            hi = v[i]->iv_max;
    }
    uint64_t I = m->opt.interval_ns;
    /* The axis spans the recording (or the --since/--until window), not
     * only the intervals with samples. */
    if (m->have_origin) {
        uint64_t start = m->lo_ns > m->origin_ns ? m->lo_ns : m->origin_ns;
        uint64_t end = recording_end(m);
        int64_t k0 = (int64_t)((start - m->origin_ns) / I);
        if (k0 < lo)
            lo = k0;
        if (end > m->origin_ns && (int64_t)((end - m->origin_ns) / I) > hi)
            hi = (int64_t)((end - m->origin_ns) / I);
    }
    if (lo > hi)
        lo = hi = 0;
    uint64_t count = (uint64_t)(hi - lo + 1);
    uint64_t merge = (count + MAX_COLS - 1) / MAX_COLS;
    uint64_t cols = (count + merge - 1) / merge;
    uint64_t col_ns = I * merge;
    double col_w = (double)PLOT_W / (double)cols;
    size_t nl = 0;
    lane *ln = make_lanes(v, n, lo, cols, merge, &nl);
    if (!ln)
        return;
    int height = TOP + (int)nl * (LANE_H + LANE_GAP) + 30;
    int width = LABEL_W + PLOT_W + SCALE_W;
    uint64_t t0 = (uint64_t)lo * I;     /* from the origin */
    uint64_t span = cols * col_ns;
    char a[32], b[32], c[32];

    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"rec-cpu\" "
            "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
            "font-family=\"sans-serif\" font-size=\"12\">\n",
            width, height, width, height);
    fprintf(f, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
            width, height);
    fprintf(f, "<text x=\"8\" y=\"18\" font-size=\"15\" font-weight=\"bold\">"
            "CPU use per thread, %s ms intervals%s</text>\n",
            cpu_fmt_ms(a, sizeof a, col_ns),
            merge > 1 ? " (merged to fit)" : "");
    fprintf(f, "<text x=\"8\" y=\"34\" fill=\"#555\">bar height and colour: "
            "share of the lane's CPUs in the interval (grey: lost, no "
            "stack); time in seconds from the recording's start to its "
            "end%s</text>\n",
            n > MAX_LANES ? "; threads grouped by process and name" : "");
    legend(f, 40);

    /* Time axis with grid lines. */
    uint64_t step = nice_step(span);
    fprintf(f, "<g class=\"axis\" stroke=\"#ddd\">\n");
    for (uint64_t x = (t0 + step - 1) / step * step; x <= t0 + span;
         x += step) {
        double px = LABEL_W + (double)(x - t0) / (double)span * PLOT_W;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
                "<text x=\"%.1f\" y=\"%d\" stroke=\"none\" fill=\"#333\" "
                "text-anchor=\"middle\">%s</text>\n", px, TOP - 6, px,
                height - 24, px, height - 10, axis_label(a, sizeof a, x, step));
    }
    fprintf(f, "</g>\n");

    for (size_t i = 0; i < nl; i++) {
        lane *l = &ln[i];
        int y = TOP + (int)i * (LANE_H + LANE_GAP);
        /* A group's scale is the most CPUs it used in one column. */
        double peak = 0;
        for (uint64_t col = 0; col < cols; col++)
            if ((double)l->col[col] / (double)col_ns > peak)
                peak = (double)l->col[col] / (double)col_ns;
        l->full = l->nthreads > 1 && peak > 1.0
                  ? (double)(uint64_t)(peak + 0.999) : 1.0;
        if (l->nthreads > 1)
            fprintf(f, "<g class=\"lane group\" data-pid=\"%" PRIu64
                    "\" data-threads=\"%zu\">\n<title>", l->pid, l->nthreads);
        else
            fprintf(f, "<g class=\"lane\" data-pid=\"%" PRIu64 "\" data-tid=\"%"
                    PRIu64 "\">\n<title>", l->pid, l->tid);
        xml_str(f, l->label);
        if (l->nthreads > 1)
            fprintf(f, " (%zu threads)", l->nthreads);
        fprintf(f, ": sampled %s ms, lost %s ms</title>\n",
                cpu_fmt_ms(a, sizeof a, l->sampled_ns),
                cpu_fmt_ms(b, sizeof b, l->lost_ns));
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                "fill=\"#f3f4f7\"/>\n", LABEL_W, y, PLOT_W, LANE_H);
        /* y-scale: half and full height, in CPUs */
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
                "stroke=\"#e2e4ea\" stroke-dasharray=\"2,3\"/>\n", LABEL_W,
                y + LANE_H / 2, LABEL_W + PLOT_W, y + LANE_H / 2);
        fprintf(f, "<g class=\"yscale\" fill=\"#777\" font-size=\"9\">"
                "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
                "stroke=\"#999\"/>"
                "<text x=\"%d\" y=\"%d\">%g CPU%s</text>"
                "<text x=\"%d\" y=\"%d\">0</text></g>\n",
                LABEL_W + PLOT_W + 2, y, LABEL_W + PLOT_W + 2, y + LANE_H,
                LABEL_W + PLOT_W + 5, y + 8, l->full, l->full > 1 ? "s" : "",
                LABEL_W + PLOT_W + 5, y + LANE_H);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">",
                LABEL_W - 8, y + LANE_H / 2 + 4);
        xml_str(f, l->label);
        if (l->nthreads > 1)
            fprintf(f, " \xc3\x97%zu", l->nthreads);
        fprintf(f, "</text>\n");
        for (uint64_t col = 0; col < cols; col++) {
            uint64_t ns = l->col[col], lns = l->lcol[col];
            if (!ns && !lns)
                continue;
            int64_t k0 = lo + (int64_t)(col * merge);
            int64_t k1 = k0 + (int64_t)merge - 1;
            double share = (double)ns / (double)col_ns;
            double hshare = share / l->full > 1.0 ? 1.0 : share / l->full;
            double h = ns ? hshare * LANE_H : 0.0;
            int r, g, bl;
            if (ns && h < 1.0)
                h = 1.0;
            if (lns) {
                /* Lost CPU stacked on the sampled part, in grey. */
                double lshare = (double)lns / (double)col_ns / l->full;
                double lh = (lshare > 1.0 - h / LANE_H ? 1.0 - h / LANE_H
                                                       : lshare) * LANE_H;
                if (lh < 1.0)
                    lh = 1.0;
                fprintf(f, "<rect class=\"lost\" x=\"%.2f\" y=\"%.2f\" "
                        "width=\"%.2f\" height=\"%.2f\" fill=\"#a9aeb8\">"
                        "<title>", LABEL_W + (double)col * col_w,
                        y + LANE_H - h - lh, col_w, lh);
                xml_str(f, l->label);
                fprintf(f, " %s-%s s: %s ms CPU without stacks (lost)"
                        "</title></rect>\n",
                        cpu_fmt_rel(a, sizeof a, m,
                                    m->origin_ns + (uint64_t)k0 * I),
                        cpu_fmt_rel(b, sizeof b, m,
                                    m->origin_ns + (uint64_t)(k1 + 1) * I),
                        cpu_fmt_ms(c, sizeof c, lns));
            }
            if (!ns)
                continue;
            bar_rgb(hshare, &r, &g, &bl);
            fprintf(f, "<rect class=\"cpu\" x=\"%.2f\" y=\"%.2f\" "
                    "width=\"%.2f\" height=\"%.2f\" fill=\"rgb(%d,%d,%d)\">"
                    "<title>", LABEL_W + (double)col * col_w,
                    y + LANE_H - h, col_w, h, r, g, bl);
            xml_str(f, l->label);
            fprintf(f, " %s-%s s: %s ms CPU (%.1f%% of one CPU)"
                    "</title></rect>\n",
                    cpu_fmt_rel(a, sizeof a, m,
                                m->origin_ns + (uint64_t)k0 * I),
                    cpu_fmt_rel(b, sizeof b, m,
                                m->origin_ns + (uint64_t)(k1 + 1) * I),
                    cpu_fmt_ms(c, sizeof c, ns), 100.0 * share);
        }
        fprintf(f, "</g>\n");
    }
    fprintf(f, "</svg>\n");
    free_lanes(ln);
}

static void html_table(FILE *f, const cpu_model *m, cpu_thread **v, size_t n)
{
    char a[32], b[32], c[32];
    fprintf(f, "<table>\n<tr><th>PID</th><th>TID</th><th>Name</th>"
            "<th>Samples</th><th>Lost</th><th>Sampled ms</th>"
            "<th>Lost ms</th><th>Measured ms</th></tr>\n");
    for (size_t i = 0; i < n; i++) {
        const cpu_thread *t = v[i];
        fprintf(f, "<tr class=\"thread\"><td>%" PRIu64 "</td><td>%" PRIu64
                "</td><td>", t->pid, t->tid);
        xml_str(f, t->name ? t->name : "?");
        fprintf(f, "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>%s</td>"
                "<td>%s</td><td>%s</td></tr>\n", t->samples, t->lost_samples,
                cpu_fmt_ms(a, sizeof a, t->sampled_ns),
                cpu_fmt_ms(b, sizeof b, t->lost_ns),
                t->measured_known ? cpu_fmt_ms(c, sizeof c, t->measured_ns)
                                  : "-");
    }
    fprintf(f, "</table>\n");
}

int cpu_write_svg(FILE *f, const cpu_model *m, bool html)
{
    size_t n;
    cpu_thread **v = cpu_model_selected(m, &n);
    if (!v)
        return REC_ENOMEM;
    if (html) {
        fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
                "<meta charset=\"utf-8\">\n<title>rec-cpu timeline</title>\n"
                "<style>\nbody { font-family: sans-serif; margin: 16px; "
                "background: #fff; color: #222; }\n"
                "table { border-collapse: collapse; margin-top: 12px; }\n"
                "td, th { border: 1px solid #ccc; padding: 2px 8px; "
                "text-align: right; }\n"
                "svg rect.cpu:hover { stroke: #000; }\n</style>\n"
                "</head>\n<body>\n<h1>rec-cpu timeline</h1>\n");
    } else {
        fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    }
    svg_body(f, m, v, n);
    if (html) {
        html_table(f, m, v, n);
        fprintf(f, "</body>\n</html>\n");
    }
    free(v);
    return ferror(f) ? REC_EIO : 0;
}
