/*
 * librecord/reader_int.h - internals shared by the reader's sources:
 * schema tables (metadata.c), pool tables (rpool.c), field decoding
 * (fields.h), value access (value.c), file walking (reader.c), blocks
 * (block.c).
 */
#ifndef REC_READER_INT_H
#define REC_READER_INT_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "rec/record.h"
#include "cbordec.h"
#include "crc32c.h"
#include <sys/types.h>

/* Internals of the shared library: direct calls, no PLT. */
#pragma GCC visibility push(hidden)

/* ---- arena: bump allocation freed all at once (schemas, chunk pools) ---- */

typedef struct rec__arena {
    struct rec__arena_blk *head;
    size_t total;           /* bytes obtained from malloc */
    size_t limit;           /* refuse to grow past this (0: no limit) */
} rec__arena;

void *rec__arena_alloc(rec__arena *a, size_t n);
char *rec__arena_strndup(rec__arena *a, const void *s, size_t n);
void  rec__arena_free(rec__arena *a);

/* ---- schema ---- */

/* How a field is encoded. */
enum rec__fenc { FE_BOOL, FE_UINT, FE_INT, FE_TICKS, FE_STRING, FE_REF };

/* What decoding a field takes, in one place (metadata.c builds it once
 * per type so that the per-event loop reads one small array). */
typedef struct rec__fop {
    uint8_t enc;                /* enum rec__fenc */
    bool array, nullable;
    uint8_t done_kind;          /* an item of this rec_kind is the value as it
                                 * is (uint, boolean); 0xff: never */
    uint32_t pool;              /* FE_REF: pool_index of the referenced type */
} rec__fop;

struct rec_type {
    uint32_t id;
    bool is_event;
    const char *name, *label, *description;
    size_t nfields;
    rec_field_info *fields;
    uint8_t *enc;               /* enum rec__fenc per field */
    rec__fop *ops;              /* per field */
    uint32_t pool_index;        /* pool types: index of its pool table */
    long ticks_field;           /* first ticks field, -1 if none */
    long restated_field;        /* events: boolean "restated", -1 if none */
};

typedef struct rec__schema {
    struct rec__schema *next;   /* list of schemas seen, for reuse */
    rec__arena arena;
    uint8_t *raw;               /* metadata payload, to recognise it again */
    size_t raw_len;
    rec_type *types;            /* in metadata order */
    size_t ntypes;
    rec_type **direct;          /* by id when ids are small */
    size_t ndirect;
    rec_type **sorted;          /* by id, for large ids */
    size_t npools;              /* pool types */
    size_t max_fields;
} rec__schema;

/* Parse a METADATA payload. Returns 0, or a REC_E* code and what it found
 * in what[whatlen]. */
int rec__schema_parse(rec__schema **out, const uint8_t *raw, size_t n,
                      char *what, size_t whatlen);
void rec__schema_free(rec__schema *s);
const rec_type *rec__schema_type_slow(const rec__schema *s, uint64_t id);
static inline const rec_type *rec__schema_type(const rec__schema *s, uint64_t id)
{
    if (id < s->ndirect)
        return s->direct[id];
    return rec__schema_type_slow(s, id);
}

/* ---- pools of the current chunk ---- */

struct rec_entry {
    const rec_type *type;
    struct rec__rpools *pools;   /* to resolve references lazily */
    rec_id id;
    bool resolved;
    rec_value values[];         /* type->nfields */
};

typedef struct rec__ptab {
    rec_entry **dense;          /* by id while ids are dense (writers count up) */
    size_t dense_cap;
    rec_entry **slots;          /* open addressing on id for the others */
    size_t cap, n;
} rec__ptab;

typedef struct rec__rpools {
    rec__arena arena;
    rec__ptab *tabs;            /* one per pool type, by pool_index */
    size_t ntabs;
    uint64_t dangling;          /* references to undefined ids seen */
    uint64_t dup;               /* duplicate ids ignored */
} rec__rpools;

#define REC__POOL_ARENA_LIMIT ((size_t)512 << 20)

int  rec__rp_init(rec__rpools *p, const rec__schema *s);
void rec__rp_free(rec__rpools *p);
rec_entry *rec__rp_find_slow(const rec__ptab *tab, rec_id id);
static inline rec_entry *rec__rp_find(const rec__rpools *p, const rec_type *t, rec_id id)
{
    if (!t || t->is_event || t->pool_index >= p->ntabs)
        return NULL;
    const rec__ptab *tab = &p->tabs[t->pool_index];
    if (id < tab->dense_cap && tab->dense[id])
        return tab->dense[id];
    return rec__rp_find_slow(tab, id);
}
/* By pool index (rec__fop.pool) when the type is known to be a pool. */
static inline rec_entry *rec__rp_get(const rec__rpools *p, uint32_t pool, rec_id id)
{
    if (__builtin_expect(pool >= p->ntabs, 0))
        return NULL;
    const rec__ptab *tab = &p->tabs[pool];
    if (id < tab->dense_cap && tab->dense[id])
        return tab->dense[id];
    return rec__rp_find_slow(tab, id);
}
/* Adds e unless its id exists (then counts a duplicate). */
int  rec__rp_add(rec__rpools *p, rec_entry *e);

/* ---- field decoding ---- */

typedef struct rec__dctx {
    rec__rpools *pools;
    uint64_t prev_ticks;        /* events: delta base */
    rec_value *items;           /* events: array items storage */
    size_t nitems, items_cap;
    const char *what;           /* on error */
    const rec_field_info *field;
} rec__dctx;

/* Resolve an entry's references (first access). */
void rec__entry_resolve(rec_entry *e);

struct rec_event {
    const rec_type *type;
    const rec_value *values;
    uint64_t ticks;             /* absolute */
    size_t bytes;
    /* time base of the chunk */
    uint64_t start_wall_ns, start_ticks, ticks_per_second;
    uint64_t ns_per_tick;       /* 1e9 / ticks_per_second when exact, else 0 */
};

/* ---- the reader ---- */

enum rstate {
    ST_CHUNK,       /* next: a chunk header at chunk_off */
    ST_BLOCKS,      /* next: a block at pos, or the end of the chunk */
    ST_END_OPEN,    /* stopped at the committed end of an OPEN chunk */
    ST_END_EOF,     /* stopped at the end of the file between chunks */
    ST_ERROR
};

struct rec_reader {
    int fd;                 /* the file read; -1 before a directory's first */
    int src_fd;             /* a stream fed through fd (spool.c), else -1 */
    uint64_t spooled_end;   /* bytes of the stream copied into fd so far */
    char *path;             /* the file read (a directory's: DIR/NAME) */

    /* A directory recording (dir.c): its *.rec files in name order, read
     * one after the other as one recording. dir_fd -1: one file. */
    int dir_fd;
    char *dir_path;         /* its name, as given */
    char **files;
    size_t nfiles, next_file;   /* next_file: the next one to open */
    unsigned flags;
    enum rstate st;
    int err;
    bool resumable;         /* error at the end of the data: poll may retry */
    enum rstate resume_st;  /* where to resume then */
    uint64_t trunc_fsize;   /* file size when it happened */

    /* current chunk */
    uint32_t chunk_no;      /* ordinal in the file, from 0 */
    bool have_chunk;
    uint64_t chunk_off, chunk_end, pos;
    uint32_t header_size;
    uint16_t major, minor;
    uint8_t state, cflags;
    uint64_t start_wall, start_ticks, duration, tps;
    uint32_t writer_pid;    /* 0: unknown (format 1.0) */
    rec_chunk_info info;    /* rec_reader_chunk(): kept up to date here, as
                             * tools ask for it per event */
    bool prev_last;         /* the previous chunk closed a recording */
    bool sealed;            /* a SEALED chunk was read */
    bool continues;         /* the current chunk follows the one read
                             * before it in its recording: events marked
                             * restated are skipped */
    uint32_t index;         /* chunk_index of the current chunk */
    bool streamed;          /* the current chunk is STREAMED and its END
                             * block not read yet: chunk_end grows by one
                             * whole block at a time (stream_extend) */
    uint64_t skip_before;   /* EVENTS blocks starting before this offset are
                             * checked but not decoded (rec__reader_seek) */
    bool have_meta;
    bool walked;            /* rec_reader_next_chunk() returned this chunk */
    uint8_t hdr_raw[80];    /* the chunk header as read under the seqlock */

    /* current block */
    uint8_t *io, *raw;
    size_t io_cap, raw_cap;
    uint64_t blk_off;
    rec__cdec dec;          /* events left in the current EVENTS block */
    bool in_events;

    rec__schema *schema, *schemas;
    rec__rpools pools;
    bool pools_live;
    uint64_t dangling_warned;
    rec_value *vals;
    size_t vals_cap;
    rec__dctx dctx;         /* of the current EVENTS block */
    rec_event ev;

    char msg[512];
    char warn[512];
};

static inline uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}
static inline void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint64_t le64(const uint8_t *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}
static inline void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

/* A chunk header's CRC holds, read as is or, its generation odd (a writer
 * that died inside an update), as the generation before or after. */
bool rec__header_crc_ok(const uint8_t *b);

/* Streams (spool.c): is fd a pipe, FIFO, socket or the like; make r read
 * src through a private in-memory file; copy the next chunk into it. */
bool rec__is_stream(int fd);
int  rec__spool_init(rec_reader *r, int src);
int  rec__spool_next(rec_reader *r);
int  rec__spool_block(rec_reader *r, uint64_t off);

/* Stop with code; the message names file, chunk and byte offset. */
__attribute__((format(printf, 4, 5)))
int rec__rfail(rec_reader *r, int code, uint64_t off, const char *fmt, ...);
/* The file ends before what the data declares: rec_reader_poll() may
 * resume here once it grew. */
__attribute__((format(printf, 3, 4)))
int rec__rtruncated(rec_reader *r, uint64_t off, const char *fmt, ...);
int rec__io_error(rec_reader *r, uint64_t off);
ssize_t rec__pread_full(int fd, void *buf, size_t n, uint64_t off);
void rec__drop_pools(rec_reader *r);

/* dir.c: a directory recording. rec__dir_init() lists the *.rec files of
 * the directory dfd (owned from now on) in name order: 0, REC_ENOMEM, or
 * another code with the reader stopped on a message. rec__dir_next()
 * closes the current file and opens the next one that still exists (the
 * oldest may be removed while we read): 1 with r->fd, r->path and
 * r->chunk_off set, 0 if none is left, or an error. rec__dir_more(): a
 * file after the current one is left. */
int  rec__dir_init(rec_reader *r, int dfd);
int  rec__dir_next(rec_reader *r);
bool rec__dir_more(const rec_reader *r);
void rec__dir_free(rec_reader *r);

/* block.c: read, check and take apart the block at r->pos. */
int rec__read_block(rec_reader *r);
/* reader.c: move over chunk ends and non-event blocks until events are
 * ready: 1 when r->dec has events, 0 at the end, or an error. */
int rec__advance(rec_reader *r, bool stop_at_metadata);
/* reader.c: continue at the chunk at chunk_off (the chunk_no'th of the
 * file), skipping the events of blocks that start before skip_before (pool
 * blocks are still loaded). *start_wall gets the chunk's start_wall, to
 * check that a saved position belongs to this file. Returns 1, 0 if the
 * file ends at chunk_off, or an error (with the reader stopped). */
int rec__reader_seek(rec_reader *r, uint64_t chunk_off, uint32_t chunk_no,
                     uint64_t skip_before, uint64_t *start_wall);
/* reader.c: the chunk at off, read under the seqlock without moving the
 * reader: 1 with its size, state and flags, 0 if the file ends at off. */
int rec__reader_peek(rec_reader *r, uint64_t off, uint64_t *size,
                     uint8_t *state, uint8_t *flags);
/* reader.c: warn about references to undefined pool entries, once. */
void rec__check_dangling(rec_reader *r);

#pragma GCC visibility pop

#endif
