/*
 * librecord/follow.c - following a recording while it is written: waits
 * for the file, delivers events as each flush lands (the reader re-reads
 * the chunk header under the seqlock), and decides when the stream ends:
 * the recording closed, its writer died, the file stalled, or the file
 * was truncated, removed or replaced under us.
 *
 * Waiting is inotify on the file (and its directory until it exists) plus
 * a pidfd for the writer where the kernel has them, with a poll timeout as
 * the fallback, so a follower of an idle file costs nothing per second.
 * Memory is the reader's: one block and the current chunk's pools,
 * whatever the backlog.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "format.h"
#include "reader_int.h"
#include "sized.h"

#define DEFAULT_POLL_MS 100
/* After the writer died, how long a sealing chunk is waited for. */
#define SEAL_WAIT_NS 1000000000ull
#define POS_VERSION "1"

struct rec_follow {
    rec_follow_options opt;
    char *path, *dir;
    rec_reader *r;
    dev_t dev;
    ino_t ino;
    int ifd, wfile, wdir;       /* inotify and its watches, -1 if none */
    bool name_gone;             /* created and removed before it was opened */
    bool file_gone;             /* removed or replaced: one last look, then end */
    int pidfd;
    uint32_t pidfd_pid, dead_pid;
    bool writer_dead;           /* seen dead: one last look, then end */
    uint64_t dead_ns;           /* when (the wait for a sealer starts) */

    /* position of the next event (see rec_follow_position) */
    uint32_t chunk_no;
    uint64_t chunk_off, chunk_wall, blk_off, idx;
    /* resuming: events of block skip_blk still to drop */
    bool seek_pending;          /* a position was given: seek at open */
    bool skipping;
    uint64_t skip_blk, skip_n;

    uint64_t last_data_ns, finished_ns;
    bool done;
    int final_rc;
    char pos_given[REC_FOLLOW_POSITION_MAX];
    char msg[600];
};

__attribute__((format(printf, 3, 4)))
static int fail(rec_follow *f, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->msg, sizeof f->msg, fmt, ap);
    va_end(ap);
    f->done = true;
    f->final_rc = code;
    return code;
}


/* The first version of rec_follow_options ended with from_end. */
#define OPTIONS_SIZE_V1 REC__SIZE_TO(rec_follow_options, from_end)

int rec_follow_options_init_sized(rec_follow_options *opt, size_t size)
{
    rec_follow_options o;
    memset(&o, 0, sizeof o);
    o.size = size;
    o.finish_wait_ms = -1;
    if (rec__sized_out(opt, size, &o, sizeof o, OPTIONS_SIZE_V1) < 0)
        return REC_EINVAL;
    return 0;
}

/* ---- the writer ---- */

/* Seconds since the epoch at which the system booted, 0 if unknown. */
static uint64_t boot_time(void)
{
    static uint64_t bt;
    if (bt)
        return bt;
    FILE *fp = fopen("/proc/stat", "re");
    char line[256];
    while (fp && fgets(line, sizeof line, fp))
        if (sscanf(line, "btime %" SCNu64, &bt) == 1)
            break;
    if (fp)
        fclose(fp);
    return bt;
}

/* 1 alive, 0 gone, -1 unknown. A zombie is gone (it writes nothing more);
 * a process that started after the chunk did is another one that got the
 * id after the writer died. */
static int writer_alive(uint32_t pid, uint64_t chunk_wall_ns)
{
    char path[64], buf[1024];
    if (pid == 0 || pid > INT_MAX)
        return -1;
    snprintf(path, sizeof path, "/proc/%" PRIu32 "/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT || errno == ESRCH)
            return 0;
        return kill((pid_t)pid, 0) == 0 || errno == EPERM ? 1 : 0;
    }
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ')
        return 1;
    char state = p[2];
    if (state == 'Z' || state == 'X' || state == 'x')
        return 0;
    /* field 22, starttime in clock ticks since boot; p is at field 2 */
    unsigned long long start = 0;
    int field = 2;
    for (char *q = p + 1; *q && field < 22; q++)
        if (*q == ' ' && ++field == 22)
            start = strtoull(q + 1, NULL, 10);
    long hz = sysconf(_SC_CLK_TCK);
    uint64_t bt = boot_time();
    if (start && hz > 0 && bt && chunk_wall_ns) {
        uint64_t started_s = bt + start / (unsigned long long)hz;
        if (started_s > chunk_wall_ns / 1000000000u + 2)
            return 0;
    }
    return 1;
}

static void watch_writer(rec_follow *f, uint32_t pid)
{
    if (pid == f->pidfd_pid)
        return;
    if (f->pidfd >= 0)
        close(f->pidfd);
    f->pidfd = -1;
    f->pidfd_pid = pid;
#ifdef SYS_pidfd_open
    if (pid && pid <= INT_MAX)
        f->pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
#endif
}

/* ---- opening and waiting ---- */

static void watch_dir(rec_follow *f)
{
    if (f->ifd >= 0 && f->wdir < 0)
        f->wdir = inotify_add_watch(f->ifd, f->dir,
                                    IN_CREATE | IN_MOVED_TO | IN_DELETE |
                                    IN_MOVED_FROM | IN_ONLYDIR);
}

static const char *base_name(const rec_follow *f)
{
    const char *slash = strrchr(f->path, '/');
    return slash ? slash + 1 : f->path;
}

/* While the file is waited for, its name going away means a file came
 * and went before it could be opened (an exec that failed, a sampler
 * that could not start): nothing of it will ever be read. */
static void read_events(rec_follow *f)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;
    while ((n = read(f->ifd, buf, sizeof buf)) > 0) {
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *e = (const struct inotify_event *)p;
            if (!f->r && f->wdir >= 0 && e->wd == f->wdir && e->len &&
                (e->mask & (IN_DELETE | IN_MOVED_FROM)) &&
                !strcmp(e->name, base_name(f)))
                f->name_gone = true;
            p += sizeof *e + e->len;
        }
    }
}

/* Seek to where the caller asked to start: a saved position, or the end
 * of what is in the file now. */
static int start_at(rec_follow *f)
{
    rec_reader *r = f->r;
    uint64_t wall;
    if (f->seek_pending) {
        f->seek_pending = false;
        int rc = rec__reader_seek(r, f->chunk_off, f->chunk_no, f->blk_off, &wall);
        if (rc < 0)
            return fail(f, rc, "%s", rec_reader_message(r));
        if (rc == 0 || wall != f->chunk_wall)
            return fail(f, REC_EINVAL, "%s: position %s is not in this recording "
                        "(no chunk that started at that time at offset %" PRIu64 ")",
                        f->path, f->pos_given, f->chunk_off);
        f->skipping = f->idx > 0;
        f->skip_blk = f->blk_off;
        f->skip_n = f->idx;
        return 0;
    }
    if (!f->opt.from_end)
        return 0;
    /* Walk chunk headers to the last chunk; skip the events it has now. */
    uint64_t off = 0, last = 0, end = 0, size;
    uint32_t no = 0;
    uint8_t state, flags;
    bool any = false;
    for (;;) {
        int rc = rec__reader_peek(r, off, &size, &state, &flags);
        if (rc < 0) {
            if (rc == REC_ETRUNCATED && any)
                break;      /* a header being written: start at the one before */
            if (rc == REC_ETRUNCATED)
                return 0;   /* nothing there yet: all of it is new */
            return fail(f, rc, "%s", rec_reader_message(r));
        }
        if (rc == 0)
            break;
        any = true;
        last = off;
        end = off + size;
        if (state != REC_STATE_FINISHED)
            break;
        off = end;
        no++;
    }
    if (!any) {
        /* Nothing there yet, so everything will be new; the peek may have
         * caught a header half-written: start over at offset 0. */
        rec__reader_seek(r, 0, 0, 0, &wall);
        return 0;
    }
    if (off != last)
        no--;
    int rc = rec__reader_seek(r, last, no, end, &wall);
    if (rc < 0)
        return fail(f, rc, "%s", rec_reader_message(r));
    f->chunk_off = last;
    f->chunk_no = no;
    f->chunk_wall = wall;
    f->blk_off = end;
    f->idx = 0;
    return 0;
}

/* Open the file if it exists now: 1 opened, 0 not yet, or an error. */
static int try_open(rec_follow *f)
{
    struct stat st;
    if (stat(f->path, &st) < 0) {
        if (errno == ENOENT)
            return 0;
        return fail(f, REC_EIO, "%s: %s", f->path, strerror(errno));
    }
    /* Its files come and go (rotation, retention): following one name
     * would stop at the first rotation, silently. */
    if (S_ISDIR(st.st_mode))
        return fail(f, REC_EINVAL, "%s: a directory recording cannot be "
                    "followed: read it without following, or follow its "
                    "newest file", f->path);
    int rc = rec_reader_open(&f->r, f->path, 0);
    if (rc < 0) {
        if (rc == REC_EIO && errno == ENOENT)
            return 0;       /* gone again */
        return fail(f, rc, "%s: %s", f->path,
                    rc == REC_EIO ? strerror(errno) : rec_strerror(rc));
    }
    if (fstat(f->r->fd, &st) == 0) {
        f->dev = st.st_dev;
        f->ino = st.st_ino;
    }
    if (f->ifd >= 0)
        f->wfile = inotify_add_watch(f->ifd, f->path, IN_MODIFY | IN_ATTRIB |
                                     IN_CLOSE_WRITE | IN_DELETE_SELF |
                                     IN_MOVE_SELF);
    if (f->wdir >= 0)
        inotify_rm_watch(f->ifd, f->wdir);   /* a busy directory would wake us */
    f->wdir = -1;
    f->last_data_ns = rec_now_ns();
    if ((rc = start_at(f)) < 0)
        return rc;
    return 1;
}

int rec_follow_open(rec_follow **out, const char *path,
                    const rec_follow_options *opt)
{
    rec_follow_options o;
    int rc = 0;
    if (!out || !path)
        return REC_EINVAL;
    *out = NULL;
    if (opt)
        rc = rec__sized_in(&o, sizeof o, opt, opt->size, OPTIONS_SIZE_V1);
    else
        rec_follow_options_init(&o);
    if (rc)
        return rc;
    o.size = sizeof o;
    rec_follow *f = calloc(1, sizeof *f);
    if (!f)
        return REC_ENOMEM;
    f->opt = o;
    if (f->opt.poll_ms <= 0)
        f->opt.poll_ms = DEFAULT_POLL_MS;
    f->ifd = f->wfile = f->wdir = f->pidfd = -1;
    if (f->opt.position) {
        char tail;
        if (strlen(f->opt.position) >= sizeof f->pos_given ||
            sscanf(f->opt.position, POS_VERSION ":%" SCNu32 ":%" SCNu64 ":%"
                   SCNu64 ":%" SCNu64 ":%" SCNu64 "%c", &f->chunk_no,
                   &f->chunk_off, &f->chunk_wall, &f->blk_off, &f->idx,
                   &tail) != 5 || f->blk_off < f->chunk_off) {
            free(f);
            return REC_EINVAL;
        }
        strcpy(f->pos_given, f->opt.position);
        f->opt.position = NULL;     /* the caller's string is not kept */
        f->opt.from_end = false;
        /* taken before the first event of a file that had none: start */
        f->seek_pending = f->chunk_wall || f->blk_off;
    }
    const char *slash = strrchr(path, '/');
    f->path = strdup(path);
    f->dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path))
                   : strdup(".");
    if (!f->path || !f->dir) {
        rec_follow_close(f);
        return REC_ENOMEM;
    }
    /* Without inotify (limits reached, old kernel) the poll timeout is
     * the only wake-up: slower to react, same results. */
    f->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    f->last_data_ns = rec_now_ns();
    *out = f;
    if (try_open(f) == 0)
        watch_dir(f);       /* errors wait for rec_follow_next() */
    return 0;
}

void rec_follow_close(rec_follow *f)
{
    if (!f)
        return;
    rec_reader_close(f->r);
    if (f->ifd >= 0)
        close(f->ifd);
    if (f->pidfd >= 0)
        close(f->pidfd);
    free(f->path);
    free(f->dir);
    free(f);
}

/* ---- end of stream ---- */

/* The file we read is still the one at path, and not shorter than what
 * we read of it. The file, not the name, is followed: another file under
 * the name is another recording, never read as the rest of this one. */
static int check_file(rec_follow *f)
{
    struct stat st, fst;
    int sr = stat(f->path, &st);
    bool removed = sr < 0 && errno == ENOENT;
    if (sr < 0 && !removed)
        return 0;   /* cannot tell: keep going on the open file */
    if (removed || st.st_dev != f->dev || st.st_ino != f->ino) {
        /* What the writer flushed before we looked is still readable
         * through our descriptor: one more look before ending. */
        if (!f->file_gone) {
            f->file_gone = true;
            return 1;
        }
        if (removed)
            return fail(f, REC_EREPLACED, "%s: file removed while being "
                        "followed (what it held was read)", f->path);
        return fail(f, REC_EREPLACED, "%s: file replaced while being followed "
                    "(another file has the name now; what the followed one "
                    "held was read, the other is not)", f->path);
    }
    uint64_t seen = f->r->chunk_end > f->r->pos ? f->r->chunk_end : f->r->pos;
    if (fstat(f->r->fd, &fst) == 0 && (uint64_t)fst.st_size < seen)
        return fail(f, REC_EREPLACED, "%s: file truncated while being followed "
                    "(%" PRIu64 " bytes, %" PRIu64 " were read)", f->path,
                    (uint64_t)fst.st_size, seen);
    return 0;
}

/* Nothing new is there. 1: wait for more; 2: look again at once; 0: the
 * stream ended cleanly; negative: it ended otherwise (f->msg says how). */
static int at_end(rec_follow *f)
{
    rec_reader *r = f->r;
    uint64_t now = rec_now_ns();
    bool finished = r->st == ST_END_EOF && r->prev_last;
    int alive = writer_alive(r->writer_pid, r->start_wall);
    int rc = check_file(f);
    if (rc < 0 && finished && alive <= 0) {
        /* Complete, its writer gone: nothing was lost, whatever became
         * of the name since (removed right after the run, say). */
        f->final_rc = 0;
        return 0;
    }
    if (rc < 0)
        return rc;
    if (rc > 0)
        return 2;
    if (alive > 0)
        watch_writer(f, r->writer_pid);
    if (finished) {
        /* An exec'd image appends its recording under the same pid: wait
         * for it while the writer lives, as long as the caller allows. */
        if (!f->finished_ns)
            f->finished_ns = now;
        if (alive <= 0 || f->opt.finish_wait_ms == 0 ||
            (f->opt.finish_wait_ms > 0 &&
             now - f->finished_ns >= (uint64_t)f->opt.finish_wait_ms * 1000000u)) {
            f->done = true;
            f->final_rc = 0;
            return 0;
        }
        return 1;
    }
    f->finished_ns = 0;
    if (alive == 0) {
        if (!f->writer_dead || f->dead_pid != r->writer_pid) {
            /* It may have flushed between our last look and its death. */
            f->writer_dead = true;
            f->dead_pid = r->writer_pid;
            f->dead_ns = now;
            return 2;
        }
        /* The process that waited for the writer may seal the recording
         * (rec-start does, rec-format(5) Sealing): its closing chunk is
         * worth a short wait. */
        if (now - f->dead_ns < SEAL_WAIT_NS)
            return 1;
        return fail(f, REC_EWRITER, "%s: the writer (pid %" PRIu32 ") is gone "
                    "and the recording is unfinished: chunk %" PRIu32 " ends at its "
                    "last flush, offset %" PRIu64 "; every flushed event was delivered",
                    f->path, r->writer_pid, r->chunk_no,
                    r->st == ST_END_EOF ? r->chunk_off : r->chunk_end);
    }
    if (f->opt.stall_timeout_ms > 0 &&
        now - f->last_data_ns >= (uint64_t)f->opt.stall_timeout_ms * 1000000u)
        return fail(f, REC_ESTALLED, "%s: no new data for %d ms (writer pid %"
                    PRIu32 "%s)", f->path, f->opt.stall_timeout_ms, r->writer_pid,
                    alive < 0 ? ", unknown" : " still running");
    return 1;
}

/* Sleep until inotify, the writer's pidfd or the poll timeout (capped by
 * deadline_ns) wakes us. Returns 0, or 1 if a signal interrupted. */
static int wait_change(rec_follow *f, uint64_t deadline_ns)
{
    struct pollfd p[2];
    int n = 0;
    if (f->ifd >= 0)
        p[n++] = (struct pollfd){ .fd = f->ifd, .events = POLLIN };
    /* A readable pidfd stays readable: only worth polling while we do not
     * know the writer is gone. */
    if (f->pidfd >= 0 && !f->writer_dead)
        p[n++] = (struct pollfd){ .fd = f->pidfd, .events = POLLIN };
    uint64_t now = rec_now_ns();
    int64_t ms = f->opt.poll_ms;
    if (deadline_ns != UINT64_MAX) {
        int64_t left = deadline_ns > now ? (int64_t)((deadline_ns - now + 999999) / 1000000) : 0;
        if (left < ms)
            ms = left;
    }
    int rc = poll(p, (nfds_t)n, (int)ms);
    if (rc < 0)
        return errno == EINTR ? 1 : 0;
    if (f->ifd >= 0 && (p[0].revents & POLLIN))
        read_events(f);
    return 0;
}

static void note_event(rec_follow *f)
{
    rec_reader *r = f->r;
    if (r->blk_off != f->blk_off || r->chunk_off != f->chunk_off) {
        f->blk_off = r->blk_off;
        f->idx = 0;
    }
    f->chunk_off = r->chunk_off;
    f->chunk_no = r->chunk_no;
    f->chunk_wall = r->start_wall;
    f->idx++;
}

int rec_follow_next(rec_follow *f, const rec_event **ev, int timeout_ms)
{
    if (!f || !ev)
        return REC_EINVAL;
    uint64_t deadline = timeout_ms < 0 ? UINT64_MAX
                        : rec_now_ns() + (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        if (f->done)
            return f->final_rc;
        if (!f->r) {
            int rc = try_open(f);
            if (rc < 0)
                return rc;
            if (rc == 0 && f->name_gone)
                return fail(f, REC_EREPLACED, "%s: file created and removed "
                            "before it could be read", f->path);
            if (rc == 0) {
                watch_dir(f);
                if (f->opt.stall_timeout_ms > 0 &&
                    rec_now_ns() - f->last_data_ns >=
                    (uint64_t)f->opt.stall_timeout_ms * 1000000u)
                    return fail(f, REC_ESTALLED, "%s: not created within %d ms",
                                f->path, f->opt.stall_timeout_ms);
                goto wait;
            }
        }
        int rc = rec_reader_next(f->r, ev);
        if (rc > 0) {
            f->last_data_ns = rec_now_ns();
            f->writer_dead = false;
            if (f->skipping) {
                if (f->r->blk_off == f->skip_blk && f->skip_n > 0) {
                    f->skip_n--;
                    continue;
                }
                f->skipping = false;
            }
            note_event(f);
            return 1;
        }
        if (rc < 0 && !f->r->resumable) {
            /* A file rewritten in place reads as damage: say which. */
            int c = check_file(f);
            if (c < 0)
                return f->final_rc;
            if (c > 0)
                continue;
            return fail(f, rc, "%s", rec_reader_message(f->r));
        }
        int p = rec_reader_poll(f->r);
        if (p > 0) {
            f->last_data_ns = rec_now_ns();
            continue;
        }
        if (p < 0 && !(p == REC_ETRUNCATED && f->r->resumable)) {
            int c = check_file(f);
            if (c < 0)
                return f->final_rc;
            if (c > 0)
                continue;
            const char *m = rec_reader_message(f->r);
            return fail(f, p, "%s", m ? m : rec_strerror(p));
        }
        rc = at_end(f);
        if (rc <= 0)
            return rc;
        if (rc == 2)
            continue;       /* one more look before saying it ended */
    wait:
        if (rec_now_ns() >= deadline)
            return REC_EAGAIN;
        if (wait_change(f, deadline) > 0)
            return REC_EAGAIN;
    }
}

const char *rec_follow_message(const rec_follow *f)
{
    return f && f->done && f->final_rc < 0 ? f->msg : NULL;
}

rec_reader *rec_follow_reader(rec_follow *f)
{
    return f ? f->r : NULL;
}

int rec_follow_position(const rec_follow *f, char *buf, size_t len)
{
    if (!f || !buf)
        return REC_EINVAL;
    int n = snprintf(buf, len, POS_VERSION ":%" PRIu32 ":%" PRIu64 ":%" PRIu64
                     ":%" PRIu64 ":%" PRIu64, f->chunk_no, f->chunk_off,
                     f->chunk_wall, f->blk_off, f->idx);
    return n < 0 || (size_t)n >= len ? REC_EINVAL : 0;
}
