/*
 * libsampler/queue.h - the per-thread sample-request queue and its
 * tri-state lock (JEP 509): the signal handler enqueues with a try-only
 * compare-and-swap UNLOCKED -> ENQUEUE and never waits; the drainer takes
 * UNLOCKED -> DEQUEUE. The handler of a thread can only interrupt its own
 * thread, so at most one enqueuer exists per queue.
 *
 * Inline so that the handler needs no call through the PLT and so that the
 * unit test can exercise the exact code.
 */
#ifndef RECS_QUEUE_H
#define RECS_QUEUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { RECS_UNLOCKED = 0, RECS_ENQUEUE = 1, RECS_DEQUEUE = 2 };

/* Words copied from the top of the stack for the frameless-leaf correction. */
#define RECS_WINDOW_WORDS 16

/* Request flags. */
#define RECS_REQ_FAILED    0x01u  /* no usable context: stack is null */
#define RECS_REQ_COMPLETE  0x04u  /* CFI walk: no frameless-leaf correction */
#define RECS_REQ_WINDOW    0x10u  /* words[] starts with the window */
/* Bits 8..11: why the walk ended (RECS_STOP_*, unwind-fp.h); 0 at the
 * thread's root. */
#define RECS_REQ_STOP_SHIFT 8
#define RECS_REQ_STOP_MASK  0x0f00u

/* One sample request as the handler leaves it, followed in words[] by the
 * stack window (RECS_WINDOW_WORDS words, nwindow of them valid; only with
 * RECS_REQ_WINDOW: the frame-pointer mode's leaf correction alone reads
 * it), then nframes return addresses (innermost first, the interrupted pc
 * excluded), then npy Python frames (innermost first). A request takes only the bytes it fills: stacks are mostly
 * far shorter than the depth, so a queue holds several times more of
 * them, and the sampler thread, woken when one is half full, sleeps
 * longer. */
typedef struct recs__request {
    uint64_t time_ns;          /* CLOCK_MONOTONIC */
    uint64_t period_ns;        /* period * (overrun + 1) */
    uint64_t pc, sp, fp, lr;   /* lr: aarch64 link register, else 0 */
    uint16_t nframes;
    uint16_t nwindow;          /* valid words of the window */
    uint16_t flags;
    uint16_t npy;              /* Python frames after the return
                                  addresses (unwind-python.h) */
    uint64_t words[];
} recs__request;

typedef struct recs__queue {
    _Atomic uint32_t lock;
    uint32_t count;            /* requests; written under the lock */
    uint32_t depth;            /* frames per request, at most */
    uint32_t window;           /* window words each request reserves */
    size_t size;               /* bytes at slots */
    size_t used;               /* bytes filled; written under the lock */
    unsigned char *slots;
} recs__queue;

/* The bytes of the largest request: depth frames and window words. */
static inline size_t recs__request_size(uint32_t depth, uint32_t window)
{
    return sizeof(recs__request) + ((size_t)depth + window) * sizeof(uint64_t);
}

/* Signal-safe. (Like strchr, const in, writable out: the handler fills
 * what the drain reads.) */
static inline uint64_t *recs__request_window(const recs__request *r)
{
    return (uint64_t *)r->words;
}

/* Signal-safe. */
static inline uint64_t *recs__request_frames(const recs__request *r)
{
    return (uint64_t *)r->words +
           (r->flags & RECS_REQ_WINDOW ? RECS_WINDOW_WORDS : 0);
}

/* Signal-safe. Record why r's walk ended (the first reason given). */
static inline void recs__request_set_stop(recs__request *r, unsigned stop)
{
    if (!(r->flags & RECS_REQ_STOP_MASK))
        r->flags = (uint16_t)(r->flags | ((stop << RECS_REQ_STOP_SHIFT) &
                                          RECS_REQ_STOP_MASK));
}

static inline unsigned recs__request_stop(const recs__request *r)
{
    return (r->flags & RECS_REQ_STOP_MASK) >> RECS_REQ_STOP_SHIFT;
}

/* Signal-safe. The bytes r takes, as filled. */
static inline size_t recs__request_bytes(const recs__request *r)
{
    return recs__request_size((uint32_t)r->nframes + r->npy,
                              r->flags & RECS_REQ_WINDOW ? RECS_WINDOW_WORDS : 0);
}

/* Signal-safe. Words free after r's frames, for its Python frames: the
 * queue reserved room for the full depth, and what is left beyond. */
static inline size_t recs__request_spare(const recs__queue *q,
                                         const recs__request *r)
{
    size_t at = (size_t)((const unsigned char *)r - q->slots) +
                recs__request_bytes(r);
    return at < q->size ? (q->size - at) / sizeof(uint64_t) : 0;
}

/* Signal-safe. Take the queue for enqueueing: false if anyone holds it. */
static inline bool recs__queue_try_enqueue_lock(recs__queue *q)
{
    uint32_t expected = RECS_UNLOCKED;
    return atomic_compare_exchange_strong_explicit(
        &q->lock, &expected, RECS_ENQUEUE,
        memory_order_acquire, memory_order_relaxed);
}

/* Signal-safe. Room for the largest request, or NULL when full (caller
 * unlocks). */
static inline recs__request *recs__queue_reserve(recs__queue *q)
{
    if (!q->slots ||
        q->size - q->used < recs__request_size(q->depth, q->window))
        return NULL;
    return (recs__request *)(q->slots + q->used);
}

/* Signal-safe. Publish the request filled at the reserved place; true
 * when the queue just became half full. */
static inline bool recs__queue_commit(recs__queue *q, const recs__request *r)
{
    size_t half = q->size / 2, before = q->used;
    q->used += recs__request_bytes(r);
    q->count++;
    return before < half && q->used >= half;
}

/* Signal-safe. */
static inline void recs__queue_unlock(recs__queue *q)
{
    atomic_store_explicit(&q->lock, RECS_UNLOCKED, memory_order_release);
}

/* Take the queue for draining. The enqueuer holds the lock only for the
 * duration of one handler, so retry a bounded number of times (yielding
 * through the callback if given) and give up: the next drain gets it. */
static inline bool recs__queue_try_dequeue_lock(recs__queue *q, int tries,
                                               void (*pause)(void))
{
    for (int i = 0; i < tries; i++) {
        uint32_t expected = RECS_UNLOCKED;
        if (atomic_compare_exchange_strong_explicit(
                &q->lock, &expected, RECS_DEQUEUE,
                memory_order_acquire, memory_order_relaxed))
            return true;
        if (pause)
            pause();
    }
    return false;
}

/* Copy every request out to dst, which has room for q->size bytes (the
 * caller holds DEQUEUE), and empty the queue; returns the number of
 * requests, and their bytes in *bytes. */
static inline uint32_t recs__queue_take(recs__queue *q, void *dst, size_t *bytes)
{
    uint32_t n = q->count;
    *bytes = q->used;
    if (q->used)
        memcpy(dst, q->slots, q->used);
    q->count = 0;
    q->used = 0;
    return n;
}

#endif
