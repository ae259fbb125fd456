/*
 * libsampler/session-output.c - creating and reopening the recording files.
 *
 * A recording holds command lines, paths and addresses: it is created
 * exclusively (a name planted in its place, a symbolic link included, is
 * never followed nor overwritten) with mode 0600 whatever the umask.
 * rec-start creates the root's file itself and passes the descriptor
 * (REC_OUTPUT_FD=FD:DEV:INO, checked against what the descriptor names);
 * the files of followed children are created relative to the directory
 * descriptor opened once for the root's; the image that follows an exec()
 * appends only to the file its predecessor wrote (REC_OUTPUT_ID=DEV:INO).
 */
#include <config.h>
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dir_path;              /* what recs__g.dir_fd names */

/* "FD:DEV:INO" (fd NULL: "DEV:INO"), decimal. */
int recs__parse_fd_id(const char *v, int *fd, dev_t *dev, ino_t *ino)
{
    char *end;
    unsigned long long a, b;

    if (fd) {
        long n;
        errno = 0;
        n = strtol(v, &end, 10);
        if (errno || end == v || *end != ':' || n < 0 || n > (1 << 20))
            return REC_EINVAL;
        *fd = (int)n;
        v = end + 1;
    }
    errno = 0;
    a = strtoull(v, &end, 10);
    if (errno || end == v || *end != ':')
        return REC_EINVAL;
    v = end + 1;
    b = strtoull(v, &end, 10);
    if (errno || end == v || *end)
        return REC_EINVAL;
    *dev = (dev_t)a;
    *ino = (ino_t)b;
    return 0;
}

/* The directory of path, opened once (again only if the directory
 * changes: the API may record elsewhere); *base is the last component. */
static int dir_of(const char *path, const char **base)
{
    const char *slash = strrchr(path, '/');
    char *dir;
    int fd;

    *base = slash ? slash + 1 : path;
    if (!slash)
        dir = strdup(".");
    else if (slash == path)
        dir = strdup("/");
    else
        dir = strndup(path, (size_t)(slash - path));
    if (!dir)
        return -1;
    if (recs__g.dir_fd >= 0 && dir_path && !strcmp(dir, dir_path)) {
        free(dir);
        return recs__g.dir_fd;
    }
    fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        free(dir);
        errno = e;
        return -1;
    }
    if (recs__g.dir_fd >= 0) {
        recs__fd_disown(recs__g.dir_fd);
        close(recs__g.dir_fd);
    }
    free(dir_path);
    dir_path = dir;
    recs__g.dir_fd = fd;
    recs__fd_own(fd);
    return fd;
}

static int create_excl(const recs__config *cfg, int *out)
{
    const char *base;
    int dfd = dir_of(cfg->output, &base), fd;
    struct stat st;

    if (dfd < 0)
        return REC_EIO;
    fd = openat(dfd, base, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                0600);
    if (fd < 0 && errno == EEXIST && cfg->overwrite &&
        fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISREG(st.st_mode) && unlinkat(dfd, base, 0) == 0)
        fd = openat(dfd, base,
                    O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return errno == EEXIST ? REC_EEXIST : REC_EIO;
    /* 0600 whatever the umask (which may have removed bits only). */
    fchmod(fd, 0600);
    *out = fd;
    return 0;
}

int recs__output_open(const recs__config *cfg, int *out)
{
    struct stat st;
    int fd;

    *out = -1;
    if (cfg->output_fd >= 0) {
        *out = cfg->output_fd;
        return 0;
    }
    if (!cfg->append)
        return create_excl(cfg, out);
    fd = open(cfg->output, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    /* rec-start -o - records into an in-memory file that only its
     * /proc/PID/fd link names: followed only when the identity check
     * below can tell it is the file to append to. */
    if (fd < 0 && errno == ELOOP && cfg->has_id &&
        !strncmp(cfg->output, "/proc/", 6))
        fd = open(cfg->output, O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && !cfg->has_id)
        return create_excl(cfg, out);
    if (fd < 0)
        return REC_EIO;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        (cfg->has_id && (st.st_dev != cfg->out_dev ||
                         st.st_ino != cfg->out_ino))) {
        close(fd);
        errno = EEXIST;   /* not the file the recording was started in */
        return REC_EEXIST;
    }
    *out = fd;
    return 0;
}

/* A file this process created but could not start a recording in: no
 * file that readers reject is left behind (by identity: the name may
 * have been replaced meanwhile). */
void recs__output_discard(const recs__config *cfg, dev_t dev, ino_t ino)
{
    const char *base;
    struct stat cur;
    int dfd;

    if (cfg->append || cfg->output_fd >= 0)
        return;
    dfd = dir_of(cfg->output, &base);
    if (dfd >= 0 && fstatat(dfd, base, &cur, AT_SYMLINK_NOFOLLOW) == 0 &&
        cur.st_dev == dev && cur.st_ino == ino)
        unlinkat(dfd, base, 0);
}
