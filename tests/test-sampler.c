/*
 * tests/test-sampler.c - unit tests of the sampler's pieces that do not
 * need a running recording: settings parsing (session-throttle.c), the queue and
 * its tri-state lock (queue.h), the frame-pointer walker on a fake stack
 * (unwind-fp.c).
 */
#include <config.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tap.h"
#include "../libsampler/session-throttle.h"
#include "../libsampler/queue.h"
#include "../libsampler/unwind-fp.h"

static void test_durations(void)
{
    uint64_t ns = 0;
    tap_ok(recs__parse_duration("10ms", &ns) == 0 && ns == 10000000, "10ms");
    tap_ok(recs__parse_duration("500us", &ns) == 0 && ns == 500000, "500us");
    tap_ok(recs__parse_duration("1.5s", &ns) == 0 && ns == 1500000000, "1.5s");
    tap_ok(recs__parse_duration(" 20 ms ", &ns) == 0 && ns == 20000000, "spaces");
    tap_ok(recs__parse_duration("2m", &ns) == 0 && ns == 120000000000ull, "2m");
    tap_ok(recs__parse_duration("10", &ns) == REC_EINVAL, "unit required");
    tap_ok(recs__parse_duration("ms", &ns) == REC_EINVAL, "number required");
    tap_ok(recs__parse_duration("-1ms", &ns) == REC_EINVAL, "negative rejected");
    tap_ok(recs__parse_duration("1e3ms", &ns) == REC_EINVAL, "exponent rejected");
    tap_ok(recs__parse_duration("10 parsecs", &ns) == REC_EINVAL, "bad unit");
    tap_ok(recs__parse_duration(NULL, &ns) == REC_EINVAL, "NULL");
}

static void test_throttle(void)
{
    recs__throttle t;
    tap_ok(recs__parse_throttle("10ms", &t) == 0 && !t.is_rate &&
           t.period_ns == 10000000, "throttle period");
    tap_ok(recs__throttle_period(&t, 8) == 10000000, "period ignores cpus");
    tap_ok(recs__parse_throttle("500/s", &t) == 0 && t.is_rate &&
           t.rate_per_s == 500, "throttle rate");
    tap_ok(recs__throttle_period(&t, 2) == 4000000, "500/s on 2 cpus = 4ms");
    tap_ok(recs__throttle_period(&t, 0) == 2000000, "0 cpus counts as 1");
    tap_ok(recs__parse_throttle("1/ms", &t) == 0 && t.rate_per_s == 1000,
           "rate per ms");
    tap_ok(recs__parse_throttle("1us", &t) == REC_EINVAL, "period too short");
    tap_ok(recs__parse_throttle("20s", &t) == REC_EINVAL, "period too long");
    tap_ok(recs__parse_throttle("0/s", &t) == REC_EINVAL, "zero rate");
    tap_ok(recs__parse_throttle("5/x", &t) == REC_EINVAL, "bad rate unit");
    tap_ok(recs__parse_throttle("1e9/s", &t) == REC_EINVAL, "exponent rate");
    tap_ok(recs__parse_throttle("100000000/s", &t) == 0 &&
           recs__throttle_period(&t, 1) == RECS_MIN_PERIOD_NS, "rate clamped");
}

static void test_misc_parsers(void)
{
    uint64_t v;
    bool b;
    int sig;
    tap_ok(recs__parse_size("64M", &v) == 0 && v == 64u << 20, "64M");
    tap_ok(recs__parse_size("1KiB", &v) == 0 && v == 1024, "1KiB");
    tap_ok(recs__parse_size("4096", &v) == 0 && v == 4096, "4096");
    tap_ok(recs__parse_size("12x", &v) == REC_EINVAL, "bad size");
    tap_ok(recs__parse_size("99999999999999999999G", &v) == REC_EINVAL, "size overflow");
    tap_ok(recs__parse_uint("64", 1, 1024, &v) == 0 && v == 64, "uint");
    tap_ok(recs__parse_uint("0", 1, 1024, &v) == REC_EINVAL, "uint min");
    tap_ok(recs__parse_bool("yes", &b) == 0 && b, "bool yes");
    tap_ok(recs__parse_bool("0", &b) == 0 && !b, "bool 0");
    tap_ok(recs__parse_bool("maybe", &b) == REC_EINVAL, "bool bad");
    tap_ok(recs__parse_signal("SIGPROF", &sig) == 0 && sig == SIGPROF, "SIGPROF");
    tap_ok(recs__parse_signal("prof", &sig) == 0 && sig == SIGPROF, "prof");
    tap_ok(recs__parse_signal("27", &sig) == 0 && sig == 27, "number");
    tap_ok(recs__parse_signal("SIGRTMIN+3", &sig) == 0 && sig == SIGRTMIN + 3, "RTMIN+3");
    tap_ok(recs__parse_signal("rtmax-1", &sig) == 0 && sig == SIGRTMAX - 1, "rtmax-1");
    tap_ok(recs__parse_signal("SIGKILL", &sig) == REC_EINVAL, "SIGKILL refused");
    tap_ok(recs__parse_signal("SIGSEGV", &sig) == REC_EINVAL, "SIGSEGV refused");
    tap_ok(recs__parse_signal("RTMIN+99", &sig) == REC_EINVAL, "RTMIN+99 refused");
    tap_ok(recs__parse_signal("SIGFOO", &sig) == REC_EINVAL, "unknown name");
}

/* ---- queue ---- */

static void test_queue(void)
{
    recs__queue q;
    unsigned char copy[4 * 1024];
    recs__request *r, *c;
    size_t bytes, full = recs__request_size(4, 0);
    uint32_t n;

    memset(&q, 0, sizeof q);
    q.depth = 4;
    q.size = 2 * full;
    q.slots = calloc(1, q.size);

    tap_ok(recs__queue_try_enqueue_lock(&q), "enqueue lock from UNLOCKED");
    tap_ok(!recs__queue_try_enqueue_lock(&q), "enqueue lock is not reentrant");
    tap_ok(!recs__queue_try_dequeue_lock(&q, 3, NULL), "drainer gives up while ENQUEUE");
    r = recs__queue_reserve(&q);
    memset(r, 0, full);
    r->pc = 1;
    r->nframes = 4;
    recs__request_frames(r)[3] = 0xf4;
    tap_ok(recs__queue_commit(&q, r), "a full-depth request fills half: wake");
    recs__queue_unlock(&q);

    tap_ok(recs__queue_try_enqueue_lock(&q) && (r = recs__queue_reserve(&q)),
           "room for a second full-depth request");
    memset(r, 0, full);
    r->pc = 2;
    r->nframes = 1;
    recs__request_frames(r)[0] = 0xf1;
    tap_ok(!recs__queue_commit(&q, r), "already past half: no second wake");
    tap_ok(q.used == full + recs__request_size(1, 0),
           "a short request takes only its frames (%zu bytes)", q.used);
    tap_ok(recs__queue_reserve(&q) == NULL,
           "no room for another full-depth request: full");
    recs__queue_unlock(&q);

    tap_ok(recs__queue_try_dequeue_lock(&q, 1, NULL), "dequeue lock");
    tap_ok(!recs__queue_try_enqueue_lock(&q), "handler fails while DEQUEUE (lost: busy)");
    n = recs__queue_take(&q, copy, &bytes);
    c = (recs__request *)copy;
    tap_ok(n == 2 && bytes == full + recs__request_size(1, 0) && c->pc == 1 &&
           recs__request_frames(c)[3] == 0xf4, "take copies the first request");
    c = (recs__request *)(copy + recs__request_bytes(c));
    tap_ok(c->pc == 2 && recs__request_frames(c)[0] == 0xf1,
           "the second follows at the first's size");
    tap_ok(q.count == 0 && q.used == 0, "take empties");
    recs__queue_unlock(&q);
    tap_ok(atomic_load(&q.lock) == RECS_UNLOCKED, "unlocked");

    r = (recs__request *)copy;
    memset(r, 0, sizeof *r);
    r->flags = RECS_REQ_WINDOW;
    r->nframes = 2;
    tap_ok(recs__request_frames(r) == r->words + RECS_WINDOW_WORDS &&
           recs__request_window(r) == r->words &&
           recs__request_bytes(r) == recs__request_size(2, RECS_WINDOW_WORDS),
           "the window precedes the frames when the request has one");
    tap_ok(recs__request_size(64, 0) % 8 == 0 &&
           recs__request_size(64, 0) == 64 * 8 + sizeof(recs__request),
           "request sizes keep 8-byte alignment");
    free(q.slots);
}

/* Concurrent stress: one "handler" thread enqueues with try-only locking,
 * the main thread drains; every request is either taken or counted lost. */
static recs__queue sq;
static atomic_int stress_done;
static uint64_t enq, lost_busy, lost_full;

static void *enqueuer(void *arg)
{
    (void)arg;
    for (uint64_t i = 1; i <= 200000; i++) {
        if (!recs__queue_try_enqueue_lock(&sq)) {
            lost_busy++;
            continue;
        }
        recs__request *r = recs__queue_reserve(&sq);
        if (!r) {
            recs__queue_unlock(&sq);
            lost_full++;
            continue;
        }
        r->pc = i;
        r->flags = 0;
        r->nframes = (uint16_t)(i % 3);
        recs__queue_commit(&sq, r);
        recs__queue_unlock(&sq);
        enq++;
    }
    atomic_store(&stress_done, 1);
    return NULL;
}

static void test_queue_stress(void)
{
    pthread_t t;
    static unsigned char buf[64 * 1024];
    uint64_t taken = 0, last = 0;
    int ordered = 1;

    memset(&sq, 0, sizeof sq);
    sq.depth = 2;
    sq.size = 16 * recs__request_size(2, 0);
    sq.slots = calloc(1, sq.size);
    pthread_create(&t, NULL, enqueuer, NULL);
    for (;;) {
        int done = atomic_load(&stress_done);
        if (recs__queue_try_dequeue_lock(&sq, 1, NULL)) {
            size_t bytes, off = 0;
            uint32_t n = recs__queue_take(&sq, buf, &bytes);
            recs__queue_unlock(&sq);
            for (uint32_t i = 0; i < n; i++) {
                const recs__request *r = (const recs__request *)(buf + off);
                if (r->pc <= last || r->nframes != r->pc % 3)
                    ordered = 0;
                last = r->pc;
                off += recs__request_bytes(r);
            }
            if (off != bytes)
                ordered = 0;
            taken += n;
        }
        if (done && sq.count == 0)
            break;
    }
    pthread_join(t, NULL);
    tap_ok(taken == enq, "stress: every enqueued request drained (%llu)",
           (unsigned long long)taken);
    tap_ok(enq + lost_busy + lost_full == 200000,
           "stress: enqueued + lost = attempts (busy %llu, full %llu)",
           (unsigned long long)lost_busy, (unsigned long long)lost_full);
    tap_ok(ordered, "stress: requests drained in order, each at its own size");
    free(sq.slots);
}

/* ---- frame-pointer walker ---- */

static void test_fpwalk(void)
{
    /* A fake stack: frames at words 4, 10, 20 chained upwards. */
    static uint64_t stack[32] __attribute__((aligned(16)));
    uint64_t lo = (uint64_t)(uintptr_t)stack, hi = lo + sizeof stack;
    uint64_t out[8];
    unsigned trunc;
    unsigned n;

#define FRAME(i, next, ret) (stack[i] = (next), stack[(i) + 1] = (ret))
#define ADDR(i) ((uint64_t)(uintptr_t)&stack[i])
    memset(stack, 0, sizeof stack);
    FRAME(4, ADDR(10), 0x1111);
    FRAME(10, ADDR(20), 0x2222);
    FRAME(20, 0, 0x3333);
    n = recs__fp_walk(ADDR(4), lo, hi, out, 8, &trunc);
    tap_ok(n == 3 && out[0] == 0x1111 && out[1] == 0x2222 && out[2] == 0x3333 &&
           !trunc, "walk a good chain");
    n = recs__fp_walk(ADDR(4), lo, hi, out, 2, &trunc);
    tap_ok(n == 2 && trunc, "depth limit truncates");
    n = recs__fp_walk(ADDR(4), ADDR(5), hi, out, 8, &trunc);
    tap_ok(n == 0, "fp below the lower bound: no frame");
    n = recs__fp_walk(ADDR(4) + 4, lo, hi, out, 8, &trunc);
    tap_ok(n == 0, "misaligned fp: no frame");
    n = recs__fp_walk(0x10, lo, hi, out, 8, &trunc);
    tap_ok(n == 0, "fp outside the stack: no frame, no fault");
    FRAME(20, ADDR(10), 0x3333);            /* loop back down */
    n = recs__fp_walk(ADDR(4), lo, hi, out, 8, &trunc);
    tap_ok(n == 3 && trunc == RECS_STOP_BAD_CFA, "a chain going down stops (no loop), bad-cfa");
    FRAME(20, ADDR(20), 0x3333);            /* self loop */
    n = recs__fp_walk(ADDR(4), lo, hi, out, 8, &trunc);
    tap_ok(n == 3, "a self-referencing frame stops");
    FRAME(20, hi + 64, 0x3333);             /* next outside */
    n = recs__fp_walk(ADDR(4), lo, hi, out, 8, &trunc);
    tap_ok(n == 3 && trunc == RECS_STOP_STACK_BOUND,
           "next frame outside the stack stops after its return address, stack-bound");
    FRAME(30, ADDR(31), 0x4444);            /* frame whose ret word is past hi */
    n = recs__fp_walk(ADDR(31), lo, hi, out, 8, &trunc);
    tap_ok(n == 0, "frame straddling the top of the stack is not read");
    FRAME(10, ADDR(20), 0);                 /* zero return address ends */
    n = recs__fp_walk(ADDR(4), lo, hi, out, 8, &trunc);
    tap_ok(n == 1 && trunc == RECS_STOP_ROOT, "zero return address ends the walk at its root");
    tap_ok(recs__in_stack(lo, 8, lo, hi) && !recs__in_stack(hi - 4, 8, lo, hi) &&
           !recs__in_stack(lo - 8, 8, lo, hi), "bounds helper");
}

/* The walker on this very thread's real stack (built with frame pointers). */
__attribute__((noinline)) static unsigned real_walk(uint64_t *out, unsigned max)
{
    unsigned trunc;
    pthread_attr_t attr;
    void *addr;
    size_t size;
    pthread_getattr_np(pthread_self(), &attr);
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    return recs__fp_walk((uint64_t)(uintptr_t)__builtin_frame_address(0),
                        (uint64_t)(uintptr_t)addr,
                        (uint64_t)(uintptr_t)addr + size, out, max, &trunc);
}

__attribute__((noinline)) static unsigned real_walk2(uint64_t *out, unsigned max)
{
    unsigned n = real_walk(out, max);
    __asm__ volatile("" ::: "memory");
    return n;
}

static void test_fpwalk_real(void)
{
    uint64_t out[64];
    unsigned n = real_walk2(out, 64);
    uint64_t ret = (uint64_t)(uintptr_t)__builtin_return_address(0);
    (void)ret;
    tap_ok(n >= 2, "real stack: %u frames", n);
    tap_ok(n >= 2 && out[0] > (uint64_t)(uintptr_t)real_walk2 &&
           out[0] < (uint64_t)(uintptr_t)real_walk2 + 256,
           "first return address lies in the caller");
}

/* A stack whose bounds are unknown: read through the kernel, across
 * chunks, and into an unmapped page without a fault. */
static void test_fpwalk_foreign(void)
{
    long pg = sysconf(_SC_PAGESIZE);
    unsigned char *m = mmap(NULL, 3 * (size_t)pg, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint64_t out[16], win[4];
    unsigned got;
    unsigned trunc;
    int n;

    if (m == MAP_FAILED) {
        tap_ok(0, "mmap");
        return;
    }
    uint64_t base = (uint64_t)(uintptr_t)m;
#define FFRAME(off, next, ret) \
    do { ((uint64_t *)(uintptr_t)(base + (off)))[0] = (next); \
         ((uint64_t *)(uintptr_t)(base + (off)))[1] = (ret); } while (0)
    /* sp at 64; frames at 128, 3000 (beyond the first 1 KiB read), then
     * 2 * pg - 16 (its return address word on the next page). */
    ((uint64_t *)(uintptr_t)(base + 64))[0] = 0x77;
    FFRAME(128, base + 3000 / 8 * 8, 0x1111);
    FFRAME(3000 / 8 * 8, base + 2 * (uint64_t)pg - 16, 0x2222);
    FFRAME(2 * pg - 16, 0, 0x3333);
    n = recs__fp_walk_foreign(base + 128, base + 64, out, 16, &trunc, win, 4, &got);
    tap_ok(n == 3 && out[0] == 0x1111 && out[1] == 0x2222 && out[2] == 0x3333 &&
           !trunc && got == 4 && win[0] == 0x77,
           "foreign stack: a chain across reads, the window from sp (%d frames)", n);
    n = recs__fp_walk_foreign(base + 128, base + 64, out, 2, &trunc, win, 0, &got);
    tap_ok(n == 2 && trunc && got == 0, "foreign stack: depth limit truncates");
    /* The last frame's return address on a page that is gone. */
    munmap(m + 2 * pg, (size_t)pg);
    FFRAME(2 * pg - 16, base + 2 * (uint64_t)pg + 64, 0x3333);
    n = recs__fp_walk_foreign(base + 128, base + 64, out, 16, &trunc, win, 0, &got);
    tap_ok(n == 3 && trunc == RECS_STOP_FOREIGN,
           "foreign stack: a frame on an unmapped page ends the walk, no fault, foreign-read (%d)", n);
    FFRAME(2 * pg - 16, base + 2 * (uint64_t)pg + 8, 0x3333);
    FFRAME(3000 / 8 * 8, base + 2 * (uint64_t)pg - 8, 0x2222);   /* straddles */
    n = recs__fp_walk_foreign(base + 128, base + 64, out, 16, &trunc, win, 0, &got);
    tap_ok(n == 2, "foreign stack: a frame straddling an unmapped page is not read (%d)", n);
    FFRAME(3000 / 8 * 8, base + 128, 0x2222);                  /* goes down */
    n = recs__fp_walk_foreign(base + 128, base + 64, out, 16, &trunc, win, 0, &got);
    tap_ok(n == 2, "foreign stack: a chain going down stops");
    n = recs__fp_walk_foreign(base + 2 * (uint64_t)pg + 16, base + 2 * (uint64_t)pg,
                              out, 16, &trunc, win, 4, &got);
    tap_ok(n == 0 && got == 0, "foreign stack: sp on an unmapped page: nothing read");
#undef FFRAME
    munmap(m, 2 * (size_t)pg);
}

int main(void)
{
    test_durations();
    test_throttle();
    test_misc_parsers();
    test_queue();
    test_queue_stress();
    test_fpwalk();
    test_fpwalk_real();
    test_fpwalk_foreign();
    return tap_done();
}
