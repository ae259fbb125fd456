/*
 * tools/flame/rec-flame.c - rec-flame: an interactive flame graph of rec
 * recordings as one self-contained HTML page (man/rec-flame.1), and with
 * --diff BEFORE AFTER a differential one coloured by the change of each
 * frame's share of CPU time.
 *
 * The page carries the profile compactly: one string table, frames as
 * (name, module, file, line) indexes, the call tree as a trie of parallel
 * arrays (parent, frame), and per-thread weights as (thread, node, weight)
 * triples in units of the weights' greatest common divisor (usually the
 * sampling period). The browser folds the triples of the selected
 * threads into the tree, so a thread filter costs no extra data. The
 * script and style (tools/flame/flame.js and flame.css) are compiled in.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export.h"

static const char prog[] = "rec-flame";

extern const char rec_flame_js[], rec_flame_css[];

static void usage(FILE *f)
{
    fprintf(f,
"Usage: rec-flame [OPTION]... FILE...\n"
"       rec-flame [OPTION]... --diff BEFORE AFTER\n"
"Write an interactive flame graph of rec recordings as one HTML page.\n"
"Frames weigh their CPU time; failed and lost CPU are frames of their own.\n"
"\n"
"  --diff              two recordings: colour frames by the change of their\n"
"                      share of CPU time from BEFORE to AFTER\n"
"  --title TEXT        page title (default: the file names; past two,\n"
"                      how many more)\n"
"  --threads LIST      only these threads (tids or name globs)\n"
"  --debug-dir DIR     name stripped functions from the debug files under\n"
"                      DIR, found by the build-ids the recording holds\n"
"  --since TIME        only events at or after TIME\n"
"  --until TIME        only events before TIME\n"
"                      TIME: ns since the epoch, RFC 3339, +DURATION\n"
"                      after the recording's start (+1.5s, +200ms), or\n"
"                      [-]DURATION before the end of its data (5m, -90s)\n"
"  -o, --output FILE   write to FILE instead of standard output\n"
"  -h, --help          show this help\n"
"  -V, --version       show the version\n"
"\n"
"Exit status: 0 success, 1 bad or unreadable input (the page of every\n"
"valid event is written first), 2 usage error.\n");
}

/* ---- the call tree ------------------------------------------------- */

/* Nodes merge frames by (function, module): the same function reached at
 * two return addresses is one box. Node 0 is the root. */
typedef struct tree {
    xp_seqtab fkeys;            /* (func, module) -> flame frame */
    uint32_t *frame_src;        /* flame frame -> first xp frame */
    size_t nframes, capframes;
    xp_seqtab nodes;            /* (parent, flame frame) -> node - 1 */
    uint32_t *leaf;             /* by stack id: node */
} tree;

static long flame_frame(tree *t, const xp_profile *p, uint32_t fid)
{
    uint32_t key[2] = { p->frames[fid].func, p->frames[fid].module };
    long id = xp_seqtab_intern(&t->fkeys, key, 2);
    if (id >= 0 && (size_t)id == t->nframes) {
        if (t->nframes == t->capframes) {
            t->capframes = t->capframes ? t->capframes * 2 : 256;
            t->frame_src = cli_xrealloc(t->frame_src, t->capframes
                                        * sizeof *t->frame_src);
        }
        t->frame_src[t->nframes++] = fid;
    }
    return id;
}

static int build_tree(tree *t, const xp_profile *p)
{
    t->leaf = cli_xrealloc(NULL, (p->stacks.n + 1) * sizeof *t->leaf);
    for (size_t s = 0; s < p->stacks.n; s++) {
        size_t n;
        const uint32_t *fr = xp_stack(p, (uint32_t)s, &n);
        uint32_t node = 0;
        for (size_t k = 0; k < n; k++) {
            long f = flame_frame(t, p, fr[k]);
            if (f < 0)
                return (int)f;
            uint32_t key[2] = { node, (uint32_t)f };
            long id = xp_seqtab_intern(&t->nodes, key, 2);
            if (id < 0)
                return (int)id;
            node = (uint32_t)id + 1;
        }
        t->leaf[s] = node;
    }
    return 0;
}

static void tree_free(tree *t)
{
    xp_seqtab_free(&t->fkeys);
    xp_seqtab_free(&t->nodes);
    free(t->frame_src);
    free(t->leaf);
}

/* ---- the page ------------------------------------------------------ */

static uint64_t gcd(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* A JSON string that is also safe inside <script>: "</" is escaped. */
static void js_string(cli_buf *b, const char *s)
{
    cli_buf tmp = { 0 };
    cli_buf_add_json_string(&tmp, s, strlen(s));
    for (size_t i = 0; i < tmp.len; i++) {
        if (tmp.p[i] == '<')
            cli_buf_adds(b, "\\u003c");
        else
            cli_buf_addc(b, tmp.p[i]);
    }
    cli_buf_free(&tmp);
}

static void html_text(cli_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            cli_buf_adds(b, "&lt;");
        else if (*s == '&')
            cli_buf_adds(b, "&amp;");
        else
            cli_buf_addc(b, *s);
    }
}

static void page(cli_buf *b, const xp_profile *p, const tree *t,
                 const char *title, bool diff)
{
    uint64_t unit = 0;
    for (size_t i = 0; i < p->ncells; i++)
        unit = gcd(p->cells[i].ns, unit);
    if (!unit)
        unit = 1;
    cli_buf_adds(b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
                 "<meta charset=\"utf-8\">\n<title>");
    html_text(b, title);
    cli_buf_adds(b, "</title>\n<style>\n");
    cli_buf_adds(b, rec_flame_css);
    cli_buf_adds(b, "</style>\n</head>\n<body>\n"
                 "<script id=\"data\" type=\"application/json\">\n{\"title\":");
    js_string(b, title);
    cli_buf_adds(b, ",\"diff\":");
    cli_buf_adds(b, diff ? "true" : "false");
    cli_buf_adds(b, ",\"unit\":");
    cli_buf_add_u64(b, unit);
    cli_buf_adds(b, ",\n\"strings\":[");
    for (size_t i = 0; i < p->strs.n; i++) {
        if (i)
            cli_buf_addc(b, ',');
        js_string(b, p->strs.strs[i]);
    }
    /* frames: name, module, file, line, pseudo (flat) */
    cli_buf_adds(b, "],\n\"frames\":[");
    for (size_t i = 0; i < t->nframes; i++) {
        const xp_frame *f = &p->frames[t->frame_src[i]];
        if (i)
            cli_buf_addc(b, ',');
        cli_buf_add_u64(b, f->func);
        cli_buf_addc(b, ',');
        cli_buf_add_u64(b, f->module);
        cli_buf_addc(b, ',');
        cli_buf_add_u64(b, f->file);
        cli_buf_addc(b, ',');
        cli_buf_add_u64(b, f->line);
        cli_buf_addc(b, ',');
        cli_buf_addc(b, f->flags & XP_F_PSEUDO ? '1' : '0');
    }
    /* nodes: node k (from 1; 0 is the root) is its frame when its parent
     * is node k - 1 (a stack grows one frame at a time), else -(k -
     * parent) then its frame: most nodes cost one number. */
    cli_buf_adds(b, "],\n\"nodes\":[");
    for (size_t i = 0; i < t->nodes.n; i++) {
        const uint32_t *w = t->nodes.words + t->nodes.off[i];
        if (i)
            cli_buf_addc(b, ',');
        if (w[0] != i) {
            cli_buf_addc(b, '-');
            cli_buf_add_u64(b, i + 1 - w[0]);
            cli_buf_addc(b, ',');
        }
        cli_buf_add_u64(b, w[1]);
    }
    /* threads: pid, tid, name, side */
    cli_buf_adds(b, "],\n\"threads\":[");
    for (size_t i = 0; i < p->nthreads; i++) {
        const xp_thread *th = &p->threads[i];
        if (i)
            cli_buf_addc(b, ',');
        cli_buf_add_u64(b, th->pid);
        cli_buf_addc(b, ',');
        cli_buf_add_u64(b, th->tid);
        cli_buf_addc(b, ',');
        cli_buf_add_u64(b, th->name);
        cli_buf_addc(b, ',');
        cli_buf_add_u64(b, th->side);
    }
    /* cells: thread, node, weight in units */
    cli_buf_adds(b, "],\n\"cells\":[");
    for (size_t i = 0; i < p->ncells; i++) {
        const xp_cell *c = &p->cells[i];
        if (i)
            cli_buf_addc(b, ',');
        cli_buf_add_u64(b, c->thread);
        cli_buf_addc(b, ',');
        cli_buf_add_u64(b, t->leaf[c->stack]);
        cli_buf_addc(b, ',');
        cli_buf_add_u64(b, c->ns / unit);
    }
    cli_buf_adds(b, "]}\n</script>\n<script>\n");
    cli_buf_adds(b, rec_flame_js);
    cli_buf_adds(b, "</script>\n</body>\n</html>\n");
}

/* ---- main ---------------------------------------------------------- */

int main(int argc, char **argv)
{
    enum { O_DIFF = 256, O_TITLE, O_THREADS, O_SINCE, O_UNTIL,
           O_DEBUG_DIR };
    static const struct option lopts[] = {
        { "diff", no_argument, NULL, O_DIFF },
        { "title", required_argument, NULL, O_TITLE },
        { "threads", required_argument, NULL, O_THREADS },
        { "since", required_argument, NULL, O_SINCE },
        { "until", required_argument, NULL, O_UNTIL },
        { "debug-dir", required_argument, NULL, O_DEBUG_DIR },
        { "output", required_argument, NULL, 'o' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    xp_options xo = { 0 };
    cli_threads *threads = NULL;
    const char *output = NULL, *title = NULL, *debug_dir = NULL;
    bool diff = false;
    int c;
    while ((c = getopt_long(argc, argv, "o:hV", lopts, NULL)) != -1) {
        switch (c) {
        case O_DIFF: diff = true; break;
        case O_TITLE: title = optarg; break;
        case O_THREADS:
            if (cli_opt_threads(prog, optarg, &threads) < 0)
                return CLI_EXIT_USAGE;
            break;
        case O_SINCE:
            if (cli_opt_time(prog, "--since", optarg, &xo.since,
                             &xo.have_since) < 0)
                return CLI_EXIT_USAGE;
            break;
        case O_UNTIL:
            if (cli_opt_time(prog, "--until", optarg, &xo.until,
                             &xo.have_until) < 0)
                return CLI_EXIT_USAGE;
            break;
        case O_DEBUG_DIR:
            if (cli_opt_debug_dir(prog, optarg, &debug_dir) < 0) {
                cli_threads_free(threads);
                return CLI_EXIT_USAGE;
            }
            break;
        case 'o': output = optarg; break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        case 'V': cli_version_exit(prog);
        default:
            cli_try_help(prog);
            cli_threads_free(threads);
            return CLI_EXIT_USAGE;
        }
    }
    if (cli_need_files(prog, optind, argc) < 0) {
        cli_threads_free(threads);
        return CLI_EXIT_USAGE;
    }
    if (diff && argc - optind != 2) {
        cli_error(prog, "--diff takes exactly two recordings, BEFORE AFTER");
        cli_try_help(prog);
        cli_threads_free(threads);
        return CLI_EXIT_USAGE;
    }
    if (cli_times_from_end(prog, argv + optind, argc - optind,
                           xo.have_since ? &xo.since : NULL,
                           xo.have_until ? &xo.until : NULL) < 0) {
        cli_threads_free(threads);
        return CLI_EXIT_USAGE;
    }
    xo.threads = threads;
    if (debug_dir && !(xo.debug = cli_debug_new(debug_dir))) {
        cli_error(prog, "out of memory");
        cli_threads_free(threads);
        return CLI_EXIT_DATA;
    }
    xp_profile p;
    xp_init(&p, &xo);
    int status = CLI_EXIT_OK;
    cli_buf names = { 0 };
    for (int i = optind; i < argc; i++) {
        p.side = diff && i > optind;
        int rc = xp_read(&p, prog, argv[i]);
        if (rc < 0) {
            status = CLI_EXIT_DATA;
            goto done;
        }
        if (rc > 0)
            status = CLI_EXIT_DATA;
        /* A title of a line: two names, then how many more. */
        if (i > optind + 1 && !diff)
            continue;
        if (i > optind)
            cli_buf_adds(&names, diff ? " \xe2\x86\x92 " : ", ");
        cli_buf_adds(&names, argv[i]);
    }
    if (!diff && argc - optind > 2) {
        char more[48];
        snprintf(more, sizeof more, " and %d more", argc - optind - 2);
        cli_buf_adds(&names, more);
    }
    cli_buf_addc(&names, '\0');
    tree t = { 0 };
    if (build_tree(&t, &p) < 0) {
        cli_error(prog, "out of memory");
        status = CLI_EXIT_DATA;
    } else {
        cli_buf b = { 0 };
        page(&b, &p, &t, title ? title : names.p, diff);
        FILE *f = output ? fopen(output, "w") : stdout;
        if (!f || cli_buf_flush(&b, f) < 0 || fflush(f) != 0
            || (output && fclose(f) != 0)) {
            cli_error(prog, "%s: %s", output ? output : "stdout",
                      strerror(errno));
            status = CLI_EXIT_DATA;
        }
        cli_buf_free(&b);
    }
    tree_free(&t);
done:
    cli_buf_free(&names);
    xp_free(&p);
    cli_debug_free(xo.debug);
    cli_threads_free(threads);
    return status;
}
