/*
 * libsampler/session-status.c - telling the user what happened to the recording:
 * rec-start's status pipe (REC_STATUS_FD, used only while it still names
 * what rec-start opened) and a failed write (a full disk, a file size
 * limit, an I/O error), said at once and ending the recording cleanly
 * with what fit. The program is not affected: the SIGXFSZ a write beyond
 * RLIMIT_FSIZE raises in the writing thread is taken back when that
 * thread is one of the program's, and no write here ever raises SIGPIPE
 * (recs__write_quiet). And the sampler's one-line messages on standard
 * error (recs__warn).
 */
#include <config.h>
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

_Atomic int recs__write_errno;      /* first failed write, 0 if none */

/* Signal-safe. Is sig pending for this thread (or the process)? */
static bool pending_here(int sig)
{
    sigset_t pend;

    return syscall(SYS_rt_sigpending, &pend, (size_t)(_NSIG / 8)) == 0 &&
           sigismember(&pend, sig) == 1;
}

/* Signal-safe. A sig that one of our writes raised (pending now, not
 * before it, the signal blocked meanwhile) is not the program's: taken
 * back. */
static void take_back(int sig, bool was_pending)
{
    sigset_t set;
    struct timespec zero = { 0, 0 };

    if (was_pending || !pending_here(sig))
        return;
    sigemptyset(&set);
    sigaddset(&set, sig);
    recs__real_sigtimedwait(&set, NULL, &zero);
}

/* Signal-safe. write() all of buf, retried on EINTR, that never raises
 * SIGPIPE in the program (rec-start gone, the program's stderr a closed
 * pipe): the signal is blocked in this thread around it, and one that
 * this write raised is taken back. */
ssize_t recs__write_quiet(int fd, const void *buf, size_t n)
{
    sigset_t pipe_set, old;
    bool was_pending;
    ssize_t rc;
    int err;

    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    recs__real_sigmask(SIG_BLOCK, &pipe_set, &old);
    was_pending = pending_here(SIGPIPE);
    while ((rc = write(fd, buf, n)) < 0 && errno == EINTR)
        ;
    err = errno;
    if (rc < 0 && err == EPIPE)
        take_back(SIGPIPE, was_pending);
    recs__real_sigmask(SIG_SETMASK, &old, NULL);
    errno = err;
    return rc;
}

/* One line to rec-start, if the status fd is still its pipe. */
void recs__status_send(const char *fmt, ...)
{
    char line[600];
    struct stat st;
    va_list ap;
    int n;

    if (recs__g.status_fd < 0 || fstat(recs__g.status_fd, &st) != 0 ||
        st.st_dev != recs__g.status_dev || st.st_ino != recs__g.status_ino)
        return;
    va_start(ap, fmt);
    n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (n > (int)sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    recs__write_quiet(recs__g.status_fd, line, (size_t)n);
}

/* The first failed write of the session (drain_lock held): said now on
 * stderr with the system's words, and through rec-start when the program
 * has closed its stderr; the caller stops the session. */
void recs__write_failed(int err)
{
    char msg[512];
    int expect = 0, n;

    if (!err)
        err = EIO;
    if (!atomic_compare_exchange_strong(&recs__write_errno, &expect, err))
        return;
    n = snprintf(msg, sizeof msg, "rec: writing %s: %s; the recording stops "
                 "here with what fit (the program goes on)\n",
                 recs__g.cfg.output ? recs__g.cfg.output : "the recording",
                 strerror(err));
    if (n > (int)sizeof msg - 1)
        n = (int)sizeof msg - 1;
    if (recs__g.attached || recs__write_quiet(STDERR_FILENO, msg, (size_t)n) != n) {
        msg[n - 1] = '\0';
        recs__status_send("error %s", msg);
    }
    /* The summary says the recording is short without saying the same
     * error a second time. */
    recs__status_send("stopped could not write further, see the error above");
}

/* Around writes from one of the program's threads (signals blocked):
 * a SIGXFSZ that our write raised is not the program's. */
bool recs__xfsz_pending(void)
{
    return pending_here(SIGXFSZ);
}

void recs__xfsz_take(bool was_pending)
{
    take_back(SIGXFSZ, was_pending);
}

/* Signal-safe. */
char *recs__put_u64(char *p, uint64_t v)
{
    char d[24];
    int n = 0;

    do
        d[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n)
        *p++ = d[--n];
    *p = '\0';
    return p;
}

/* Signal-safe. recs__warn for a fixed message, from any context: no
 * formatting but the pid's digits. */
void recs__warn_safe(const char *msg)
{
    char buf[512], pid[24];
    const char *who = recs__g.preloaded ? "rec-start: sampler (pid "
                                        : "libsampler (pid ";
    const char *parts[] = { who, pid, "): ", msg };
    size_t n = 0;

    if (recs__g.attached) {
        /* To rec-start, as recs__warn does; no fstat check here, the
         * descriptor is ours for the session (session-attach.c). */
        if (recs__g.status_fd >= 0) {
            const char *lp[] = { "error ", msg };
            for (size_t i = 0; i < 2; i++)
                for (const char *p = lp[i]; *p && n < sizeof buf - 1; p++)
                    buf[n++] = *p;
            buf[n++] = '\n';
            recs__write_quiet(recs__g.status_fd, buf, n);
        }
        return;
    }
    recs__put_u64(pid, (uint64_t)getpid());
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        for (const char *p = parts[i]; *p && n < sizeof buf - 1; p++)
            buf[n++] = *p;
    buf[n++] = '\n';
    recs__write_quiet(STDERR_FILENO, buf, n);
}

/* Our lines land in the middle of the program's stderr: they say who
 * writes them (rec-start's sampler, or libsampler linked by the program)
 * and in which process, and are exactly one line each, written at once,
 * whatever the paths or values they quote hold; never on stdout. */
void recs__warn(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    int n = snprintf(buf, sizeof buf, "%s (pid %d): ",
                     recs__g.preloaded ? "rec-start: sampler" : "libsampler",
                     (int)getpid());
    int head = n;

    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof buf - 2)
        n = (int)sizeof buf - 2;
    for (int i = head; i < n; i++)
        if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
            buf[i] = '?';
    /* Attached, the program's stderr is not ours to write to: rec-start
     * says it. */
    if (recs__g.attached) {
        buf[n] = '\0';
        recs__status_send("error %s", buf + head);
        return;
    }
    buf[n++] = '\n';
    recs__write_quiet(STDERR_FILENO, buf, (size_t)n);
}
