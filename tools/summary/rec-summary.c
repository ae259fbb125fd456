/*
 * tools/summary/rec-summary.c - what a recording holds: chunks, time span, events
 * per type, and CPU-time sampling statistics per thread (the figures of
 * `jfr summary` and `jfr view cpu-time-statistics`). See rec-summary(1).
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "losses.h"

static const char prog[] = "rec-summary";

struct type_stat {          /* per event type name, over the file */
    char *name;
    uint64_t count, bytes;
};

struct thread_stat {        /* per OS thread id, over the file */
    uint64_t tid;
    char *name;
    uint64_t ok, failed, biased, lost;
    uint64_t sampled_ns, lost_ns;
};

struct summary {
    const char *path;
    unsigned major, minor;
    uint64_t chunks, events;
    uint64_t start_ns, end_ns;
    bool have_start, complete;
    bool writing;               /* unfinished, and its writer is at it */
    bool sealed;                /* finished by rec-start, not its writer */
    char engine[64], engine_note[256];   /* of the last RecordingSettings */

    cli_losses *losses;         /* where CPU without stacks went */
    struct type_stat *types;
    size_t ntypes, captypes;
    struct thread_stat *threads;
    size_t nthreads, capthreads;
    cli_map tid_map;         /* tid + 1 -> index in threads */

    /* per chunk */
    cli_evview view;
    cli_map tc_map;          /* rec_type* -> index in types */
    cli_map entry_map;       /* Thread rec_entry* -> index in threads */
    const rec_type *last_type;
    size_t last_stat;
    const rec_entry *last_entry;
    size_t last_thread;
    bool have_ticks;
    int64_t max_ticks;          /* latest event, chunk-relative ticks */
    rec_chunk_info chunk;       /* the current chunk */
};

static char *xstrndup(const char *s, size_t n)
{
    char *p = strndup(s, n);
    if (!p) {
        fputs("out of memory\n", stderr);
        abort();
    }
    return p;
}

static void usage(FILE *f)
{
    fprintf(f,
"Usage: rec-summary [--json] [--since TIME] [--until TIME] FILE...\n"
"Summarize rec recordings: chunks, time span, events per type (count and\n"
"encoded bytes) and CPU-time sample statistics per thread.\n"
"\n"
"  --json          print one JSON object per FILE\n"
"  --since TIME    only events at or after TIME\n"
"  --until TIME    only events before TIME\n"
"                  TIME: ns since the epoch, RFC 3339, +DURATION after\n"
"                  the recording's start (+1.5s), or [-]DURATION before\n"
"                  the end of its data (5m, -90s)\n"
"  -h, --help      show this help\n"
"  -V, --version   show the version\n"
"\n"
"Exit status: 0 success, 1 bad or unreadable input (the summary of the\n"
"valid part is printed first), 2 usage error.\n");
}

static size_t type_stat(struct summary *s, const char *name)
{
    for (size_t i = 0; i < s->ntypes; i++)
        if (strcmp(s->types[i].name, name) == 0)
            return i;
    if (s->ntypes == s->captypes) {
        s->captypes = s->captypes ? s->captypes * 2 : 16;
        s->types = cli_xrealloc(s->types, s->captypes * sizeof *s->types);
    }
    s->types[s->ntypes] = (struct type_stat){ .name = xstrndup(name, strlen(name)) };
    return s->ntypes++;
}

/* The index in types of t's name, looked up once per chunk. */
static size_t stat_of(struct summary *s, const rec_type *t)
{
    uint32_t idx;
    if (t == s->last_type)
        return s->last_stat;
    if (!cli_map_get(&s->tc_map, (uintptr_t)t, &idx)) {
        const char *name = rec_type_name(t);
        idx = (uint32_t)type_stat(s, name ? name : "?");
        cli_map_xput(&s->tc_map, (uintptr_t)t, idx);
    }
    s->last_type = t;
    s->last_stat = idx;
    return idx;
}

static void end_of_chunk(struct summary *s, const rec_chunk_info *info)
{
    uint64_t end = info->start_ns + info->duration_ns;
    if (end > s->end_ns)
        s->end_ns = end;
}

/* Event times may run past the last flush the chunk header records: the
 * latest event of the chunk counts too (converted once, not per event). */
static void chunk_events_end(struct summary *s)
{
    const rec_chunk_info *c = &s->chunk;
    if (!s->have_ticks || !c->ticks_per_second)
        return;
    uint64_t t = s->max_ticks;
    if (s->max_ticks < 0)
        return;
    uint64_t ns = c->start_ns + t / c->ticks_per_second * 1000000000u +
                  (uint64_t)((unsigned __int128)(t % c->ticks_per_second) *
                             1000000000u / c->ticks_per_second);
    if (ns > s->end_ns)
        s->end_ns = ns;
}

static void new_chunk(struct summary *s, const rec_reader *r,
                      const rec_chunk_info *info)
{
    cli_map_clear(&s->tc_map);
    cli_evview_reset(&s->view);
    chunk_events_end(s);
    cli_map_clear(&s->entry_map);
    s->last_type = NULL;
    s->last_entry = NULL;
    s->have_ticks = false;
    s->chunk = *info;
    s->chunks++;
    if (!s->have_start || info->start_ns < s->start_ns) {
        if (!s->have_start)
            s->major = info->major, s->minor = info->minor;
        s->start_ns = info->start_ns;
        s->have_start = true;
    }
    end_of_chunk(s, info);
    /* Event types of the schema are listed even when they have no events. */
    for (size_t i = 0; i < rec_reader_ntypes(r); i++) {
        const rec_type *t = rec_reader_type(r, i);
        if (t && rec_type_is_event(t) && rec_type_name(t))
            type_stat(s, rec_type_name(t));
    }
}

static struct thread_stat *thread_of(struct summary *s, const rec_entry *e)
{
    uint32_t idx;
    if (e == s->last_entry)
        return &s->threads[s->last_thread];
    if (cli_map_get(&s->entry_map, (uintptr_t)e, &idx)) {
        s->last_entry = e;
        s->last_thread = idx;
        return &s->threads[idx];
    }
    cli_thread_info ti;
    cli_evview_thread(&s->view, e, &ti);
    uint64_t tid = ti.tid;
    /* tid + 1 keeps the key non-NULL; the unlikely tid UINT64_MAX shares
     * the slot of tid 0... which a kernel never hands out either. */
    const void *key = (const void *)(uintptr_t)(tid + 1 ? tid + 1 : 1);
    if (!cli_map_get(&s->tid_map, (uintptr_t)key, &idx)) {
        if (s->nthreads == s->capthreads) {
            s->capthreads = s->capthreads ? s->capthreads * 2 : 64;
            s->threads = cli_xrealloc(s->threads, s->capthreads * sizeof *s->threads);
        }
        idx = (uint32_t)s->nthreads++;
        s->threads[idx] = (struct thread_stat){ .tid = tid };
        cli_map_xput(&s->tid_map, (uintptr_t)key, (uint32_t)idx);
    }
    struct thread_stat *ts = &s->threads[idx];
    if (ti.name) {
        /* The most recent name wins (threads rename themselves). */
        free(ts->name);
        ts->name = xstrndup(ti.name, ti.name_len);
    }
    cli_map_xput(&s->entry_map, (uintptr_t)e, (uint32_t)idx);
    s->last_entry = e;
    s->last_thread = idx;
    return ts;
}

static void account(struct summary *s, const rec_event *ev)
{
    const cli_evtype *c = cli_evview_event(&s->view, ev);
    const rec_value *vals = rec_event_values(ev);
    const rec_entry *th;
    if (!c->type)
        return;
    size_t stat = stat_of(s, c->type);
    s->types[stat].count++;
    s->types[stat].bytes += rec_event_bytes(ev);
    if (c->kind == CLI_EV_SETTINGS) {
        if (cli_ev_text_copy(&s->view, vals, c->engine, s->engine,
                             sizeof s->engine) &&
            !cli_ev_text_copy(&s->view, vals, c->engine_note, s->engine_note,
                              sizeof s->engine_note))
            s->engine_note[0] = '\0';
        return;
    }
    if ((c->kind != CLI_EV_SAMPLE && c->kind != CLI_EV_LOST) ||
        !(th = cli_ev_ref(vals, c->thread)))
        return;
    struct thread_stat *ts = thread_of(s, th);
    uint64_t ns = 0, n = 0;
    if (c->kind == CLI_EV_SAMPLE) {
        if (cli_ev_bool(vals, c->failed))
            ts->failed++;
        else
            ts->ok++;
        ts->biased += cli_ev_bool(vals, c->biased);
        cli_ev_uint(vals, c->period, &ns);
        ts->sampled_ns += ns;
    } else {
        cli_ev_uint(vals, c->lost_samples, &n);
        cli_ev_uint(vals, c->lost_time, &ns);
        ts->lost += n;
        ts->lost_ns += ns;
    }
}

static int cmp_thread(const void *a, const void *b)
{
    const struct thread_stat *x = a, *y = b;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int cmp_type(const void *a, const void *b)
{
    const struct type_stat *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

static struct thread_stat total_of(const struct summary *s)
{
    struct thread_stat t = { 0 };
    for (size_t i = 0; i < s->nthreads; i++) {
        const struct thread_stat *x = &s->threads[i];
        t.ok += x->ok;
        t.failed += x->failed;
        t.biased += x->biased;
        t.lost += x->lost;
        t.sampled_ns += x->sampled_ns;
        t.lost_ns += x->lost_ns;
    }
    return t;
}

/* Table cells: seconds with ms resolution, one unit for the whole column. */
static char *secs(uint64_t ns, char *buf, size_t size)
{
    snprintf(buf, size, "%" PRIu64 ".%03u s", ns / 1000000000u,
             (unsigned)(ns % 1000000000u / 1000000u));
    return buf;
}

static void print_text(const struct summary *s, FILE *f)
{
    char t1[48], t2[48], t3[48], line[1024];
    fprintf(f, "%s\n\n", s->path);
    fprintf(f, " Version: %u.%u\n", s->major, s->minor);
    fprintf(f, " Chunks: %" PRIu64 "\n", s->chunks);
    fprintf(f, " Start: %s (UTC)\n",
            s->have_start ? cli_format_time(s->start_ns, t1, sizeof t1) : "-");
    fprintf(f, " Duration: %s\n",
            cli_format_duration(s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0,
                                t1, sizeof t1));
    if (s->engine[0])
        fprintf(f, " Engine: %s%s%s%s\n", s->engine,
                s->engine_note[0] ? " (" : "", s->engine_note,
                s->engine_note[0] ? ")" : "");
    fprintf(f, " Events: %" PRIu64 "%s\n\n", s->events,
            s->complete ? (s->sealed ? " (sealed by rec-start: its writer "
                           "ended without finishing it; data up to its last "
                           "flush, the rest counted lost)" : "")
            : s->writing
            ? " (still being written: up to its last flush)"
            : " (unfinished: its writer stopped without closing it)");

    fprintf(f, " %-28s %12s %14s\n", "Event Type", "Count", "Size (bytes)");
    fprintf(f, " %.56s\n", "========================================================");
    for (size_t i = 0; i < s->ntypes; i++)
        fprintf(f, " %-28s %12" PRIu64 " %14" PRIu64 "\n", s->types[i].name,
                s->types[i].count, s->types[i].bytes);

    fprintf(f, "\n CPU Time Samples\n");
    fprintf(f, " %-8s %10s %8s %8s %10s %8s %14s %14s  %s\n", "Thread",
            "Successful", "Failed", "Biased", "Total", "Lost",
            "CPU Sampled", "CPU Lost", "Name");
    fprintf(f, " %.100s\n", "=================================================="
            "==================================================");
    for (size_t i = 0; i <= s->nthreads; i++) {
        struct thread_stat tot;
        const struct thread_stat *x;
        char tid[24];
        if (i == s->nthreads) {
            tot = total_of(s);
            x = &tot;
            strcpy(tid, "all");
        } else {
            x = &s->threads[i];
            snprintf(tid, sizeof tid, "%" PRIu64, x->tid);
        }
        fprintf(f, " %-8s %10" PRIu64 " %8" PRIu64 " %8" PRIu64 " %10" PRIu64
                " %8" PRIu64 " %14s %14s  ", tid, x->ok, x->failed, x->biased,
                x->ok + x->failed, x->lost,
                secs(x->sampled_ns, t2, sizeof t2), secs(x->lost_ns, t3, sizeof t3));
        /* Control characters in a name would break the table. */
        const char *name = i == s->nthreads ? "" : x->name ? x->name : "-";
        for (const char *c = name; *c; c++)
            fputc((unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c, f);
        fputc('\n', f);
    }
    if (s->losses && *cli_losses_line(s->losses, line, sizeof line))
        fprintf(f, "\n %s\n", line);
    if (s->losses && *cli_losses_partial_line(s->losses, line, sizeof line))
        fprintf(f, "\n %s\n", line);
}

static json_t *jstr(const char *str)
{
    if (!str)
        return json_null();
    json_t *j = json_string(str);
    if (!j) {
        char *q = cli_json_quote(str, strlen(str));
        j = json_loads(q, JSON_DECODE_ANY, NULL);
        free(q);
    }
    return j ? j : json_null();
}

static json_t *thread_json(const struct thread_stat *x, bool with_id)
{
    json_t *j = json_object();
    if (with_id) {
        json_object_set_new(j, "osThreadId", json_integer((json_int_t)x->tid));
        json_object_set_new(j, "name", jstr(x->name));
    }
    json_object_set_new(j, "successfulSamples", json_integer((json_int_t)x->ok));
    json_object_set_new(j, "failedSamples", json_integer((json_int_t)x->failed));
    json_object_set_new(j, "biasedSamples", json_integer((json_int_t)x->biased));
    json_object_set_new(j, "totalSamples", json_integer((json_int_t)(x->ok + x->failed)));
    json_object_set_new(j, "lostSamples", json_integer((json_int_t)x->lost));
    json_object_set_new(j, "sampledTime", json_integer((json_int_t)x->sampled_ns));
    json_object_set_new(j, "lostTime", json_integer((json_int_t)x->lost_ns));
    return j;
}

static int print_json(const struct summary *s, FILE *f)
{
    char t[48], v[32];
    json_t *j = json_object(), *types = json_array(), *threads = json_array();
    snprintf(v, sizeof v, "%u.%u", s->major, s->minor);
    json_object_set_new(j, "file", jstr(s->path));
    json_object_set_new(j, "formatVersion", json_string(v));
    json_object_set_new(j, "chunks", json_integer((json_int_t)s->chunks));
    json_object_set_new(j, "startTime", json_integer((json_int_t)s->start_ns));
    json_object_set_new(j, "start", s->have_start ?
                        json_string(cli_format_time(s->start_ns, t, sizeof t)) :
                        json_null());
    json_object_set_new(j, "duration", json_integer((json_int_t)
                        (s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0)));
    json_object_set_new(j, "events", json_integer((json_int_t)s->events));
    json_object_set_new(j, "complete", json_boolean(s->complete));
    json_object_set_new(j, "sealed", json_boolean(s->sealed));
    if (!s->complete)
        json_object_set_new(j, "beingWritten", json_boolean(s->writing));
    if (s->engine[0]) {     /* recordings before the engine field: none */
        json_object_set_new(j, "engine", jstr(s->engine));
        json_object_set_new(j, "engineNote", s->engine_note[0] ?
                            jstr(s->engine_note) : json_null());
    }
    for (size_t i = 0; i < s->ntypes; i++) {
        json_t *e = json_object();
        json_object_set_new(e, "type", jstr(s->types[i].name));
        json_object_set_new(e, "count", json_integer((json_int_t)s->types[i].count));
        json_object_set_new(e, "bytes", json_integer((json_int_t)s->types[i].bytes));
        json_array_append_new(types, e);
    }
    json_object_set_new(j, "eventTypes", types);
    for (size_t i = 0; i < s->nthreads; i++)
        json_array_append_new(threads, thread_json(&s->threads[i], true));
    json_t *cpu = json_object();
    json_object_set_new(cpu, "threads", threads);
    struct thread_stat tot = total_of(s);
    json_object_set_new(cpu, "total", thread_json(&tot, false));
    char line[1024];
    if (s->losses && *cli_losses_line(s->losses, line, sizeof line))
        json_object_set_new(cpu, "withoutStacks", jstr(line));
    if (s->losses && *cli_losses_partial_line(s->losses, line, sizeof line))
        json_object_set_new(cpu, "withPartialStacks", jstr(line));
    if (s->losses) {
        /* CPU time of the samples whose stack was cut short, by reason. */
        const char *names[16];
        uint64_t ns[16];
        size_t n = cli_losses_partial(s->losses, names, ns, 16);
        json_t *p = json_object();
        for (size_t i = 0; i < n; i++)
            json_object_set_new(p, names[i], json_integer((json_int_t)ns[i]));
        json_object_set_new(cpu, "partialStackTime", p);
    }
    json_object_set_new(j, "cpuTimeSamples", cpu);
    int rc = json_dumpf(j, f, JSON_INDENT(2));
    fputc('\n', f);
    json_decref(j);
    return rc;
}

static void summary_free(struct summary *s)
{
    for (size_t i = 0; i < s->ntypes; i++)
        free(s->types[i].name);
    for (size_t i = 0; i < s->nthreads; i++)
        free(s->threads[i].name);
    free(s->types);
    free(s->threads);
    cli_evview_free(&s->view);
    cli_map_free(&s->tid_map);
    cli_map_free(&s->tc_map);
    cli_map_free(&s->entry_map);
}

/* --since/--until: the events counted, and the span they clip. */
struct window {
    bool have_since, have_until;
    cli_time since, until;
};

static int summarize(const char *path, bool json, const struct window *w)
{
    struct summary s = { .path = path, .losses = cli_losses_new() };
    rec_reader *r;
    const rec_event *ev;
    rec_chunk_info info;
    uint64_t last = UINT64_MAX, since = 0, until = UINT64_MAX;
    bool windowed = w->have_since || w->have_until, first = true;
    int rc = cli_reader_open(path, 0, &r);
    if (rc < 0) {
        cli_reader_error(prog, path, NULL, rc);
        cli_losses_free(s.losses);
        return 1;
    }
    while ((rc = rec_reader_next(r, &ev)) > 0) {
        /* cli_chunk_changed(), inlined: this loop is the tool's cost */
        if (rec_reader_chunk(r, &info) == 0 && cli_chunk_key(&info) != last) {
            last = cli_chunk_key(&info);
            new_chunk(&s, r, &info);
            if (first && windowed) {
                /* +DURATION counts from the recording's first chunk */
                first = false;
                if (w->have_since)
                    since = cli_time_resolve(&w->since, info.start_ns);
                if (w->have_until)
                    until = cli_time_resolve(&w->until, info.start_ns);
            }
        }
        if (windowed) {
            uint64_t ns = rec_event_time_ns(ev);
            if (ns < since || ns >= until)
                continue;
        }
        s.events++;
        account(&s, ev);
        if (s.losses)
            cli_losses_event(s.losses, &s.view, ev);
        int64_t t = (int64_t)rec_event_ticks(ev);
        if (!s.have_ticks || t > s.max_ticks) {
            s.max_ticks = t;
            s.have_ticks = true;
        }
    }
    /* A chunk without events (its header was read); past the end of the
     * file the reader may describe an empty chunk at the file's end, which
     * is no chunk. */
    if (rec_reader_chunk(r, &info) == 0) {
        if (info.size > 0 && cli_chunk_changed(r, &last, &info))
            new_chunk(&s, r, &info);
        else if (info.size > 0)
            end_of_chunk(&s, &info);   /* its duration may have grown */
    }
    chunk_events_end(&s);
    if (windowed && s.have_start) {
        /* The span shown is the window's part of the recording. */
        if (s.start_ns < since)
            s.start_ns = since;
        if (s.end_ns > until)
            s.end_ns = until;
        if (s.end_ns < s.start_ns)
            s.end_ns = s.start_ns;
    }
    if (rec_reader_chunk(r, &info) == 0) {
        s.complete = s.chunks && rc == 0 && info.last;
    }
    s.sealed = rec_reader_sealed(r);
    if (!s.complete && rc == 0)
        s.writing = cli_file_being_written(path);
    if (s.nthreads)
        qsort(s.threads, s.nthreads, sizeof *s.threads, cmp_thread);
    if (s.ntypes)
        qsort(s.types, s.ntypes, sizeof *s.types, cmp_type);
    if (json)
        print_json(&s, stdout);
    else
        print_text(&s, stdout);
    if (fflush(stdout) != 0) {
        cli_error(prog, "stdout: %s", strerror(errno));
        rc = REC_EIO;
    } else if (rc < 0) {
        cli_reader_error(prog, path, r, rc);
    } else {
        cli_reader_warning(prog, path, r);
    }
    rec_reader_close(r);
    cli_losses_free(s.losses);
    summary_free(&s);
    return rc < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
    enum { O_SINCE = 256, O_UNTIL };
    static const struct option lopts[] = {
        { "json", no_argument, NULL, 'j' },
        { "since", required_argument, NULL, O_SINCE },
        { "until", required_argument, NULL, O_UNTIL },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    bool json = false;
    struct window w = { 0 };
    int c, status = CLI_EXIT_OK;
    /* getopt names argv[0]: not the build tree's .libs/lt-rec-summary. */
    argv[0] = (char *)prog;
    while ((c = getopt_long(argc, argv, "hV", lopts, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case O_SINCE:
            if (cli_opt_time(prog, "--since", optarg, &w.since,
                             &w.have_since) < 0)
                return CLI_EXIT_USAGE;
            break;
        case O_UNTIL:
            if (cli_opt_time(prog, "--until", optarg, &w.until,
                             &w.have_until) < 0)
                return CLI_EXIT_USAGE;
            break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        case 'V': cli_version_exit(prog);
        default:
            cli_try_help(prog);
            return CLI_EXIT_USAGE;
        }
    }
    if (cli_need_files(prog, optind, argc) < 0)
        return CLI_EXIT_USAGE;
    argc = cli_inputs_dedup(prog, argv, optind, argc);
    if (cli_output_not_input(prog, NULL, NULL, argv + optind,
                             argc - optind) < 0)
        return CLI_EXIT_USAGE;
    cli_inputs_runs(prog, argv + optind, argc - optind);
    if (cli_times_from_end(prog, argv + optind, argc - optind,
                           w.have_since ? &w.since : NULL,
                           w.have_until ? &w.until : NULL) < 0)
        return CLI_EXIT_USAGE;
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    for (int i = optind; i < argc; i++) {
        if (i > optind && !json)
            fputc('\n', stdout);
        if (summarize(argv[i], json, &w) != 0)
            status = CLI_EXIT_DATA;
    }
    return status;
}
