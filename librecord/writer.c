/*
 * librecord/writer.c - the recording file: chunks, blocks, flush, rotation.
 *
 * Everything here runs under w->wlock. A batch is what one flush writes:
 * the pool entries queued so far (one or more POOL blocks) followed by the
 * event buffers taken from the streams (one EVENTS block each), so every
 * entry precedes the events that reference it in the same chunk.
 */
#include <config.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <lz4.h>
#include <lz4hc.h>
#include "internal.h"
#include "crc32c.h"
#include "sized.h"

#define POOL_BLOCK_RAW (1u << 20)   /* split POOL blocks beyond this */

struct batch {
    struct rec__entry **pending;
    size_t npending;
    struct rec__buf *head, *tail;
};

static void put_le16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static void put_le32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static void put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* The first version of rec_writer_options ended with no_compress. */
#define OPTIONS_SIZE_V1 REC__SIZE_TO(rec_writer_options, no_compress)

static void options_defaults(rec_writer_options *o)
{
    if (!o->max_chunk_bytes)
        o->max_chunk_bytes = 64u << 20;
    if (!o->buffer_bytes)
        o->buffer_bytes = 64u << 10;
    if (!o->tick_ns)
        o->tick_ns = 1000;
}

int rec_writer_options_init_sized(rec_writer_options *opt, size_t size)
{
    rec_writer_options o;
    memset(&o, 0, sizeof o);
    options_defaults(&o);
    o.size = size;
    if (rec__sized_out(opt, size, &o, sizeof o, OPTIONS_SIZE_V1) < 0)
        return REC_EINVAL;
    return 0;
}

/* The caller's options (NULL: the defaults) as this library knows them. */
static int options_in(rec_writer_options *o, const rec_writer_options *opt)
{
    int rc = 0;
    memset(o, 0, sizeof *o);
    if (opt)
        rc = rec__sized_in(o, sizeof *o, opt, opt->size, OPTIONS_SIZE_V1);
    o->size = sizeof *o;
    options_defaults(o);
    return rc;
}

static int fail_io(rec_writer *w)
{
    int e = errno;
    if (!w->error)
        w->error = REC_EIO;
    errno = e;
    return REC_EIO;
}

/* The fd still names our file (see rec_writer.fd_dev). Once it does not,
 * the writer fails for good and never touches that fd again. Checked at
 * the first write of each locked entry (lock_for_writes), not before
 * every write: a flush is 4 to 6 writes, and a sampler flushing several
 * times a second pays for each system call. */
static bool fd_still_ours(rec_writer *w)
{
    struct stat st;

    if (w->fd_lost)
        return false;
    if (w->fd_checked)
        return true;
    if (fstat(w->fd, &st) == 0 && st.st_dev == w->fd_dev &&
        st.st_ino == w->fd_ino)
        return w->fd_checked = true;
    w->fd_lost = true;
    return false;
}

/* Move fd out of the way of a program that closes "all" fds and reopens
 * some: the lowest free number is what open() hands out, so a high one is
 * rarely reused (the dev/ino check catches the rest). Not above 4096: the
 * kernel sizes the fd table (copied by every fork) to the highest fd. */
static int move_fd_high(int fd)
{
    struct rlimit rl;
    long lo = 1000;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 128)
        lo = (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 4096 ?
              4096 : (long)rl.rlim_cur) - 64;
    if (lo < 3)
        return fd;
    int nfd = fcntl(fd, F_DUPFD_CLOEXEC, (int)lo);
    if (nfd < 0)
        return fd;
    close(fd);
    return nfd;
}

static int pwrite_all(rec_writer *w, struct iovec *iov, int n, uint64_t off)
{
    if (!fd_still_ours(w)) {
        if (!w->error)
            w->error = REC_EIO;
        errno = EBADF;
        return REC_EIO;
    }
    while (n > 0) {
        ssize_t r = pwritev(w->fd, iov, n, (off_t)off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return fail_io(w);
        }
        off += (uint64_t)r;
        while (n > 0 && (size_t)r >= iov->iov_len) {
            r -= (ssize_t)iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + r;
            iov->iov_len -= (size_t)r;
        }
    }
    return 0;
}

/*
 * One raw lz4 block, decodable on its own by LZ4_decompress_safe. Two ways
 * to produce it: LZ4_compress_fast_extState hashes 4 bytes for inputs under
 * 64 KiB; the streaming entry point on a freshly initialised stream (no
 * dictionary, so the block stays independent) hashes 5. On events of
 * several threads interleaved in one stream the 5-byte hash finds the
 * event of the same thread and is ~13% smaller; on one thread's events the
 * 4-byte one wins by ~4%. Every 16th block is compressed both ways and the
 * winner is used for the next 15.
 */
static int compress_with(rec_writer *w, int mode, const unsigned char *src, size_t len,
                         unsigned char *dst, size_t cap)
{
    if (mode == 0)
        return LZ4_compress_fast_extState(w->lz4, (const char *)src, (char *)dst,
                                          (int)len, (int)cap, 1);
    LZ4_stream_t *ls = LZ4_initStream(w->lz4, (size_t)LZ4_sizeofState());
    return ls ? LZ4_compress_fast_continue(ls, (const char *)src, (char *)dst,
                                           (int)len, (int)cap, 1) : 0;
}

static int compress(rec_writer *w, const unsigned char *src, size_t len)
{
    if (w->zprobe++ % 16)
        return compress_with(w, w->zmode, src, len, w->zbuf, w->zcap);
    int a = compress_with(w, 0, src, len, w->zbuf, w->zcap);
    int b = compress_with(w, 1, src, len, w->zbuf + w->zcap, w->zcap);
    if (b > 0 && (a <= 0 || b < a)) {
        w->zmode = 1;
        memcpy(w->zbuf, w->zbuf + w->zcap, (size_t)b);
        return b;
    }
    w->zmode = 0;
    return a;
}

/* The blocks of one flush go out in one write (each system call on a
 * journalling file system updates the inode: most of a flush's cost), at
 * most STAGE_MAX bytes at a time. Nothing points to them until the chunk
 * header is committed after them. */
#define STAGE_MAX (1u << 20)

/* Append len bytes (iov) at the end of the file. */
static int append(rec_writer *w, struct iovec *iov, int n, size_t len)
{
    int rc = pwrite_all(w, iov, n, w->file_off);
    if (rc)
        return rc;
    w->file_off += len;
    atomic_fetch_add_explicit(&w->bytes, len, memory_order_relaxed);
    return 0;
}

static int write_staged(rec_writer *w)
{
    size_t len = w->olen;
    struct iovec iov = { w->obuf, len };

    w->olen = 0;
    if (!len || w->error)
        return w->error;
    return append(w, &iov, 1, len);
}

static int stage_block(rec_writer *w, unsigned kind, unsigned flags,
                       const unsigned char *payload, size_t stored, size_t len);

/* The schema is the same in every chunk, and every chunk (a stream's
 * once a minute) carries it: compressed once per process, in lz4's high
 * compression mode (its default level: 13% smaller than the fast mode for
 * 50 us once; the highest level gains 0.1% more for 6 times the time). */
static unsigned char *meta_z;
static size_t meta_zlen;
static pthread_once_t meta_once = PTHREAD_ONCE_INIT;

static void compress_metadata(void)
{
    int bound = LZ4_compressBound((int)rec__metadata_len);
    unsigned char *z = malloc((size_t)bound);
    int n = z ? LZ4_compress_HC((const char *)rec__metadata, (char *)z,
                                (int)rec__metadata_len, bound, LZ4HC_CLEVEL_DEFAULT)
              : 0;
    if (n > 0 && (size_t)n < rec__metadata_len) {
        meta_z = z;
        meta_zlen = (size_t)n;
    } else {
        free(z);
    }
}

static int write_metadata(rec_writer *w)
{
    /* A borrowed schema is written once or a few times (rec-start's
     * replacement chunks): not worth compressing. */
    if (w->meta)
        return stage_block(w, REC_BLOCK_METADATA, 0, w->meta, w->meta_len,
                           w->meta_len);
    if (!w->opt.no_compress) {
        pthread_once(&meta_once, compress_metadata);
        if (meta_z)
            return stage_block(w, REC_BLOCK_METADATA, REC_BLOCK_LZ4, meta_z,
                               meta_zlen, rec__metadata_len);
    }
    return stage_block(w, REC_BLOCK_METADATA, 0, rec__metadata,
                       rec__metadata_len, rec__metadata_len);
}

/* The writer's scratch buffers grow by mmap and mremap, not realloc. A
 * sampler flushes on its own thread, and may finish the recording while
 * the thread that opened the writer is stopped inside malloc, holding its
 * arena's lock, by a signal handler that exits: realloc or free of a
 * buffer from that arena would wait for the lock forever. Sizes are
 * rounded up to pages; *cap is the usable size. */
static int scratch_grow(unsigned char **p, size_t *cap, size_t need)
{
    size_t c = *cap ? *cap : 16384;
    void *n;

    while (c < need)
        c *= 2;
    c = (c + 4095) & ~(size_t)4095;
    n = *p ? mremap(*p, *cap, c, MREMAP_MAYMOVE)
           : mmap(NULL, c, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                  -1, 0);
    if (n == MAP_FAILED)
        return -1;
    *p = n;
    *cap = c;
    return 0;
}

static void scratch_free(unsigned char *p, size_t cap)
{
    if (p)
        munmap(p, cap);
}

/* Stage one block (write_staged writes it). */
static int write_block(rec_writer *w, unsigned kind, const unsigned char *data, size_t len)
{
    if (w->error)
        return w->error;
    const unsigned char *payload = data;
    size_t stored = len;
    unsigned flags = 0;
    if (!w->opt.no_compress && len > 16) {
        size_t bound = (size_t)LZ4_compressBound((int)len);
        if (bound > w->zcap) {
            size_t both = 2 * w->zcap;      /* room for both ways */
            if (scratch_grow(&w->zbuf, &both, 2 * bound) < 0)
                return REC_ENOMEM;
            w->zcap = both / 2;
        }
        int z = compress(w, data, len);
        if (z > 0 && (size_t)z < len) {
            payload = w->zbuf;
            stored = (size_t)z;
            flags = REC_BLOCK_LZ4;
        }
    }
    return stage_block(w, kind, flags, payload, stored, len);
}

static int stage_block(rec_writer *w, unsigned kind, unsigned flags,
                       const unsigned char *payload, size_t stored, size_t len)
{
    if (w->error)
        return w->error;
    unsigned char h[REC_BLOCK_HEADER_SIZE] = { 0 };
    h[REC_BH_FLAGS] = (unsigned char)flags;
    h[REC_BH_KIND] = (unsigned char)kind;
    put_le32(h + REC_BH_STORED, (uint32_t)stored);
    put_le32(h + REC_BH_RAW, (uint32_t)len);
    uint32_t crc = rec__crc32c(0, h, REC_BH_CRC);
    put_le32(h + REC_BH_CRC, rec__crc32c(crc, payload, stored));
    size_t need = w->olen + sizeof h + stored;
    if (w->olen && need > STAGE_MAX) {
        int rc = write_staged(w);
        if (rc)
            return rc;
        need = sizeof h + stored;
    }
    if (need > w->ocap) {
        size_t c = w->ocap ? w->ocap : 16384;
        while (c < need)
            c *= 2;
        unsigned char *o = w->obuf;
        size_t oc = w->ocap;
        if (need > STAGE_MAX || scratch_grow(&o, &oc, c) < 0)
            o = NULL;
        if (!o) {
            /* Larger than a stage, or no memory for it: written alone. */
            struct iovec iov[2] = { { h, sizeof h }, { (void *)payload, stored } };
            int rc = write_staged(w);
            return rc ? rc : append(w, iov, 2, sizeof h + stored);
        }
        w->obuf = o;
        w->ocap = oc;
    }
    memcpy(w->obuf + w->olen, h, sizeof h);
    memcpy(w->obuf + w->olen + sizeof h, payload, stored);
    w->olen += sizeof h + stored;
    return 0;
}

static void build_header(rec_writer *w, unsigned char *h, uint32_t gen,
                         unsigned state, unsigned flags)
{
    uint64_t now = rec_now_ns() / w->opt.tick_ns;
    memset(h, 0, REC_CHUNK_HEADER_SIZE);
    memcpy(h + REC_CH_MAGIC, REC_MAGIC, REC_MAGIC_LEN);
    put_le16(h + REC_CH_MAJOR, REC_FORMAT_MAJOR);
    put_le16(h + REC_CH_MINOR, REC_FORMAT_MINOR);
    put_le32(h + REC_CH_HEADER_SIZE, REC_CHUNK_HEADER_SIZE);
    put_le32(h + REC_CH_GENERATION, gen);
    h[REC_CH_STATE] = (unsigned char)state;
    h[REC_CH_FLAGS] = (unsigned char)(flags | w->chunk_flags);
    put_le64(h + REC_CH_SIZE, w->file_off - w->chunk_off);
    put_le64(h + REC_CH_START_WALL, w->chunk_start_wall);
    put_le64(h + REC_CH_START_TICKS, w->chunk_start_ticks);
    put_le64(h + REC_CH_DURATION, now > w->chunk_start_ticks ? now - w->chunk_start_ticks : 0);
    put_le64(h + REC_CH_TICKS_PER_S, w->ticks_per_s);
    put_le32(h + REC_CH_INDEX, w->chunk_index);
    /* Followers tell a writer that died from one that is slow by this. */
    put_le32(h + REC_CH_WRITER_PID, w->pid);
    put_le32(h + REC_CH_CRC, rec__crc32c(0, h, REC_CH_CRC));
}

/* Seqlock update: generation odd, the fields after it (CRC computed for the
 * final even generation), generation even. Three writes so that a reader
 * that sees an even generation before and after its read saw one version. */
static int commit_header(rec_writer *w, unsigned state, unsigned flags)
{
    if (w->error)
        return w->error;
    unsigned char h[REC_CHUNK_HEADER_SIZE], g[4];
    put_le32(g, ++w->hdr_gen);
    struct iovec v1 = { g, 4 };
    int rc = pwrite_all(w, &v1, 1, w->chunk_off + REC_CH_GENERATION);
    if (!rc) {
        build_header(w, h, ++w->hdr_gen, state, flags);
        struct iovec v2 = { h + REC_CH_STATE, REC_CHUNK_HEADER_SIZE - REC_CH_STATE };
        rc = pwrite_all(w, &v2, 1, w->chunk_off + REC_CH_STATE);
    }
    if (!rc) {
        put_le32(g, w->hdr_gen);
        struct iovec v3 = { g, 4 };
        rc = pwrite_all(w, &v3, 1, w->chunk_off + REC_CH_GENERATION);
    }
    return rc;
}

static int chunk_start(rec_writer *w)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    w->chunk_start_ns = rec_now_ns();
    w->chunk_start_wall = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    w->chunk_start_ticks = w->chunk_start_ns / w->opt.tick_ns;
    w->chunk_off = w->file_off;
    w->hdr_gen = 0;
    /* Taken per chunk: the process that starts a chunk is its writer. */
    w->pid = (uint32_t)getpid();
    w->file_off += REC_CHUNK_HEADER_SIZE;
    unsigned char h[REC_CHUNK_HEADER_SIZE];
    build_header(w, h, w->hdr_gen, REC_STATE_OPEN, 0);
    struct iovec v = { h, sizeof h };
    int rc = pwrite_all(w, &v, 1, w->chunk_off);
    if (rc)
        return rc;
    atomic_fetch_add_explicit(&w->bytes, sizeof h, memory_order_relaxed);
    w->chunk_open = true;
    if ((rc = write_metadata(w)) ||
        (rc = write_staged(w)))
        return rc;
    return commit_header(w, REC_STATE_OPEN, 0);
}

/* Take what is ready: queued pool entries, full buffers and, if `streams`,
 * the committed bytes of every stream. With `rotate`, all streams are held
 * at once while the chunk generation moves on, so that every event marked
 * for the old generation is in this batch and none marked for the new one. */
static int collect(rec_writer *w, bool streams, bool rotate, struct batch *bt)
{
    int rc = 0;
    memset(bt, 0, sizeof *bt);
    if (streams) {
        pthread_mutex_lock(&w->slock);
        for (rec_stream *s = w->streams; s; s = s->next) {
            rec__stream_wait(s, REC__FLUSHER);
            if (s->buf && s->buf->len) {
                pthread_mutex_lock(&w->hlock);
                struct rec__buf *n = rec__buf_get(w);
                pthread_mutex_unlock(&w->hlock);
                if (n) {
                    if (bt->tail)
                        bt->tail->next = s->buf;
                    else
                        bt->head = s->buf;
                    bt->tail = s->buf;
                    s->buf->next = NULL;
                    s->buf = n;
                } else if (!rc) {
                    rc = REC_ENOMEM;
                }
            }
            if (!rotate)
                atomic_store_explicit(&s->state, REC__FREE, memory_order_release);
        }
    }
    pthread_mutex_lock(&w->hlock);
    bt->pending = w->pending;
    bt->npending = w->npending;
    w->pending = NULL;
    w->npending = w->cpending = 0;
    if (w->full_head) {             /* queued buffers are older: first */
        w->full_tail->next = bt->head;
        if (!bt->tail)
            bt->tail = w->full_tail;
        bt->head = w->full_head;
        w->full_head = w->full_tail = NULL;
    }
    if (rotate)
        atomic_store_explicit(&w->gen, atomic_load_explicit(&w->gen, memory_order_relaxed) + 1,
                              memory_order_relaxed);
    pthread_mutex_unlock(&w->hlock);
    if (streams) {
        if (rotate)
            for (rec_stream *s = w->streams; s; s = s->next)
                atomic_store_explicit(&s->state, REC__FREE, memory_order_release);
        pthread_mutex_unlock(&w->slock);
    }
    return rc;
}

static int write_pool_blocks(rec_writer *w, struct batch *bt)
{
    size_t i = 0;
    while (i < bt->npending) {
        size_t len = 0;
        for (; i < bt->npending; i++) {
            struct rec__entry *e = bt->pending[i];
            if (len && len + e->elen > POOL_BLOCK_RAW)
                break;
            if (len + e->elen > w->pcap) {
                size_t c = w->pcap ? w->pcap : 4096;
                while (c < len + e->elen)
                    c *= 2;
                if (scratch_grow(&w->pbuf, &w->pcap, c) < 0)
                    return REC_ENOMEM;
            }
            memcpy(w->pbuf + len, e->enc, e->elen);
            len += e->elen;
        }
        int rc = write_block(w, REC_BLOCK_POOL, w->pbuf, len);
        if (rc)
            return rc;
    }
    return 0;
}

static int write_batch(rec_writer *w, struct batch *bt)
{
    int rc = write_pool_blocks(w, bt);
    for (struct rec__buf *b = bt->head; b && !rc; b = b->next)
        rc = write_block(w, REC_BLOCK_EVENTS, b->data, b->len);
    int r2 = write_staged(w);
    rc = rc ? rc : r2;
    free(bt->pending);
    pthread_mutex_lock(&w->hlock);
    for (struct rec__buf *b = bt->head, *n; b; b = n) {
        n = b->next;
        rec__buf_put(w, b);
    }
    pthread_mutex_unlock(&w->hlock);
    bt->head = bt->tail = NULL;
    bt->pending = NULL;
    return rc;
}

/* Finish the chunk; start the next one unless `last`. */
static int rotate_locked(rec_writer *w, bool last)
{
    struct batch bt;
    int rc = collect(w, true, true, &bt);
    int r2 = write_batch(w, &bt);
    rc = rc ? rc : r2;
    if (!w->chunk_open)
        return rc ? rc : w->error;
    r2 = commit_header(w, REC_STATE_FINISHED, last ? REC_CHUNK_LAST : 0);
    rc = rc ? rc : r2;
    w->chunk_open = false;
    if (!last && !w->error) {
        w->chunk_index++;
        r2 = chunk_start(w);
        rc = rc ? rc : r2;
    }
    return rc;
}

static int after_write(rec_writer *w, bool age)
{
    uint64_t size = w->file_off - w->chunk_off;
    if (w->chunk_open && size >= w->opt.max_chunk_bytes)
        return rotate_locked(w, false);
    if (age && w->opt.max_chunk_age_ns &&
        rec_now_ns() - w->chunk_start_ns >= w->opt.max_chunk_age_ns)
        return rotate_locked(w, false);
    return commit_header(w, REC_STATE_OPEN, 0);
}

/* Every entry that may write takes the lock this way: its first write
 * checks the fd again (fd_still_ours). */
static void lock_for_writes(rec_writer *w)
{
    pthread_mutex_lock(&w->wlock);
    w->fd_checked = false;
}

/* Write queued entries and full buffers (not the streams' current ones). */
int rec__writer_drain(rec_writer *w)
{
    struct batch bt;
    lock_for_writes(w);
    int rc = collect(w, false, false, &bt);
    if (bt.head || bt.npending) {
        int r2 = write_batch(w, &bt);
        rc = rc ? rc : r2;
        if (!rc)
            rc = after_write(w, false);
    } else {
        free(bt.pending);
    }
    pthread_mutex_unlock(&w->wlock);
    return rc;
}

int rec_writer_flush(rec_writer *w)
{
    if (!w)
        return REC_EINVAL;
    struct batch bt;
    lock_for_writes(w);
    int rc = collect(w, true, false, &bt);
    int r2 = write_batch(w, &bt);
    rc = rc ? rc : r2;
    if (!rc)
        rc = after_write(w, true);
    pthread_mutex_unlock(&w->wlock);
    return rc;
}

int rec_writer_rotate(rec_writer *w)
{
    if (!w)
        return REC_EINVAL;
    lock_for_writes(w);
    int rc = rotate_locked(w, false);
    pthread_mutex_unlock(&w->wlock);
    return rc;
}

uint64_t rec_writer_bytes(const rec_writer *w)
{
    return w ? atomic_load_explicit(&((rec_writer *)w)->bytes, memory_order_relaxed) : 0;
}

/* The generation moves on (under the stream locks) exactly when a rotation
 * takes the streams' events for the old chunk: events emitted after it
 * goes up are in the next chunk. It counts from 1 for chunk 0. */
uint32_t rec_writer_chunk_index(const rec_writer *w)
{
    return w ? atomic_load_explicit(&((rec_writer *)w)->gen, memory_order_relaxed) - 1 : 0;
}

static void writer_free(rec_writer *w)
{
    while (w->streams) {
        rec_stream *s = w->streams;
        w->streams = s->next;
        free(s->buf);
        free(s);
    }
    for (struct rec__buf *b = w->spare, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    for (struct rec__buf *b = w->full_head, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    rec__pools_free(w);
    rec__schema_free(w->schema);
    free(w->pending);
    scratch_free(w->zbuf, 2 * w->zcap);
    scratch_free(w->obuf, w->ocap);
    scratch_free(w->pbuf, w->pcap);
    free(w->lz4);
    pthread_mutex_destroy(&w->wlock);
    pthread_mutex_destroy(&w->slock);
    pthread_mutex_destroy(&w->hlock);
    free(w);
}

static int writer_open(rec_writer **out, const char *path, int fd,
                       const rec_writer_options *opt, const rec__seal_at *at,
                       const rec__foreign *f);

int rec_writer_open(rec_writer **out, const char *path, const rec_writer_options *opt)
{
    rec_writer_options o;
    int rc;
    if (!out || !path)
        return REC_EINVAL;
    if ((rc = options_in(&o, opt)))
        return rc;
    return writer_open(out, path, -1, &o, NULL, NULL);
}

/* The caller created (or opened for append) the file itself: exclusively,
 * relative to a directory, with its own mode. */
int rec_writer_open_fd(rec_writer **out, int fd, const rec_writer_options *opt)
{
    rec_writer_options o;
    int rc = options_in(&o, opt);
    if (rc)
        return rc;
    if (!out || fd < 0 || o.overwrite)
        return REC_EINVAL;
    return writer_open(out, NULL, fd, &o, NULL, NULL);
}

int rec__writer_open_at(rec_writer **out, int fd, const rec__seal_at *at)
{
    rec_writer_options o;
    options_in(&o, NULL);
    return writer_open(out, NULL, fd, &o, at, NULL);
}

int rec__writer_open_schema(rec_writer **out, int fd, const rec_writer_options *opt,
                            const rec__foreign *f)
{
    rec_writer_options o;
    int rc = options_in(&o, opt);
    if (!rc && (!out || fd < 0 || o.overwrite))
        rc = REC_EINVAL;
    if (rc) {
        rec__schema_free(f->schema);
        if (fd >= 0)
            close(fd);
        return rc;
    }
    return writer_open(out, NULL, fd, &o, NULL, f);
}

/* opt: the caller's options as options_in() made them. */
static int writer_open(rec_writer **out, const char *path, int fd,
                       const rec_writer_options *opt, const rec__seal_at *at,
                       const rec__foreign *f)
{
    *out = NULL;
    rec_writer_options o = *opt;
    if (o.buffer_bytes < 64 || o.buffer_bytes > REC_MAX_BLOCK_RAW ||
        1000000000u % o.tick_ns != 0 || (o.overwrite && o.append)) {
        if (fd >= 0)
            close(fd);
        if (f)
            rec__schema_free(f->schema);
        return REC_EINVAL;
    }
    rec_writer *w = calloc(1, sizeof *w);
    if (!w) {
        if (fd >= 0)
            close(fd);
        if (f)
            rec__schema_free(f->schema);
        return REC_ENOMEM;
    }
    w->fd = -1;
    if (f) {
        w->schema = f->schema;      /* writer_free() frees it from here on */
        w->meta = f->meta;
        w->meta_len = f->meta_len;
    }
    w->opt = o;
    w->ticks_per_s = 1000000000u / o.tick_ns;
    atomic_init(&w->gen, 1);
    pthread_mutex_init(&w->wlock, NULL);
    pthread_mutex_init(&w->slock, NULL);
    pthread_mutex_init(&w->hlock, NULL);
    int rc = f ? rec__pools_init(w, f->pool_ids, f->npools)
               : rec__pools_init(w, NULL, 0);
    if (!rc && !(w->lz4 = malloc((size_t)LZ4_sizeofState())))
        rc = REC_ENOMEM;
    if (rc) {
        if (fd >= 0)
            close(fd);
        writer_free(w);
        return rc;
    }
    int flags = O_RDWR | O_CREAT | O_CLOEXEC;
    if (o.overwrite)
        flags |= O_TRUNC;
    else if (!o.append)
        flags |= O_EXCL;
    w->fd = path ? open(path, flags, 0666) : fd;
    if (w->fd < 0) {
        rc = errno == EEXIST ? REC_EEXIST : REC_EIO;
        int e = errno;
        writer_free(w);
        errno = e;
        return rc;
    }
    w->fd = move_fd_high(w->fd);
    {
        struct stat st;
        if (fstat(w->fd, &st) < 0) {
            int e = errno;
            close(w->fd);
            writer_free(w);
            errno = e;
            return REC_EIO;
        }
        w->fd_dev = st.st_dev;
        w->fd_ino = st.st_ino;
        if (o.append)
            w->file_off = (uint64_t)st.st_size;
    }
    if (at) {
        w->file_off = at->offset;
        w->chunk_index = at->index;
        w->chunk_flags = at->flags;
    }
    if ((rc = chunk_start(w))) {
        int e = errno;
        close(w->fd);
        writer_free(w);
        errno = e;
        return rc;
    }
    *out = w;
    return 0;
}

int rec_writer_fd(const rec_writer *w)
{
    return w ? w->fd : -1;
}

int rec_writer_finish(rec_writer *w)
{
    if (!w)
        return REC_EINVAL;
    lock_for_writes(w);
    if (!w->finished) {
        int rc = rotate_locked(w, true);
        int e = errno;
        /* A number that no longer names our file is the program's now
         * (checked again: it is closed next). */
        w->fd_checked = false;
        if (!fd_still_ours(w)) {
            if (!rc)
                rc = REC_EIO;
            e = EBADF;
        } else if (close(w->fd) < 0 && !rc) {
            e = errno;
            rc = REC_EIO;
        }
        w->fd_lost = true;          /* closed: never written again */
        w->finished = true;
        w->finish_rc = rc ? rc : w->error;
        w->finish_errno = e;
    }
    int rc = w->finish_rc;
    int e = w->finish_errno;
    pthread_mutex_unlock(&w->wlock);
    errno = e;
    return rc;
}

int rec_writer_close(rec_writer *w)
{
    if (!w)
        return REC_EINVAL;
    int rc = rec_writer_finish(w);
    int e = errno;
    writer_free(w);
    errno = e;
    return rc;
}
