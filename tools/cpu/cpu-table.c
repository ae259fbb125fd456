/*
 * tools/cpu/cpu-table.c - rec-cpu's text, CSV and JSON reports.
 */
#include <config.h>

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <rec/record.h>

#include "cpu-model.h"

/* ---- formatting ----------------------------------------------------- */

const char *cpu_fmt_ms(char *buf, size_t len, uint64_t ns)
{
    snprintf(buf, len, "%" PRIu64 ".%03" PRIu64, ns / 1000000,
             ns / 1000 % 1000);
    return buf;
}

static const char *fmt_sms(char *buf, size_t len, int64_t ns)
{
    uint64_t a = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
    snprintf(buf, len, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "",
             a / 1000000, a / 1000 % 1000);
    return buf;
}

/* Seconds from the recording's origin, to the millisecond. */
const char *cpu_fmt_rel(char *buf, size_t len, const cpu_model *m,
                        uint64_t ts)
{
    int64_t d = (int64_t)(ts - m->origin_ns);
    /* Rounded: chunks map ticks to wall time separately, so an event can
     * sit a few ns either side of the millisecond it was written at. */
    uint64_t a = (d < 0 ? -(uint64_t)d : (uint64_t)d) + 500000;
    snprintf(buf, len, "%s%" PRIu64 ".%03" PRIu64, d < 0 && a >= 1000000
             ? "-" : "", a / 1000000000, a / 1000000 % 1000);
    return buf;
}

/* Names may hold any byte but NUL: control characters would break the
 * lines of a text report. */
static const char *text_name(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s", name ? name : "?");
    /* A cut may split a UTF-8 sequence: drop its first bytes too. */
    size_t n = strlen(buf);
    if (name && n < strlen(name)) {
        size_t i = n;
        while (i > 0 && ((unsigned char)buf[i - 1] & 0xc0) == 0x80)
            i--;
        unsigned char lead = i > 0 ? (unsigned char)buf[i - 1] : 0;
        size_t need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
        if (lead >= 0xc0 && i - 1 + need > n)
            buf[i - 1] = '\0';
    }
    for (char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?';
    return buf;
}

const char *cpu_thread_label(char *buf, size_t len, const cpu_thread *t)
{
    char nm[256];
    snprintf(buf, len, "%" PRIu64 "/%" PRIu64 "%s%s", t->pid, t->tid,
             t->name ? " " : "", t->name ? text_name(nm, sizeof nm, t->name)
                                         : "");
    return buf;
}

json_t *cpu_json_string(const char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    /* Not UTF-8: the shared quoting turns bad bytes into U+FFFD. */
    char *q = cli_json_quote(s, strlen(s));
    j = q ? json_loads(q, JSON_DECODE_ANY, NULL) : NULL;
    free(q);
    return j;
}

/* Rounded so that reports are stable across libm and platforms. */
static double round4(double x)
{
    return round(x * 10000.0) / 10000.0;
}

/* ---- figures -------------------------------------------------------- */

typedef struct figures {
    uint64_t reconstructed;     /* sampled + lost */
    bool known;                 /* measured */
    int64_t diff;
    double diff_pct, share;     /* NAN when undefined */
    bool in_bound;              /* |diff| within a period and the tick */
} figures;

/* The kernel's CPU timers fire at a scheduler tick (4 ms at HZ=250). */
#define TICK_NS 4000000ull

static figures thread_figures(const cpu_model *m, const cpu_thread *t)
{
    figures f = { .reconstructed = t->sampled_ns + t->lost_ns,
                  .known = t->measured_known, .diff_pct = NAN, .share = NAN };
    if (f.known) {
        f.diff = (int64_t)(f.reconstructed - t->measured_ns);
        if (t->measured_ns)
            f.diff_pct = 100.0 * (double)f.diff / (double)t->measured_ns;
        /* What one thread can be off by: its last partial period never
         * fires, and an expiry waits for the next tick. */
        uint64_t bound = m->period_ns + (m->period_ns > TICK_NS ? m->period_ns : TICK_NS);
        uint64_t ad = f.diff < 0 ? -(uint64_t)f.diff : (uint64_t)f.diff;
        f.in_bound = m->period_ns && ad <= bound;
    }
    uint64_t p = cpu_model_process_sampled(m, t->pid);
    if (p)
        f.share = 100.0 * (double)f.reconstructed / (double)p;
    return f;
}

typedef struct totals {
    uint64_t pid;
    uint64_t threads, samples, failed, biased, lost_samples;
    uint64_t partial[CLI_PARTIAL_N];
    uint64_t sampled, lost, measured, measured_threads, unmeasured;
    int64_t diff;               /* over measured threads only */
    bool has_usage;
    uint64_t user, sys;
    uint64_t sampler;           /* of user + sys: the sampler thread's */
    uint64_t sampler_procs;     /* processes whose sampler figure is known */
    uint64_t usage_procs;
} totals;

/* "  partial stacks: 12 (10 early, 2 depth)", when any. */
static void partial_line(FILE *f, const totals *x)
{
    uint64_t n = 0;
    const char *sep = "";

    for (int k = 0; k < CLI_PARTIAL_N; k++)
        n += x->partial[k];
    if (!n)
        return;
    fprintf(f, "  partial stacks: %" PRIu64 " (", n);
    for (int k = 0; k < CLI_PARTIAL_N; k++)
        if (x->partial[k]) {
            fprintf(f, "%s%" PRIu64 " %s", sep, x->partial[k], cli_partial_names[k]);
            sep = ", ";
        }
    fprintf(f, ")\n");
}

/* Totals of one process (pid) or of everything (all): every in-range
 * thread counts, --threads or not, since they describe the process. */
static void process_totals(const cpu_model *m, bool all, uint64_t pid,
                           totals *x)
{
    memset(x, 0, sizeof *x);
    x->pid = pid;
    for (size_t i = 0; i < m->nthreads; i++) {
        const cpu_thread *t = m->threads[i];
        if (!t->in_range || (!all && t->pid != pid))
            continue;
        x->threads++;
        x->samples += t->samples;
        x->failed += t->failed;
        x->biased += t->biased;
        for (int k = 0; k < CLI_PARTIAL_N; k++)
            x->partial[k] += t->partial[k];
        x->lost_samples += t->lost_samples;
        x->sampled += t->sampled_ns;
        x->lost += t->lost_ns;
        if (t->measured_known) {
            x->measured += t->measured_ns;
            x->measured_threads++;
            x->diff += (int64_t)(t->sampled_ns + t->lost_ns - t->measured_ns);
        } else {
            x->unmeasured++;
        }
    }
    /* getrusage covers the whole run: a window makes it incomparable. */
    if (m->opt.have_since || m->opt.have_until)
        return;
    for (size_t i = 0; i < m->nprocs; i++) {
        const cpu_process *p = &m->procs[i];
        if (p->has_usage && (all || p->pid == pid)) {
            x->has_usage = true;
            x->user += p->user_ns;
            x->sys += p->system_ns;
            x->sampler += p->sampler_ns;
            x->usage_procs++;
            x->sampler_procs += p->sampler_ns != 0;
        }
    }
}

/* The sampler thread's CPU is known for every process of the totals: the
 * comparison with getrusage leaves it out (it is never sampled). */
static bool usage_net(const totals *x)
{
    return x->has_usage && x->sampler_procs == x->usage_procs;
}

/* Distinct pids of in-range threads and of usage readings, ascending. */
static size_t process_ids(const cpu_model *m, uint64_t **out)
{
    size_t n = 0;
    uint64_t *v = malloc((m->nthreads + m->nprocs + 1) * sizeof *v);
    *out = v;
    if (!v)
        return 0;
    for (size_t i = 0; i < m->nthreads + m->nprocs; i++) {
        uint64_t pid;
        if (i < m->nthreads) {
            if (!m->threads[i]->in_range)
                continue;
            pid = m->threads[i]->pid;
        } else {
            if (!m->procs[i - m->nthreads].has_usage)
                continue;
            pid = m->procs[i - m->nthreads].pid;
        }
        size_t k = 0;
        while (k < n && v[k] < pid)
            k++;
        if (k < n && v[k] == pid)
            continue;
        memmove(v + k + 1, v + k, (n - k) * sizeof *v);
        v[k] = pid;
        n++;
    }
    return n;
}

/* ---- text ------------------------------------------------------------ */

static void pct(char *buf, size_t len, double x)
{
    if (isnan(x))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.2f", x);
}

int cpu_print_table(FILE *f, const cpu_model *m)
{
    size_t n;
    cpu_thread **v = cpu_model_selected(m, &n);
    if (!v)
        return REC_ENOMEM;
    fprintf(f, "%7s %7s %8s %9s %8s %6s %6s %6s %10s %11s %11s %10s %7s %6s  %s\n",
            "PID", "TID", "START", "END", "SAMPLES", "FAILED", "BIASED",
            "LOST", "LOST-MS", "SAMPLED-MS", "MEASURED-MS", "DIFF-MS",
            "DIFF%", "SHARE%", "NAME");
    bool any_live = false, any_bound = false;
    for (size_t i = 0; i < n; i++) {
        const cpu_thread *t = v[i];
        figures g = thread_figures(m, t);
        char s0[32], s1[32], a[32], b[32], c[32], d[32], p[16], q[16];
        char nm[256];
        uint64_t start = t->has_start ? t->start_ns : t->first_ns;
        uint64_t end = t->has_end ? t->end_ns : t->last_ns;
        cpu_fmt_rel(s0, sizeof s0, m, start);
        cpu_fmt_rel(s1, sizeof s1, m, end);
        if (t->has_end && t->snapshot) {
            strcat(s1, "*");
            any_live = true;
        }
        pct(p, sizeof p, g.diff_pct);
        /* A short thread's percentage says little: -100% for one that ran
         * less than a period, +800% for one sample of a thread that ran
         * a millisecond. Within the bound, say that instead. */
        if (g.in_bound && !isnan(g.diff_pct) && fabs(g.diff_pct) > 10.0) {
            snprintf(p, sizeof p, "<1p");
            any_bound = true;
        }
        pct(q, sizeof q, g.share);
        fprintf(f, "%7" PRIu64 " %7" PRIu64 " %8s %9s %8" PRIu64 " %6" PRIu64
                " %6" PRIu64 " %6" PRIu64 " %10s %11s %11s %10s %7s %6s  %s\n",
                t->pid, t->tid, s0, s1, t->samples, t->failed, t->biased,
                t->lost_samples, cpu_fmt_ms(a, sizeof a, t->lost_ns),
                cpu_fmt_ms(b, sizeof b, t->sampled_ns),
                g.known ? cpu_fmt_ms(c, sizeof c, t->measured_ns) : "-",
                g.known ? fmt_sms(d, sizeof d, g.diff) : "-", p, q,
                text_name(nm, sizeof nm, t->name));
    }
    free(v);
    if (any_live)
        fprintf(f, "* still running when the recording ended: MEASURED is "
                "the kernel's figure at that moment\n");
    if (any_bound)
        fprintf(f, "<1p: a short thread's DIFF is within one period plus the "
                "timer tick, what any thread can be off by\n");

    uint64_t *pids;
    size_t np = process_ids(m, &pids);
    if (!pids)
        return REC_ENOMEM;
    for (size_t i = 0; i <= np; i++) {
        if (i == np && np < 2)
            break;
        totals x;
        process_totals(m, i == np, i < np ? pids[i] : 0, &x);
        char a[32], b[32], c[32], d[32], e[32];
        if (i < np)
            fprintf(f, "\nprocess %" PRIu64 ":", x.pid);
        else
            fprintf(f, "\nall processes:");
        fprintf(f, " %" PRIu64 " thread%s, %" PRIu64 " samples (%" PRIu64
                " failed, %" PRIu64 " biased), %" PRIu64 " lost\n", x.threads,
                x.threads == 1 ? "" : "s", x.samples, x.failed, x.biased,
                x.lost_samples);
        partial_line(f, &x);
        fprintf(f, "  sampled %s ms + lost %s ms = %s ms\n",
                cpu_fmt_ms(a, sizeof a, x.sampled),
                cpu_fmt_ms(b, sizeof b, x.lost),
                cpu_fmt_ms(c, sizeof c, x.sampled + x.lost));
        if (x.measured_threads) {
            fprintf(f, "  measured %s ms over %" PRIu64 " thread%s, difference"
                    " %s ms (%.2f%%)", cpu_fmt_ms(a, sizeof a, x.measured),
                    x.measured_threads, x.measured_threads == 1 ? "" : "s",
                    fmt_sms(d, sizeof d, x.diff),
                    x.measured ? 100.0 * (double)x.diff / (double)x.measured
                               : 0.0);
            if (x.unmeasured)
                fprintf(f, "; %" PRIu64 " without a kernel figure",
                        x.unmeasured);
            fprintf(f, "\n");
        }
        if (x.has_usage && !usage_net(&x)) {
            uint64_t u = x.user + x.sys;
            int64_t du = (int64_t)(x.sampled + x.lost - u);
            fprintf(f, "  getrusage %s ms (user %s, system %s), sampled+lost"
                    " - getrusage = %s ms (%.2f%%)\n",
                    cpu_fmt_ms(a, sizeof a, u), cpu_fmt_ms(b, sizeof b, x.user),
                    cpu_fmt_ms(c, sizeof c, x.sys), fmt_sms(e, sizeof e, du),
                    u ? 100.0 * (double)du / (double)u : 0.0);
        } else if (x.has_usage) {
            /* The sampler thread is never sampled: compare with the rest. */
            uint64_t u = x.user + x.sys, net = u - x.sampler;
            int64_t du = (int64_t)(x.sampled + x.lost - net);
            char s[32];
            fprintf(f, "  getrusage %s ms (user %s, system %s) of which the"
                    " sampler thread %s ms, sampled+lost - the rest = %s ms"
                    " (%.2f%%)\n",
                    cpu_fmt_ms(a, sizeof a, u), cpu_fmt_ms(b, sizeof b, x.user),
                    cpu_fmt_ms(c, sizeof c, x.sys),
                    cpu_fmt_ms(s, sizeof s, x.sampler),
                    fmt_sms(e, sizeof e, du),
                    net ? 100.0 * (double)du / (double)net : 0.0);
        }
    }
    free(pids);
    return ferror(f) ? REC_EIO : 0;
}

/* ---- CSV ------------------------------------------------------------- */

/* RFC 4180 field, quoted when it holds a comma or a quote. A thread name
 * may hold any byte but NUL: control characters are written as \xHH and a
 * backslash as \\, so that the file never carries raw terminal escapes or
 * line breaks, and the name can still be recovered exactly. */
static void csv_str(FILE *f, const char *s)
{
    if (!s)
        return;
    bool quote = strpbrk(s, ",\"") != NULL;
    if (quote)
        fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\x%02x", *p);
        else if (*p == '\\')
            fputs("\\\\", f);
        else if (*p == '"')
            fputs("\"\"", f);
        else
            fputc(*p, f);
    }
    if (quote)
        fputc('"', f);
}

int cpu_print_csv(FILE *f, const cpu_model *m)
{
    size_t n;
    cpu_thread **v = cpu_model_selected(m, &n);
    if (!v)
        return REC_ENOMEM;
    fprintf(f, "processId,osThreadId,name,startTime,endTime,alive,samples,"
            "failedSamples,biasedSamples,lostSamples,sampledCpuTime,"
            "lostCpuTime,measuredCpuTime,difference,differencePercent,share\n");
    for (size_t i = 0; i < n; i++) {
        const cpu_thread *t = v[i];
        figures g = thread_figures(m, t);
        fprintf(f, "%" PRIu64 ",%" PRIu64 ",", t->pid, t->tid);
        csv_str(f, t->name);
        fprintf(f, ",%" PRIu64 ",%" PRIu64 ",%s,%" PRIu64 ",%" PRIu64 ",%"
                PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",",
                t->has_start ? t->start_ns : t->first_ns,
                t->has_end ? t->end_ns : t->last_ns,
                t->has_end && t->snapshot ? "true" : "false",
                t->samples, t->failed, t->biased, t->lost_samples,
                t->sampled_ns, t->lost_ns);
        if (g.known)
            fprintf(f, "%" PRIu64 ",%" PRId64, t->measured_ns, g.diff);
        else
            fputc(',', f);
        fputc(',', f);
        if (!isnan(g.diff_pct))
            fprintf(f, "%.4f", round4(g.diff_pct));
        fputc(',', f);
        if (!isnan(g.share))
            fprintf(f, "%.4f", round4(g.share));
        fputc('\n', f);
    }
    free(v);
    return ferror(f) ? REC_EIO : 0;
}

/* ---- timeline ------------------------------------------------------- */

static uint64_t iv_at(const cpu_thread *t, int64_t k)
{
    if (k < t->iv_lo || k >= t->iv_lo + (int64_t)t->iv_n)
        return 0;
    return t->iv[k - t->iv_lo];
}

/* The interval range the selected threads use; false if none. */
static bool iv_range(cpu_thread **v, size_t n, int64_t *lo, int64_t *hi)
{
    *lo = INT64_MAX;
    *hi = INT64_MIN;
    for (size_t i = 0; i < n; i++) {
        if (v[i]->iv_min < *lo)
            *lo = v[i]->iv_min;
        if (v[i]->iv_max > *hi)
            *hi = v[i]->iv_max;
    }
    return *lo <= *hi;
}

int cpu_print_intervals(FILE *f, const cpu_model *m)
{
    size_t n;
    cpu_thread **v = cpu_model_selected(m, &n);
    if (!v)
        return REC_ENOMEM;
    char a[32];
    uint64_t I = m->opt.interval_ns;
    fprintf(f, "CPU use per %s ms interval, in %% of one CPU\n",
            cpu_fmt_ms(a, sizeof a, I));
    for (size_t i = 0; i < n; i++) {
        char label[300];
        fprintf(f, "  [%zu] %s\n", i + 1,
                cpu_thread_label(label, sizeof label, v[i]));
    }
    fprintf(f, "%9s", "START-S");
    for (size_t i = 0; i < n; i++) {
        char h[24];
        snprintf(h, sizeof h, "[%zu]", i + 1);
        fprintf(f, " %7s", h);
    }
    fprintf(f, " %7s\n", "TOTAL");
    int64_t lo, hi;
    if (iv_range(v, n, &lo, &hi)) {
        for (int64_t k = lo; k <= hi; k++) {
            uint64_t sum = 0;
            fprintf(f, "%9s", cpu_fmt_rel(a, sizeof a, m,
                                          m->origin_ns + (uint64_t)k * I));
            for (size_t i = 0; i < n; i++) {
                uint64_t x = iv_at(v[i], k);
                sum += x;
                fprintf(f, " %7.1f", 100.0 * (double)x / (double)I);
            }
            fprintf(f, " %7.1f\n", 100.0 * (double)sum / (double)I);
        }
    }
    free(v);
    return ferror(f) ? REC_EIO : 0;
}

int cpu_print_intervals_csv(FILE *f, const cpu_model *m)
{
    size_t n;
    cpu_thread **v = cpu_model_selected(m, &n);
    if (!v)
        return REC_ENOMEM;
    uint64_t I = m->opt.interval_ns;
    fprintf(f, "startTime,endTime,processId,osThreadId,name,cpuTime,cpuPercent\n");
    int64_t lo, hi;
    if (iv_range(v, n, &lo, &hi)) {
        for (int64_t k = lo; k <= hi; k++) {
            uint64_t s = m->origin_ns + (uint64_t)k * I;
            for (size_t i = 0; i < n; i++) {
                uint64_t x = iv_at(v[i], k);
                fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",",
                        s, s + I, v[i]->pid, v[i]->tid);
                csv_str(f, v[i]->name);
                fprintf(f, ",%" PRIu64 ",%.4f\n", x,
                        round4(100.0 * (double)x / (double)I));
            }
        }
    }
    free(v);
    return ferror(f) ? REC_EIO : 0;
}

/* ---- JSON ----------------------------------------------------------- */

static json_t *jint(uint64_t x)
{
    return json_integer((json_int_t)x);
}

static json_t *jreal(double x)
{
    return isnan(x) ? json_null() : json_real(round4(x));
}

/* Samples whose stack was cut short, by reason. */
static json_t *partial_json(const uint64_t *partial)
{
    json_t *o = json_object();
    for (int k = 0; o && k < CLI_PARTIAL_N; k++)
        if (partial[k])
            json_object_set_new(o, cli_partial_names[k], jint(partial[k]));
    return o;
}

static json_t *thread_json(const cpu_model *m, const cpu_thread *t)
{
    figures g = thread_figures(m, t);
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "processId", jint(t->pid));
    json_object_set_new(o, "osThreadId", jint(t->tid));
    if (t->seq)
        json_object_set_new(o, "generation", jint(t->seq));
    json_object_set_new(o, "name", t->name ? cpu_json_string(t->name)
                                           : json_null());
    json_object_set_new(o, "startTime",
                        jint(t->has_start ? t->start_ns : t->first_ns));
    json_object_set_new(o, "endTime", jint(t->has_end ? t->end_ns : t->last_ns));
    json_object_set_new(o, "alive", json_boolean(t->has_end && t->snapshot));
    json_object_set_new(o, "samples", jint(t->samples));
    json_object_set_new(o, "failedSamples", jint(t->failed));
    json_object_set_new(o, "biasedSamples", jint(t->biased));
    json_object_set_new(o, "partialSamples", partial_json(t->partial));
    json_object_set_new(o, "lostSamples", jint(t->lost_samples));
    json_object_set_new(o, "sampledCpuTime", jint(t->sampled_ns));
    json_object_set_new(o, "lostCpuTime", jint(t->lost_ns));
    json_object_set_new(o, "measuredCpuTime",
                        g.known ? jint(t->measured_ns) : json_null());
    json_object_set_new(o, "difference",
                        g.known ? json_integer(g.diff) : json_null());
    json_object_set_new(o, "differencePercent", jreal(g.diff_pct));
    json_object_set_new(o, "differenceWithinBound",
                        g.known ? json_boolean(g.in_bound) : json_null());
    json_object_set_new(o, "share", jreal(g.share));
    return o;
}

static json_t *totals_json(const totals *x, bool with_pid)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    if (with_pid)
        json_object_set_new(o, "processId", jint(x->pid));
    json_object_set_new(o, "threads", jint(x->threads));
    json_object_set_new(o, "samples", jint(x->samples));
    json_object_set_new(o, "failedSamples", jint(x->failed));
    json_object_set_new(o, "biasedSamples", jint(x->biased));
    json_object_set_new(o, "partialSamples", partial_json(x->partial));
    json_object_set_new(o, "lostSamples", jint(x->lost_samples));
    json_object_set_new(o, "sampledCpuTime", jint(x->sampled));
    json_object_set_new(o, "lostCpuTime", jint(x->lost));
    json_object_set_new(o, "measuredCpuTime",
                        x->measured_threads ? jint(x->measured) : json_null());
    json_object_set_new(o, "measuredThreads", jint(x->measured_threads));
    json_object_set_new(o, "difference", x->measured_threads
                        ? json_integer(x->diff) : json_null());
    if (x->has_usage) {
        uint64_t u = x->user + x->sys;
        uint64_t own = usage_net(x) ? x->sampler : 0;
        json_object_set_new(o, "userTime", jint(x->user));
        json_object_set_new(o, "systemTime", jint(x->sys));
        json_object_set_new(o, "usageCpuTime", jint(u));
        json_object_set_new(o, "samplerCpuTime",
                            usage_net(x) ? jint(own) : json_null());
        json_object_set_new(o, "usageDifference",
                            json_integer((json_int_t)(x->sampled + x->lost
                                                      - (u - own))));
    } else {
        json_object_set_new(o, "userTime", json_null());
        json_object_set_new(o, "systemTime", json_null());
        json_object_set_new(o, "usageCpuTime", json_null());
        json_object_set_new(o, "samplerCpuTime", json_null());
        json_object_set_new(o, "usageDifference", json_null());
    }
    return o;
}

static json_t *timeline_json(const cpu_model *m, cpu_thread **v, size_t n)
{
    int64_t lo, hi;
    bool any = iv_range(v, n, &lo, &hi);
    json_t *threads = json_array();
    for (size_t i = 0; threads && i < n; i++) {
        json_t *a = json_array();
        for (int64_t k = lo; any && a && k <= hi; k++)
            json_array_append_new(a, jint(iv_at(v[i], k)));
        json_array_append_new(threads, json_pack("{s:I, s:I, s:o, s:o*}",
            "processId", (json_int_t)v[i]->pid,
            "osThreadId", (json_int_t)v[i]->tid,
            "name", v[i]->name ? cpu_json_string(v[i]->name) : json_null(),
            "cpuTime", a));
    }
    uint64_t I = m->opt.interval_ns;
    return json_pack("{s:I, s:I, s:I, s:o*}",
                     "interval", (json_int_t)I,
                     "startTime", (json_int_t)(any ? m->origin_ns
                                               + (uint64_t)lo * I : m->origin_ns),
                     "count", (json_int_t)(any ? hi - lo + 1 : 0),
                     "threads", threads);
}

int cpu_print_json(FILE *f, const cpu_model *m)
{
    size_t n;
    cpu_thread **v = cpu_model_selected(m, &n);
    uint64_t *pids = NULL;
    size_t np = v ? process_ids(m, &pids) : 0;
    json_t *root = json_object(), *threads = json_array(),
           *procs = json_array();
    int rc = REC_ENOMEM;
    if (!v || !pids || !root || !threads || !procs)
        goto out;
    json_object_set_new(root, "origin", jint(m->origin_ns));
    for (size_t i = 0; i < n; i++)
        json_array_append_new(threads, thread_json(m, v[i]));
    json_object_set(root, "threads", threads);
    for (size_t i = 0; i < np; i++) {
        totals x;
        process_totals(m, false, pids[i], &x);
        json_array_append_new(procs, totals_json(&x, true));
    }
    json_object_set(root, "processes", procs);
    totals all;
    process_totals(m, true, 0, &all);
    json_object_set_new(root, "process", totals_json(&all, false));
    if (m->opt.interval_ns)
        json_object_set_new(root, "timeline", timeline_json(m, v, n));
    if (m->opt.hot)
        json_object_set_new(root, "hot", cpu_hot_json(m));
    rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) < 0
         ? REC_EIO : 0;
    fputc('\n', f);
out:
    json_decref(threads);
    json_decref(procs);
    json_decref(root);
    free(pids);
    free(v);
    return rc == 0 && ferror(f) ? REC_EIO : rc;
}
