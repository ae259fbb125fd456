/*
 * tools/export/export.h - the profile every export format is written from
 * (collapsed stacks, pprof, JFR, the rec-flame page): recordings folded
 * into distinct frames, stacks and per-thread CPU-time weights, in one
 * place so that every format shows the same totals as rec-cpu.
 *
 * Each sample weighs its samplingPeriod (an overrun sample stands for
 * several periods); failed samples become the pseudo-stack "[failed]",
 * samples without a stack "[no stack]", and CPUTimeSampleLost events
 * "[lost: REASON]" weighing their lostTime. The sum of every weight is
 * therefore rec-cpu's "sampled + lost" to the nanosecond.
 *
 * Memory follows distinct frames, stacks and (thread, stack) pairs, not
 * the number of samples, unless a per-event hook keeps something.
 */
#ifndef REC_TOOLS_EXPORT_H
#define REC_TOOLS_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"

/* Value for key in a cli_map, or UINT32_MAX. */
static inline uint32_t xp_map_get(const cli_map *m, uint64_t key)
{
    uint32_t v;
    return cli_map_get(m, key, &v) ? v : UINT32_MAX;
}

/* A distinct frame. Strings are indexes into xp_profile.strs; index 0 is
 * the empty string (unknown). */
typedef struct xp_frame {
    uint32_t func, module, file, build_id;
    uint32_t line;              /* 0: unknown */
    uint32_t flags;             /* XP_F_* */
    uint64_t offset;            /* ELF virtual address (or absolute pc) */
} xp_frame;
#define XP_F_INLINED 1u
#define XP_F_PSEUDO  2u         /* [failed], [lost: ...], [no stack] */

typedef struct xp_thread {
    uint64_t pid, tid;
    uint32_t name;              /* string index, 0 if unnamed */
    uint32_t side;              /* input set (0, or 1 for --diff AFTER) */
} xp_thread;

typedef struct xp_module {
    uint32_t path, build_id;
    uint64_t base, size;
} xp_module;

/* CPU time of one stack on one thread. */
typedef struct xp_cell {
    uint32_t thread, stack;
    uint64_t ns, count;
} xp_cell;

/* One folded event, for formats that keep events (JFR). */
enum xp_kind { XP_SAMPLE, XP_LOST };
typedef struct xp_event {
    enum xp_kind kind;
    uint32_t thread, stack;
    uint64_t ts_ns, ns, count;  /* count: 1, or lostSamples */
    bool failed, biased;
    uint32_t reason;            /* string index (lost) */
} xp_event;

/* Variable-length records of uint32 words, interned by content. */
typedef struct xp_seqtab {
    uint32_t *words;
    size_t nwords, capwords;
    uint32_t *off;              /* n + 1 offsets into words */
    uint64_t *hash;
    size_t n, cap;
    uint32_t *slots;
    size_t nslots;
} xp_seqtab;
/* Id of w[0..n), added if new; negative REC_E* on failure. */
long xp_seqtab_intern(xp_seqtab *t, const uint32_t *w, size_t n);
void xp_seqtab_free(xp_seqtab *t);

typedef struct xp_options {
    const cli_threads *threads; /* NULL: all */
    bool have_since, have_until;
    cli_time since, until;
    /* Called for each folded event (may be NULL); a negative return stops
     * reading with that code. */
    int (*on_event)(void *arg, const struct xp_event *e);
    void *arg;
    /* --debug-dir: names for the frames of stripped code (may be NULL). */
    cli_debug *debug;
} xp_options;

typedef struct xp_profile {
    xp_options opt;
    cli_strtab strs;
    xp_frame *frames;           /* decoded copies of the frames table */
    size_t nframes, capframes;
    xp_seqtab frametab;         /* frame content -> id */
    xp_seqtab stacks;           /* frame ids, ROOT FIRST */
    xp_thread *threads;
    size_t nthreads, capthreads;
    cli_map thread_index;       /* (side, pid, tid) -> thread */
    xp_module *modules;
    size_t nmodules, capmodules;
    cli_map module_index;       /* path string + 1 -> module */
    xp_cell *cells;
    size_t ncells, capcells;
    cli_map cell_index;         /* (thread, stack) -> cell */
    uint64_t sampled_ns, lost_ns, samples, lost_samples;
    uint64_t start_ns, end_ns;  /* earliest chunk start, latest event */
    uint64_t period_ns;         /* first RecordingSettings, 0 if none */
    uint32_t side;              /* side of the files read next */
    uint64_t skipped;
    struct xp_jitname {         /* JitCodeName events of the file read */
        uint64_t lo, hi;
        uint32_t name;
    } *jit;
    size_t njit, capjit;
} xp_profile;

void xp_init(xp_profile *p, const xp_options *opt);
void xp_free(xp_profile *p);
/* Fold one recording in. Returns 0, 1 for bad input (everything valid was
 * folded in, the error printed), or -1 on a fatal error (printed). */
int xp_read(xp_profile *p, const char *prog, const char *path);

static inline const char *xp_str(const xp_profile *p, uint32_t i)
{
    return p->strs.strs[i];
}
static inline const uint32_t *xp_stack(const xp_profile *p, uint32_t id,
                                       size_t *n)
{
    *n = p->stacks.off[id + 1] - p->stacks.off[id];
    return p->stacks.words + p->stacks.off[id];
}
long xp_intern(xp_profile *p, const char *s);

/* Label of a thread ("name tid" or "tid"), and of its process. */
void xp_thread_label(const xp_profile *p, const xp_thread *t, char *buf,
                     size_t len);

/* ---- the formats (each returns 0 or -1 after printing an error) ---- */

enum xp_group { XP_GROUP_NONE, XP_GROUP_THREAD, XP_GROUP_PROCESS };
typedef struct xp_out {
    const char *prog;
    FILE *f;
    const char *path;           /* for messages */
    enum xp_group group;        /* collapsed */
    bool weight_samples;        /* collapsed: sample counts, not ns */
} xp_out;

int xp_write_collapsed(xp_profile *p, const xp_out *o);
int xp_write_pprof(xp_profile *p, const xp_out *o);

/* JFR keeps every event: a hook collects them while reading. */
typedef struct xp_jfr xp_jfr;
xp_jfr *xp_jfr_new(xp_profile *p);   /* before xp_init(p) */
int xp_jfr_event(void *jfr, const xp_event *e);
int xp_write_jfr(xp_profile *p, xp_jfr *j, const xp_out *o);
void xp_jfr_free(xp_jfr *j);

/* ---- rec-dump --format collapsed, pprof, jfr (dump-export.c) ------- */

enum xp_format { XP_COLLAPSED = 1, XP_PPROF, XP_JFR };
/* Parse a --format value beyond json/ndjson: 0 if unknown. */
enum xp_format xp_format_parse(const char *s);
/* Read files[0..n) and write the format to f: CLI_EXIT_* status. */
int xp_dump(const char *prog, enum xp_format fmt, const xp_options *opt,
            const xp_out *o, char **files, size_t n);

#endif
