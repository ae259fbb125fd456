/*
 * libsampler/unwind-cache.c - unwind tables shared across processes: one
 * file per module build-id in a per-user directory, mapped read-only by
 * every process that records code of that module.
 *
 * A table is a pure function of the module's bytes (its build-id) and of
 * the code that built it (libsampler's own build-id, kept in the header):
 * a C build under rec-start -c runs cc1 hundreds of times, and each
 * process would otherwise spend milliseconds rebuilding the same table.
 *
 * Trust: the handler walks these rows, so a file is used only if it is
 * the owner's own, in a directory nobody else can write, and if it holds
 * together: exact size, header, checksum, every page index inside the
 * rows. Files are written whole under a temporary name and renamed into
 * place, never rewritten in place: a mapping never sees a file shrink.
 * Only the sampler thread reads and writes here, under the tables' lock.
 *
 * Layout (host byte order; the cache never leaves the machine):
 *   header (struct uwc_header), rows (nrows * 12 bytes), pages (npages
 *   * 4 bytes).
 */
#include <config.h>

#include "internal.h"
#include "unwind.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define UWC_MAGIC     "RECUWT\0\1"
#define UWC_MAX_BYTES (1ull << 30)   /* no module's table comes near */
#define UWC_MAX_FILES 512            /* then the oldest half goes */

struct uwc_header {
    char magic[8];
    uint32_t header_size;
    uint32_t row_size;
    uint64_t base, nrows, npages;
    uint64_t checksum;               /* of rows and pages */
    char module[136];                /* the module's build-id, hex */
    char builder[136];               /* libsampler's build-id, hex */
};
_Static_assert(sizeof(struct uwc_header) % 8 == 0, "rows start aligned");

static char *dir;                    /* NULL: no cache */
static char builder[136];
static bool configured;

/* 64-bit FNV-1a over 8-byte words: finds a damaged or foreign file; the
 * structural checks below are what keep the handler's reads in bounds. */
static uint64_t checksum(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i = 0;

    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001b3ull;
    }
    for (; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* A directory of ours that only we can enter (created if missing). */
static bool private_dir(const char *path)
{
    struct stat st;

    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        return false;
    return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
           st.st_uid == geteuid() && (st.st_mode & 077) == 0;
}

void recs__uwc_configure(const char *setting, const char *self_build_id)
{
    const char *base;
    char path[PATH_MAX];

    free(dir);
    dir = NULL;
    configured = true;
    if (!self_build_id || !*self_build_id ||
        strlen(self_build_id) >= sizeof builder)
        return;
    snprintf(builder, sizeof builder, "%s", self_build_id);
    if (setting) {
        if (!*setting || !strcmp(setting, "off"))
            return;
        if (strlen(setting) >= sizeof path || !private_dir(setting))
            return;
        dir = strdup(setting);
        return;
    }
    if ((base = getenv("XDG_CACHE_HOME")) && *base == '/') {
        if (snprintf(path, sizeof path, "%s", base) >= (int)sizeof path)
            return;
    } else if ((base = getenv("HOME")) && *base == '/') {
        if (snprintf(path, sizeof path, "%s/.cache", base) >= (int)sizeof path)
            return;
    } else {
        return;
    }
    /* The parent may be shared (a system-wide XDG_CACHE_HOME): only its
     * existence matters, ours is the private part. */
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        return;
    if (strlen(path) + sizeof "/rec" > sizeof path)
        return;
    strcat(path, "/rec");
    if (private_dir(path))
        dir = strdup(path);
}

bool recs__uwc_enabled(void)
{
    return dir != NULL;
}

static bool file_name(char *out, size_t size, const char *build_id)
{
    if (!dir || !build_id || !*build_id || strlen(build_id) >= 136 ||
        strspn(build_id, "0123456789abcdef") != strlen(build_id))
        return false;
    return snprintf(out, size, "%s/%s.uwt", dir, build_id) < (int)size;
}

recs_uw_table *recs__uwc_load(const char *build_id)
{
    char path[PATH_MAX];
    struct stat st;
    const struct uwc_header *h;
    recs_uw_table *t = NULL;
    unsigned char *map;
    size_t len, body;
    int fd;

    if (!file_name(path, sizeof path, build_id))
        return NULL;
    fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != geteuid() || (st.st_mode & 077) ||
        (uint64_t)st.st_size < sizeof *h ||
        (uint64_t)st.st_size > UWC_MAX_BYTES) {
        close(fd);
        return NULL;
    }
    len = (size_t)st.st_size;
    map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return NULL;
    h = (const struct uwc_header *)map;
    body = len - sizeof *h;
    if (memcmp(h->magic, UWC_MAGIC, 8) || h->header_size != sizeof *h ||
        h->row_size != sizeof(recs_uw_row) || h->nrows == 0 ||
        h->nrows > UINT32_MAX || h->npages > UINT32_MAX ||
        h->nrows * sizeof(recs_uw_row) + h->npages * 4 != body ||
        memchr(h->module, 0, sizeof h->module) == NULL ||
        memchr(h->builder, 0, sizeof h->builder) == NULL ||
        strcmp(h->module, build_id) || strcmp(h->builder, builder) ||
        checksum(map + sizeof *h, body) != h->checksum)
        goto bad;
    {
        const recs_uw_row *rows = (const recs_uw_row *)(map + sizeof *h);
        const uint32_t *pages = (const uint32_t *)(rows + h->nrows);
        for (uint64_t i = 1; i < h->nrows; i++)
            if (rows[i].start < rows[i - 1].start)
                goto bad;
        for (uint64_t p = 0; p < h->npages; p++)
            if (pages[p] >= h->nrows)
                goto bad;
        if (!(t = calloc(1, sizeof *t)))
            goto bad;
        t->base = h->base;
        t->nrows = (size_t)h->nrows;
        t->npages = (size_t)h->npages;
        t->rows = rows;
        t->pages = pages;
        t->map = map;
        t->map_len = len;
    }
    return t;
bad:
    munmap(map, len);
    return NULL;
}

static int cmp_mtime(const void *a, const void *b)
{
    const struct timespec *x = a, *y = b;
    if (x->tv_sec != y->tv_sec)
        return x->tv_sec < y->tv_sec ? -1 : 1;
    return (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* Bound the directory: past UWC_MAX_FILES tables, remove those older than
 * the median (the set of programs a user runs changes slowly). */
static void prune(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    struct timespec *times = NULL, cut;
    size_t n = 0, cap = 0;
    int dfd;

    if (!d)
        return;
    dfd = dirfd(d);
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".uwt") ||
            fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (n == cap) {
            struct timespec *v = realloc(times, (cap ? 2 * cap : 64) * sizeof *v);
            if (!v)
                goto out;
            times = v;
            cap = cap ? 2 * cap : 64;
        }
        times[n++] = st.st_mtim;
    }
    if (n <= UWC_MAX_FILES)
        goto out;
    qsort(times, n, sizeof *times, cmp_mtime);
    cut = times[n / 2];
    rewinddir(d);
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".uwt") ||
            fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (cmp_mtime(&st.st_mtim, &cut) < 0)
            unlinkat(dfd, e->d_name, 0);
    }
out:
    free(times);
    closedir(d);
}

static bool write_all(int fd, const void *p, size_t n)
{
    const char *c = p;

    while (n) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        c += w;
        n -= (size_t)w;
    }
    return true;
}

int recs__uwc_store(const char *build_id, const recs_uw_table *t)
{
    char path[PATH_MAX], tmp[PATH_MAX];
    struct uwc_header h;
    size_t rows = t->nrows * sizeof t->rows[0];
    size_t pages = t->npages * sizeof t->pages[0];
    unsigned char *body;
    bool ok;
    int fd;

    if (!t->nrows || !file_name(path, sizeof path, build_id) ||
        snprintf(tmp, sizeof tmp, "%s/.%s.%d.tmp", dir, build_id,
                 (int)getpid()) >= (int)sizeof tmp)
        return REC_EINVAL;
    if (!(body = malloc(rows + pages)))
        return REC_ENOMEM;
    memcpy(body, t->rows, rows);
    memcpy(body + rows, t->pages, pages);
    memset(&h, 0, sizeof h);
    memcpy(h.magic, UWC_MAGIC, 8);
    h.header_size = sizeof h;
    h.row_size = sizeof t->rows[0];
    h.base = t->base;
    h.nrows = t->nrows;
    h.npages = t->npages;
    h.checksum = checksum(body, rows + pages);
    snprintf(h.module, sizeof h.module, "%s", build_id);
    snprintf(h.builder, sizeof h.builder, "%s", builder);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST && unlink(tmp) == 0)
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  0600);
    if (fd < 0) {
        free(body);
        return REC_EIO;
    }
    recs__fd_own(fd);
    ok = write_all(fd, &h, sizeof h) && write_all(fd, body, rows + pages);
    recs__fd_disown(fd);
    ok = close(fd) == 0 && ok;
    free(body);
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return REC_EIO;
    }
    prune();
    return 0;
}
