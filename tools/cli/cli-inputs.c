/*
 * tools/cli/cli-inputs.c - the recordings named on a command line, by identity
 * rather than by name: the same file given twice, an output that would
 * overwrite an input, inputs of different rec-start runs, and chunks out
 * of time order (recordings concatenated in the wrong order).
 */
#include <config.h>

#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int cli_inputs_dedup(const char *prog, char **argv, int first, int argc)
{
    struct stat *st = calloc((size_t)(argc - first) + 1, sizeof *st);
    bool *ok = calloc((size_t)(argc - first) + 1, sizeof *ok);
    int k = first;
    if (!st || !ok) {
        free(st);
        free(ok);
        return argc;    /* nothing lost: every name is still read */
    }
    for (int i = first; i < argc; i++) {
        struct stat s;
        bool dup = false;
        /* Only regular files have an identity worth comparing (a pipe
         * given twice is two reads of whatever comes). */
        bool reg = stat(argv[i], &s) == 0 && S_ISREG(s.st_mode);
        for (int j = first; reg && j < k; j++) {
            if (ok[j - first] && same_file(&st[j - first], &s)) {
                cli_warn(prog, "%s: the same file as %s: read once",
                         argv[i], argv[j]);
                dup = true;
                break;
            }
        }
        if (dup)
            continue;
        st[k - first] = s;
        ok[k - first] = reg;
        argv[k++] = argv[i];
    }
    free(st);
    free(ok);
    return k;
}

/* The directory path's file is (or would be) in. */
static int parent_of(const char *path, struct stat *st)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path))
                      : strdup(".");
    int rc = dir ? stat(dir, st) : -1;
    free(dir);
    return rc;
}

int cli_output_not_input(const char *prog, const char *opt, const char *path,
                         char *const *in, int n)
{
    struct stat out, s;
    bool to_stdout = !path || strcmp(path, "-") == 0;
    /* A file written into a directory recording may be listed as one of
     * its chunk files, and read while being written. */
    if (!to_stdout && parent_of(path, &out) == 0)
        for (int i = 0; i < n; i++)
            if (stat(in[i], &s) == 0 && S_ISDIR(s.st_mode) &&
                same_file(&out, &s)) {
                cli_error(prog, "%s %s: is inside the directory recording %s: "
                          "refusing to write into it", opt, path, in[i]);
                return -1;
            }
    if (to_stdout ? fstat(STDOUT_FILENO, &out) < 0 : stat(path, &out) < 0)
        return 0;       /* not there yet: it cannot be an input */
    if (!S_ISREG(out.st_mode))
        return 0;
    for (int i = 0; i < n; i++) {
        if (stat(in[i], &s) == 0 && same_file(&out, &s)) {
            if (to_stdout)
                cli_error(prog, "standard output is the recording %s: "
                          "refusing to write over it", in[i]);
            else
                cli_error(prog, "%s %s: is the recording %s: refusing to "
                          "overwrite it", opt, path, in[i]);
            return -1;
        }
    }
    return 0;
}

/* The runId of the recording's first ProcessInfo (written when the
 * sampler starts, so within its first events); "" if there is none. */
static void run_id_of(const char *path, char *id, size_t size)
{
    rec_reader *r;
    const rec_event *ev;
    cli_evview view = { 0 };
    uint64_t chunk = UINT64_MAX;
    id[0] = '\0';
    if (cli_is_stream(path) || rec_reader_open(&r, path, 0) < 0)
        return;
    for (unsigned n = 0; n < 100000 && rec_reader_next(r, &ev) > 0; n++) {
        if (cli_chunk_changed(r, &chunk, NULL))
            cli_evview_reset(&view);
        const cli_evtype *t = cli_evview_event(&view, ev);
        const char *s;
        size_t len;
        if (t->kind != CLI_EV_PROCESS)
            continue;
        if (cli_ev_text(&view, rec_event_values(ev), t->run_id, &s, &len) &&
            len < size) {
            memcpy(id, s, len);
            id[len] = '\0';
        }
        break;
    }
    cli_evview_free(&view);
    rec_reader_close(r);
}

void cli_inputs_runs(const char *prog, char *const *in, int n)
{
    char first[64] = "", id[64];
    int first_i = -1;
    for (int i = 0; i < n; i++) {
        run_id_of(in[i], id, sizeof id);
        if (!id[0])
            continue;
        if (first_i < 0) {
            memcpy(first, id, sizeof id);
            first_i = i;
        } else if (strcmp(id, first) != 0) {
            cli_warn(prog, "%s and %s come from different rec-start runs "
                     "(run ids %s and %s): files of an earlier run?",
                     in[first_i], in[i], first, id);
        }
    }
}

bool cli_chunk_in_order(const rec_chunk_info *info, uint64_t *prev_start_ns)
{
    /* A writer only ever appends: later chunks start later (an exec'd
     * image appends to its predecessor's file). */
    if (info->index > 0 && info->start_ns < *prev_start_ns)
        return false;
    *prev_start_ns = info->start_ns;
    return true;
}

void cli_chunk_order_error(const char *prog, const char *path,
                           const rec_chunk_info *info, uint64_t prev_start_ns)
{
    char d[32];
    cli_error(prog, "%s: chunk %u, offset %llu: starts %s before the chunk "
              "preceding it: recordings concatenated out of time order? "
              "(give them as separate files)", path, info->index,
              (unsigned long long)info->offset,
              cli_format_duration(prev_start_ns - info->start_ns, d,
                                  sizeof d));
}

/* The access mode of /proc/PID/fdinfo/FD; -1 if unknown. */
static int fd_access(const char *pid, const char *fd)
{
    char p[600], line[128];
    snprintf(p, sizeof p, "/proc/%s/fdinfo/%s", pid, fd);
    FILE *f = fopen(p, "r");
    int mode = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long flags;
        if (sscanf(line, "flags: %lo", &flags) == 1) {
            mode = (int)(flags & O_ACCMODE);
            break;
        }
    }
    fclose(f);
    return mode;
}

bool cli_file_being_written(const char *path)
{
    struct stat want, st;
    char self[24], p[600];
    if (stat(path, &want) < 0 || !S_ISREG(want.st_mode))
        return false;
    snprintf(self, sizeof self, "%d", (int)getpid());
    DIR *proc = opendir("/proc");
    if (!proc)
        return false;
    bool found = false;
    struct dirent *e;
    while (!found && (e = readdir(proc))) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9' ||
            strcmp(e->d_name, self) == 0)
            continue;
        snprintf(p, sizeof p, "/proc/%s/fd", e->d_name);
        DIR *fds = opendir(p);     /* other users' are closed to us */
        if (!fds)
            continue;
        struct dirent *f;
        while (!found && (f = readdir(fds))) {
            if (f->d_name[0] == '.')
                continue;
            snprintf(p, sizeof p, "/proc/%s/fd/%s", e->d_name, f->d_name);
            if (stat(p, &st) == 0 && same_file(&st, &want) &&
                fd_access(e->d_name, f->d_name) > O_RDONLY)
                found = true;
        }
        closedir(fds);
    }
    closedir(proc);
    return found;
}
