/*
 * librecord/stream.c - per-thread stream buffers.
 *
 * The owner takes its stream with one compare-and-swap FREE -> OWNER per
 * event; a flusher takes it FREE -> FLUSHER just long enough to swap the
 * buffer. Neither side holds it while waiting for anything else, so the
 * other side only ever spins for a few instructions (or a preemption).
 */
#include <config.h>
#include <sched.h>
#include <stdlib.h>
#include "internal.h"

void rec__stream_wait(rec_stream *s, uint32_t to)
{
    for (unsigned spins = 0;; spins++) {
        uint32_t exp = REC__FREE;
        if (atomic_load_explicit(&s->state, memory_order_relaxed) == REC__FREE &&
            atomic_compare_exchange_weak_explicit(&s->state, &exp, to,
                                                  memory_order_acquire,
                                                  memory_order_relaxed))
            return;
        if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else {
            sched_yield();   /* the holder was preempted */
        }
    }
}

struct rec__buf *rec__buf_get(rec_writer *w)
{
    struct rec__buf *b = w->spare;
    if (b) {
        w->spare = b->next;
        w->nspare--;
    } else if ((b = malloc(sizeof *b + w->opt.buffer_bytes))) {
        b->cap = w->opt.buffer_bytes;
    } else {
        return NULL;
    }
    b->next = NULL;
    b->len = 0;
    return b;
}

void rec__buf_put(rec_writer *w, struct rec__buf *b)
{
    /* Enough spares that no stream waits for malloc after warm-up. */
    if (w->nspare > w->nstreams + 2) {
        free(b);
        return;
    }
    b->next = w->spare;
    w->spare = b;
    w->nspare++;
}

/* Queue b for the writer; with w->hlock held. */
static void queue_full(rec_writer *w, struct rec__buf *b)
{
    b->next = NULL;
    if (w->full_tail)
        w->full_tail->next = b;
    else
        w->full_head = b;
    w->full_tail = b;
}

/* Owner, inside its critical section: the event does not fit. Queue the
 * buffer for the writer (the event's caller writes it after releasing the
 * stream) and continue in a spare. Queued buffers of the current chunk
 * generation are taken by any rotation before it bumps the generation. */
int rec__stream_full(rec_stream *s, size_t need)
{
    rec_writer *w = s->w;
    struct rec__buf *b = s->buf;
    if (b->len == 0 || need > b->cap)
        return REC_EFULL;
    pthread_mutex_lock(&w->hlock);
    struct rec__buf *n = rec__buf_get(w);
    if (n) {
        queue_full(w, b);
        s->buf = n;
        s->drain = true;
    }
    pthread_mutex_unlock(&w->hlock);
    return n ? 0 : REC_ENOMEM;
}

int rec_stream_open(rec_writer *w, rec_stream **out)
{
    if (!w || !out)
        return REC_EINVAL;
    rec_stream *s = calloc(1, sizeof *s);
    if (!s)
        return REC_ENOMEM;
    atomic_init(&s->state, REC__FREE);
    s->w = w;
    s->tick_ns = w->opt.tick_ns;
    pthread_mutex_lock(&w->slock);
    pthread_mutex_lock(&w->hlock);
    w->nstreams++;
    s->buf = rec__buf_get(w);
    pthread_mutex_unlock(&w->hlock);
    if (!s->buf) {
        w->nstreams--;
        pthread_mutex_unlock(&w->slock);
        free(s);
        return REC_ENOMEM;
    }
    s->next = w->streams;
    if (w->streams)
        w->streams->prev = s;
    w->streams = s;
    pthread_mutex_unlock(&w->slock);
    *out = s;
    return 0;
}

/* Unlink s and queue its data; with w->slock held. Queueing happens while
 * the stream is held so that no rotation can come between the events and
 * their pool entries. */
void rec__stream_detach(rec_stream *s)
{
    rec_writer *w = s->w;
    rec__stream_wait(s, REC__OWNER);
    pthread_mutex_lock(&w->hlock);
    struct rec__buf *b = s->buf;
    s->buf = NULL;
    if (b && b->len)
        queue_full(w, b);
    else if (b)
        rec__buf_put(w, b);
    w->nstreams--;
    pthread_mutex_unlock(&w->hlock);
    if (s->prev)
        s->prev->next = s->next;
    else
        w->streams = s->next;
    if (s->next)
        s->next->prev = s->prev;
    atomic_store_explicit(&s->state, REC__FREE, memory_order_release);
}

int rec_stream_close(rec_stream *s)
{
    if (!s)
        return 0;
    rec_writer *w = s->w;
    pthread_mutex_lock(&w->slock);
    rec__stream_detach(s);
    pthread_mutex_unlock(&w->slock);
    free(s);
    return rec__writer_drain(w);
}
