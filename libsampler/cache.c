/*
 * libsampler/cache.c - the per-user directory of derived data shared
 * across processes (see cache.h).
 */
#include <config.h>

#include "internal.h"
#include "cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define CACHE_MAX_BYTES (1ull << 30)   /* no module's data comes near */
#define CACHE_MAX_FILES 1024           /* then the oldest half goes */

static char *dir;                    /* NULL: no cache */
static char builder[136];

/* Four independent 64-bit lanes over the body's 32-byte stripes (the
 * rounds of xxHash64), then its last bytes: finds a damaged or foreign
 * file. Every process that uses a table sums it once (a C compiler's is
 * 6 MB), and a single multiply chain runs at a quarter of this speed. The
 * structural checks of each kind are what keep the handler's reads in
 * bounds. Fed in parts (a stripe may straddle two), so that a store sums
 * what it writes without gathering it first. */
#define P1 0x9e3779b185ebca87ull
#define P2 0xc2b2ae3d27d4eb4full
#define P3 0x165667b19e3779f9ull

struct sum {
    uint64_t v[4], total;
    unsigned char tail[32];
    size_t ntail;
};

static uint64_t rotl(uint64_t x, int r)
{
    return x << r | x >> (64 - r);
}

static uint64_t round64(uint64_t acc, uint64_t w)
{
    return rotl(acc + w * P2, 31) * P1;
}

static void stripe(struct sum *s, const unsigned char *p)
{
    uint64_t w[4];

    memcpy(w, p, sizeof w);
    s->v[0] = round64(s->v[0], w[0]);
    s->v[1] = round64(s->v[1], w[1]);
    s->v[2] = round64(s->v[2], w[2]);
    s->v[3] = round64(s->v[3], w[3]);
}

static void sum_init(struct sum *s)
{
    s->v[0] = P1 + P2;
    s->v[1] = P2;
    s->v[2] = 0;
    s->v[3] = 0 - P1;
    s->total = 0;
    s->ntail = 0;
}

static void sum_feed(struct sum *s, const unsigned char *p, size_t n)
{
    s->total += n;
    while (s->ntail && s->ntail < 32 && n) {
        s->tail[s->ntail++] = *p++;
        n--;
    }
    if (s->ntail == 32) {
        stripe(s, s->tail);
        s->ntail = 0;
    }
    for (; n >= 32; p += 32, n -= 32)
        stripe(s, p);
    memcpy(s->tail + s->ntail, p, n);
    s->ntail += n;
}

static uint64_t sum_end(struct sum *s)
{
    uint64_t h = rotl(s->v[0], 1) + rotl(s->v[1], 7) + rotl(s->v[2], 12) +
                 rotl(s->v[3], 18) + s->total;

    for (size_t i = 0; i < s->ntail; i++)
        h = rotl(h ^ (s->tail[i] * P3), 11) * P1;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    return h ^ (h >> 32);
}

static uint64_t checksum(const unsigned char *p, size_t n)
{
    struct sum s;

    sum_init(&s);
    sum_feed(&s, p, n);
    return sum_end(&s);
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

void recs__cache_configure(const char *setting, const char *self_build_id)
{
    const char *base;
    char path[PATH_MAX];

    free(dir);
    dir = NULL;
    if (!self_build_id || !*self_build_id ||
        strlen(self_build_id) >= sizeof builder ||
        strspn(self_build_id, "0123456789abcdef") != strlen(self_build_id))
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

bool recs__cache_enabled(void)
{
    return dir != NULL;
}

/* The module's build-id, then the first 12 digits of the builder's: two
 * builds of libsampler used side by side (a package and a development
 * tree) keep a table each instead of replacing each other's every run. */
static bool file_name(char *out, size_t size, const char *build_id,
                      const char *ext)
{
    if (!dir || !build_id || !*build_id || strlen(build_id) >= 136 ||
        strspn(build_id, "0123456789abcdef") != strlen(build_id))
        return false;
    return snprintf(out, size, "%s/%s-%.12s.%s", dir, build_id, builder,
                    ext) < (int)size;
}

/* A file summed once is not summed again while it is the same file (inode,
 * size, modification time; as git trusts its index's stat data): the first
 * process to check it records that in an extended attribute, and a 6 MB
 * table then costs the next ones no pass over its pages. Any write to the
 * file changes what is recorded; where the file system keeps no user
 * attributes, every use sums it. */
#define VERIFIED_XATTR "user.rec.verified"

void recs__cache_file_ident(const struct stat *st, char *out, size_t size)
{
    snprintf(out, size, "%llu:%llu:%llu:%lld.%09ld",
             (unsigned long long)st->st_dev, (unsigned long long)st->st_ino,
             (unsigned long long)st->st_size, (long long)st->st_mtim.tv_sec,
             st->st_mtim.tv_nsec);
}

static void verified_ident(const struct stat *st, uint64_t sum, char *out,
                           size_t size)
{
    char id[RECS_FILE_IDENT_MAX];

    recs__cache_file_ident(st, id, sizeof id);
    snprintf(out, size, "%s:%016llx", id, (unsigned long long)sum);
}

static bool was_verified(int fd, const struct stat *st, uint64_t sum)
{
    char want[RECS_FILE_IDENT_MAX + 20], got[RECS_FILE_IDENT_MAX + 20];
    ssize_t n;

    verified_ident(st, sum, want, sizeof want);
    n = fgetxattr(fd, VERIFIED_XATTR, got, sizeof got);
    return n > 0 && (size_t)n == strlen(want) && !memcmp(got, want, (size_t)n);
}

static void mark_verified(int fd, const struct stat *st, uint64_t sum)
{
    char id[RECS_FILE_IDENT_MAX + 20];

    verified_ident(st, sum, id, sizeof id);
    (void)fsetxattr(fd, VERIFIED_XATTR, id, strlen(id), 0);
}

const recs_cache_header *recs__cache_map(const char *build_id,
                                         const char *ext, const char *magic,
                                         recs_cache_deep_check deep,
                                         size_t *len, const void **body,
                                         size_t *body_len)
{
    char path[PATH_MAX];
    struct stat st;
    const recs_cache_header *h;
    unsigned char *map;
    int fd;

    if (!file_name(path, sizeof path, build_id, ext))
        return NULL;
    fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_uid != geteuid() || (st.st_mode & 077) ||
        (uint64_t)st.st_size < sizeof *h ||
        (uint64_t)st.st_size > CACHE_MAX_BYTES) {
        close(fd);
        return NULL;
    }
    *len = (size_t)st.st_size;
    map = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        close(fd);
        return NULL;
    }
    h = (const recs_cache_header *)map;
    *body = map + sizeof *h;
    *body_len = *len - sizeof *h;
    if (memcmp(h->magic, magic, 8) || h->header_size != sizeof *h ||
        memchr(h->module, 0, sizeof h->module) == NULL ||
        memchr(h->builder, 0, sizeof h->builder) == NULL ||
        strcmp(h->module, build_id) || strcmp(h->builder, builder))
        goto bad;
    if (!was_verified(fd, &st, h->checksum)) {
#ifdef MADV_POPULATE_READ
        /* The sum reads every page: one call maps them for less than a
         * fault per 16 of them (Linux 5.14; earlier, the faults). */
        (void)madvise(map, *len, MADV_POPULATE_READ);
#endif
        if (checksum(*body, *body_len) != h->checksum ||
            (deep && !deep(h, *body, *body_len)))
            goto bad;
        mark_verified(fd, &st, h->checksum);
    }
    close(fd);
    return h;
bad:
    close(fd);
    munmap(map, *len);
    return NULL;
}

static int cmp_mtime(const void *a, const void *b)
{
    const struct timespec *x = a, *y = b;
    if (x->tv_sec != y->tv_sec)
        return x->tv_sec < y->tv_sec ? -1 : 1;
    return (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* Bound the directory: past CACHE_MAX_FILES files, remove those older than
 * the median (the set of programs a user runs changes slowly). The bound
 * is checked at one store in 16: it may be passed by a few files. */
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
        if (e->d_name[0] == '.' ||
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
    if (n <= CACHE_MAX_FILES)
        goto out;
    qsort(times, n, sizeof *times, cmp_mtime);
    cut = times[n / 2];
    rewinddir(d);
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (e->d_name[0] == '.' ||
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

int recs__cache_store(const char *build_id, const char *ext,
                      recs_cache_header *h, const void *const *parts,
                      const size_t *sizes, int nparts)
{
    char path[PATH_MAX], tmp[PATH_MAX];
    struct sum sum;
    bool ok;
    int fd;

    if (!file_name(path, sizeof path, build_id, ext) ||
        snprintf(tmp, sizeof tmp, "%s/.%s-%.12s.%s.%d.tmp", dir, build_id,
                 builder, ext, (int)getpid()) >= (int)sizeof tmp)
        return REC_EINVAL;
    h->header_size = sizeof *h;
    /* The checksum runs over the parts as one body. */
    sum_init(&sum);
    for (int i = 0; i < nparts; i++)
        sum_feed(&sum, parts[i], sizes[i]);
    h->checksum = sum_end(&sum);
    snprintf(h->module, sizeof h->module, "%s", build_id);
    snprintf(h->builder, sizeof h->builder, "%s", builder);
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST && unlink(tmp) == 0)
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  0600);
    if (fd < 0)
        return REC_EIO;
    recs__fd_own(fd);
    ok = write_all(fd, h, sizeof *h);
    for (int i = 0; ok && i < nparts; i++)
        ok = write_all(fd, parts[i], sizes[i]);
    recs__fd_disown(fd);
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return REC_EIO;
    }
    /* Reading the whole directory at every store cost more than the
     * store: one store in 16 (by its build-id, evenly spread) checks. */
    if (build_id[0] == '0')
        prune();
    return 0;
}
