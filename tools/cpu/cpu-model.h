/*
 * tools/cpu/cpu-model.h - rec-cpu's model: per-thread CPU accounting built from
 * the samples, the lost-sample events and the kernel's own figures.
 *
 * Memory is bounded by the number of threads, intervals and distinct
 * stacks/functions, never by the size of the recording: events are folded
 * into counters as they are read.
 */
#ifndef REC_CPU_MODEL_H
#define REC_CPU_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"

/* ---- small hash maps (cpu-map.c) ---------------------------------- */

/* ---- options ------------------------------------------------------- */

typedef struct cpu_options {
    uint64_t interval_ns;       /* 0: no timeline */
    bool have_since, have_until;
    cli_time since, until;      /* relative ones count from the origin */
    bool hot;
    unsigned hot_n;             /* 0: every function */
    const cli_threads *filter;  /* NULL: every thread */
    cli_debug *debug;           /* --debug-dir: names of stripped code */
} cpu_options;

/* ---- model ----------------------------------------------------------- */

/* Stack of a sample as function indexes: the innermost (self) and the
 * distinct functions of the whole stack (for total time). */
typedef struct cpu_stack {
    uint32_t self;
    uint32_t n;
    uint32_t funcs[];
} cpu_stack;

/* Every distinct stack of the recordings, by content (cpu-hot.c), so that
 * memory follows distinct stacks, not chunks or samples. */
typedef struct cpu_stacktab {
    cpu_stack **v;
    uint64_t *hash;
    size_t n, cap;
    uint32_t *slots;            /* index + 1, 0 = empty */
    size_t nslots;
} cpu_stacktab;

/* A thread's CPU time per stack; functions are derived when printing. */
typedef struct cpu_tstacks {
    cli_map index;              /* stack id + 1 -> slot */
    uint32_t *id;
    uint64_t *ns;
    size_t n, cap;
} cpu_tstacks;

/* Function counters, built for output (cpu-hot.c): dense over every
 * function, with the list of those touched. */
typedef struct cpu_hot {
    uint64_t *self_ns, *total_ns;   /* by function index */
    uint8_t *seen;
    uint32_t *func;                 /* touched, n of them */
    size_t n;
} cpu_hot;

/* A ThreadStart or ThreadEnd: the kernel's CPU clock at a moment. Kept
 * per thread (a handful) and replayed in time order at the end, so that
 * file order (streams flush independently) does not matter. */
typedef struct cpu_mark {
    uint64_t ts, cpu;
    bool end, snapshot;
} cpu_mark;

typedef struct cpu_thread {
    uint64_t pid, tid;
    char *name;                 /* last non-null name seen, or NULL */
    uint32_t seq;               /* 0, then 1, 2 ... for reused tids */
    uint32_t index;             /* in cpu_model.threads */

    /* Times in ns since the epoch; 0 if never seen. */
    uint64_t first_ns, last_ns;     /* any event of the thread in range */
    uint64_t start_ns, end_ns;      /* ThreadStart / ThreadEnd */
    bool has_start, has_end, snapshot, in_range;

    uint64_t samples, failed, biased, lost_samples;
    uint64_t partial[CLI_PARTIAL_N];   /* samples cut short, by reason */
    uint64_t sampled_ns, lost_ns;

    cpu_mark *marks;
    size_t nmarks, cap_marks;
    uint64_t max_cpu;           /* highest CPU clock in marks */
    /* Kernel figure (cpu_model_finish): sum over sampled segments of the
     * CPU clock's advance, from a ThreadStart (or 0) to a ThreadEnd. */
    uint64_t measured_ns;
    bool measured_known;

    uint64_t last_sample_ns;    /* latest sample spread (0: none yet) */

    /* Timeline: iv[k] = ns of CPU in interval iv_lo + k (samples), lv[k]
     * the lost CPU placed there (same bounds; cpu_model_finish spreads
     * each lost event over the time since the thread's previous one). */
    uint64_t *iv, *lv;
    struct cpu_lost { uint64_t ts, ns; } *lost;
    size_t nlost, cap_lost;
    int64_t iv_lo;
    size_t iv_n;
    int64_t iv_min, iv_max;     /* intervals used; min > max: none */

    cpu_tstacks stacks;         /* --hot */
} cpu_thread;

typedef struct cpu_process {
    uint64_t pid;
    bool has_usage;
    uint64_t usage_time_ns;     /* when ProcessUsage was read */
    uint64_t user_ns, system_ns;
    uint64_t sampler_ns;        /* the sampler thread's share: 0 unknown */
    uint64_t reconstructed_ns;  /* sampled + lost of its in-range threads */
} cpu_process;

typedef struct cpu_model {
    cpu_options opt;
    uint64_t origin_ns;         /* recording start: earliest chunk start */
    bool have_origin;
    uint64_t lo_ns, hi_ns;      /* window in epoch ns (hi: UINT64_MAX) */

    cpu_thread **threads;       /* stable pointers: caches hold them */
    size_t nthreads, cap_threads;
    cli_map by_key;             /* (pid << 32 | tid) -> current thread */

    cpu_process *procs;
    size_t nprocs, cap_procs;

    cli_strtab funcs;           /* hot functions by name */
    uint32_t *func_rank;        /* funcs in name order (cpu_hot_finish) */
    cpu_stacktab stacks;
    size_t iv_cells;            /* timeline counters of every thread */
    uint64_t events;            /* events folded in */
    uint64_t period_ns;         /* the shortest sample period seen */
} cpu_model;

void cpu_model_init(cpu_model *m, const cpu_options *opt);
void cpu_model_free(cpu_model *m);
/* Set the origin once every input's first chunk is known. */
void cpu_model_set_origin(cpu_model *m, uint64_t origin_ns);

/* Thread for (pid, tid), created if new; NULL on ENOMEM. */
cpu_thread *cpu_model_thread(cpu_model *m, uint64_t pid, uint64_t tid);
cpu_process *cpu_model_process(cpu_model *m, uint64_t pid);

/* Event folding (cpu-model.c); ts = event time in epoch ns. */
int cpu_model_sample(cpu_model *m, cpu_thread *t, uint64_t ts,
                     uint64_t period, bool failed, bool biased, int partial);
/* A sampling period the recording states (its settings, or a sample's):
 * the smallest one judges how far a thread's figure may be off. */
void cpu_model_period(cpu_model *m, uint64_t period);
void cpu_model_lost(cpu_model *m, cpu_thread *t, uint64_t ts,
                    uint64_t count, uint64_t ns);
/* ThreadStart; may replace *t by a new generation (reused tid). */
int cpu_model_thread_start(cpu_model *m, cpu_thread **t, uint64_t ts,
                           uint64_t cpu);
int cpu_model_thread_end(cpu_model *m, cpu_thread *t, uint64_t ts,
                         uint64_t cpu, bool snapshot);
/* After every input: derive measured figures. */
int cpu_model_finish(cpu_model *m);
void cpu_model_usage(cpu_model *m, uint64_t pid, uint64_t ts,
                     uint64_t user, uint64_t sys, uint64_t sampler);
bool cpu_model_in_range(const cpu_model *m, uint64_t ts);

/* Read one recording to its end (reader.c-facing part, cpu-read.c).
 * Returns 0, or a negative REC_E* code after folding everything valid;
 * messages go to stderr prefixed with prog. */
typedef struct rec_reader rec_reader;
typedef struct rec_event rec_event;
typedef struct cpu_input {
    const char *path;
    rec_reader *r;
    const rec_event *pending;   /* first event, read to find the origin */
    int status;                 /* result of that first read */
    uint64_t chunk_start_ns;
} cpu_input;
int cpu_input_open(cpu_input *in, const char *prog, const char *path);
int cpu_input_read(cpu_model *m, cpu_input *in, const char *prog);
void cpu_input_close(cpu_input *in);

/* ---- derived figures ----------------------------------------------- */

/* Threads selected for output, sorted by (pid, tid, seq); caller frees. */
cpu_thread **cpu_model_selected(const cpu_model *m, size_t *n);
/* 0 if the timeline of the selected threads (first to last used interval,
 * every thread) is in proportion to the intervals they use, REC_ETOOBIG if
 * printing it needs a longer interval, or REC_ENOMEM. */
int cpu_model_timeline_check(const cpu_model *m);
/* Sum of sampled+lost of every in-range thread of a process (after
 * cpu_model_finish). */
uint64_t cpu_model_process_sampled(const cpu_model *m, uint64_t pid);

/* ---- hot functions (cpu-hot.c) ----------------------------------- */

/* Id of the stack (self, funcs[0..n) sorted and distinct), added if new;
 * negative REC_E* on failure. */
long cpu_stack_intern(cpu_stacktab *t, uint32_t self, const uint32_t *funcs,
                      size_t n);
void cpu_stacktab_free(cpu_stacktab *t);
int cpu_tstacks_add(cpu_tstacks *s, uint32_t id, uint64_t ns);
void cpu_tstacks_free(cpu_tstacks *s);
/* Once every input is read: rank function names for stable ordering. */
int cpu_hot_finish(cpu_model *m);

/* ---- output ------------------------------------------------------- */

int cpu_print_table(FILE *f, const cpu_model *m);
int cpu_print_csv(FILE *f, const cpu_model *m);
int cpu_print_intervals(FILE *f, const cpu_model *m);
int cpu_print_intervals_csv(FILE *f, const cpu_model *m);
int cpu_print_hot(FILE *f, const cpu_model *m);
/* JSON: the whole report as one object (threads, process, and when asked
 * intervals and hot functions). */
int cpu_print_json(FILE *f, const cpu_model *m);
int cpu_write_svg(FILE *f, const cpu_model *m, bool html);

/* jansson pieces for cpu-table.c's JSON. */
struct json_t;
struct json_t *cpu_hot_json(const cpu_model *m);
/* A JSON string even for bytes that are not UTF-8 (replaced by '?'). */
struct json_t *cpu_json_string(const char *s);

/* Formatting helpers (cpu-table.c). */
const char *cpu_fmt_ms(char *buf, size_t len, uint64_t ns);
const char *cpu_fmt_rel(char *buf, size_t len, const cpu_model *m,
                        uint64_t ts);
const char *cpu_thread_label(char *buf, size_t len, const cpu_thread *t);

#endif
