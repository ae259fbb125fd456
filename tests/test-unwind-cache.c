/*
 * tests/test-unwind-cache.c - the shared unwind-table cache: a stored
 * table maps back identical; a file that is damaged, foreign, someone
 * else's, reachable by others or a link is never used; a directory others
 * can enter is not a cache.
 */
#include <config.h>
#include "tap.h"
#include "internal.h"
#include "unwind.h"
#include "cache.h"
#include <rec/record.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define BID  "0123456789abcdef0123456789abcdef01234567"
#define SELF "feedface"

static char dir[256], file[512];

/* A table of three functions spread over several pages. */
static recs_uw_table *make_table(void)
{
    size_t nrows = 4, npages = 9;
    recs_uw_table *t = calloc(1, sizeof *t + nrows * sizeof(recs_uw_row) +
                                     npages * sizeof(uint32_t));
    recs_uw_row *rows = (recs_uw_row *)(t + 1);
    uint32_t *pages = (uint32_t *)(rows + nrows);
    static const uint32_t starts[4] = { 0, 0x1000, 0x3400, 0x8000 };

    for (size_t i = 0; i < nrows; i++) {
        rows[i].start = starts[i];
        rows[i].cfa_off = (int32_t)(8 + 8 * i);
        rows[i].ra_off = -8;
        rows[i].flags = i + 1 < nrows ? RECS_UW_FUNC : RECS_UW_NONE;
    }
    for (size_t p = 0; p < npages; p++)
        pages[p] = p < 1 ? 0 : p < 3 ? 1 : p < 8 ? 2 : 3;
    t->base = 0x1000;
    t->nrows = nrows;
    t->npages = npages;
    t->rows = rows;
    t->pages = pages;
    return t;
}

static bool same(const recs_uw_table *a, const recs_uw_table *b)
{
    return a && b && a->base == b->base && a->nrows == b->nrows &&
           a->npages == b->npages &&
           !memcmp(a->rows, b->rows, a->nrows * sizeof a->rows[0]) &&
           !memcmp(a->pages, b->pages, a->npages * sizeof a->pages[0]);
}

static bool loads(void)
{
    recs_uw_table *t = recs__uwc_load(BID);
    bool ok = t != NULL;
    recs__uw_table_free(t);
    return ok;
}

/* Flip one byte of the file at off (from its end if negative). */
static void poke(long off)
{
    int fd = open(file, O_RDWR);
    unsigned char c;
    off_t at = off < 0 ? lseek(fd, off, SEEK_END) : (off_t)off;

    if (pread(fd, &c, 1, at) == 1) {
        c ^= 0x5a;
        if (pwrite(fd, &c, 1, at) != 1)
            abort();
    }
    close(fd);
}

int main(void)
{
    recs_uw_table *t = make_table(), *m;
    char sub[300];

    snprintf(dir, sizeof dir, "%s/uwc.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir))
        return 99;
    snprintf(file, sizeof file, "%s/%s-%s.uwt", dir, BID, SELF);

    recs__cache_configure(dir, SELF);
    tap_ok(recs__cache_enabled(), "a private directory is a cache");
    tap_ok(!loads(), "nothing cached yet");
    tap_ok(recs__uwc_store(BID, t) == 0, "table stored");
    {
        struct stat st;
        tap_ok(stat(file, &st) == 0 && (st.st_mode & 0777) == 0600,
               "stored 0600 under its build-id");
    }
    m = recs__uwc_load(BID);
    tap_ok(same(t, m) && m->map != NULL, "loaded back identical, mapped");
    tap_ok(recs__uw_lookup(m, 0x1000 + 0x3500) == &m->rows[2],
           "lookups work on the mapped rows");
    recs__uw_table_free(m);
    {
        /* Summed once, marked: the next use of the same file trusts it. */
        char v[96];
        ssize_t n = getxattr(file, "user.rec.verified", v, sizeof v);
        if (n < 0 && (errno == ENOTSUP || errno == EOPNOTSUPP))
            tap_ok(1, "# SKIP no user attributes on this file system");
        else
            tap_ok(n > 0, "a file summed once is marked as such");
    }
    {
        /* Rows of 12 bytes: with 3 of them, a word of the checksum
         * straddles the rows and the page index. */
        recs_uw_table odd = *t;
        static const uint32_t pages3[3] = { 0, 1, 1 };
        odd.nrows = 3;
        odd.npages = 3;
        odd.pages = pages3;
        m = recs__uwc_store(BID, &odd) == 0 ? recs__uwc_load(BID) : NULL;
        tap_ok(same(&odd, m), "a body whose parts end inside a word: loaded back");
        recs__uw_table_free(m);
        recs__uwc_store(BID, t);
    }
    tap_ok(recs__uwc_load("0123") == NULL, "another build-id: not this file");
    tap_ok(recs__uwc_load("../x") == NULL && recs__uwc_store("../x", t) < 0,
           "a build-id that is not hex names no file");

    /* Another builder (another libsampler) made it: rebuilt, not used. */
    recs__cache_configure(dir, "beefcafe");
    tap_ok(!loads(), "another builder's table is not used");
    recs__cache_configure(dir, SELF);
    tap_ok(loads(), "its own builder's is");

    poke(-5);
    tap_ok(!loads(), "a changed page index: checksum refused");
    tap_ok(recs__uwc_store(BID, t) == 0 && loads(), "stored again, replaced");
    poke(400);
    tap_ok(!loads(), "a changed row: checksum refused");
    recs__uwc_store(BID, t);
    tap_ok(truncate(file, 300) == 0 && !loads(), "a short file is refused");
    recs__uwc_store(BID, t);
    chmod(file, 0644);
    tap_ok(!loads(), "a file others can read or write is refused");
    chmod(file, 0600);
    if (geteuid() == 0) {
        tap_ok(chown(file, 65534, 65534) == 0 && !loads(),
               "someone else's file is refused");
        unlink(file);
    } else {
        tap_ok(1, "# SKIP not root: cannot give a file away");
    }
    recs__uwc_store(BID, t);
    {
        char real[600];
        snprintf(real, sizeof real, "%s/real", dir);
        rename(file, real);
        tap_ok(symlink(real, file) == 0 && !loads(), "a symbolic link is refused");
        unlink(file);
        unlink(real);
    }

    /* Whole, but not a table the handler can walk safely. */
    ((uint32_t *)t->pages)[8] = 4;
    tap_ok(recs__uwc_store(BID, t) == 0 && !loads(),
           "a page index past the rows is refused");
    ((uint32_t *)t->pages)[8] = 3;
    ((recs_uw_row *)t->rows)[1].start = 0x9000;
    tap_ok(recs__uwc_store(BID, t) == 0 && !loads(), "unsorted rows are refused");
    ((recs_uw_row *)t->rows)[1].start = 0x1000;
    unlink(file);

    /* Bounded: past 1024 files, a store (of a build-id that checks)
     * removes the older half; the new file stays. */
    {
        struct timespec old[2] = { { 1000000000, 0 }, { 1000000000, 0 } };
        char name[600];
        int n = 0;
        DIR *d;
        struct dirent *e;
        for (int k = 0; k < 1100; k++) {
            snprintf(name, sizeof name, "%s/%040x.uwt", dir, 0xabc000 + k);
            int fd = open(name, O_WRONLY | O_CREAT, 0600);
            close(fd);
            old[0].tv_sec = old[1].tv_sec = 1000000000 + k;
            utimensat(AT_FDCWD, name, old, 0);
        }
        recs__uwc_store(BID, t);
        if ((d = opendir(dir)) != NULL) {
            while ((e = readdir(d)) != NULL)
                n += e->d_name[0] != '.';
            closedir(d);
        }
        tap_ok(n > 500 && n < 600 && loads(),
               "1101 files: the older half removed (%d left), the new one kept",
               n);
        if ((d = opendir(dir)) != NULL) {
            while ((e = readdir(d)) != NULL)
                if (e->d_name[0] != '.') {
                    snprintf(name, sizeof name, "%s/%s", dir, e->d_name);
                    unlink(name);
                }
            closedir(d);
        }
    }

    snprintf(sub, sizeof sub, "%s/open", dir);
    mkdir(sub, 0755);
    recs__cache_configure(sub, SELF);
    tap_ok(!recs__cache_enabled(), "a directory others can enter is no cache");
    rmdir(sub);
    recs__cache_configure("off", SELF);
    tap_ok(!recs__cache_enabled(), "off: no cache");
    recs__cache_configure(dir, "");
    tap_ok(!recs__cache_enabled(), "no build-id of our own: no cache");

    free(t);
    rmdir(dir);
    return tap_done();
}
