/*
 * tools/start/start-dir.c - rec-start --max-size / --max-age: a recording
 * kept as a directory of chunk files, the oldest deleted (a flight
 * recorder).
 *
 * The sampler records into a private in-memory file, as for a stream
 * (start-stream.c), its chunks rotated by age (--chunk-age) and size.
 * rec-start mirrors the chunk being written into a file of its own,
 * DIR/NNNNNNNNNNNN.rec, as librecord's rec_relay gives it: a first header
 * for the header alone, then after each flush the new blocks first and
 * the header next, as the writer itself orders them, so that a reader of
 * DIR reads up to the last flush. A chunk file is created under a dot
 * name and renamed once it holds a header: readers never meet an empty
 * one. When
 * the chunk is finished, its file is complete and the in-memory copy is
 * released; then whole chunk files are deleted, oldest first, while the
 * finished ones add up to more than --max-size or ended longer than
 * --max-age ago. Disk use is thus at most max-size plus the chunk being
 * written, which the chunk size limit bounds.
 */
#include <config.h>
#include "start.h"

#include <rec/record.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *prog = "rec-start";

typedef struct kept {
    uint64_t seq, size, end_ns;     /* end: wall clock of its last flush */
} kept;

struct start_dir {
    int mfd;                    /* what the sampler writes */
    rec_relay *rl;              /* its chunks, piece by piece */
    int dfd;                    /* DIR */
    char *path;
    uint64_t max_size, max_age_ns;
    uint64_t seq;               /* the number of the chunk being mirrored */
    uint64_t coff;              /* its offset in mfd */
    int cfd;                    /* its file, -1 until its header came */
    kept *files;                /* finished chunk files, oldest first */
    size_t nfiles, cap;
    uint64_t kept_bytes, deleted_files, deleted_bytes;
    uint64_t last_age_check_ns;
    start_accounted acc;        /* what deleted files accounted for */
    start_tally tally;
    bool broken;                /* a write failed: nothing more is kept */
    bool lost;                  /* the sampler's output cannot be read */
    bool unfinished;
    uint8_t io[256 << 10];
};

static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void name_of(char *buf, size_t n, uint64_t seq, bool tmp)
{
    snprintf(buf, n, "%s%012" PRIu64 ".rec", tmp ? "." : "", seq);
}

/* A *.rec name: what readers take as a chunk file. */
static bool is_chunk_name(const char *n)
{
    size_t l = strlen(n);
    return n[0] != '.' && l > 4 && !strcmp(n + l - 4, ".rec");
}

/* DIR, created 0700, or an existing directory without a recording (with
 * force: its chunk files removed). */
static int open_dir(const char *path, bool force, char *msg, size_t msize)
{
    struct stat st;
    int fd;

    if (mkdir(path, 0700) < 0 && errno != EEXIST) {
        snprintf(msg, msize, "%s: cannot create the directory: %s", path,
                 strerror(errno));
        return -1;
    }
    fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(msg, msize, "%s: %s", path, errno == ENOTDIR || errno == ELOOP
                 ? "not a directory (with --max-size or --max-age, -o names "
                   "a directory of chunk files)" : strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    DIR *d = dup >= 0 ? fdopendir(dup) : NULL;
    struct dirent *e;
    size_t found = 0;
    if (!d) {
        snprintf(msg, msize, "%s: %s", path, strerror(errno));
        if (dup >= 0)
            close(dup);
        close(fd);
        return -1;
    }
    while ((e = readdir(d))) {
        if (!is_chunk_name(e->d_name))
            continue;
        if (force && unlinkat(fd, e->d_name, 0) == 0)
            continue;
        found++;
    }
    closedir(d);
    if (found) {
        snprintf(msg, msize, "%s: holds a recording (%zu chunk file%s); -f "
                 "replaces it", path, found, found == 1 ? "" : "s");
        close(fd);
        return -1;
    }
    return fd;
}

int start_dir_open(start_dir **out, const char *path, bool force,
                   uint64_t max_size, uint64_t max_age_ns, char *msg,
                   size_t msize)
{
    start_dir *d = calloc(1, sizeof *d);

    *out = NULL;
    if (!d || !(d->path = strdup(path))) {
        free(d);
        snprintf(msg, msize, "out of memory");
        return -1;
    }
    d->cfd = -1;
    if ((d->dfd = open_dir(path, force, msg, msize)) < 0) {
        free(d->path);
        free(d);
        return -1;
    }
    if ((d->mfd = start_backing_file(msg, msize)) < 0) {
        close(d->dfd);
        free(d->path);
        free(d);
        return -1;
    }
    int rc = rec_relay_open(&d->rl, d->mfd, NULL);
    if (rc < 0) {
        snprintf(msg, msize, "cannot relay the sampler's output: %s",
                 rec_strerror(rc));
        close(d->mfd);
        close(d->dfd);
        free(d->path);
        free(d);
        return -1;
    }
    d->max_size = max_size ? max_size : UINT64_MAX;
    d->max_age_ns = max_age_ns;
    start_tally_init(&d->tally);
    *out = d;
    return 0;
}

int start_dir_memfd(const start_dir *d)
{
    return d->mfd;
}

static void failed(start_dir *d, const char *what, uint64_t seq)
{
    char n[64];
    name_of(n, sizeof n, seq, false);
    fprintf(stderr, "%s: %s/%s: cannot %s: %s; the recording in %s stops "
            "here, the program goes on\n", prog, d->path, n, what,
            strerror(errno), d->path);
    d->broken = true;
}

static int write_all(int fd, const void *p, size_t n, uint64_t off)
{
    while (n) {
        ssize_t k = pwrite(fd, p, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k == 0)
                errno = ENOSPC;
            return -1;
        }
        p = (const uint8_t *)p + k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return 0;
}

/* Oldest first, while the finished files exceed the size, or end before
 * the age. */
static void retain(start_dir *d, uint64_t now)
{
    size_t drop = 0;
    uint64_t bytes = d->kept_bytes;

    while (drop < d->nfiles &&
           (bytes > d->max_size ||
            (d->max_age_ns && d->files[drop].end_ns + d->max_age_ns < now))) {
        char n[64], p[PATH_MAX];
        kept *k = &d->files[drop];
        name_of(n, sizeof n, k->seq, false);
        snprintf(p, sizeof p, "%s/%s", d->path, n);
        /* What the sealing of a killed program counts as recorded. */
        start_account(p, &d->acc);
        if (unlinkat(d->dfd, n, 0) < 0 && errno != ENOENT)
            fprintf(stderr, "%s: %s: cannot delete: %s\n", prog, p,
                    strerror(errno));
        bytes -= k->size;
        d->deleted_files++;
        d->deleted_bytes += k->size;
        drop++;
    }
    if (drop) {
        memmove(d->files, d->files + drop, (d->nfiles - drop) * sizeof *d->files);
        d->nfiles -= drop;
        d->kept_bytes = bytes;
    }
    d->last_age_check_ns = now;
}

/* A finished chunk file; end: the wall clock of its last flush. */
static int keep(start_dir *d, uint64_t size, uint64_t end)
{
    if (d->nfiles == d->cap) {
        size_t c = d->cap ? 2 * d->cap : 64;
        kept *f = realloc(d->files, c * sizeof *f);
        if (!f)
            return -1;
        d->files = f;
        d->cap = c;
    }
    d->files[d->nfiles++] = (kept){ d->seq, size, end };
    d->kept_bytes += size;
    return 0;
}

/* A new chunk's file: its first header under a dot name, then the real
 * name. */
static int create_chunk(start_dir *d, const rec_relay_piece *pc)
{
    char tmp[64], n[64];

    name_of(tmp, sizeof tmp, d->seq, true);
    name_of(n, sizeof n, d->seq, false);
    d->cfd = openat(d->dfd, tmp, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW |
                    O_CLOEXEC, 0600);
    if (d->cfd < 0)
        return -1;
    if (write_all(d->cfd, pc->data, (size_t)pc->len, pc->pos) < 0 ||
        renameat(d->dfd, tmp, d->dfd, n) < 0) {
        int e = errno;
        unlinkat(d->dfd, tmp, 0);
        close(d->cfd);
        d->cfd = -1;
        errno = e;
        return -1;
    }
    d->coff = pc->chunk.offset;
    return 0;
}

/* Blocks the sampler committed, into the chunk's file. */
static int copy_blocks(start_dir *d, const rec_relay_piece *pc)
{
    for (uint64_t done = 0; done < pc->len;) {
        size_t n = pc->len - done < sizeof d->io ? (size_t)(pc->len - done)
                                                 : sizeof d->io;
        ssize_t got = pread(d->mfd, d->io, n, (off_t)(pc->source + done));
        if (got <= 0) {
            errno = got < 0 ? errno : EIO;
            failed(d, "copy the sampler's data into", d->seq);
            return -1;
        }
        if (write_all(d->cfd, d->io, (size_t)got, pc->pos + done) < 0) {
            failed(d, "write", d->seq);
            return -1;
        }
        done += (uint64_t)got;
    }
    return 0;
}

static void release(start_dir *d, const rec_chunk_info *c)
{
    fallocate(d->mfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
              (off_t)c->offset, (off_t)c->size);
}

/* The chunk's file is complete: counted, kept, its memory released, and
 * retention applied. */
static void chunk_done(start_dir *d, const rec_relay_piece *pc)
{
    start_tally_chunk(&d->tally, d->mfd, pc->chunk.offset);
    close(d->cfd);
    d->cfd = -1;
    if (keep(d, pc->chunk.size, pc->chunk.start_ns + pc->chunk.duration_ns) < 0) {
        errno = ENOMEM;
        failed(d, "keep track of", d->seq);
    }
    release(d, &pc->chunk);
    d->seq++;
    retain(d, wall_ns());
}

/* Mirror what the sampler committed; at_end: the program is gone. */
static void mirror(start_dir *d, bool at_end)
{
    rec_relay_piece pc;
    int rc = 0;

    if (at_end)
        rec_relay_writer_gone(d->rl);
    while (!d->lost && (rc = rec_relay_next(d->rl, &pc)) > 0) {
        if (d->broken) {
            /* Nothing more can be written (said once): finished chunks
             * are released, so that memory does not grow instead. */
            if (pc.complete)
                release(d, &pc.chunk);
            continue;
        }
        if (pc.kind == REC_RELAY_BEGIN) {
            if (create_chunk(d, &pc) < 0)
                failed(d, "create", d->seq);
        } else if (pc.kind == REC_RELAY_BLOCKS) {
            copy_blocks(d, &pc);
        } else if (pc.kind == REC_RELAY_HEADER) {
            /* One write: a reader that reads it torn finds a checksum
             * mismatch and reads again. */
            if (write_all(d->cfd, pc.data, (size_t)pc.len, pc.pos) < 0)
                failed(d, "write", d->seq);
        }
        if (d->broken) {
            if (pc.complete)
                release(d, &pc.chunk);
        } else if (pc.complete) {
            chunk_done(d, &pc);
        }
    }
    if (rc < 0) {
        fprintf(stderr, "%s: %s: the sampler's output cannot be relayed "
                "(%s): the recording stops here\n", prog, d->path,
                rec_relay_message(d->rl));
        d->broken = d->lost = true;
    }
    if (at_end && d->cfd >= 0 && !d->broken)
        d->unfinished = true;
}

void start_dir_work(start_dir *d)
{
    mirror(d, false);
    /* An idle program's chunks may end rarely: ages are looked at every
     * second too. */
    if (d->max_age_ns) {
        uint64_t now = wall_ns();
        if (now - d->last_age_check_ns >= 1000000000u)
            retain(d, now);
    }
}

int start_dir_finish(start_dir *d, pid_t pid, const struct rusage *ru)
{
    int sealed = 0;

    mirror(d, true);
    if (d->cfd >= 0 && d->broken) {
        close(d->cfd);      /* its file ends at the last write that worked */
        d->cfd = -1;
    } else if (d->cfd >= 0) {
        /* The writer died in its chunk: sealed as a file would be, with
         * what the deleted and the kept files account for. */
        char n[64], p[PATH_MAX];
        start_accounted acc = d->acc;
        name_of(n, sizeof n, d->seq, false);
        snprintf(p, sizeof p, "%s/%s", d->path, n);
        close(d->cfd);
        d->cfd = -1;
        for (size_t i = 0; i < d->nfiles; i++) {
            char kn[64], kp[PATH_MAX];
            name_of(kn, sizeof kn, d->files[i].seq, false);
            snprintf(kp, sizeof kp, "%s/%s", d->path, kn);
            start_account(kp, &acc);
        }
        sealed = start_seal(p, pid, ru, &acc) > 0;
        start_tally_chunk(&d->tally, d->mfd, d->coff);
        struct stat st;
        if (stat(p, &st) == 0)
            d->kept_bytes += (uint64_t)st.st_size;
        d->nfiles++;
    }
    return sealed;
}

void start_dir_summary(start_dir *d, bool signaled, bool sealed,
                       const char *why)
{
    char label[PATH_MAX + 64];
    const char *state = d->broken ? " (stopped early: see the error above)"
                        : sealed ? " (sealed: the program could not finish it)"
                        : d->unfinished ? (signaled ? " (unfinished: up to the "
                                           "last flush)" : " (unfinished)")
                        : "";

    snprintf(label, sizeof label, "%s/ (%zu chunk file%s", d->path,
             d->nfiles, d->nfiles == 1 ? "" : "s");
    size_t l = strlen(label);
    if (d->deleted_files)
        snprintf(label + l, sizeof label - l, "; %" PRIu64 " older deleted, "
                 "%.1f KiB", d->deleted_files, (double)d->deleted_bytes / 1024);
    l = strlen(label);
    snprintf(label + l, sizeof label - l, ")");
    start_tally_print(&d->tally, label, d->kept_bytes, state, why);
}

void start_dir_free(start_dir *d)
{
    if (!d)
        return;
    if (d->cfd >= 0)
        close(d->cfd);
    close(d->dfd);
    rec_relay_close(d->rl);
    close(d->mfd);
    start_tally_free(&d->tally);
    free(d->files);
    free(d->path);
    free(d);
}
