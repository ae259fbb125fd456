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
#define TOP       56    /* title and axis */
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

static uint64_t iv_sum(const cpu_thread *t, int64_t k0, int64_t k1)
{
    uint64_t s = 0;
    for (int64_t k = k0; k <= k1; k++)
        if (k >= t->iv_lo && k < t->iv_lo + (int64_t)t->iv_n)
            s += t->iv[k - t->iv_lo];
    return s;
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
    if (lo > hi)
        lo = hi = 0;
    uint64_t I = m->opt.interval_ns;
    uint64_t count = (uint64_t)(hi - lo + 1);
    uint64_t merge = (count + MAX_COLS - 1) / MAX_COLS;
    uint64_t cols = (count + merge - 1) / merge;
    uint64_t col_ns = I * merge;
    double col_w = (double)PLOT_W / (double)cols;
    int height = TOP + (int)n * (LANE_H + LANE_GAP) + 30;
    int width = LABEL_W + PLOT_W + 20;
    uint64_t t0 = (uint64_t)lo * I;     /* from the origin */
    uint64_t span = cols * col_ns;
    char a[32], b[32], c[32], lbl[300];

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
            "share of one CPU in the interval; time in seconds from the "
            "recording's start</text>\n");

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

    for (size_t i = 0; i < n; i++) {
        const cpu_thread *t = v[i];
        int y = TOP + (int)i * (LANE_H + LANE_GAP);
        cpu_thread_label(lbl, sizeof lbl, t);
        fprintf(f, "<g class=\"lane\" data-pid=\"%" PRIu64 "\" data-tid=\"%"
                PRIu64 "\">\n<title>", t->pid, t->tid);
        xml_str(f, lbl);
        fprintf(f, ": sampled %s ms, lost %s ms</title>\n",
                cpu_fmt_ms(a, sizeof a, t->sampled_ns),
                cpu_fmt_ms(b, sizeof b, t->lost_ns));
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                "fill=\"#f3f4f7\"/>\n", LABEL_W, y, PLOT_W, LANE_H);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">",
                LABEL_W - 8, y + LANE_H / 2 + 4);
        xml_str(f, lbl);
        fprintf(f, "</text>\n");
        for (uint64_t col = 0; col < cols; col++) {
            int64_t k0 = lo + (int64_t)(col * merge);
            int64_t k1 = k0 + (int64_t)merge - 1;
            uint64_t ns = iv_sum(t, k0, k1);
            if (!ns)
                continue;
            double share = (double)ns / (double)col_ns;
            double hshare = share > 1.0 ? 1.0 : share;
            double h = hshare * LANE_H;
            if (h < 1.0)
                h = 1.0;
            fprintf(f, "<rect class=\"cpu\" x=\"%.2f\" y=\"%.2f\" "
                    "width=\"%.2f\" height=\"%.2f\" fill=\"rgb(%d,%d,%d)\">"
                    "<title>", LABEL_W + (double)col * col_w,
                    y + LANE_H - h, col_w, h,
                    (int)(230 - 20 * hshare), (int)(200 - 170 * hshare),
                    (int)(120 - 100 * hshare));
            xml_str(f, lbl);
            fprintf(f, " %s-%s s: %s ms CPU (%.1f%%)</title></rect>\n",
                    cpu_fmt_rel(a, sizeof a, m, m->origin_ns + (uint64_t)k0 * I),
                    cpu_fmt_rel(b, sizeof b, m,
                                m->origin_ns + (uint64_t)(k1 + 1) * I),
                    cpu_fmt_ms(c, sizeof c, ns), 100.0 * share);
        }
        fprintf(f, "</g>\n");
    }
    fprintf(f, "</svg>\n");
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
