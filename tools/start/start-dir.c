/*
 * tools/start/start-dir.c - rec-start --max-size / --max-age: a recording
 * kept as a directory of chunk files, the oldest deleted (a flight
 * recorder).
 *
 * The sampler records into a private in-memory file, as for a stream
 * (start-stream.c), its chunks rotated by age (--chunk-age) and size.
 * rec-start mirrors the chunk being written into a file of its own,
 * DIR/NNNNNNNNNNNN.rec: after each flush, the new blocks first, then the
 * header, as the writer itself orders them, so that a reader of DIR reads
 * up to the last flush. A chunk file is created under a dot name and
 * renamed once it holds a header: readers never meet an empty one. When
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

#include "format.h"

static const char *prog = "rec-start";

typedef struct kept {
    uint64_t seq, size, end_ns;     /* end: wall clock of its last flush */
} kept;

struct start_dir {
    int mfd;                    /* what the sampler writes */
    int dfd;                    /* DIR */
    char *path;
    uint64_t max_size, max_age_ns;
    uint64_t seq;               /* the number of the chunk being mirrored */
    uint64_t coff;              /* its offset in mfd */
    int cfd;                    /* its file, -1 until its header came */
    uint64_t copied;            /* bytes of it in the file */
    uint8_t chdr[REC_CHUNK_HEADER_SIZE];    /* its header as last written */
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

static int keep(start_dir *d, uint64_t size, const uint8_t *h)
{
    if (d->nfiles == d->cap) {
        size_t c = d->cap ? 2 * d->cap : 64;
        kept *f = realloc(d->files, c * sizeof *f);
        if (!f)
            return -1;
        d->files = f;
        d->cap = c;
    }
    uint64_t tps = start_le64(h + REC_CH_TICKS_PER_S), dur = start_le64(h + REC_CH_DURATION);
    uint64_t end = start_le64(h + REC_CH_START_WALL) +
                   (tps ? (uint64_t)((unsigned __int128)dur * 1000000000u / tps) : 0);
    d->files[d->nfiles++] = (kept){ d->seq, size, end };
    d->kept_bytes += size;
    return 0;
}

/* A new chunk's file: its first header and blocks under a dot name, then
 * the real name. */
static int create_chunk(start_dir *d, const uint8_t *h)
{
    char tmp[64], n[64];

    name_of(tmp, sizeof tmp, d->seq, true);
    name_of(n, sizeof n, d->seq, false);
    d->cfd = openat(d->dfd, tmp, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW |
                    O_CLOEXEC, 0600);
    if (d->cfd < 0)
        return -1;
    d->copied = REC_CHUNK_HEADER_SIZE;
    if (write_all(d->cfd, h, REC_CHUNK_HEADER_SIZE, 0) < 0 ||
        renameat(d->dfd, tmp, d->dfd, n) < 0) {
        int e = errno;
        unlinkat(d->dfd, tmp, 0);
        close(d->cfd);
        d->cfd = -1;
        errno = e;
        return -1;
    }
    memcpy(d->chdr, h, sizeof d->chdr);
    return 0;
}

/* Mirror what the sampler committed; at_end: the program is gone. */
static void mirror(start_dir *d, bool at_end)
{
    uint8_t h[REC_CHUNK_HEADER_SIZE];

    while (!d->lost) {
        int k = start_peek_header(d->mfd, d->coff, at_end, h);
        if (k < 0) {
            fprintf(stderr, "%s: %s: no chunk at offset %" PRIu64 " of the "
                    "sampler's output: the recording stops here\n", prog,
                    d->path, d->coff);
            d->broken = d->lost = true;
        }
        if (k <= 0)
            return;
        uint64_t size = start_le64(h + REC_CH_SIZE);
        if (d->broken) {
            /* Nothing more can be written (said once): finished chunks
             * are released, so that memory does not grow instead. */
            if (h[REC_CH_STATE] != REC_STATE_FINISHED)
                return;
            fallocate(d->mfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                      (off_t)d->coff, (off_t)size);
            d->coff += size;
            continue;
        }
        if (d->cfd < 0 && create_chunk(d, h) < 0) {
            failed(d, "create", d->seq);
            return;
        }
        while (d->copied < size) {
            size_t n = size - d->copied < sizeof d->io
                       ? (size_t)(size - d->copied) : sizeof d->io;
            ssize_t got = pread(d->mfd, d->io, n, (off_t)(d->coff + d->copied));
            if (got <= 0) {
                errno = got < 0 ? errno : EIO;
                failed(d, "copy the sampler's data into", d->seq);
                return;
            }
            if (write_all(d->cfd, d->io, (size_t)got, d->copied) < 0) {
                failed(d, "write", d->seq);
                return;
            }
            d->copied += (uint64_t)got;
        }
        /* The header last, as the writer orders it: a reader that sees it
         * finds the blocks it describes. One write: a reader that reads it
         * torn finds a checksum mismatch and reads again. */
        if (memcmp(h, d->chdr, sizeof h) != 0) {
            if (write_all(d->cfd, h, sizeof h, 0) < 0) {
                failed(d, "write", d->seq);
                return;
            }
            memcpy(d->chdr, h, sizeof h);
        }
        if (h[REC_CH_STATE] != REC_STATE_FINISHED) {
            if (at_end)
                d->unfinished = true;
            return;
        }
        start_tally_chunk(&d->tally, d->mfd, d->coff);
        close(d->cfd);
        d->cfd = -1;
        if (keep(d, size, h) < 0) {
            errno = ENOMEM;
            failed(d, "keep track of", d->seq);
            return;
        }
        fallocate(d->mfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  (off_t)d->coff, (off_t)size);
        d->coff += size;
        d->seq++;
        retain(d, wall_ns());
    }
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
    close(d->mfd);
    start_tally_free(&d->tally);
    free(d->files);
    free(d->path);
    free(d);
}
