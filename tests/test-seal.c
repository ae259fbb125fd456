/* tests/test-seal.c - rec_writer_open_seal(): a recording whose writer
 * died is finished at its last flush and continued in a SEALED chunk;
 * readers read exactly what they read before, then the sealing events;
 * a recording closed cleanly, a damaged one and a file that is no
 * recording are left alone. */
#include <config.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <rec/record.h>
#include <rec/events.h>
#include "tap.h"

static char path[256];

/* A writer process: `flushed` samples flushed, then `unflushed` more
 * emitted but never flushed, and garbage past the committed end, as a
 * write caught in the middle leaves it; then it dies (SIGKILL). With
 * close, it closes the recording cleanly instead. */
static void writer_child(int flushed, int unflushed, bool close_it)
{
    rec_writer *w;
    rec_stream *st;
    rec_id th;
    struct rec_Thread t = { .osThreadId = 7, .processId = 7 };

    if (rec_writer_open(&w, path, NULL) || rec_stream_open(w, &st) ||
        rec_intern_Thread(w, &t, &th))
        _exit(3);
    for (int i = 0; i < flushed + unflushed; i++) {
        struct rec_CPUTimeSample s = { .eventThread = th,
                                       .samplingPeriod = 10000000,
                                       .startTime = rec_now_ns() };
        rec_emit_CPUTimeSample(st, &s);
        if (i + 1 == flushed)
            rec_writer_flush(w);
    }
    if (close_it) {
        rec_stream_close(st);
        _exit(rec_writer_close(w) ? 4 : 0);
    }
    {
        int fd = open(path, O_WRONLY | O_APPEND);
        if (write(fd, "half a block", 12) != 12)
            _exit(5);
        close(fd);
    }
    kill(getpid(), SIGKILL);
}

static void run_writer(int flushed, int unflushed, bool close_it)
{
    pid_t pid;

    unlink(path);
    pid = fork();
    if (pid == 0)
        writer_child(flushed, unflushed, close_it);
    waitpid(pid, NULL, 0);
}

/* Events of the file: samples, lost ones of reason sealed; the reader's
 * state at the end. */
struct count {
    int samples, sealed_lost, rc;
    bool warned, sealed;
};

static struct count read_back(void)
{
    struct count c = { 0 };
    rec_reader *r;
    const rec_event *ev;

    if (rec_reader_open(&r, path, 0) < 0) {
        c.rc = -100;
        return c;
    }
    while ((c.rc = rec_reader_next(r, &ev)) > 0) {
        const char *name = rec_type_name(rec_event_type(ev));
        if (!strcmp(name, "CPUTimeSample"))
            c.samples++;
        else if (!strcmp(name, "CPUTimeSampleLost"))
            c.sealed_lost++;
    }
    c.warned = rec_reader_warning(r) != NULL;
    c.sealed = rec_reader_sealed(r);
    rec_reader_close(r);
    return c;
}

static int seal_with_lost(rec_seal_info *info)
{
    rec_writer *w;
    rec_stream *st;
    rec_id th, reason;
    struct rec_Thread t = { .osThreadId = 7, .processId = 7 };
    int rc = rec_writer_open_seal(&w, path, info);

    if (rc < 0)
        return rc;
    if (rec_stream_open(w, &st) || rec_intern_Thread(w, &t, &th) ||
        rec_intern_cstr(w, "sealed", &reason))
        return -99;
    struct rec_CPUTimeSampleLost l = { .eventThread = th, .lostSamples = 3,
                                       .lostTime = 30000000, .reason = reason,
                                       .startTime = rec_now_ns() };
    rec_emit_CPUTimeSampleLost(st, &l);
    rec_stream_close(st);
    return rec_writer_close(w);
}

/* Sealing the file is refused with want, and leaves it as it was. */
static void refused(int want, const char *what)
{
    struct stat before, after;
    rec_writer *w = NULL;
    int rc;

    stat(path, &before);
    rc = rec_writer_open_seal(&w, path, NULL);
    stat(path, &after);
    tap_ok(rc == want && !w && after.st_size == before.st_size &&
           after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
           after.st_mtim.tv_nsec == before.st_mtim.tv_nsec,
           "%s, the file unchanged (rc %d)", what, rc);
}

int main(void)
{
    struct count before, after;
    rec_seal_info info;
    struct stat st;
    rec_writer *w;
    int rc;

    snprintf(path, sizeof path, "%s/test-seal-%ld.rec",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());

    /* A writer killed after a flush. */
    run_writer(20, 5, false);
    before = read_back();
    tap_ok(before.samples == 20 && before.warned && !before.sealed,
           "killed writer: 20 flushed samples, read with a warning (%d)",
           before.samples);
    stat(path, &st);
    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    rc = seal_with_lost(&info);
    tap_ok(rc == 0 && info.was_open && info.dropped >= 12 &&
           info.committed + info.dropped == (uint64_t)st.st_size,
           "sealed: the OPEN chunk finished at %llu bytes, %llu never "
           "committed cut off (rc %d)", (unsigned long long)info.committed,
           (unsigned long long)info.dropped, rc);
    after = read_back();
    tap_ok(after.rc == 0 && after.samples == 20 && after.sealed_lost == 1 &&
           !after.warned && after.sealed,
           "read back: the same 20 samples, the sealing event, no warning, "
           "sealed (rc %d, %d samples)", after.rc, after.samples);
    tap_ok(rec_writer_open_seal(&w, path, NULL) == REC_EEXIST,
           "a sealed recording is closed: nothing more to seal");

    /* An info smaller than the first version: refused, nothing written. */
    run_writer(3, 1, false);
    {
        struct { size_t size; uint64_t committed; uint64_t guard; } old;
        old.size = sizeof old.size + sizeof old.committed;
        old.committed = 0;
        old.guard = 0x5a5a5a5a5a5a5a5aull;
        rc = rec_writer_open_seal(&w, path, (rec_seal_info *)&old);
        if (rc == 0)
            rec_writer_close(w);
        tap_ok(rc == REC_EINVAL && old.committed == 0 &&
               old.guard == 0x5a5a5a5a5a5a5a5aull,
               "info smaller than the first version: REC_EINVAL, untouched (rc %d)", rc);
    }
    /* A newer caller's larger info: filled up to what the library knows,
     * its own members left alone. */
    {
        struct { rec_seal_info info; uint64_t newer; } big;
        memset(&big, 0, sizeof big);
        big.info.size = sizeof big;
        big.newer = 0x5a5a5a5a5a5a5a5aull;
        rc = rec_writer_open_seal(&w, path, &big.info);
        if (rc == 0)
            rec_writer_close(w);
        tap_ok(rc == 0 && big.info.committed > 0 && big.info.size == sizeof big &&
               big.newer == 0x5a5a5a5a5a5a5a5aull,
               "info of a newer, larger size: filled up to the library's size only");
    }

    /* Closed cleanly: left alone. */
    run_writer(10, 0, true);
    refused(REC_EEXIST, "a recording closed cleanly: REC_EEXIST");

    /* A damaged chunk header: refused, unchanged. */
    run_writer(10, 0, false);
    {
        int fd = open(path, O_RDWR);
        unsigned char b = 0xff;
        if (pwrite(fd, &b, 1, 30) != 1)
            return 99;
        close(fd);
    }
    refused(REC_ECORRUPT, "a damaged chunk header: REC_ECORRUPT");

    /* Not a recording. */
    {
        int fd = open(path, O_WRONLY | O_TRUNC);
        if (write(fd, "#!/bin/sh\necho hello, this is no recording\n", 44) != 44)
            return 99;
        close(fd);
    }
    tap_ok(rec_writer_open_seal(&w, path, NULL) == REC_EMAGIC,
           "not a recording: REC_EMAGIC");
    tap_ok(rec_writer_open_seal(&w, "/nonexistent/x.rec", NULL) == REC_EIO,
           "no file: REC_EIO");
    unlink(path);
    return tap_done();
}
