/*
 * tools/cpu/cpu-hot.c - hot functions: self and total CPU time per function,
 * weighted by each sample's samplingPeriod (overrun samples stand for
 * several periods, so counting samples would under-weight them).
 */
#include <config.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <rec/record.h>

#include "cpu-model.h"

/* ---- stacks ---------------------------------------------------------- */

static uint64_t stack_hash(uint32_t self, const uint32_t *funcs, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ self;
    for (size_t i = 0; i < n; i++) {
        h ^= funcs[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h *= 0x100000001b3ull;
    }
    return h ? h : 1;
}

long cpu_stack_intern(cpu_stacktab *t, uint32_t self, const uint32_t *funcs,
                      size_t n)
{
    if ((t->n + 1) * 2 > t->nslots
        && cli_slots_grow(&t->slots, &t->nslots, 1024, t->hash, t->n) < 0)
        return REC_ENOMEM;
    uint64_t h = stack_hash(self, funcs, n);
    size_t mask = t->nslots - 1, j = h & mask;
    for (; t->slots[j]; j = (j + 1) & mask) {
        size_t i = t->slots[j] - 1;
        const cpu_stack *s = t->v[i];
        if (t->hash[i] == h && s->self == self && s->n == n
            && memcmp(s->funcs, funcs, n * sizeof *funcs) == 0)
            return (long)i;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        cpu_stack **v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return REC_ENOMEM;
        t->v = v;
        uint64_t *hv = realloc(t->hash, cap * sizeof *hv);
        if (!hv)
            return REC_ENOMEM;
        t->hash = hv;
        t->cap = cap;
    }
    cpu_stack *s = malloc(sizeof *s + n * sizeof *funcs);
    if (!s)
        return REC_ENOMEM;
    s->self = self;
    s->n = (uint32_t)n;
    memcpy(s->funcs, funcs, n * sizeof *funcs);
    t->v[t->n] = s;
    t->hash[t->n] = h;
    t->slots[j] = (uint32_t)++t->n;
    return (long)t->n - 1;
}

void cpu_stacktab_free(cpu_stacktab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i]);
    free(t->v);
    free(t->hash);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

int cpu_tstacks_add(cpu_tstacks *s, uint32_t id, uint64_t ns)
{
    uint32_t i;
    if (!cli_map_get(&s->index, (uint64_t)id + 1, &i)) {
        if (s->n == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 64;
            uint32_t *iv = realloc(s->id, cap * sizeof *iv);
            if (!iv)
                return REC_ENOMEM;
            s->id = iv;
            uint64_t *nv = realloc(s->ns, cap * sizeof *nv);
            if (!nv)
                return REC_ENOMEM;
            s->ns = nv;
            s->cap = cap;
        }
        i = (uint32_t)s->n;
        if (cli_map_put(&s->index, (uint64_t)id + 1, i) < 0)
            return REC_ENOMEM;
        s->id[i] = id;
        s->ns[i] = 0;
        s->n++;
    }
    s->ns[i] += ns;
    return 0;
}

void cpu_tstacks_free(cpu_tstacks *s)
{
    cli_map_free(&s->index);
    free(s->id);
    free(s->ns);
    memset(s, 0, sizeof *s);
}

/* ---- functions ------------------------------------------------------- */

/* Function counters are dense arrays over every known function, with the
 * list of functions touched: expanding stacks is then plain indexing. */
static int hot_init(const cpu_model *m, cpu_hot *h)
{
    size_t n = m->funcs.n + 1;
    memset(h, 0, sizeof *h);
    h->self_ns = calloc(n, sizeof *h->self_ns);
    h->total_ns = calloc(n, sizeof *h->total_ns);
    h->seen = calloc(n, 1);
    h->func = malloc(n * sizeof *h->func);
    if (!h->self_ns || !h->total_ns || !h->seen || !h->func)
        return REC_ENOMEM;
    return 0;
}

static void hot_reset(cpu_hot *h)
{
    for (size_t i = 0; i < h->n; i++) {
        uint32_t f = h->func[i];
        h->self_ns[f] = h->total_ns[f] = 0;
        h->seen[f] = 0;
    }
    h->n = 0;
}

static inline void hot_touch(cpu_hot *h, uint32_t f)
{
    if (!h->seen[f]) {
        h->seen[f] = 1;
        h->func[h->n++] = f;
    }
}

static void hot_add(cpu_hot *h, const cpu_stack *s, uint64_t ns)
{
    hot_touch(h, s->self);
    h->self_ns[s->self] += ns;
    for (uint32_t k = 0; k < s->n; k++) {
        hot_touch(h, s->funcs[k]);
        h->total_ns[s->funcs[k]] += ns;
    }
}

static void hot_free(cpu_hot *h)
{
    free(h->func);
    free(h->self_ns);
    free(h->total_ns);
    free(h->seen);
    memset(h, 0, sizeof *h);
}

/* Add a thread's per-stack times to function counters. */
static void hot_expand(const cpu_model *m, const cpu_thread *t, cpu_hot *h)
{
    for (size_t i = 0; i < t->stacks.n; i++)
        hot_add(h, m->stacks.v[t->stacks.id[i]], t->stacks.ns[i]);
}

typedef struct hot_row {
    uint64_t self, total;
    uint32_t rank;              /* of the name in byte order */
    const char *name;
} hot_row;

/* Order: self time, then total time, then name, so ties are stable. */
static int cmp_hot(const void *a, const void *b)
{
    const hot_row *x = a, *y = b;
    if (x->self != y->self)
        return x->self > y->self ? -1 : 1;
    if (x->total != y->total)
        return x->total > y->total ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int cmp_name(const void *a, const void *b, void *arg)
{
    char *const *names = arg;
    return strcmp(names[*(const uint32_t *)a], names[*(const uint32_t *)b]);
}

int cpu_hot_finish(cpu_model *m)
{
    size_t n = m->funcs.n;
    uint32_t *order = malloc((n + 1) * sizeof *order);
    free(m->func_rank);
    m->func_rank = malloc((n + 1) * sizeof *m->func_rank);
    if (!order || !m->func_rank) {
        free(order);
        return REC_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t)i;
    qsort_r(order, n, sizeof *order, cmp_name, m->funcs.strs);
    for (size_t i = 0; i < n; i++)
        m->func_rank[order[i]] = (uint32_t)i;
    free(order);
    return 0;
}

/* The first *n rows of h, hottest first (all if limit is 0); caller
 * frees. A thread may touch thousands of functions for a top 10: select
 * by insertion instead of sorting them all. */
static hot_row *hot_order(const cpu_model *m, const cpu_hot *h, size_t limit,
                          size_t *n)
{
    hot_row *v = malloc((h->n + 1) * sizeof *v);
    if (!v)
        return NULL;
    bool select = limit && limit <= 64 && limit < h->n;
    size_t k = 0;
    for (size_t i = 0; i < h->n; i++) {
        uint32_t f = h->func[i];
        hot_row r = { h->self_ns[f], h->total_ns[f],
                      m->func_rank ? m->func_rank[f] : 0, m->funcs.strs[f] };
        if (!select) {
            v[k++] = r;
            continue;
        }
        if (k == limit && cmp_hot(&r, &v[k - 1]) >= 0)
            continue;
        size_t j = k < limit ? k++ : k - 1;
        while (j > 0 && cmp_hot(&r, &v[j - 1]) < 0) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = r;
    }
    if (!select)
        qsort(v, k, sizeof *v, cmp_hot);
    *n = limit && limit < k ? limit : k;
    return v;
}

static uint64_t hot_sum(const cpu_hot *h)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < h->n; i++)
        sum += h->self_ns[h->func[i]];
    return sum;
}

/* Counters for the selected threads together (all) and a second set for
 * one thread at a time (one). */
static int hot_prepare(const cpu_model *m, cpu_thread **v, size_t n,
                       cpu_hot *all, cpu_hot *one)
{
    int rc = hot_init(m, all);
    if (rc == 0)
        rc = hot_init(m, one);
    for (size_t i = 0; rc == 0 && i < n; i++)
        hot_expand(m, v[i], all);
    return rc;
}

static void print_one(FILE *f, const cpu_model *m, const char *title,
                      const cpu_hot *h)
{
    char a[32], b[32];
    uint64_t sum = hot_sum(h);
    fprintf(f, "%s: %s ms sampled\n", title, cpu_fmt_ms(a, sizeof a, sum));
    size_t lim;
    hot_row *order = hot_order(m, h, m->opt.hot_n, &lim);
    if (!order)
        return;
    fprintf(f, "  %12s %6s %12s %6s  %s\n", "SELF-MS", "SELF%", "TOTAL-MS",
            "TOTAL%", "FUNCTION");
    for (size_t k = 0; k < lim; k++) {
        const hot_row *r = &order[k];
        fprintf(f, "  %12s %6.1f %12s %6.1f  %s\n",
                cpu_fmt_ms(a, sizeof a, r->self),
                sum ? 100.0 * (double)r->self / (double)sum : 0.0,
                cpu_fmt_ms(b, sizeof b, r->total),
                sum ? 100.0 * (double)r->total / (double)sum : 0.0, r->name);
    }
    free(order);
}

int cpu_print_hot(FILE *f, const cpu_model *m)
{
    size_t n;
    cpu_thread **v = cpu_model_selected(m, &n);
    if (!v)
        return REC_ENOMEM;
    cpu_hot all, h;
    int rc = hot_prepare(m, v, n, &all, &h);
    if (rc == 0) {
        print_one(f, m, "Hot functions, all threads", &all);
        for (size_t i = 0; i < n; i++) {
            char label[300], title[400];
            snprintf(title, sizeof title, "\nHot functions, thread %s",
                     cpu_thread_label(label, sizeof label, v[i]));
            hot_expand(m, v[i], &h);
            print_one(f, m, title, &h);
            hot_reset(&h);
        }
    }
    hot_free(&all);
    hot_free(&h);
    free(v);
    return rc;
}

static json_t *hot_array(const cpu_model *m, const cpu_hot *h)
{
    json_t *a = json_array();
    size_t lim;
    hot_row *order = hot_order(m, h, m->opt.hot_n, &lim);
    if (!a || !order) {
        free(order);
        json_decref(a);
        return NULL;
    }
    for (size_t k = 0; k < lim; k++)
        json_array_append_new(a, json_pack("{s:o, s:I, s:I}",
            "function", cpu_json_string(order[k].name),
            "selfCpuTime", (json_int_t)order[k].self,
            "totalCpuTime", (json_int_t)order[k].total));
    free(order);
    return a;
}

json_t *cpu_hot_json(const cpu_model *m)
{
    size_t n;
    cpu_thread **v = cpu_model_selected(m, &n);
    if (!v)
        return NULL;
    cpu_hot all, h;
    json_t *o = NULL;
    if (hot_prepare(m, v, n, &all, &h) == 0) {
        json_t *threads = json_array();
        for (size_t i = 0; threads && i < n; i++) {
            hot_expand(m, v[i], &h);
            json_array_append_new(threads, json_pack("{s:I, s:I, s:I, s:o*}",
                "processId", (json_int_t)v[i]->pid,
                "osThreadId", (json_int_t)v[i]->tid,
                "sampledCpuTime", (json_int_t)hot_sum(&h),
                "functions", hot_array(m, &h)));
            hot_reset(&h);
        }
        o = json_pack("{s:I, s:o*, s:o*}",
                      "sampledCpuTime", (json_int_t)hot_sum(&all),
                      "overall", hot_array(m, &all),
                      "threads", threads);
    }
    hot_free(&all);
    hot_free(&h);
    free(v);
    return o;
}
