/*
 * rec/record.h - librecord: write and read rec recordings.
 *
 * A recording is a sequence of self-contained chunks (man rec-format(5)).
 * Writers encode events into per-thread streams without taking a lock and
 * the library rotates them into lz4-compressed, checksummed blocks.
 * Readers iterate events of any recording, finished, unfinished or damaged,
 * in bounded memory, driven by the schema embedded in every chunk.
 *
 * Every function returning int returns 0 (or a documented non-negative
 * value) on success and a negative REC_E* code on failure; rec_strerror()
 * turns a code into text.
 *
 * Structs the caller allocates cross the API with their size, as the
 * caller's compiler saw it (librecord(3), VERSIONS AND ABI): options carry
 * a leading size that their _init() sets; results are filled through
 * inline functions that pass sizeof. The library reads and writes that
 * many bytes and no more, so a program built against older headers keeps
 * working when a member is appended. A member is appended only past the
 * struct's current sizeof (never into its tail padding), and its zero
 * means its default: tests/test-abi.c pins the layouts.
 */
#ifndef REC_RECORD_H
#define REC_RECORD_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#include <rec/version.h>

#define REC_FORMAT_MAJOR 1
#define REC_FORMAT_MINOR 3

/* The library's version, REC_VERSION_NUMBER of the headers it was built
 * with: a program built against other headers can tell (ABI policy in
 * librecord(3)). */
unsigned rec_version(void);
/* The same as text, e.g. "0.1.0". */
const char *rec_version_string(void);

/* Error codes. */
#define REC_ENOMEM     (-1)  /* out of memory */
#define REC_EIO        (-2)  /* system call failed; errno kept */
#define REC_EINVAL     (-3)  /* invalid argument or state */
#define REC_ECORRUPT   (-4)  /* malformed data (checksum, structure) */
#define REC_ETRUNCATED (-5)  /* data ends before a declared size */
#define REC_EVERSION   (-6)  /* unsupported format version */
#define REC_ETOOBIG    (-7)  /* a size exceeds a limit below, or a struct is
                                larger than the library knows and sets a
                                member it does not know */
#define REC_EMAGIC     (-8)  /* not a rec recording */
#define REC_EEXIST     (-9)  /* output exists and overwriting was not asked */
#define REC_ENOTFOUND  (-10) /* no such type, field or entry */
#define REC_EFULL      (-11) /* an event does not fit a stream buffer */
#define REC_EAGAIN     (-12) /* no event yet (rec_follow_next() timeout) */
#define REC_EWRITER    (-13) /* the writer died, the recording is unfinished */
#define REC_ESTALLED   (-14) /* no new data within the stall timeout */
#define REC_EREPLACED  (-15) /* file truncated, removed or replaced */

const char *rec_strerror(int code);

/* Limits of the format. The writer refuses a longer string or a longer
 * array (a stack of more frames) with REC_ETOOBIG and leaves the event or
 * entry out; readers reject data that exceeds them as corrupt. */
#define REC_MAX_STRING  (64u << 10)  /* bytes of one string */
#define REC_MAX_ARRAY   4096u        /* items of one array */

/* Pool entry id; 0 means "none" and encodes as null. */
typedef uint32_t rec_id;

/* Monotonic clock (CLOCK_MONOTONIC) in ns: the time base of startTime. */
uint64_t rec_now_ns(void);

/* ------------------------------------------------------------------ */
/* Writer                                                             */
/* ------------------------------------------------------------------ */

typedef struct rec_writer rec_writer;
typedef struct rec_stream rec_stream;

typedef struct rec_writer_options {
    size_t   size;              /* sizeof, set by rec_writer_options_init() */
    uint64_t max_chunk_bytes;   /* rotate once a chunk passes this (0: 64 MiB) */
    uint64_t max_chunk_age_ns;  /* rotate at a flush once older (0: never) */
    uint32_t buffer_bytes;      /* per-stream buffer (0: 64 KiB) */
    uint32_t tick_ns;           /* startTime resolution in ns (0: 1000) */
    bool     overwrite;         /* replace an existing file (else REC_EEXIST) */
    bool     append;            /* append a new recording to an existing file
                                   (concatenated recordings stay valid, e.g.
                                   the image that follows an exec()) */
    bool     no_compress;       /* store blocks uncompressed (tests) */
} rec_writer_options;

/* Defaults, with opt->size the caller's sizeof. REC_EINVAL for a size
 * smaller than the first version's. */
int rec_writer_options_init_sized(rec_writer_options *opt, size_t size);
static inline void rec_writer_options_init(rec_writer_options *opt)
{
    rec_writer_options_init_sized(opt, sizeof *opt);
}

/* Create the recording at path (opt may be NULL for defaults). The first
 * chunk, its metadata, is written at once. REC_EINVAL: opt->size below
 * the first version's (opt not initialised); REC_ETOOBIG: opt is larger
 * than this library knows and sets a member it does not know. */
int rec_writer_open(rec_writer **out, const char *path,
                    const rec_writer_options *opt);

/* The same on a file the caller opened read-write (created exclusively,
 * or an existing recording with opt->append): the writer owns fd from
 * then on, also on failure (it is closed). opt->overwrite is refused. */
int rec_writer_open_fd(rec_writer **out, int fd,
                       const rec_writer_options *opt);

/* The descriptor the writer writes to (moved to a high number), for a
 * caller that must keep it open when its program closes ranges of fds. */
int rec_writer_fd(const rec_writer *w);

/* Write every event committed so far by every stream, with the pool entries
 * they reference, and publish them in the chunk header: a concurrent reader
 * sees them after this returns. Rotates the chunk if it is too big or old.
 * Thread-safe. */
int rec_writer_flush(rec_writer *w);

/* Finish the current chunk and start a new one. Thread-safe. */
int rec_writer_rotate(rec_writer *w);

/* Flush, finish the last chunk, mark the recording complete, free w.
 * Streams still open are flushed and freed. Returns the first error met. */
int rec_writer_close(rec_writer *w);

/* rec_writer_close() without the freeing: the file is complete and its
 * descriptor closed; later writes through w (streams, flushes) write
 * nothing and fail with REC_EIO. For a process about to end, where another thread may hold the
 * allocator's lock. Only rec_writer_close() may follow, to free w; a
 * second call returns the first one's result. */
int rec_writer_finish(rec_writer *w);

/* Sealing (librecord(3), SEALING): continue, in a new chunk flagged
 * SEALED, the recording at path whose writer ended without closing it (a
 * process that died or left by a raw exit_group). An OPEN last chunk is
 * finished at its committed size and what follows it, never committed, is
 * cut off: readers read exactly what they read before, then the sealing
 * chunk. The caller emits what only it knows (the process's usage, the
 * CPU time the file misses) and closes the writer. REC_EEXIST: the
 * recording was closed cleanly, nothing to seal; REC_ECORRUPT: a chunk
 * header is damaged (nothing is changed); REC_EMAGIC: not a recording;
 * REC_EIO: the file could not be opened, cut or written (a sealing chunk
 * that could not be started is removed again). A caller whose events or
 * close fail may cut the file back to info->committed.
 * info may be NULL; else set info->size = sizeof *info first: the library
 * writes that many bytes of it at most (REC_EINVAL below the first
 * version's size). */
typedef struct rec_seal_info {
    size_t size;                    /* sizeof(rec_seal_info), by the caller */
    uint64_t committed;             /* bytes kept: what readers could read */
    uint64_t dropped;               /* bytes cut off after them */
    bool was_open;                  /* the last chunk was OPEN */
} rec_seal_info;
int rec_writer_open_seal(rec_writer **out, const char *path,
                         rec_seal_info *info);

/* Bytes written to the file so far (headers, metadata, pools, events). */
uint64_t rec_writer_bytes(const rec_writer *w);

/* Index (from 0) of the chunk that events emitted from now on go to; it
 * changes at every rotation. Thread-safe, lock-free: a writer of events
 * that must be in every chunk (module mappings) re-emits them when it
 * sees it change. */
uint32_t rec_writer_chunk_index(const rec_writer *w);

/* A stream is a buffer owned by one thread. Its owner encodes events with
 * rec_emit_*() without locks in the common case (one uncontended
 * compare-and-swap per event, so that a flush from another thread can take
 * the buffer). When the buffer is full, rec_emit_*() hands it to the
 * writer: that takes the writer's lock and may write to the file, so
 * rec_emit_*() is not for a signal handler or any context that must not
 * block. An event larger than a buffer fails with REC_EFULL; a string or
 * array over the limits above with REC_ETOOBIG. */
int rec_stream_open(rec_writer *w, rec_stream **out);
/* Hand the stream's events to the writer and free it. */
int rec_stream_close(rec_stream *s);

/* Interning (thread-safe, deduplicated by content): the rec_intern_<Type>()
 * functions generated from schemas/ return the id of an equal entry if one
 * exists. rec_intern_cstr() is a shorthand for the String pool. */
int rec_intern_cstr(rec_writer *w, const char *s, rec_id *id);

/* Generated: struct rec_<Type>, rec_intern_<Type>(), rec_emit_<Event>(),
 * REC_TYPE_<Type> ids. */
#include <rec/events.h>

/* ------------------------------------------------------------------ */
/* Reader                                                             */
/* ------------------------------------------------------------------ */

typedef struct rec_reader rec_reader;
typedef struct rec_type   rec_type;   /* an event or pool type */
typedef struct rec_entry  rec_entry;  /* a resolved pool entry */
typedef struct rec_event  rec_event;

enum rec_kind {
    REC_NULL = 0,
    REC_BOOL,
    REC_UINT,
    REC_INT,
    REC_STRING,
    REC_REF,    /* a pool entry; entry is NULL if the id is undefined */
    REC_ARRAY   /* of REC_REF or scalars */
};

/* A value. Its size is fixed for the soname (arrays of it cross the API
 * in both directions, rec_event_values() and rec_emit_values()): a new
 * kind must fit the union as it is. */
typedef struct rec_value {
    enum rec_kind kind;
    union {
        bool b;
        uint64_t u;
        int64_t i;
        struct { const char *s; size_t len; } str;   /* not NUL-terminated */
        struct { const rec_entry *entry; rec_id id; } ref;
        struct { const struct rec_value *items; size_t n; } array;
    } v;
} rec_value;

/* Field descriptions, from the metadata embedded in the chunk. The
 * library owns them (rec_type_field()): a member may be appended. */
typedef struct rec_field_info {
    const char *name;
    const char *type;        /* boolean, uint, int, ticks, string or a pool type name */
    const char *unit;        /* ns, ticks, bytes, count, id, address or NULL */
    const char *label;
    const char *description;
    const rec_type *ref;     /* pool type for references, else NULL */
    bool array, nullable;
} rec_field_info;

#define REC_READ_STRICT 1u   /* an unfinished chunk is an error, not a warning */
#define REC_READ_RESTATED 2u /* also the events a chunk restates for readers
                              * that start at it (restated: true), after
                              * the chunk before it was read */

/* Opening fails only if the file cannot be opened (REC_EIO, errno kept) or
 * memory runs out. The first chunk's header and schema are read at once
 * (so rec_reader_type*() work before the first event); what is wrong with
 * the file is reported, with a message, by the first rec_reader_next().
 *
 * path may name a directory recording: a directory of chunk files whose
 * names sort (strcmp) in recording order. Its regular files named *.rec
 * (not hidden) are listed at the open, at most 100000 of them, and read
 * in name order as one recording: chunk indexes go on from file to file,
 * messages name the file the trouble is in, "not closed" is judged at the
 * end of the last file. A listed file removed before its turn (a writer's
 * retention) is skipped; rec_reader_poll() sees only the listed files. */
int  rec_reader_open(rec_reader **out, const char *path, unsigned flags);
void rec_reader_close(rec_reader *r);

/* The same on a descriptor, which the reader owns from now on (closed also
 * when the call fails): a regular file is read from its current offset;
 * a pipe, FIFO or socket (also when rec_reader_open() names one) is read
 * as a stream, one whole chunk at a time, in memory bounded by the size of
 * one chunk (REC_ETOOBIG above 1 GiB). name is what messages call it. */
int  rec_reader_open_fd(rec_reader **out, int fd, const char *name,
                        unsigned flags);

/* True while events of the chunk the reader is in remain: the next
 * rec_reader_next() returns without waiting for a stream's next chunk
 * (a tool following a pipe flushes its output when this turns false). */
bool rec_reader_buffered(const rec_reader *r);

/* Next event in file order: 1 with *ev set (valid until the next call),
 * 0 at the end of the valid data, or a negative code. After an error the
 * reader stops; rec_reader_message() says where (file, chunk, offset). */
int rec_reader_next(rec_reader *r, const rec_event **ev);
const char *rec_reader_message(const rec_reader *r);

/* Non-fatal findings (an unfinished chunk read up to its last flush):
 * NULL if none. */
const char *rec_reader_warning(const rec_reader *r);

/* True once the reader has read a chunk a sealing writer wrote (see
 * rec_writer_open_seal()): the recording's writer did not finish it, and
 * the data before that chunk ends at the writer's last flush. */
bool rec_reader_sealed(const rec_reader *r);

/* Re-read a growing recording: after rec_reader_next() returned 0, data a
 * writer flushed since becomes visible to the next call. Returns 1 when
 * more data may be there (call rec_reader_next() again), 0 when nothing
 * changed yet (wait, then poll again). It also resumes after
 * REC_ETRUNCATED, once the file grew: a block or header caught
 * half-written is read again from its start. */
int rec_reader_poll(rec_reader *r);

/* Current chunk: index from 0 and its header fields. rec_reader_chunk()
 * passes sizeof *info; the library fills that many bytes at most (zeroing
 * members it does not know) and sets struct_size to the bytes it filled
 * (size is the chunk's, as it always was). */
typedef struct rec_chunk_info {
    size_t struct_size;             /* bytes filled by the library */
    uint32_t index;
    uint16_t major, minor;
    bool finished, last;
    uint64_t offset, size;          /* in the file */
    uint64_t start_ns;              /* wall clock, ns since the epoch */
    uint64_t duration_ns;
    uint64_t ticks_per_second;
} rec_chunk_info;
int rec_reader_chunk_sized(const rec_reader *r, rec_chunk_info *info,
                           size_t size);
static inline int rec_reader_chunk(const rec_reader *r, rec_chunk_info *info)
{
    return rec_reader_chunk_sized(r, info, sizeof *info);
}

/* Walk the chunk headers only: 1 with the next chunk current (the first
 * call: the reader's current chunk, the first one of a new reader), 0 at
 * the end, or a negative code as rec_reader_next(). The chunk's blocks are
 * not read: a following rec_reader_next() reads its events from its start.
 * The end of an unfinished chunk warns as rec_reader_next() does. */
int rec_reader_next_chunk(rec_reader *r);

/* Copy the whole chunks from the reader's current one on whose time span
 * [start_ns, start_ns + duration_ns] meets [since_ns, until_ns), byte for
 * byte, to out(ctx, data, len), in buffers of a fixed size. The result is
 * one closed recording: a chunk still OPEN is copied up to its last flush
 * and marked FINISHED, the last chunk copied gets the LAST flag (other
 * headers are copied as they are). Blocks are not checked: damage inside
 * a chunk is copied as it is. *nchunks (may be NULL) gets the number of
 * chunks copied. Returns 0; what out() returned if negative (the copy
 * stops); REC_EINVAL for a stream (a pipe cannot be read back); or a
 * reader error, with rec_reader_message(), after the chunks before it
 * were copied. */
int rec_reader_copy(rec_reader *r, uint64_t since_ns, uint64_t until_ns,
                    int (*out)(void *ctx, const void *data, size_t len),
                    void *ctx, uint64_t *nchunks);

/* Event access. Types and field indexes stay valid while the chunk's
 * metadata is unchanged: compare type pointers to cache lookups. An
 * event's own strings and arrays stay valid until the next
 * rec_reader_next(). rec_event_ticks() is the event's first ticks field
 * minus the chunk's start ticks (events buffered across a rotation can
 * precede the chunk: read it as int64_t). */
const rec_type *rec_event_type(const rec_event *ev);
uint64_t rec_event_time_ns(const rec_event *ev);   /* ns since the epoch */
uint64_t rec_event_ticks(const rec_event *ev);     /* chunk-relative ticks */
size_t   rec_event_bytes(const rec_event *ev);     /* encoded size */
int      rec_event_get(const rec_event *ev, size_t field, rec_value *out);
/* All fields at once, rec_type_nfields() of them in field order (what
 * rec_event_get() copies out one at a time): for per-event loops. */
const rec_value *rec_event_values(const rec_event *ev);

/* Pool entries (resolved across references within the chunk). Entries and
 * the strings they hold stay valid until the reader enters another chunk. */
const rec_type *rec_entry_type(const rec_entry *e);
rec_id   rec_entry_id(const rec_entry *e);
int      rec_entry_get(const rec_entry *e, size_t field, rec_value *out);

/* Types. */
const char *rec_type_name(const rec_type *t);
const char *rec_type_label(const rec_type *t);
const char *rec_type_description(const rec_type *t);
uint32_t    rec_type_id(const rec_type *t);
bool        rec_type_is_event(const rec_type *t);
size_t      rec_type_nfields(const rec_type *t);
const rec_field_info *rec_type_field(const rec_type *t, size_t i);
/* Index of a field by name, or -1. */
long        rec_type_field_index(const rec_type *t, const char *name);

/* The schema of the current chunk. */
size_t          rec_reader_ntypes(const rec_reader *r);
const rec_type *rec_reader_type(const rec_reader *r, size_t i);
const rec_type *rec_reader_type_by_name(const rec_reader *r, const char *name);

/* ------------------------------------------------------------------ */
/* Writing what was read, by its own schema (man librecord(3),        */
/* COPYING EVENTS)                                                    */
/* ------------------------------------------------------------------ */

/* rec_writer_open_fd() for a writer whose chunks carry the schema of the
 * reader's current chunk (its METADATA payload as it is) instead of the
 * compiled-in one: what it writes keeps fields and types this library
 * does not know. The writer keeps its own copy; r may be closed after.
 * Only the functions below write through it (rec_emit_<Event>() and
 * rec_intern_<Type>() encode by the compiled-in schema). */
int rec_writer_open_like(rec_writer **out, int fd, const rec_writer_options *opt,
                         const rec_reader *r);

/* Emit ev, read from a chunk with the writer's schema, with all of its
 * fields: referenced entries are interned from their values, recursively,
 * so the writer's chunk needs nothing of the reader's; ticks are converted
 * to the writer's resolution. A reference to an entry the chunk did not
 * define is written null (REC_ENOTFOUND if the field is not nullable).
 * REC_EINVAL: the writer's schema has no such type with the same fields. */
int rec_emit_event(rec_stream *s, const rec_event *ev);

/* Emit an event of type t (of the writer's schema or one with the same
 * fields) from values, rec_type_nfields(t) of them in field order, with
 * the kinds rec_event_get() returns. Ticks fields are CLOCK_MONOTONIC ns
 * as for rec_emit_<Event>() (0: now). A REC_REF value with an entry is
 * interned from it; with entry NULL, ref.id is an id of this writer (from
 * rec_intern_entry() or rec_intern_values()), 0 for null. */
int rec_emit_values(rec_stream *s, const rec_type *t, const rec_value *values);

/* Intern a pool entry read from a chunk (recursively) or built from
 * values, as rec_emit_event() and rec_emit_values() do. */
int rec_intern_entry(rec_writer *w, const rec_entry *e, rec_id *id);
int rec_intern_values(rec_writer *w, const rec_type *t, const rec_value *values,
                      rec_id *id);

/* ------------------------------------------------------------------ */
/* Relaying chunks as they are written (man librecord(3), RELAYING    */
/* CHUNKS)                                                            */
/* ------------------------------------------------------------------ */

typedef struct rec_relay rec_relay;

/* How the relay gives each chunk (rec-format(5)). */
#define REC_RELAY_FILE     0u   /* as a file holds it: a header first,
                                 * then after each flush its new blocks
                                 * and the header again */
#define REC_RELAY_STREAMED 1u   /* as a STREAMED chunk: its header once,
                                 * its blocks, an END block */

typedef struct rec_relay_options {
    size_t size;            /* sizeof(rec_relay_options): _init() sets it */
    unsigned mode;          /* REC_RELAY_FILE (default) or _STREAMED */
    uint64_t offset;        /* where the first chunk is in the source (0) */
} rec_relay_options;

int rec_relay_options_init_sized(rec_relay_options *opt, size_t size);
static inline void rec_relay_options_init(rec_relay_options *opt)
{
    rec_relay_options_init_sized(opt, sizeof *opt);
}

/* What a piece of a chunk holds. */
enum rec_relay_kind {
    REC_RELAY_BEGIN = 1,    /* a new chunk's first header, at pos 0 */
    REC_RELAY_BLOCKS,       /* blocks the writer committed */
    REC_RELAY_HEADER,       /* FILE: the header now, written over pos 0 */
    REC_RELAY_END           /* STREAMED: the END block */
};

/* The most bytes a piece carries in data. */
#define REC_RELAY_DATA_MAX 256u

typedef struct rec_relay_piece {
    enum rec_relay_kind kind;
    rec_chunk_info chunk;   /* the chunk as committed so far: index (from
                             * 0, in relay order), offset and size in the
                             * source, times, finished, last */
    bool complete;          /* the chunk's last piece: nothing follows */
    uint64_t pos;           /* where the bytes go in the chunk's copy */
    uint64_t len;
    const void *data;       /* BEGIN, HEADER, END: the bytes, valid until
                             * the next call; BLOCKS: NULL */
    uint64_t source;        /* BLOCKS: where they are in the source */
} rec_relay_piece;

/* Relay the chunks a writer writes to fd (a regular file or an in-memory
 * file, read with pread(): its offset is not used, it is not taken over)
 * while it writes them. opt may be NULL for the defaults. */
int  rec_relay_open(rec_relay **out, int fd, const rec_relay_options *opt);
void rec_relay_close(rec_relay *rl);

/* The next piece of what the writer committed: 1 with *piece, 0 when
 * nothing more is committed yet (call again later: after each flush of the
 * writer), or a negative code with rec_relay_message(); the relay then
 * stops. Blocks are not checked, only the chunk headers: REC_EMAGIC or
 * REC_EVERSION where no chunk of this format is, REC_ECORRUPT for a
 * damaged header (once the writer is gone: a header caught in an update
 * is waited for until then), REC_ETRUNCATED when the source is shorter
 * than a header says. The source may be cut (a hole punched) only where
 * complete chunks were. */
int  rec_relay_next(rec_relay *rl, rec_relay_piece *piece);
const char *rec_relay_message(const rec_relay *rl);

/* The writer is gone (its process ended): a header it left in the middle
 * of an update is taken as a reader takes it. rec_relay_next() then gives
 * the rest; a chunk it left OPEN ends at its last flush, without a
 * complete piece. */
void rec_relay_writer_gone(rec_relay *rl);

/* Give the whole FINISHED chunk in chunk[0..len) (as a file holds it:
 * what a writer of its own wrote) the place of the chunk at offset of fd
 * in its recording: its index, start, duration, writer and flags (LAST,
 * SEALED); it can then stand in for that chunk. REC_EINVAL: chunk is not
 * a finished chunk of len bytes; REC_EMAGIC, REC_ECORRUPT, REC_ETRUNCATED,
 * REC_EVERSION or REC_EIO: no valid chunk header at offset. */
int  rec_relay_place(void *chunk, size_t len, int fd, uint64_t offset);

/* ------------------------------------------------------------------ */
/* Following a recording as it is written (man librecord(3),          */
/* FOLLOWING A RECORDING)                                             */
/* ------------------------------------------------------------------ */

typedef struct rec_follow rec_follow;

typedef struct rec_follow_options {
    size_t size;    /* sizeof, set by rec_follow_options_init() */
    /* End with REC_ESTALLED after this long without new data (or without
     * the file appearing); 0: never. Covers writers whose death cannot be
     * seen (format 1.0 files, another pid namespace or host). */
    int stall_timeout_ms;
    /* After a recording closed cleanly while its writer still runs, wait
     * this long for a recording appended to it (the image an exec()
     * started): -1 (default) until the writer exits, 0 not at all. */
    int finish_wait_ms;
    /* Re-check at least this often (0: 100 ms) when inotify or pidfd
     * cannot tell us, or misses a change. */
    int poll_ms;
    /* Start after this position (rec_follow_position()): none lost, none
     * repeated. NULL: from the first event. */
    const char *position;
    /* Start with the events flushed after the open (history skipped). */
    bool from_end;
} rec_follow_options;

#define REC_FOLLOW_POSITION_MAX 128   /* bytes, with the NUL */

/* Defaults, with opt->size the caller's sizeof (REC_EINVAL below the
 * first version's). rec_follow_open() takes opt as rec_writer_open()
 * does. */
int rec_follow_options_init_sized(rec_follow_options *opt, size_t size);
static inline void rec_follow_options_init(rec_follow_options *opt)
{
    rec_follow_options_init_sized(opt, sizeof *opt);
}

/* Follow the recording at path, which may not exist yet. REC_EINVAL for a
 * malformed position; other problems come from rec_follow_next(), among
 * them a directory recording (REC_EINVAL: one cannot be followed). */
int  rec_follow_open(rec_follow **out, const char *path,
                     const rec_follow_options *opt);
void rec_follow_close(rec_follow *f);

/* Next event, waiting for it up to timeout_ms (-1: as long as it takes):
 * 1 with *ev set (valid until the next call), 0 at the end of the stream
 * (the recording closed and its writer is gone or done), REC_EAGAIN when
 * the timeout passed or a signal arrived first, or a negative code that
 * ends the stream: REC_EWRITER, REC_ESTALLED, REC_EREPLACED, or a reader
 * error; rec_follow_message() then says what happened. */
int  rec_follow_next(rec_follow *f, const rec_event **ev, int timeout_ms);
const char *rec_follow_message(const rec_follow *f);

/* Where the stream is: after the last event rec_follow_next() returned.
 * A string of printable ASCII (< REC_FOLLOW_POSITION_MAX bytes) to store
 * and pass back as rec_follow_options.position. */
int  rec_follow_position(const rec_follow *f, char *buf, size_t len);

/* The reader underneath (chunk info, schema), NULL until the file exists.
 * Do not call rec_reader_next() or rec_reader_poll() on it. */
rec_reader *rec_follow_reader(rec_follow *f);

#ifdef __cplusplus
}
#endif
#endif
