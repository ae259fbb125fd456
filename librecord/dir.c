/*
 * librecord/dir.c - a directory recording: a directory of chunk files
 * (*.rec, each a rec file of whole chunks) whose names sort, with strcmp,
 * in recording order. The reader lists them once, when it opens the
 * directory, and reads them one after the other as one recording.
 *
 * A writer with a retention limit removes the oldest files at any time:
 * a listed file that is gone when its turn comes is skipped. Files are
 * opened relative to the directory's descriptor so that a directory
 * renamed while we read is still the one we listed.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"
#include "reader_int.h"

/* A message about the directory itself: there is no chunk to name. */
static int dir_fail(rec_reader *r, int code, const char *what)
{
    snprintf(r->msg, sizeof r->msg, "%s: %s", r->path, what);
    r->st = ST_ERROR;
    r->err = code;
    r->resumable = false;
    return code;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A chunk file: "*.rec", not hidden (a writer's temporary), and a regular
 * file (or a link to one). */
static bool chunk_file(int dfd, const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    struct stat st;
    if (e->d_name[0] == '.' || n < 5 || strcmp(e->d_name + n - 4, ".rec") != 0)
        return false;
    if (e->d_type == DT_REG)
        return true;
    if (e->d_type != DT_UNKNOWN && e->d_type != DT_LNK)
        return false;
    return fstatat(dfd, e->d_name, &st, 0) == 0 && S_ISREG(st.st_mode);
}

int rec__dir_init(rec_reader *r, int dfd)
{
    char what[128];
    size_t cap = 0;
    r->dir_fd = dfd;
    if (!(r->dir_path = strdup(r->path)))
        return REC_ENOMEM;
    int lfd = fcntl(dfd, F_DUPFD_CLOEXEC, 0);
    DIR *d = lfd >= 0 ? fdopendir(lfd) : NULL;
    if (!d) {
        int e = errno;
        if (lfd >= 0)
            close(lfd);
        snprintf(what, sizeof what, "directory: %s", strerror(e));
        return dir_fail(r, REC_EIO, what);
    }
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (!e) {
            if (errno) {
                snprintf(what, sizeof what, "directory: %s", strerror(errno));
                closedir(d);
                return dir_fail(r, REC_EIO, what);
            }
            break;
        }
        if (!chunk_file(dfd, e))
            continue;
        if (r->nfiles == REC_MAX_DIR_FILES) {
            closedir(d);
            snprintf(what, sizeof what, "more than %u .rec files: not read "
                     "(a directory recording holds fewer)", REC_MAX_DIR_FILES);
            return dir_fail(r, REC_ETOOBIG, what);
        }
        if (r->nfiles == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            char **v = realloc(r->files, ncap * sizeof *v);
            if (!v) {
                closedir(d);
                return REC_ENOMEM;
            }
            r->files = v;
            cap = ncap;
        }
        if (!(r->files[r->nfiles] = strdup(e->d_name))) {
            closedir(d);
            return REC_ENOMEM;
        }
        r->nfiles++;
    }
    closedir(d);
    if (r->nfiles)
        qsort(r->files, r->nfiles, sizeof *r->files, cmp_names);
    return 0;
}

bool rec__dir_more(const rec_reader *r)
{
    return r->dir_fd >= 0 && r->next_file < r->nfiles;
}

int rec__dir_next(rec_reader *r)
{
    while (r->next_file < r->nfiles) {
        const char *name = r->files[r->next_file++];
        /* O_NONBLOCK: a FIFO put in the place of a listed file must not
         * hang us; regular files read the same either way. */
        int fd = openat(r->dir_fd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        struct stat st;
        if (fd < 0 && errno == ENOENT)
            continue;           /* removed by retention since the listing */
        if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
            close(fd);
            continue;
        }
        const char *dir = r->dir_path;
        size_t dl = strlen(dir);
        bool slash = dl && dir[dl - 1] == '/';
        char *path = malloc(dl + 1 + strlen(name) + 1);
        if (!path) {
            if (fd >= 0)
                close(fd);
            return REC_ENOMEM;
        }
        sprintf(path, "%s%s%s", dir, slash ? "" : "/", name);
        free(r->path);
        r->path = path;
        if (fd < 0)
            return rec__io_error(r, 0);
        if (r->fd >= 0)
            close(r->fd);
        r->fd = fd;
        r->chunk_off = 0;
        return 1;
    }
    return 0;
}

void rec__dir_free(rec_reader *r)
{
    for (size_t i = 0; i < r->nfiles; i++)
        free(r->files[i]);
    free(r->files);
    free(r->dir_path);
    if (r->dir_fd >= 0)
        close(r->dir_fd);
}
