/*
 * bench/stream-bench.c - live streaming figures (bench/stream.sh):
 *   stream-bench gen PATH RATE SECONDS FLUSH_MS
 *       a writer emitting RATE events per second (paced every ms) for
 *       SECONDS, flushing every FLUSH_MS, then closing;
 *   stream-bench follow PATH
 *       a rec_follow consumer: per event, the wall-clock time at which it
 *       was delivered minus the event's own time; prints the count, the
 *       median and p99 latency and the follower's CPU time;
 *   stream-bench pipe
 *       the same for a recording read from standard input (rec-start -o -
 *       | stream-bench pipe), with the number of chunks and bytes read.
 */
#include <config.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "rec/record.h"

static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Event-to-consumer latencies, and the consumer's CPU time. */
typedef struct lats {
    uint64_t *v;
    size_t n, cap;
    double median_ms, p99_ms, cpu_ms;
} lats;

static bool lats_push(lats *l, uint64_t event_ns)
{
    uint64_t now = wall_ns();
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 1 << 16;
        uint64_t *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return false;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = now > event_ns ? now - event_ns : 0;
    return true;
}

static void lats_finish(lats *l)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    qsort(l->v, l->n, sizeof *l->v, cmp_u64);
    l->median_ms = l->n ? (double)l->v[l->n / 2] / 1e6 : 0;
    l->p99_ms = l->n ? (double)l->v[l->n * 99 / 100] / 1e6 : 0;
    l->cpu_ms = (double)ru.ru_utime.tv_sec * 1e3 + (double)ru.ru_utime.tv_usec / 1e3 +
                (double)ru.ru_stime.tv_sec * 1e3 + (double)ru.ru_stime.tv_usec / 1e3;
}

static int gen(const char *path, double rate, double secs, double flush_ms)
{
    rec_writer_options o;
    rec_writer *w;
    rec_stream *s;
    rec_id name, thr;
    rec_writer_options_init(&o);
    o.overwrite = true;
    if (rec_writer_open(&w, path, &o) < 0 || rec_stream_open(w, &s) < 0) {
        perror(path);
        return 1;
    }
    uint64_t t0 = rec_now_ns(), last_flush = t0, n = 0;
    uint64_t end = t0 + (uint64_t)(secs * 1e9);
    for (;;) {
        uint64_t now = rec_now_ns();
        if (now >= end)
            break;
        uint64_t due = (uint64_t)((double)(now - t0) * rate / 1e9);
        for (; n < due; n++) {
            rec_intern_cstr(w, "gen", &name);
            struct rec_Thread t = { 1, name, 1 };
            rec_intern_Thread(w, &t, &thr);
            struct rec_CPUTimeSample e = { thr, 10000000, false, false, 0, now };
            rec_emit_CPUTimeSample(s, &e);
        }
        if (now - last_flush >= (uint64_t)(flush_ms * 1e6)) {
            rec_writer_flush(w);
            last_flush = now;
        }
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
    rec_stream_close(s);
    return rec_writer_close(w) < 0;
}

static int follow(const char *path)
{
    rec_follow_options o;
    rec_follow *f;
    const rec_event *ev;
    lats l = { 0 };
    rec_follow_options_init(&o);
    o.stall_timeout_ms = 30000;
    if (rec_follow_open(&f, path, &o) < 0)
        return 1;
    int rc;
    while ((rc = rec_follow_next(f, &ev, -1)) > 0)
        if (!lats_push(&l, rec_event_time_ns(ev)))
            return 1;
    lats_finish(&l);
    printf("events %zu median_ms %.1f p99_ms %.1f cpu_ms %.1f rc %d\n", l.n,
           l.median_ms, l.p99_ms, l.cpu_ms, rc);
    rec_follow_close(f);
    free(l.v);
    return rc < 0;
}

static int pipe_read(void)
{
    rec_reader *r;
    const rec_event *ev;
    rec_chunk_info ci;
    lats l = { 0 };
    uint64_t chunks = 0, bytes = 0, last = UINT64_MAX;
    int rc = fcntl(0, F_DUPFD_CLOEXEC, 3);
    if (rc < 0 || rec_reader_open_fd(&r, rc, "-", 0) < 0)
        return 1;
    while ((rc = rec_reader_next(r, &ev)) > 0) {
        if (rec_reader_chunk(r, &ci) == 0 && ci.offset != last) {
            last = ci.offset;
            chunks++;
            bytes += ci.size;
        }
        /* Samples only: the module mappings repeated in every chunk are
         * dated when they are written, not when something happened. */
        if (rec_type_id(rec_event_type(ev)) != REC_TYPE_CPUTimeSample)
            continue;
        if (!lats_push(&l, rec_event_time_ns(ev)))
            return 1;
    }
    lats_finish(&l);
    printf("samples %zu median_ms %.1f p99_ms %.1f cpu_ms %.1f chunks %llu "
           "bytes %llu rc %d\n", l.n, l.median_ms, l.p99_ms, l.cpu_ms,
           (unsigned long long)chunks, (unsigned long long)bytes, rc);
    rec_reader_close(r);
    free(l.v);
    return rc < 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "pipe") == 0)
        return pipe_read();
    if (argc == 6 && strcmp(argv[1], "gen") == 0)
        return gen(argv[2], atof(argv[3]), atof(argv[4]), atof(argv[5]));
    if (argc == 3 && strcmp(argv[1], "follow") == 0)
        return follow(argv[2]);
    fprintf(stderr, "usage: stream-bench gen PATH RATE SECONDS FLUSH_MS | "
            "follow PATH | pipe\n");
    return 2;
}
