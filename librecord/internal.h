/*
 * librecord/internal.h - writer internals shared by writer.c, stream.c,
 * pool.c and the generated events.c. Not installed.
 *
 * Locking, outermost first (never take an earlier one while holding a later):
 *   w->wlock    file, chunk state; one flusher/rotator/drainer at a time
 *   w->slock    the list of streams
 *   s->state    per stream: FREE, OWNER (rec_emit_*), FLUSHER (taking data)
 *   w->hlock    hand-off: pending pool entries, full buffers, spare buffers
 *   pool->lock  inserts into one pool (taken by interning only)
 *
 * The chunk generation w->gen changes only while the rotator holds every
 * stream, so code inside a stream critical section sees it stable: an event
 * and the pool entries it marked always land in the same chunk.
 */
#ifndef REC_INTERNAL_H
#define REC_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "rec/record.h"
#include "format.h"
#include "encode.h"

#define REC__LIKELY(x)   __builtin_expect(!!(x), 1)
#define REC__UNLIKELY(x) __builtin_expect(!!(x), 0)

struct rec__schema;            /* reader_int.h */

/* ---- generated tables (events.c) ---- */
struct rec__pool_desc {
    uint32_t type_id;
    const char *name;
};
extern const struct rec__pool_desc rec__pool_descs[];
extern const unsigned rec__npools;
extern const unsigned char rec__metadata[];
extern const size_t rec__metadata_len;

/* ---- pools ---- */
struct rec__entry {
    _Atomic uint32_t gen;      /* chunk generation it was last queued for */
    rec_id id;
    uint32_t hash;
    uint32_t nchildren;
    uint32_t flen;             /* field bytes (the dedup key) */
    uint32_t elen;             /* whole encoded entry [typeId, id, field...] */
    struct rec__entry **children;   /* entries it references */
    unsigned char *enc;        /* elen bytes; the fields are the last flen */
};

struct rec__htab {
    struct rec__htab *older;   /* retired tables, freed at close */
    size_t mask;
    _Atomic(struct rec__entry *) slot[];
};

#define REC__SEG_SHIFT 6       /* segment k holds 64 << k entries */
#define REC__NSEGS 26

struct rec__pool {
    pthread_mutex_t lock;
    uint32_t type_id;
    _Atomic uint32_t count;                      /* ids 1..count exist */
    _Atomic(struct rec__entry **) seg[REC__NSEGS];
    _Atomic(struct rec__htab *) tab;
};

static inline struct rec__entry *rec__pool_get(struct rec__pool *p, rec_id id)
{
    if (REC__UNLIKELY(id == 0 ||
                      id > atomic_load_explicit(&p->count, memory_order_acquire)))
        return NULL;
    uint32_t j = id - 1 + (1u << REC__SEG_SHIFT);
    unsigned k = 31 - (unsigned)__builtin_clz(j);
    struct rec__entry **seg =
        atomic_load_explicit(&p->seg[k - REC__SEG_SHIFT], memory_order_acquire);
    return seg[j - (1u << k)];
}

/* Interning scratch: encoded fields plus the references they contain. */
struct rec__ref {
    uint32_t pool;
    rec_id id;
};

struct rec__sink {
    unsigned char *buf;
    size_t len, cap;
    struct rec__ref *refs;
    size_t nrefs, crefs;
    int err;
    bool heap_buf, heap_refs;
    unsigned char local[480];
    struct rec__ref local_refs[64];
};

void rec__sink_init(struct rec__sink *k);
int  rec__sink_grow(struct rec__sink *k, size_t more);
void rec__sink_addref(struct rec__sink *k, uint32_t pool, rec_id id);
void rec__sink_string(struct rec__sink *k, const char *s, bool nullable);
static inline unsigned char *rec__sink_room(struct rec__sink *k, size_t more)
{
    if (REC__UNLIKELY(k->len + more > k->cap) && rec__sink_grow(k, more))
        return NULL;
    return k->buf + k->len;
}
static inline void rec__sink_uint(struct rec__sink *k, uint64_t v)
{
    unsigned char *p = rec__sink_room(k, REC__MAX_UINT);
    if (p)
        k->len += rec__enc_uint(p, v);
}
static inline void rec__sink_int(struct rec__sink *k, int64_t v)
{
    unsigned char *p = rec__sink_room(k, REC__MAX_UINT);
    if (p)
        k->len += rec__enc_int(p, v);
}
static inline void rec__sink_bool(struct rec__sink *k, bool v)
{
    unsigned char *p = rec__sink_room(k, 1);
    if (p)
        k->len += rec__enc_bool(p, v);
}
static inline void rec__sink_null(struct rec__sink *k)
{
    unsigned char *p = rec__sink_room(k, 1);
    if (p)
        k->len += rec__enc_null(p);
}
static inline void rec__sink_ref(struct rec__sink *k, rec_id id, bool nullable)
{
    if (REC__LIKELY(id))
        rec__sink_uint(k, id);
    else if (nullable)
        rec__sink_null(k);
    else if (!k->err)
        k->err = REC_EINVAL;
}
static inline void rec__sink_array(struct rec__sink *k, size_t n)
{
    unsigned char *p;
    if (n > REC_MAX_ARRAY) {
        k->err = k->err ? k->err : REC_ETOOBIG;
        return;
    }
    if ((p = rec__sink_room(k, REC__MAX_UINT)))
        k->len += rec__enc_array(p, n);
}

/* Intern the sink's fields as an entry of pool `pool` (index into
 * rec__pool_descs) with nfields fields; releases the sink. On a miss,
 * refs(v, k) lists the entry's references with rec__sink_addref() (only
 * then: a hit needs no validation, an equal entry was validated). */
typedef void rec__refs_fn(const void *v, struct rec__sink *k);
int rec__intern(rec_writer *w, unsigned pool, unsigned nfields,
                struct rec__sink *k, const void *v, rec__refs_fn *refs, rec_id *id);

/* Pools of the given type ids, in the order of the writer's schema (NULL:
 * the compiled-in rec__pool_descs). */
int  rec__pools_init(rec_writer *w, const uint32_t *type_ids, unsigned n);
void rec__pools_free(rec_writer *w);

/* ---- streams ---- */
struct rec__buf {
    struct rec__buf *next;
    uint32_t cap, len;         /* len: committed bytes */
    unsigned char data[];
};

enum { REC__FREE = 0, REC__OWNER = 1, REC__FLUSHER = 2 };

struct rec_stream {
    _Atomic uint32_t state;
    bool drain;                /* owner queued a full buffer: write it */
    uint32_t tick_ns;
    struct rec__buf *buf;
    uint64_t last_ticks;       /* previous ticks value in buf */
    rec_writer *w;
    struct rec_stream *next, *prev;   /* w->streams, under w->slock */
};

struct rec_writer {
    int fd;
    /* The file fd must still name (a program that closes every fd and
     * opens its own may be handed the same number): checked before the
     * first write of each flush; on a mismatch nothing is written or
     * closed again. */
    dev_t fd_dev;
    ino_t fd_ino;
    bool fd_lost;
    bool fd_checked;            /* since lock_for_writes: fd_still_ours held */
    bool finished;             /* rec_writer_finish: fd closed, nothing more written */
    int finish_rc, finish_errno;
    int error;                 /* first write error: the file is suspect after it */
    rec_writer_options opt;
    uint64_t ticks_per_s;
    _Atomic uint32_t gen;      /* chunk generation, from 1 */

    pthread_mutex_t wlock;
    uint64_t file_off;         /* where the next block goes */
    uint64_t chunk_off;
    uint64_t chunk_start_wall, chunk_start_ticks, chunk_start_ns;
    uint32_t chunk_index;
    uint8_t chunk_flags;        /* in every chunk header (REC_CHUNK_SEALED) */
    uint32_t pid;               /* chunk header's writer pid */
    uint32_t hdr_gen;          /* seqlock counter of the chunk header */
    bool chunk_open;
    void *lz4;                 /* LZ4 state */
    unsigned zprobe, zmode;    /* which lz4 entry point compresses better */
    unsigned char *zbuf;
    size_t zcap;
    unsigned char *obuf;     /* blocks staged for one write (write_block) */
    size_t olen, ocap;
    unsigned char *pbuf;       /* POOL block assembly */
    size_t pcap;
    _Atomic uint64_t bytes;

    pthread_mutex_t slock;
    struct rec_stream *streams;
    unsigned nstreams;

    pthread_mutex_t hlock;
    struct rec__entry **pending;
    size_t npending, cpending;
    struct rec__buf *full_head, *full_tail;
    struct rec__buf *spare;
    unsigned nspare;

    struct rec__pool *pools;   /* npools of them */
    unsigned npools;
    /* A writer opened with another recording's schema (reemit.c): its
     * METADATA payload, written instead of the compiled-in one, and the
     * parsed form that rec_emit_values() encodes by. NULL otherwise. */
    struct rec__schema *schema;
    const unsigned char *meta;
    size_t meta_len;
};

/* stream.c */
void rec__stream_wait(rec_stream *s, uint32_t to);
int  rec__stream_full(rec_stream *s, size_t need);
int  rec__mark_slow(rec_writer *w, struct rec__entry *e);
struct rec__buf *rec__buf_get(rec_writer *w);      /* under hlock */
void rec__buf_put(rec_writer *w, struct rec__buf *b);  /* under hlock */
void rec__stream_detach(rec_stream *s);                /* under slock */

/* writer.c */
int rec__writer_drain(rec_writer *w);
/* A schema other than the compiled-in one (reemit.c). */
typedef struct rec__foreign {
    struct rec__schema *schema;     /* the writer's from the open on */
    const uint32_t *pool_ids;       /* type id of each pool, by pool_index */
    unsigned npools;
    const unsigned char *meta;      /* METADATA payload, in schema's memory */
    size_t meta_len;
} rec__foreign;
/* rec_writer_open_fd() with f's schema; f->schema is freed on failure. */
int rec__writer_open_schema(rec_writer **out, int fd, const rec_writer_options *opt,
                            const rec__foreign *f);
/* metadata.c */
void rec__schema_free(struct rec__schema *s);

/* seal.c: where a sealing writer continues a recording (writer.c). */
typedef struct rec__seal_at {
    uint64_t offset;            /* the new chunk starts here */
    uint32_t index;             /* with this index */
    uint8_t flags;              /* in every header it writes */
} rec__seal_at;
int rec__writer_open_at(rec_writer **out, int fd, const rec__seal_at *at);

static inline uint64_t rec__ticks(const rec_stream *s, uint64_t ns)
{
    return (ns ? ns : rec_now_ns()) / s->tick_ns;
}

/* Take the stream and make room for `need` bytes plus a baseTicks; returns
 * where to encode. t0 is the event's first ticks value, the block's
 * baseTicks if the buffer is empty. */
static inline int rec__emit_begin(rec_stream *s, size_t need, uint64_t t0,
                                  unsigned char **p)
{
    uint32_t exp = REC__FREE;
    if (REC__UNLIKELY(!atomic_compare_exchange_strong_explicit(
            &s->state, &exp, REC__OWNER, memory_order_acquire, memory_order_relaxed)))
        rec__stream_wait(s, REC__OWNER);
    struct rec__buf *b = s->buf;
    need += REC__MAX_UINT;
    if (REC__UNLIKELY(b->len + need > b->cap)) {
        int rc = rec__stream_full(s, need);
        if (rc) {
            atomic_store_explicit(&s->state, REC__FREE, memory_order_release);
            return rc;
        }
        b = s->buf;
    }
    unsigned char *q = b->data + b->len;
    if (b->len == 0) {
        q += rec__enc_uint(q, t0);
        s->last_ticks = t0;
    }
    *p = q;
    return 0;
}

static inline void rec__emit_abort(rec_stream *s)
{
    atomic_store_explicit(&s->state, REC__FREE, memory_order_release);
}

static inline int rec__emit_commit(rec_stream *s, unsigned char *end)
{
    s->buf->len = (uint32_t)(end - s->buf->data);
    atomic_store_explicit(&s->state, REC__FREE, memory_order_release);
    if (REC__UNLIKELY(s->drain)) {
        s->drain = false;
        return rec__writer_drain(s->w);
    }
    return 0;
}

/* Encode a ticks field as the signed delta from the previous one. */
static inline size_t rec__emit_ticks(rec_stream *s, unsigned char *p, uint64_t t)
{
    int64_t d = (int64_t)(t - s->last_ticks);
    s->last_ticks = t;
    return rec__enc_int(p, d);
}

/* Queue entry `id` of pool `pool` (and what it references) for the current
 * chunk unless it already is; inside the event's critical section. */
static inline int rec__emit_mark(rec_stream *s, unsigned pool, rec_id id)
{
    rec_writer *w = s->w;
    struct rec__entry *e = rec__pool_get(&w->pools[pool], id);
    if (REC__UNLIKELY(!e))
        return REC_ENOTFOUND;
    if (REC__LIKELY(atomic_load_explicit(&e->gen, memory_order_acquire) ==
                    atomic_load_explicit(&w->gen, memory_order_relaxed)))
        return 0;
    return rec__mark_slow(w, e);
}

#endif
