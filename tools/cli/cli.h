/*
 * tools/cli/cli.h - helpers shared by the rec command-line tools
 * (rec-dump, rec-summary, rec-cpu): tools/cli/cli.c and tools/cli/cli-opts.c,
 * linked as tools/cli/libreccli.la.
 *
 * Stable API: other tools build on it, so only add to it. Functions that
 * can fail return 0 on success and -1 on a parse error (nothing printed;
 * the caller reports the usage error), except the option handlers of
 * cli-opts.c, which print it. Everything is reentrant: there is no global
 * state.
 */
#ifndef REC_TOOLS_COMMON_H
#define REC_TOOLS_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rec/record.h>

/* Exit statuses every tool uses. */
#define CLI_EXIT_OK    0   /* success (an unfinished recording only warns) */
#define CLI_EXIT_DATA  1   /* bad input, I/O error */
#define CLI_EXIT_USAGE 2   /* bad command line */

/* ------------------------------------------------------------------ */
/* Messages: "<prog>: <text>" on stderr.                              */
/* ------------------------------------------------------------------ */

void cli_error(const char *prog, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* "<prog>: warning: <text>" */
void cli_warn(const char *prog, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Report a reader failure as one line:
 *   "<prog>: <path>: chunk <i>, offset <n>: <what>"
 * taking the location from rec_reader_message() (r may be NULL when
 * rec_reader_open() failed; code is the negative REC_E* code, REC_EIO uses
 * errno). The path is not repeated if the message already starts with it. */
void cli_reader_error(const char *prog, const char *path,
                      const rec_reader *r, int code);
/* rec_reader_open(), with "-" for standard input: read as a stream (a
 * pipe: one chunk at a time, once; see cli_is_stdin()). */
int cli_reader_open(const char *path, unsigned flags, rec_reader **r);
/* path is "-": standard input. */
bool cli_is_stdin(const char *path);
/* path is "-" or names a pipe, FIFO, socket or device: it can be read
 * once only, as it comes (no look ahead at it, no following by name). */
bool cli_is_stream(const char *path);
/* Report rec_reader_warning() (if any) as "<prog>: warning: <path>: <msg>". */
void cli_reader_warning(const char *prog, const char *path,
                        const rec_reader *r);

/* ------------------------------------------------------------------ */
/* Parsing command-line values.                                       */
/* ------------------------------------------------------------------ */

/* Duration, in the grammar rec-start and the sampler use too
 * (recs__parse_duration, libsampler/session-throttle.h): a decimal number
 * ("1.5s") and a unit among ns, us (or µs), ms, s, m (min), h; "0" alone
 * is zero. Result in ns; overflow and a missing unit are errors. */
int cli_parse_duration(const char *s, uint64_t *ns);

/* Unsigned decimal integer (the whole string, no sign, no overflow). */
int cli_parse_uint(const char *s, uint64_t *out);

/* A point in time for --since/--until:
 *   "1795288800000000000"        ns since the epoch
 *   "2026-11-21T19:20:00Z"       RFC 3339 (fraction and +hh:mm offset allowed)
 *   "+1.5s"                      a duration after the recording's start
 *   "5m", "-5m"                  a duration before the end of its data */
typedef struct cli_time {
    bool relative;      /* ns is an offset from the recording's start */
    uint64_t ns;
    bool before_end;    /* ns is an offset back from the end of the data,
                         * until cli_times_from_end() made it absolute */
} cli_time;
int cli_parse_time(const char *s, cli_time *out);
/* The absolute time in ns since the epoch (saturating). A time before the
 * end must have gone through cli_times_from_end() (else: 0). */
uint64_t cli_time_resolve(const cli_time *t, uint64_t recording_start_ns);
/* Make the times given before the end (a, b: NULL when not given)
 * absolute: the end is the latest end of a chunk (its start plus its
 * duration: its last flush) of the n inputs, read from their chunk headers
 * alone. An input that is a pipe cannot be read twice: -1, usage error
 * printed. Unreadable inputs are left to the reading that follows, which
 * says what is wrong with them. */
int cli_times_from_end(const char *prog, char *const *in, int n,
                       cli_time *a, cli_time *b);

/* Formatting: "2026-11-21T19:20:00.123456789Z" (trailing zero groups of the
 * fraction are dropped: ".123Z", or none). buf needs 40 bytes. */
char *cli_format_time(uint64_t ns_since_epoch, char *buf, size_t size);
/* Human duration with 3 significant decimals: "950 ns", "12.3 us",
 * "1.50 ms", "2.000 s", "3 min 4.000 s". buf needs 32 bytes. */
char *cli_format_duration(uint64_t ns, char *buf, size_t size);

/* ------------------------------------------------------------------ */
/* Glob patterns and lists of them.                                   */
/* ------------------------------------------------------------------ */

/* Shell-style match of the whole string s[0..len): '*', '?', bracket
 * expressions "[a-z]", "[!x]", and '\' quoting the next character. */
bool cli_glob_match(const char *pattern, const char *s, size_t len);

/* A comma-separated list of globs: "CPUTimeSample*,Thread*". */
typedef struct cli_patterns cli_patterns;
int  cli_patterns_parse(const char *spec, cli_patterns **out);
bool cli_patterns_match(const cli_patterns *p, const char *s, size_t len);
void cli_patterns_free(cli_patterns *p);
/* The patterns of the list, for messages and checks. */
size_t cli_patterns_count(const cli_patterns *p);
const char *cli_patterns_get(const cli_patterns *p, size_t i);

/* --threads: a comma-separated list of items; an item made only of digits
 * is an OS thread id, any other is a glob on the thread's name. A thread
 * matches if any item matches it. */
typedef struct cli_threads cli_threads;
int  cli_threads_parse(const char *spec, cli_threads **out);
/* name may be NULL (unnamed thread: only tid items can match it). */
bool cli_threads_match(const cli_threads *f, uint64_t tid,
                       const char *name, size_t name_len);
void cli_threads_free(cli_threads *f);

/* ------------------------------------------------------------------ */
/* Option handling every tool shares. On a usage error these print    */
/* their own "<prog>: ..." line and return -1.                         */
/* ------------------------------------------------------------------ */

/* "Try '<prog> --help' for more information." on stderr. */
void cli_try_help(const char *prog);
/* --version: "<prog> (<package>) <version>" on stdout, then exit 0. */
_Noreturn void cli_version_exit(const char *prog);
/* At least one FILE operand after the options (argv[first..argc)). */
int cli_need_files(const char *prog, int first, int argc);
/* --threads LIST; replaces *threads (a later option wins). */
int cli_opt_threads(const char *prog, const char *arg, cli_threads **threads);
/* --since/--until TIME into *t, setting *have; opt names the option. */
int cli_opt_time(const char *prog, const char *opt, const char *arg,
                 cli_time *t, bool *have);

/* --stall-timeout DURATION of a --follow into *ns. */
int cli_opt_stall_timeout(const char *prog, const char *arg, uint64_t *ns);

/* Output modes that exclude each other (--json, --ndjson, --metadata,
 * --csv): *mode is 0 until the first; a second different one is a usage
 * error (printed) instead of silently replacing the first. names[] gives
 * the option of each mode (names[mode]). */
int cli_opt_mode(const char *prog, int *mode, int want,
                 const char *const *names);

/* realloc() that aborts with "out of memory" like cli_buf (n 0 is 1). */
void *cli_xrealloc(void *p, size_t n);

/* "out of memory" on stderr, then abort(). */
_Noreturn void cli_out_of_memory(void);

/* ------------------------------------------------------------------ */
/* --follow (cli-follow.c): one loop and the same ends for every tool.  */
/* ------------------------------------------------------------------ */

typedef struct cli_follow_opts {
    bool from_end;              /* skip the events already written */
    const char *position_file;  /* resume from it, save to it (or NULL) */
    uint64_t stall_ns;          /* give up after this long without new
                                 * data (0: never) */
} cli_follow_opts;

typedef struct cli_follow_cb {
    void *ctx;
    /* The reader entered another chunk (may be NULL). */
    void (*chunk)(void *ctx, const rec_chunk_info *info);
    /* One event: 0, or -1 after an output error the tool has said (the
     * follow ends, exit status 1). */
    int (*event)(void *ctx, const rec_event *ev);
    /* Before each wait: the ms until the tool has something due (it does
     * what is due now first), -1 for nothing (may be NULL). */
    int (*due)(void *ctx);
    /* The follow ended, before its error (if any) is said (may be NULL). */
    void (*end)(void *ctx);
} cli_follow_cb;

/* Follow the recording at path (it may not exist yet) until it is closed
 * and its writer gone, or SIGINT, SIGTERM or SIGHUP (a closed terminal)
 * come: exit status 0. The writer's death, the file removed, replaced or
 * damaged, or the stall timeout end it with one line and status 1.
 * Returns the exit status. */
int cli_follow(const char *prog, const char *path, const cli_follow_opts *o,
               const cli_follow_cb *cb);

/* ------------------------------------------------------------------ */
/* Output buffer and JSON text.                                       */
/* ------------------------------------------------------------------ */

/* A growable byte buffer. Allocation failure aborts the program with a
 * message (the tools cannot do anything useful without memory). */
typedef struct cli_buf {
    char *p;
    size_t len, cap;
} cli_buf;

void cli_buf_free(cli_buf *b);
/* Make room for more bytes (the slow path of the inline functions). */
void cli_buf_grow(cli_buf *b, size_t more);
void cli_buf_adds(cli_buf *b, const char *s);
void cli_buf_add_u64(cli_buf *b, uint64_t v);
void cli_buf_add_i64(cli_buf *b, int64_t v);
/* A JSON string literal with quotes. Invalid UTF-8 sequences become
 * U+FFFD so that the output always parses. */
void cli_buf_add_json_string(cli_buf *b, const char *s, size_t len);
/* Inline: rendering calls these several times per event. */
static inline void cli_buf_reserve(cli_buf *b, size_t more)
{
    if (__builtin_expect(b->cap - b->len < more, 0))
        cli_buf_grow(b, more);
}

static inline void cli_buf_add(cli_buf *b, const void *data, size_t n)
{
    if (!n)
        return;     /* data may be NULL then (an empty buffer's pointer) */
    cli_buf_reserve(b, n);
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static inline void cli_buf_addc(cli_buf *b, char c)
{
    cli_buf_reserve(b, 1);
    b->p[b->len++] = c;
}

/* Write the buffer to f and empty it; -1 on a write error. */
int cli_buf_flush(cli_buf *b, FILE *f);

/* The JSON literal for a string as a NUL-terminated malloc'ed string. */
char *cli_json_quote(const char *s, size_t len);

/* ------------------------------------------------------------------ */
/* Tables (cli-map.c): one hash map and one interning table for every  */
/* tool. Maps keyed by rec_type or rec_entry addresses are only valid   */
/* within a chunk: clear them when the chunk changes.                   */
/* ------------------------------------------------------------------ */

/* Open-addressing map from a non-zero 64-bit key to a uint32 value. */
typedef struct cli_map {
    uint64_t *keys;
    uint32_t *vals;
    size_t cap, n;          /* cap is a power of two (or 0) */
} cli_map;

void cli_map_free(cli_map *m);
void cli_map_clear(cli_map *m);
/* true and *val set if key is present. */
bool cli_map_get(const cli_map *m, uint64_t key, uint32_t *val);
/* 0 or REC_ENOMEM. */
int cli_map_put(cli_map *m, uint64_t key, uint32_t val);
/* The same, exiting on out of memory like cli_xrealloc(). */
void cli_map_xput(cli_map *m, uint64_t key, uint32_t val);

/* FNV-1a of len bytes: the hash of interned items. */
uint64_t cli_hash_bytes(const void *p, size_t len);

/* The slot index of an interning table (cli_strtab, or a tool's own table
 * of items): slots hold item index + 1 (0 = empty), probed linearly from
 * the item's hash. Doubles *nslots (from first, a power of two) and
 * re-places the n items by their hashes: 0 or REC_ENOMEM. */
int cli_slots_grow(uint32_t **slots, size_t *nslots, size_t first,
                   const uint64_t *hash, size_t n);

/* Interned strings: each distinct string gets a dense index. */
typedef struct cli_strtab {
    char **strs;
    uint64_t *hash;
    size_t n, cap;
    uint32_t *slots;        /* index + 1, 0 = empty */
    size_t nslots;
} cli_strtab;

void cli_strtab_free(cli_strtab *t);
/* Index of s[0..len), adding it if new; negative REC_E* on failure. */
long cli_strtab_intern(cli_strtab *t, const char *s, size_t len);

/* ------------------------------------------------------------------ */
/* The recordings of a command line, by identity (cli-inputs.c).       */
/* ------------------------------------------------------------------ */

/* Drop the FILE operands argv[first..argc) that name a regular file given
 * before (same device and inode: a hard link, a symlink, "./x" for "x"),
 * with a warning; compacts argv in place and returns the new argc. */
int cli_inputs_dedup(const char *prog, char **argv, int first, int argc);
/* -1 (message printed) if the output path - standard output when path is
 * NULL or "-" - is one of the n inputs, or a file in an input that is a
 * directory recording; opt names the option. */
int cli_output_not_input(const char *prog, const char *opt, const char *path,
                         char *const *in, int n);
/* Warn when the inputs' ProcessInfo runId differ: recordings of different
 * rec-start runs (stale OUT.<pid> files) are about to be read as one. */
void cli_inputs_runs(const char *prog, char *const *in, int n);
/* True if another process has the file open for writing: a recording that
 * is unfinished because it is still being written, not abandoned. */
bool cli_file_being_written(const char *path);
/* On a chunk change: false if the chunk starts before the one before it
 * in the same file (*prev_start_ns, from 0 per file, is then kept for the
 * message of cli_chunk_order_error()). */
bool cli_chunk_in_order(const rec_chunk_info *info, uint64_t *prev_start_ns);
void cli_chunk_order_error(const char *prog, const char *path,
                           const rec_chunk_info *info, uint64_t prev_start_ns);

/* ------------------------------------------------------------------ */
/* The events of a chunk, typed (cli-types.c): every tool reads its    */
/* fields through this view.                                           */
/* ------------------------------------------------------------------ */

/* What an event type is to the tools, by its name. */
enum cli_ev_kind {
    CLI_EV_OTHER,
    CLI_EV_SAMPLE,          /* CPUTimeSample */
    CLI_EV_LOST,            /* CPUTimeSampleLost */
    CLI_EV_THREAD_START,    /* ThreadStart */
    CLI_EV_THREAD_END,      /* ThreadEnd */
    CLI_EV_SETTINGS,        /* RecordingSettings */
    CLI_EV_PROCESS,         /* ProcessInfo */
    CLI_EV_USAGE,           /* ProcessUsage */
    CLI_EV_MODULE_LOAD,     /* ModuleLoad */
    CLI_EV_JIT_NAME,        /* JitCodeName */
};

/* The fields the tools read: member, then schema name, with the types
 * that have it (one member for a name that types share). Recordings
 * carry their own schema: a field may be absent from an older one. */
#define CLI_EV_FIELDS(X) \
    X(thread, "eventThread")        /* the events of a thread */ \
    X(start_time, "startTime")      /* every event */ \
    X(period, "samplingPeriod")     /* CPUTimeSample, RecordingSettings */ \
    X(failed, "failed")             /* CPUTimeSample */ \
    X(biased, "biased") \
    X(stack, "stackTrace") \
    X(lost_samples, "lostSamples")  /* CPUTimeSampleLost */ \
    X(lost_time, "lostTime") \
    X(reason, "reason") \
    X(cpu_time, "cpuTime")          /* ThreadStart, ThreadEnd */ \
    X(snapshot, "snapshot")         /* ThreadEnd */ \
    X(user_time, "userTime")        /* ProcessUsage */ \
    X(system_time, "systemTime") \
    X(sampler_time, "samplerCpuTime") \
    X(pid, "processId")             /* ProcessInfo, Thread */ \
    X(run_id, "runId")              /* ProcessInfo */ \
    X(engine, "engine")             /* RecordingSettings */ \
    X(engine_note, "engineNote") \
    X(module, "module")             /* ModuleLoad, Frame */ \
    X(address, "address")           /* JitCodeName */ \
    X(size, "size")                 /* JitCodeName, Module */ \
    X(name, "name")                 /* JitCodeName, Thread */ \
    X(tid, "osThreadId")            /* Thread */ \
    X(value, "value")               /* String */ \
    X(truncated, "truncated")       /* StackTrace */ \
    X(frames, "frames") \
    X(why_truncated, "truncationReason") \
    X(function, "function")         /* Frame */ \
    X(offset, "offset") \
    X(file, "file") \
    X(line, "line") \
    X(inlined, "inlined") \
    X(frame_kind, "kind") \
    X(path, "path")                 /* Module */ \
    X(build_id, "buildId") \
    X(base, "baseAddress")

/* A type of the chunk (event or pool) resolved: its kind and the index
 * of each field in it, -1 where it has none. */
typedef struct cli_evtype {
    const rec_type *type;
    enum cli_ev_kind kind;
#define CLI_EV_MEMBER(member, name) long member;
    CLI_EV_FIELDS(CLI_EV_MEMBER)
#undef CLI_EV_MEMBER
} cli_evtype;

/* The types of the chunk being read, each resolved once. Type and entry
 * pointers are valid within a chunk: reset the view when it changes. */
typedef struct cli_evview {
    cli_map index;              /* rec_type* -> index in types */
    cli_evtype **types;         /* not moved: callers keep them */
    size_t n, cap;
    /* The types met last, by address: an event, its thread, its stack
     * and their strings alternate without a map lookup. */
    const cli_evtype *recent[8];
} cli_evview;

void cli_evview_reset(cli_evview *v);
void cli_evview_free(cli_evview *v);
/* cli_evview_type() beyond the recent types: the map, or resolving. */
const cli_evtype *cli_evview_lookup(cli_evview *v, const rec_type *t);
static inline unsigned cli_evview_slot(const rec_type *t)
{
    return (unsigned)((uintptr_t)t * 0x9e3779b97f4a7c15ull >> 61);
}
/* Type t resolved (NULL: kind other, no fields), valid until the reset.
 * Exits on out of memory like cli_xrealloc(). */
static inline const cli_evtype *cli_evview_type(cli_evview *v,
                                                const rec_type *t)
{
    const cli_evtype *r = v->recent[cli_evview_slot(t)];
    return r && r->type == t ? r : cli_evview_lookup(v, t);
}
static inline const cli_evtype *cli_evview_event(cli_evview *v,
                                                 const rec_event *ev)
{
    return cli_evview_type(v, rec_event_type(ev));
}
static inline const cli_evtype *cli_evview_entry(cli_evview *v,
                                                 const rec_entry *e)
{
    return cli_evview_type(v, rec_entry_type(e));
}

/* A value, typed: a count, ns or id (uint, or an int >= 0); a flag (a
 * true boolean); a reference to an entry the chunk defines (NULL: null or
 * dangling); text (an inline string, or a reference to a String entry:
 * the text points into the chunk's pools). False or NULL for another
 * kind of value. */
static inline bool cli_value_uint(const rec_value *v, uint64_t *out)
{
    if (v->kind == REC_UINT)
        *out = v->v.u;
    else if (v->kind == REC_INT && v->v.i >= 0)
        *out = (uint64_t)v->v.i;
    else
        return false;
    return true;
}
static inline bool cli_value_bool(const rec_value *v)
{
    return v->kind == REC_BOOL && v->v.b;
}
static inline const rec_entry *cli_value_ref(const rec_value *v)
{
    return v->kind == REC_REF ? v->v.ref.entry : NULL;
}
bool cli_value_text(cli_evview *view, const rec_value *v, const char **s,
                    size_t *len);

/* Field f of an event's values (rec_event_values()), by its index in a
 * cli_evtype (-1: absent, which reads as a value of another kind). */
static inline bool cli_ev_uint(const rec_value *vals, long f, uint64_t *out)
{
    return f >= 0 && cli_value_uint(&vals[f], out);
}
static inline bool cli_ev_bool(const rec_value *vals, long f)
{
    return f >= 0 && cli_value_bool(&vals[f]);
}
static inline const rec_entry *cli_ev_ref(const rec_value *vals, long f)
{
    return f >= 0 ? cli_value_ref(&vals[f]) : NULL;
}
static inline bool cli_ev_text(cli_evview *view, const rec_value *vals,
                               long f, const char **s, size_t *len)
{
    return f >= 0 && cli_value_text(view, &vals[f], s, len);
}
/* The text copied NUL-terminated into buf (cut to size). */
bool cli_ev_text_copy(cli_evview *view, const rec_value *vals, long f,
                      char *buf, size_t size);

/* The same for a field of a pool entry (its type's index). */
bool cli_entry_uint(const rec_entry *e, long f, uint64_t *out);
bool cli_entry_bool(const rec_entry *e, long f);
const rec_entry *cli_entry_ref(const rec_entry *e, long f);
bool cli_entry_text(cli_evview *view, const rec_entry *e, long f,
                    const char **s, size_t *len);

/* What a Thread entry says (e may be NULL: nothing). */
typedef struct cli_thread_info {
    bool have_tid, have_pid;
    uint64_t tid, pid;
    const char *name;           /* NULL: unknown */
    size_t name_len;
} cli_thread_info;
void cli_evview_thread(cli_evview *view, const rec_entry *e,
                       cli_thread_info *out);
/* The frames of a StackTrace entry, innermost first (items of kind
 * REC_REF to Frame entries, as recorded); 0 when it has none. */
size_t cli_evview_frames(cli_evview *view, const rec_entry *st,
                         const rec_value **items);

/* ------------------------------------------------------------------ */
/* Chunk tracking.                                                     */
/* ------------------------------------------------------------------ */

/* True when the reader moved to another chunk since the last call (or on
 * the first call): caches keyed by rec_type/rec_entry pointers must be
 * cleared then. *last starts at UINT64_MAX for each file. */
bool cli_chunk_changed(const rec_reader *r, uint64_t *last,
                       rec_chunk_info *info);
/* What tells chunks apart: the offset alone does not, as the chunks of a
 * directory recording's files all start at offset 0 of theirs. */
static inline uint64_t cli_chunk_key(const rec_chunk_info *info)
{
    return (uint64_t)info->index << 40 ^ info->offset;
}

/* ------------------------------------------------------------------ */
/* Offline symbols: --debug-dir (cli-debug.c).                         */
/* ------------------------------------------------------------------ */

/* Function names for the frames of stripped code from separate debug
 * files found by build-id under a directory: a recording taken where no
 * debug files were installed is symbolized later, elsewhere. dir holds
 * .build-id/xx/yyyy.debug (as /usr/lib/debug does), or the xx/yyyy.debug
 * tree itself. NULL on allocation failure. */
typedef struct cli_debug cli_debug;
cli_debug *cli_debug_new(const char *dir);
void cli_debug_free(cli_debug *s);

/* Frames name their module by path: remember which build-id the path had
 * (from the ModuleLoad events, which precede the frames in them). Returns
 * 1 if this is new, 0 if known, < 0 on failure. */
int cli_debug_add_module(cli_debug *s, const char *path, size_t len,
                         const char *build_id, size_t bid_len);
/* The build-id recorded for path, or NULL. */
const char *cli_debug_module_id(cli_debug *s, const char *path, size_t len);

/* Name of the function that contains vaddr (an ELF virtual address of the
 * module) in the debug file of build-id (hex, len characters), or NULL. A
 * debug file is opened once; one whose own build-id differs is ignored. */
const char *cli_debug_lookup(cli_debug *s, const char *build_id, size_t len,
                             uint64_t vaddr);

/* The debug file's name for a frame (function func[0..flen) or NULL,
 * module path, offset the ELF virtual address), or NULL: only a frame
 * without a name or with the sampler's name of a stripped function
 * ("libz.so.1+0x2a30") is renamed; s may be NULL (no --debug-dir). */
const char *cli_debug_frame_name(cli_debug *s, const char *func, size_t flen,
                                 const char *module, size_t mlen,
                                 uint64_t offset);

/* Why a stack was cut short (StackTrace.truncationReason), as an index in
 * cli_partial_names: the reasons the sampler gives, then "none given" (a
 * recording from before reasons), then "other" (a reason this reader does
 * not know). */
#define CLI_PARTIAL_N 10
extern const char *const cli_partial_names[CLI_PARTIAL_N];
/* The partial stack's reason index, or -1 when the StackTrace entry st is
 * whole (truncated false). */
int cli_evview_partial(cli_evview *view, const rec_entry *st);

/* The name a Python frame (kind "python") is shown by: "qualname
 * (file.py:12)", with the file's last component; without ":line" when
 * line is 0 (a tool's per-function view passes 0). Written to buf (NUL
 * terminated, cut to size); returns its length. */
size_t cli_python_name(char *buf, size_t size, const char *func, size_t flen,
                       const char *file, size_t filelen, uint64_t line);

/* --debug-dir DIR: an existing directory (the usage error is printed). */
int cli_opt_debug_dir(const char *prog, const char *arg, const char **dir);

#endif
