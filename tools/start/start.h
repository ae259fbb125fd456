/*
 * tools/start/start.h - rec-start's checks before launching (start-check.c).
 */
#ifndef REC_TOOLS_START_H
#define REC_TOOLS_START_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <rec/record.h>

#include "cli.h"

/* Results; each maps to rec-start's exit status. */
#define START_ERROR       (-1)   /* exit 1 */
#define START_UNSUPPORTED (-2)   /* exit 1: static, setuid, foreign ELF */
#define START_NOEXEC      (-3)   /* exit 126 */
#define START_NOTFOUND    (-4)   /* exit 127 */

/* Locate name like execvp (PATH search unless it has a '/'). *path is
 * malloc'ed. On failure msg holds "<name>: <reason>". */
int start_find_program(const char *name, char **path, char *msg, size_t msize);

/* The program (or a script's interpreter, /bin/sh for a script without
 * "#!" as execvp() runs it) must be a dynamically linked ELF of our
 * architecture that the loader runs without secure-execution mode. */
int start_check_program(const char *path, char *msg, size_t msize);

/* Check that nothing is in path's way; with force an existing regular
 * file is removed (anything else refused). */
int start_check_output(const char *path, bool force, char *msg, size_t msize);

/* Create path exclusively, mode 0600, not close-on-exec; -1 and errno. */
int start_create_output(const char *path, int *fd);

/* Absolute form of path (malloc'ed), NULL on failure. */
char *start_absolute(const char *path);

/* With --engine perf: can this process (whose credentials, seccomp filter
 * and limits the program inherits) open a task-clock perf_event? On
 * failure msg says why. */
int start_check_perf(char *msg, size_t msize);

/* start-seal.c: after the program (pid) ended, seal its recording at
 * path if it is unfinished, with the usage wait4() gave; prior: what the
 * recording accounts for outside path (earlier chunk files), or NULL.
 * 1 sealed, 0 nothing to seal, < 0 failed (said on stderr). */
struct rusage;
typedef struct start_accounted {
    uint64_t cpu_ns;         /* sampled periods and lost time */
    uint64_t sampler_ns;     /* the sampler threads' own, where known */
    uint64_t period_ns;      /* the last recording's sampling period */
} start_accounted;
int start_seal(const char *path, pid_t pid, const struct rusage *ru,
               const start_accounted *prior);
/* Add what path accounts for to *a. */
void start_account(const char *path, start_accounted *a);

/* start-summary.c: the closing line of a recording (sealed: by
 * start_seal(); why: the sampler's reason for stopping early, or ""),
 * and the descendants' recordings of this run (run_id) next to it. */
/* What the recordings of a run hold, added up for --follow-children's
 * closing total. */
typedef struct start_total {
    uint64_t samples, lost, bytes;
    size_t files;
} start_total;
void start_summarize(const char *path, bool signaled, bool sealed,
                     const char *why, start_total *tot);

/* What a summary line counts, event by event (a stream's chunks are
 * counted as they are relayed: start-stream.c). */
typedef struct start_tally {
    uint64_t samples, lost;
    char engine[64], note[256];
    struct cli_losses *losses;
} start_tally;
void start_tally_init(start_tally *t);
/* One event, read through the view of its chunk. */
void start_tally_event(start_tally *t, cli_evview *view, const rec_event *ev);
/* "PATH: N samples, M lost, K KiB[, engine E]STATE[; stopped early: WHY]"
 * and the loss line. */
void start_tally_print(start_tally *t, const char *path, uint64_t bytes,
                       const char *state, const char *why);
void start_tally_free(start_tally *t);
/* Where the descendants' recordings of this run are, and (added to tot,
 * the root's) what all of them hold. */
void start_summarize_children(const char *path, const char *run_id,
                              start_total *tot);

/* start-stream.c: rec-start -o - or to a FIFO (see there). */
struct pollfd;
typedef struct start_stream start_stream;
/* With -o - or a FIFO as output (--force or not): *out (else NULL),
 * opening the FIFO (waiting for its reader); *to_stdout if that is our
 * standard output (the program's goes to standard error). Returns an exit
 * status for a refusal (said on stderr), or 0. */
int  start_stream_setup(const char *output, bool follow, uint64_t backlog,
                        start_stream **out, bool *to_stdout);
/* Relay to out_fd (not taken over), dropping chunks beyond limit bytes
 * of backlog; name is what messages call the output. */
int  start_stream_open(start_stream **out, int out_fd, const char *name,
                       uint64_t limit, char *msg, size_t msize);
/* The in-memory file the sampler writes (close-on-exec). */
int  start_stream_memfd(const start_stream *s);
/* What to poll for (fd -1: nothing), and the work to do after a poll. */
void start_stream_pollfd(const start_stream *s, struct pollfd *p);
void start_stream_work(start_stream *s);
/* After the program: give up on a consumer that takes nothing for ns
 * (default 10 s). */
void start_stream_set_timeout(start_stream *s, uint64_t ns);
/* The program is gone: relay the rest (waiting for the consumer), close. */
void start_stream_finish(start_stream *s);
void start_stream_summary(start_stream *s, bool signaled, const char *why);
void start_stream_free(start_stream *s);

/* start-dir.c: rec-start --max-size / --max-age -o DIR (see there). */
typedef struct start_dir start_dir;
/* DIR created 0700 (or an existing directory without chunk files; with
 * force, its chunk files are removed); -1 with msg. */
int  start_dir_open(start_dir **out, const char *path, bool force,
                    uint64_t max_size, uint64_t max_age_ns, char *msg,
                    size_t msize);
int  start_dir_memfd(const start_dir *d);
/* After a poll: mirror what the sampler committed, apply retention. */
void start_dir_work(start_dir *d);
/* The program (pid) is gone: the rest, sealed if it could not finish it
 * (1 sealed). */
int  start_dir_finish(start_dir *d, pid_t pid, const struct rusage *ru);
void start_dir_summary(start_dir *d, bool signaled, bool sealed,
                       const char *why);
void start_dir_free(start_dir *d);

/* Shared by the relays from the sampler's in-memory file (start-stream.c,
 * start-dir.c): that file (a memfd, or an unlinked file in $TMPDIR, said),
 * -1 with msg; a chunk's events counted into a summary (whether it is
 * finished). */
int  start_backing_file(char *msg, size_t msize);
bool start_tally_chunk(start_tally *t, int fd, uint64_t off);

/* start-drop.c: the replacement of a dropped chunk (at off in mfd), in
 * *out (malloc'ed); what it turned into losses. */
typedef struct start_drop_stats {
    uint64_t samples, cpu_ns;
} start_drop_stats;
int  start_drop_chunk(int mfd, uint64_t off, uint8_t **out, size_t *outlen,
                      start_drop_stats *ds);
/* Count a replacement chunk into a summary. */
void start_drop_tally(const uint8_t *buf, size_t len, start_tally *t);

/* start-summary.c: the sampler's status lines, read as they come (a pipe
 * under rec-start, a FIFO under -p): "error TEXT" said on stderr at once,
 * "stopped TEXT" kept in why (the first one) for the closing line,
 * "attached...", "failed", "detached..." noted (-p); others ignored. */
typedef struct start_status {
    char *why;                  /* the caller's, "" until a stop is said */
    size_t wsize;
    bool attached, failed, detached;
    char buf[1024];             /* a line not read whole yet */
    size_t len;
} start_status;
/* Read what fd has now (until it would block, or its end): -1 at its
 * end, else 0. */
int start_status_read(start_status *s, int fd);

/* start-opts.c: rec-start's options, parsed and checked: 0, or the exit
 * status of a refusal (said on stderr); --help and --version exit. */
struct start_opts {
    const char *output;
    const char *throttle;
    const char *depth;
    const char *max_chunk;
    const char *flush;
    const char *signal;
    const char *walker;
    const char *engine;
    uint64_t backlog;           /* --stream-backlog, bytes */
    uint64_t stream_timeout;    /* --stream-timeout, ns (0: default) */
    const char *chunk_age;      /* --chunk-age */
    bool follow, force, quiet, no_cmdline, no_python;
    uint64_t max_size;          /* --max-size, bytes (0: none) */
    uint64_t max_age;           /* --max-age, ns (0: none) */
    bool dir;                   /* either: -o names a directory */
    bool stream;                /* -o - or a FIFO */
    bool stream_stdout;         /* ... that is our standard output */
    char run_id[33];            /* REC_RUN_ID of this run */
    pid_t pid;                  /* -p: attach to this process */
    uint64_t duration_ms;       /* --duration */
};

int start_parse_args(int argc, char **argv, struct start_opts *o);

/* start-attach.c: rec-start -p PID (see there). Returns rec-start's exit
 * status: 0 once the recording is finished, 1 if the sampler could not be
 * loaded or started (said on stderr; the process is left as it was). */
typedef struct start_attach_opts {
    pid_t pid;
    uint64_t duration_ms;       /* --duration (0: until Ctrl-C or the end) */
    const char *output, *throttle, *depth, *walker, *max_chunk, *flush,
               *signal, *engine, *run_id;
    bool force, quiet, no_cmdline, no_python;
} start_attach_opts;
int start_attach(const start_attach_opts *o, const char *lib);

/* start-inject.c: load the sampler (lib) into the running process pid and
 * call recs_attach(spec) there, then let the process go on as it was.
 * -1 with msg saying which step failed and why (the process is left as it
 * was). start_proc_status(): a field of /proc/PID/status ("Uid", ...). */
int start_inject(pid_t pid, const char *lib, const char *spec, char *msg,
                 size_t msize);
bool start_proc_status(pid_t pid, const char *key, char *out, size_t osize);

/* start-elf.c: the value of name in the dynamic symbol table of the ELF
 * file at path (the default version where several exist). -1 if none. */
int start_elf_symbol(const char *path, const char *name, uint64_t *value);

#endif
