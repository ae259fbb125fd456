/*
 * tools/dump/rec-dump.c - print the events of rec recordings as JSON.
 * See man/rec-dump.1 for the output contract.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "dump-render.h"
#include "dump-copy.h"
#include "export.h"

static const char prog[] = "rec-dump";

/* 0: not given (JSON). */
enum mode { MODE_JSON = 1, MODE_NDJSON, MODE_METADATA };
static const char *const mode_names[] = { NULL, "--json", "--ndjson",
                                          "--metadata" };

struct opts {
    int mode;
    cli_patterns *events;
    cli_threads *threads;
    unsigned stack_depth;
    bool have_since, have_until;
    cli_time since, until;
    const char *output;
    bool follow;
    cli_follow_opts fo;
    enum xp_format export;      /* 0: JSON/NDJSON */
    bool copy;                  /* --format rec: whole chunks (dump-copy.c) */
    enum xp_group group;
    bool weight_samples;
    const char *debug_dir;
};

struct dumper {
    const struct opts *o;
    FILE *out;
    cli_buf buf;
    dump_render *render;
    uint64_t nprinted;          /* events printed over all files */
    bool thread_seen;           /* --threads matched some thread */

    cli_evview view;            /* of the chunk */
    cli_map types;           /* rec_type* -> 1 --events match, 2 not */
    cli_map threads;         /* Thread rec_entry* -> 1 match, 2 no match */
    bool times_set;             /* --follow: since/until resolved */
    uint64_t since, until;
};

static void usage(FILE *f)
{
    fprintf(f,
"Usage: rec-dump [OPTION]... FILE...\n"
"Print the events of rec recordings as JSON.\n"
"\n"
"  --json              one JSON array of events (default)\n"
"  --ndjson            one JSON object per event and line\n"
"  --metadata          print the schema embedded in each FILE\n"
"  --format FMT        json, ndjson, or an export of the CPU profile:\n"
"                      collapsed (flamegraph.pl), pprof (gzipped\n"
"                      profile.proto), jfr (JDK Flight Recorder); or rec:\n"
"                      one recording of the whole chunks that meet the\n"
"                      --since/--until window\n"
"  --group G           collapsed: root frame per thread, process or none\n"
"                      (default none)\n"
"  --weight W          collapsed: cpu (ns, default) or samples\n"
"  --events GLOB[,GLOB...]   only events whose type name matches\n"
"  --threads LIST      only events of these threads (tids or name globs)\n"
"  --stack-depth N     frames per stack trace (default 5, 0 = all)\n"
"  --debug-dir DIR     name frames from the debug files under DIR, found\n"
"                      by the build-ids the recording holds\n"
"  --since TIME        only events at or after TIME\n"
"  --until TIME        only events before TIME\n"
"                      TIME: ns since the epoch, RFC 3339, +DURATION\n"
"                      after the recording's start (+1.5s, +200ms), or\n"
"                      [-]DURATION before the end of its data (5m, -90s)\n"
"  -o, --output FILE   write to FILE instead of standard output\n"
"  -f, --follow        print events as they are written (NDJSON, one FILE,\n"
"                      which may not exist yet); see rec-dump(1), FOLLOWING\n"
"      --from-end      with --follow: skip the events already written\n"
"      --position-file F  with --follow: resume from and save to F\n"
"      --stall-timeout T  with --follow: give up after T without new data\n"
"  -h, --help          show this help\n"
"  -V, --version       show the version\n"
"\n"
"Exit status: 0 success, 1 bad or unreadable input (every valid event is\n"
"printed first), 2 usage error.\n");
}

static bool type_matches(struct dumper *d, const rec_type *t)
{
    uint32_t m;
    if (!d->o->events)
        return true;
    if (cli_map_get(&d->types, (uintptr_t)t, &m))
        return m == 1;
    const char *name = rec_type_name(t);
    bool ok = name && cli_patterns_match(d->o->events, name, strlen(name));
    cli_map_xput(&d->types, (uintptr_t)t, ok ? 1 : 2);
    return ok;
}

static bool thread_matches(struct dumper *d, const rec_entry *e)
{
    uint32_t m;
    cli_thread_info ti;
    if (!e)
        return false;
    if (cli_map_get(&d->threads, (uintptr_t)e, &m))
        return m == 1;
    cli_evview_thread(&d->view, e, &ti);
    bool ok = cli_threads_match(d->o->threads, ti.have_tid ? ti.tid : UINT64_MAX,
                                ti.name, ti.name_len);
    d->thread_seen |= ok;
    cli_map_xput(&d->threads, (uintptr_t)e, (uint32_t)(ok ? 1 : 2));
    return ok;
}

static bool event_selected(struct dumper *d, const rec_event *ev,
                           uint64_t since, uint64_t until)
{
    const rec_type *t = rec_event_type(ev);
    if (!t)
        return !d->o->events && !d->o->threads;
    if (!type_matches(d, t))
        return false;
    if (d->o->have_since || d->o->have_until) {
        uint64_t ns = rec_event_time_ns(ev);
        if (ns < since || ns >= until)
            return false;
    }
    if (d->o->threads)
        return thread_matches(d, cli_ev_ref(rec_event_values(ev),
                                            cli_evview_type(&d->view, t)->thread));
    return true;
}

static void chunk_changed(struct dumper *d, const rec_chunk_info *info)
{
    dump_render_reset(d->render, info);
    cli_evview_reset(&d->view);
    cli_map_clear(&d->types);
    cli_map_clear(&d->threads);
}

static int flush_out(struct dumper *d)
{
    if (cli_buf_flush(&d->buf, d->out) < 0) {
        cli_error(prog, "%s: %s", d->o->output ? d->o->output : "stdout",
                  strerror(errno));
        return -1;
    }
    return 0;
}

static bool resolve_times(const struct dumper *d, uint64_t start_ns,
                          uint64_t *since, uint64_t *until)
{
    if (d->o->have_since)
        *since = cli_time_resolve(&d->o->since, start_ns);
    if (d->o->have_until)
        *until = cli_time_resolve(&d->o->until, start_ns);
    return true;
}

/* Returns 0, 1 for bad input, -1 for an output error (fatal). */
static int dump_file(struct dumper *d, const char *path)
{
    rec_reader *r;
    const rec_event *ev;
    rec_chunk_info info;
    uint64_t last_chunk = UINT64_MAX, since = 0, until = UINT64_MAX;
    bool first = true;
    /* --follow -: each event is out before the reader waits for the
     * stream's next chunk. */
    bool live = d->o->follow;
    int rc = cli_reader_open(path, 0, &r);
    if (rc < 0) {
        cli_reader_error(prog, path, NULL, rc);
        return 1;
    }
    /* Relative times count from the recording's start: the first chunk,
     * whose header the reader has read by now (or, failing that, the first
     * chunk with events). */
    if (rec_reader_chunk(r, &info) == 0)
        first = !resolve_times(d, info.start_ns, &since, &until);
    while ((rc = rec_reader_next(r, &ev)) > 0) {
        if (cli_chunk_changed(r, &last_chunk, &info)) {
            chunk_changed(d, &info);
            if (first)
                first = !resolve_times(d, info.start_ns, &since, &until);
        }
        if (d->o->debug_dir)
            dump_render_note_modules(d->render, ev);
        if (!event_selected(d, ev, since, until))
            continue;
        if (d->o->mode != MODE_NDJSON)
            cli_buf_add(&d->buf, d->nprinted ? ",\n" : "[\n", 2);
        dump_render_event(d->render, ev, &d->buf);
        if (d->o->mode == MODE_NDJSON)
            cli_buf_addc(&d->buf, '\n');
        d->nprinted++;
        if ((d->buf.len >= (1u << 20) || (live && !rec_reader_buffered(r))) &&
            (flush_out(d) < 0 || fflush(d->out) != 0)) {
            rec_reader_close(r);
            return -1;
        }
    }
    /* Everything valid is out before the error line. */
    if (flush_out(d) < 0 || fflush(d->out) != 0) {
        rec_reader_close(r);
        return -1;
    }
    if (rc < 0)
        cli_reader_error(prog, path, r, rc);
    else
        cli_reader_warning(prog, path, r);
    rec_reader_close(r);
    return rc < 0 ? 1 : 0;
}

static json_t *jstr(const char *s)
{
    json_t *j = s ? json_string(s) : NULL;
    if (s && !j) {
        /* invalid UTF-8 in the metadata: keep it readable and valid */
        char *q = cli_json_quote(s, strlen(s));
        j = json_loads(q, JSON_DECODE_ANY, NULL);
        free(q);
    }
    return j ? j : json_null();
}

/* The schema of the reader's current chunk as JSON (the CBOR metadata's
 * fields, in schema order). */
static json_t *schema_json(const rec_reader *r)
{
    rec_chunk_info info;
    char version[32] = "";
    json_t *root = json_object(), *types = json_array();
    if (rec_reader_chunk(r, &info) == 0)
        snprintf(version, sizeof version, "%u.%u", info.major, info.minor);
    json_object_set_new(root, "formatVersion", jstr(version));
    for (size_t i = 0; i < rec_reader_ntypes(r); i++) {
        const rec_type *t = rec_reader_type(r, i);
        if (!t)
            continue;
        json_t *jt = json_object(), *fields = json_array();
        json_object_set_new(jt, "id", json_integer(rec_type_id(t)));
        json_object_set_new(jt, "name", jstr(rec_type_name(t)));
        json_object_set_new(jt, "kind", jstr(rec_type_is_event(t) ? "event" : "pool"));
        json_object_set_new(jt, "label", jstr(rec_type_label(t)));
        json_object_set_new(jt, "description", jstr(rec_type_description(t)));
        for (size_t k = 0; k < rec_type_nfields(t); k++) {
            const rec_field_info *fi = rec_type_field(t, k);
            if (!fi)
                continue;
            json_t *jf = json_object();
            json_object_set_new(jf, "name", jstr(fi->name));
            json_object_set_new(jf, "type", jstr(fi->type));
            if (fi->unit)
                json_object_set_new(jf, "unit", jstr(fi->unit));
            json_object_set_new(jf, "label", jstr(fi->label));
            json_object_set_new(jf, "description", jstr(fi->description));
            if (fi->array)
                json_object_set_new(jf, "array", json_true());
            if (fi->nullable)
                json_object_set_new(jf, "nullable", json_true());
            json_array_append_new(fields, jf);
        }
        json_object_set_new(jt, "fields", fields);
        json_array_append_new(types, jt);
    }
    json_object_set_new(root, "types", types);
    return root;
}

static int metadata_file(struct dumper *d, const char *path)
{
    rec_reader *r;
    const rec_event *ev;
    int rc = cli_reader_open(path, 0, &r);
    if (rc < 0) {
        cli_reader_error(prog, path, NULL, rc);
        return 1;
    }
    /* The first chunk's metadata is loaded by the time the first event (or
     * the end) is reached. */
    if (rec_reader_ntypes(r) == 0)
        rc = rec_reader_next(r, &ev);
    if (rec_reader_ntypes(r) == 0) {
        if (rc < 0)
            cli_reader_error(prog, path, r, rc);
        else
            cli_error(prog, "%s: no metadata", path);
        rec_reader_close(r);
        return 1;
    }
    json_t *j = schema_json(r);
    rec_reader_close(r);
    char *s = json_dumps(j, JSON_INDENT(2));
    json_decref(j);
    if (!s) {
        cli_error(prog, "out of memory");
        return 1;
    }
    cli_buf_adds(&d->buf, s);
    cli_buf_addc(&d->buf, '\n');
    free(s);
    return flush_out(d) < 0 ? -1 : 0;
}

/* Every --events pattern must name an event type of the recordings (their
 * first chunks' schemas): a typo would otherwise print nothing, silently.
 * Unreadable files are left to the dump, which says what is wrong. */
static int check_event_names(const struct opts *o, char *const *in, int n)
{
    size_t np = cli_patterns_count(o->events);
    bool *hit = calloc(np + 1, sizeof *hit);
    cli_buf names = { 0 };
    bool any_schema = false;
    int rc = 0;
    if (!hit)
        return 0;
    for (int i = 0; i < n; i++) {
        rec_reader *r;
        if (cli_is_stream(in[i]) || rec_reader_open(&r, in[i], 0) < 0)
            continue;
        for (size_t k = 0; k < rec_reader_ntypes(r); k++) {
            const rec_type *t = rec_reader_type(r, k);
            const char *name = t ? rec_type_name(t) : NULL;
            if (!name || !rec_type_is_event(t))
                continue;
            any_schema = true;
            if (i == 0) {
                if (names.len)
                    cli_buf_adds(&names, ", ");
                cli_buf_adds(&names, name);
            }
            for (size_t p = 0; p < np; p++)
                hit[p] |= cli_glob_match(cli_patterns_get(o->events, p),
                                         name, strlen(name));
        }
        rec_reader_close(r);
    }
    for (size_t p = 0; any_schema && p < np; p++) {
        if (hit[p])
            continue;
        cli_buf_addc(&names, '\0');
        cli_error(prog, "--events: '%s' is no event type of the recordings "
                  "(%s)", cli_patterns_get(o->events, p),
                  names.len > 1 ? names.p : "see --metadata");
        rc = -1;
        break;
    }
    cli_buf_free(&names);
    free(hit);
    return rc;
}

/* --follow callbacks */
static void follow_chunk(void *ctx, const rec_chunk_info *info)
{
    struct dumper *d = ctx;
    chunk_changed(d, info);
    if (!d->times_set)
        d->times_set = resolve_times(d, info->start_ns, &d->since, &d->until);
}

/* One line per event, out at once: a pipeline sees every event as it
 * lands. */
static int follow_event(void *ctx, const rec_event *ev)
{
    struct dumper *d = ctx;
    if (!event_selected(d, ev, d->since, d->until))
        return 0;
    dump_render_event(d->render, ev, &d->buf);
    cli_buf_addc(&d->buf, '\n');
    d->nprinted++;
    if (cli_buf_flush(&d->buf, d->out) < 0 || fflush(d->out) != 0) {
        cli_error(prog, "output: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* --format, --group, --weight: the export formats (tools/export/). */
static int export_option(char c, const char *arg, struct opts *o)
{
    if (c == 'f') {
        o->export = 0;
        o->copy = false;
        if (strcmp(arg, "rec") == 0)
            o->copy = true;
        else if (strcmp(arg, "json") == 0)
            return cli_opt_mode(prog, &o->mode, MODE_JSON, mode_names);
        else if (strcmp(arg, "ndjson") == 0)
            return cli_opt_mode(prog, &o->mode, MODE_NDJSON, mode_names);
        else if (!(o->export = xp_format_parse(arg)))
            goto bad;
    } else if (c == 'g') {
        if (strcmp(arg, "none") == 0)
            o->group = XP_GROUP_NONE;
        else if (strcmp(arg, "thread") == 0)
            o->group = XP_GROUP_THREAD;
        else if (strcmp(arg, "process") == 0)
            o->group = XP_GROUP_PROCESS;
        else
            goto bad;
    } else if (strcmp(arg, "cpu") == 0 || strcmp(arg, "samples") == 0) {
        o->weight_samples = arg[0] == 's';
    } else {
        goto bad;
    }
    return 0;
bad:
    cli_error(prog, "--%s: unknown value '%s'", c == 'f' ? "format"
              : c == 'g' ? "group" : "weight", arg);
    return -1;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    enum { O_JSON = 256, O_NDJSON, O_METADATA, O_EVENTS, O_THREADS,
           O_DEPTH, O_SINCE, O_UNTIL, O_FORMAT, O_GROUP, O_WEIGHT,
           O_FROM_END, O_POSFILE, O_STALL, O_DEBUG_DIR };
    static const struct option lopts[] = {
        { "json", no_argument, NULL, O_JSON },
        { "ndjson", no_argument, NULL, O_NDJSON },
        { "metadata", no_argument, NULL, O_METADATA },
        { "events", required_argument, NULL, O_EVENTS },
        { "threads", required_argument, NULL, O_THREADS },
        { "stack-depth", required_argument, NULL, O_DEPTH },
        { "debug-dir", required_argument, NULL, O_DEBUG_DIR },
        { "since", required_argument, NULL, O_SINCE },
        { "until", required_argument, NULL, O_UNTIL },
        { "format", required_argument, NULL, O_FORMAT },
        { "group", required_argument, NULL, O_GROUP },
        { "weight", required_argument, NULL, O_WEIGHT },
        { "output", required_argument, NULL, 'o' },
        { "follow", no_argument, NULL, 'f' },
        { "from-end", no_argument, NULL, O_FROM_END },
        { "position-file", required_argument, NULL, O_POSFILE },
        { "stall-timeout", required_argument, NULL, O_STALL },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    uint64_t n;
    int c;
    o->stack_depth = 5;
    /* getopt names argv[0] in its messages: not the build tree's
     * .libs/lt-rec-dump. */
    argv[0] = (char *)prog;
    while ((c = getopt_long(argc, argv, "o:fhV", lopts, NULL)) != -1) {
        switch (c) {
        case O_JSON:
        case O_NDJSON:
        case O_METADATA:
            if (cli_opt_mode(prog, &o->mode, c == O_JSON ? MODE_JSON
                             : c == O_NDJSON ? MODE_NDJSON : MODE_METADATA,
                             mode_names) < 0)
                return -1;
            break;
        case O_FORMAT:
        case O_GROUP:
        case O_WEIGHT:
            if (export_option(c == O_FORMAT ? 'f' : c == O_GROUP ? 'g' : 'w',
                              optarg, o) < 0)
                return -1;
            break;
        case O_EVENTS:
            cli_patterns_free(o->events);
            o->events = NULL;
            if (cli_patterns_parse(optarg, &o->events) < 0) {
                cli_error(prog, "--events: empty pattern list '%s'", optarg);
                return -1;
            }
            break;
        case O_THREADS:
            if (cli_opt_threads(prog, optarg, &o->threads) < 0)
                return -1;
            break;
        case O_DEPTH:
            if (cli_parse_uint(optarg, &n) < 0 || n > UINT32_MAX) {
                cli_error(prog, "--stack-depth: not a number of frames: '%s'", optarg);
                return -1;
            }
            o->stack_depth = (unsigned)n;
            break;
        case O_DEBUG_DIR:
            if (cli_opt_debug_dir(prog, optarg, &o->debug_dir) < 0)
                return -1;
            break;
        case O_SINCE:
            if (cli_opt_time(prog, "--since", optarg, &o->since,
                             &o->have_since) < 0)
                return -1;
            break;
        case O_UNTIL:
            if (cli_opt_time(prog, "--until", optarg, &o->until,
                             &o->have_until) < 0)
                return -1;
            break;
        case 'o': o->output = optarg; break;
        case 'f': o->follow = true; break;
        case O_FROM_END: o->fo.from_end = true; break;
        case O_POSFILE: o->fo.position_file = optarg; break;
        case O_STALL:
            if (cli_opt_stall_timeout(prog, optarg, &o->fo.stall_ns) < 0)
                return -1;
            break;
        case 'h': usage(stdout); exit(CLI_EXIT_OK);
        case 'V': cli_version_exit(prog);
        default:
            cli_try_help(prog);
            return -1;
        }
    }
    if ((o->export || o->copy) && o->mode) {
        cli_error(prog, "--format and %s exclude each other",
                  mode_names[o->mode]);
        return -1;
    }
    if (o->copy && (o->events || o->threads || o->follow)) {
        cli_error(prog, "--format rec copies whole chunks: --events, "
                  "--threads and --follow do not apply");
        return -1;
    }
    if (cli_need_files(prog, optind, argc) < 0)
        return -1;
    if ((o->fo.from_end || o->fo.position_file || o->fo.stall_ns) && !o->follow) {
        cli_error(prog, "--from-end, --position-file and --stall-timeout "
                  "need --follow");
        return -1;
    }
    if (o->follow && (argc - optind != 1 || o->mode == MODE_METADATA ||
                      o->export)) {
        cli_error(prog, "--follow takes one FILE and prints events as NDJSON");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o = { 0 };
    struct dumper d = { .o = &o, .out = stdout };
    cli_debug *dbg = NULL;
    int status = CLI_EXIT_OK;
    if (parse_args(argc, argv, &o) < 0) {
        cli_patterns_free(o.events);
        cli_threads_free(o.threads);
        return CLI_EXIT_USAGE;
    }
    argc = cli_inputs_dedup(prog, argv, optind, argc);
    if (cli_output_not_input(prog, "-o", o.output, argv + optind,
                             argc - optind) < 0) {
        status = CLI_EXIT_USAGE;
        goto done;
    }
    cli_inputs_runs(prog, argv + optind, argc - optind);
    if (cli_times_from_end(prog, argv + optind, argc - optind,
                           o.have_since ? &o.since : NULL,
                           o.have_until ? &o.until : NULL) < 0) {
        status = CLI_EXIT_USAGE;
        goto done;
    }
    if (o.events && o.mode != MODE_METADATA &&
        check_event_names(&o, argv + optind, argc - optind) < 0) {
        status = CLI_EXIT_USAGE;
        goto done;
    }
    /* As rec-start -o - does: a terminal gets no binary. */
    if ((o.export == XP_PPROF || o.export == XP_JFR || o.copy) && !o.output &&
        isatty(STDOUT_FILENO)) {
        cli_error(prog, "--format %s: standard output is a terminal: refusing "
                  "to write a binary %s to it (use -o FILE, or a pipe)",
                  o.copy ? "rec" : o.export == XP_PPROF ? "pprof" : "jfr",
                  o.copy ? "recording" : "profile");
        status = CLI_EXIT_USAGE;
        goto done;
    }
    if (o.copy) {
        for (int i = optind; i < argc; i++)
            if (cli_is_stream(argv[i])) {
                cli_error(prog, "--format rec: %s: a pipe cannot be read "
                          "back: give a file or a directory recording",
                          argv[i]);
                status = CLI_EXIT_USAGE;
                goto done;
            }
    }
    if (o.output && !(d.out = fopen(o.output, o.export || o.copy ? "wb" : "w"))) {
        cli_error(prog, "%s: %s", o.output, strerror(errno));
        status = CLI_EXIT_DATA;
        goto done;
    }
    if (o.debug_dir && !(dbg = cli_debug_new(o.debug_dir))) {
        cli_error(prog, "out of memory");
        status = CLI_EXIT_DATA;
        goto done;
    }
    if (o.copy) {
        dump_copy_opts co = { .have_since = o.have_since,
                              .have_until = o.have_until, .since = o.since,
                              .until = o.until,
                              .output = o.output ? o.output : "stdout" };
        status = dump_copy(prog, &co, argv + optind, argc - optind, d.out);
        goto done;
    }
    if (o.export) {
        xp_options xo = { .threads = o.threads, .have_since = o.have_since,
                          .have_until = o.have_until, .since = o.since,
                          .until = o.until, .debug = dbg };
        xp_out xout = { .prog = prog, .f = d.out, .group = o.group,
                        .weight_samples = o.weight_samples,
                        .path = o.output ? o.output : "stdout" };
        status = xp_dump(prog, o.export, &xo, &xout, argv + optind,
                         (size_t)(argc - optind));
        if (fflush(d.out) != 0 && status == CLI_EXIT_OK)
            status = CLI_EXIT_DATA;
        goto done;
    }
    d.render = dump_render_new(o.stack_depth);
    if (d.render && dbg)
        dump_render_set_debug(d.render, dbg);
    if (!d.render) {
        cli_error(prog, "out of memory");
        status = CLI_EXIT_DATA;
        goto done;
    }
    if (o.follow && !cli_is_stream(argv[optind])) {
        cli_follow_cb cb = { .ctx = &d, .chunk = follow_chunk,
                             .event = follow_event };
        d.until = UINT64_MAX;
        status = cli_follow(prog, argv[optind], &o.fo, &cb);
        goto done;
    }
    if (o.follow) {
        /* --follow -: a stream, read as it comes (NDJSON); it has no
         * position to resume from, and ends at its end of file. */
        if (o.fo.from_end || o.fo.position_file || o.fo.stall_ns) {
            cli_error(prog, "--from-end, --position-file and --stall-timeout "
                      "do not apply to standard input");
            status = CLI_EXIT_USAGE;
            goto done;
        }
        o.mode = MODE_NDJSON;
    }
    for (int i = optind; i < argc; i++) {
        int rc = o.mode == MODE_METADATA ? metadata_file(&d, argv[i])
                                         : dump_file(&d, argv[i]);
        if (rc < 0) {
            status = CLI_EXIT_DATA;
            goto done;
        }
        if (rc > 0)
            status = CLI_EXIT_DATA;
    }
    if (o.mode != MODE_NDJSON && o.mode != MODE_METADATA)
        cli_buf_adds(&d.buf, d.nprinted ? "\n]\n" : "[]\n");
    if (flush_out(&d) < 0 || fflush(d.out) != 0)
        status = CLI_EXIT_DATA;
    if (o.threads && !d.thread_seen && o.mode != MODE_METADATA)
        fprintf(stderr, "%s: note: --threads matched no thread of the "
                "recordings: nothing printed\n", prog);
done:
    if (d.out && d.out != stdout && fclose(d.out) != 0 && status == 0) {
        cli_error(prog, "%s: %s", o.output, strerror(errno));
        status = CLI_EXIT_DATA;
    }
    dump_render_free(d.render);
    cli_debug_free(dbg);
    cli_buf_free(&d.buf);
    cli_evview_free(&d.view);
    cli_map_free(&d.types);
    cli_map_free(&d.threads);
    cli_patterns_free(o.events);
    cli_threads_free(o.threads);
    return status;
}
