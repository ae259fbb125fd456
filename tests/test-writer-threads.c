/* tests/test-writer-threads.c - 8 threads emit into their own streams and
 * intern new stacks while another thread flushes and rotates; no event may
 * be lost or duplicated and every reference must resolve within its chunk
 * (lazy pool emission against concurrent rotation). */
#include <config.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <rec/record.h>
#include "tap.h"
#include "writer-walk.h"

#define NTHREADS 8
#define NEVENTS 20000

static rec_writer *w;
static rec_id thread_ids[NTHREADS];
static _Atomic int done;
static _Atomic int errors;
static unsigned char seen[NTHREADS][NEVENTS];
static unsigned dup_or_bad;

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    rec_stream *s;
    if (rec_stream_open(w, &s)) {
        errors++;
        return NULL;
    }
    rec_id frames[8], stack = 0;
    for (int i = 0; i < NEVENTS; i++) {
        if (i % 97 == 0) {
            /* new pool entries appear while others rotate */
            char name[64];
            for (int k = 0; k < 8; k++) {
                rec_id fn;
                snprintf(name, sizeof name, "fn_%d_%d", t, (i / 97 + k) % 300);
                struct rec_Frame f = { .offset = (uint64_t)k };
                if (rec_intern_cstr(w, name, &fn)) {
                    errors++;
                    break;
                }
                f.function = fn;
                if (rec_intern_Frame(w, &f, &frames[k]))
                    errors++;
            }
            struct rec_StackTrace st = { .frames = frames, .frames_count = 8 };
            if (rec_intern_StackTrace(w, &st, &stack))
                errors++;
        }
        /* samplingPeriod carries the sequence number */
        struct rec_CPUTimeSample e = { .eventThread = thread_ids[t], .samplingPeriod = (uint64_t)i,
                                       .stackTrace = i % 5 ? stack : 0 };
        if (rec_emit_CPUTimeSample(s, &e))
            errors++;
    }
    if (rec_stream_close(s))
        errors++;
    return NULL;
}

static void *flusher(void *arg)
{
    (void)arg;
    unsigned n = 0;
    while (!done) {
        if ((++n % 3 == 0 ? rec_writer_rotate(w) : rec_writer_flush(w)))
            errors++;
        usleep(200);
    }
    return NULL;
}

static void count(const struct ww_event *ev, void *arg)
{
    (void)arg;
    if (ev->type != REC_TYPE_CPUTimeSample || ev->nf < 2)
        return;
    uint64_t tid = ev->f[0].v, seq = ev->f[1].v;
    int t = -1;
    for (int i = 0; i < NTHREADS; i++)
        if (thread_ids[i] == tid)
            t = i;
    if (t < 0 || seq >= NEVENTS || seen[t][seq]++)
        dup_or_bad++;
}

int main(void)
{
    char path[256];
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(path, sizeof path, "%s/test-writer-threads-%ld.rec", dir, (long)getpid());
    unlink(path);
    rec_writer_options o;
    rec_writer_options_init(&o);
    o.buffer_bytes = 4096;          /* many full-buffer hand-offs */
    o.max_chunk_bytes = 64 << 10;   /* and size rotations from them */
    if (!tap_ok(rec_writer_open(&w, path, &o) == 0, "open"))
        return tap_done();
    for (int i = 0; i < NTHREADS; i++) {
        struct rec_Thread th = { .osThreadId = 1000 + (uint64_t)i, .processId = 1000 };
        if (rec_intern_Thread(w, &th, &thread_ids[i]))
            errors++;
    }
    pthread_t tw[NTHREADS], tf;
    pthread_create(&tf, NULL, flusher, NULL);
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&tw[i], NULL, worker, (void *)(intptr_t)i);
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(tw[i], NULL);
    done = 1;
    pthread_join(tf, NULL);
    tap_ok(errors == 0, "no call failed (%d)", (int)errors);
    tap_ok(rec_writer_close(w) == 0, "close");

    struct ww_stats st;
    int rc = ww_walk(path, 0, &st, count, NULL);
    tap_ok(rc == 0, "file well formed, every reference defined earlier in its chunk (%s)", st.error);
    tap_ok(st.chunks > 2 && st.metadata_first == st.chunks, "%u chunks, each with METADATA first",
           st.chunks);
    tap_ok(st.events == NTHREADS * NEVENTS, "event count %u", st.events);
    unsigned missing = 0;
    for (int t = 0; t < NTHREADS; t++)
        for (int i = 0; i < NEVENTS; i++)
            missing += !seen[t][i];
    tap_ok(missing == 0 && dup_or_bad == 0, "each thread's events all present once (%u missing, %u dup)",
           missing, dup_or_bad);
    unlink(path);
    free(ww_defined);
    return tap_done();
}
