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
#define RECS_REQ_TRUNCATED 0x02u  /* the walk stopped at the depth limit */
#define RECS_REQ_COMPLETE  0x04u  /* CFI walk: no frameless-leaf correction */
#define RECS_REQ_EARLY     0x08u  /* a module's table was not built yet */

/* One sample request as the handler leaves it; frames[] has the queue's
 * depth slots, nframes of them valid (return addresses, innermost first,
 * the interrupted pc excluded). */
typedef struct recs__request {
    uint64_t time_ns;          /* CLOCK_MONOTONIC */
    uint64_t period_ns;        /* period * (overrun + 1) */
    uint64_t pc, sp, fp, lr;   /* lr: aarch64 link register, else 0 */
    uint16_t nframes;
    uint16_t nwindow;          /* valid words in window[] */
    uint32_t flags;
    uint64_t window[RECS_WINDOW_WORDS];
    uint64_t frames[];
} recs__request;

typedef struct recs__queue {
    _Atomic uint32_t lock;
    uint32_t capacity;         /* slots */
    uint32_t count;            /* filled slots; written under the lock */
    uint32_t depth;            /* frames per slot */
    size_t slot_size;
    unsigned char *slots;      /* capacity * slot_size bytes */
} recs__queue;

static inline size_t recs__request_size(uint32_t depth)
{
    return (sizeof(recs__request) + depth * sizeof(uint64_t) + 15) & ~(size_t)15;
}

static inline recs__request *recs__queue_slot(const recs__queue *q, uint32_t i)
{
    return (recs__request *)(q->slots + (size_t)i * q->slot_size);
}

/* Signal-safe. Take the queue for enqueueing: false if anyone holds it. */
static inline bool recs__queue_try_enqueue_lock(recs__queue *q)
{
    uint32_t expected = RECS_UNLOCKED;
    return atomic_compare_exchange_strong_explicit(
        &q->lock, &expected, RECS_ENQUEUE,
        memory_order_acquire, memory_order_relaxed);
}

/* Signal-safe. The slot to fill, or NULL when full (caller unlocks). */
static inline recs__request *recs__queue_reserve(recs__queue *q)
{
    if (q->count >= q->capacity)
        return NULL;
    return recs__queue_slot(q, q->count);
}

/* Signal-safe. Publish the reserved slot. */
static inline void recs__queue_commit(recs__queue *q)
{
    q->count++;
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

/* Copy up to max requests out (the caller holds DEQUEUE) and empty the
 * queue; returns the number copied. Requests beyond max are dropped and
 * reported through *dropped (callers size dst to capacity so none are). */
static inline uint32_t recs__queue_take(recs__queue *q, void *dst, uint32_t max,
                                       uint32_t *dropped)
{
    uint32_t n = q->count < max ? q->count : max;
    if (n)
        memcpy(dst, q->slots, (size_t)n * q->slot_size);
    if (dropped)
        *dropped = q->count - n;
    q->count = 0;
    return n;
}

#endif
