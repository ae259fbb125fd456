/*
 * tests/test-python-walk.c - the handler's walk of Python frames
 * (libsampler/unwind-python.c) over interpreter state built here with each
 * version's layout: the frames and their eval-loop calls come out right,
 * and every pointer that leads to unmapped memory (the thread state, its
 * current frame, a frame, the data stack) ends the Python part without a
 * fault: a wrong pointer must never crash the program. Before 3.11 a
 * frame is an object of its own type, each its eval-loop call's only
 * frame, its instruction an index (f_lasti).
 */
#include <config.h>
#include "internal.h"
#include "unwind-python.h"
#include "unwind-py-layouts.h"
#include "unwind.h"
#include "tap.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The registry and the messages: the walk needs neither. */
int recs__uw_modules(recs__uw_module_fn *fn, void *arg)
{
    (void)fn;
    (void)arg;
    return 0;
}

void recs__warn(const char *fmt, ...)
{
    (void)fmt;
}

static unsigned char runtime[4096];
static uint64_t frame_type[4];     /* stands for PyFrame_Type */
static pthread_key_t key;
static uint64_t bad;               /* a page that is not mapped */

static void put64(void *base, unsigned off, uint64_t v)
{
    memcpy((unsigned char *)base + off, &v, 8);
}

static void use(const recs__py_layout *l)
{
    int one = 1;
    unsigned k = (unsigned)key;

    memset(runtime, 0, sizeof runtime);
    memcpy(runtime + l->tss_key - 4, &one, 4);
    memcpy(runtime + l->tss_key, &k, 4);
    recs__py.layout = l;
    recs__py.runtime = (uint64_t)(uintptr_t)runtime;
    recs__py.frame_type = (uint64_t)(uintptr_t)frame_type;
    atomic_store(&recs__py.on, 1);
}

/* A thread state whose current frame is fr (3.11, 3.12: through the root
 * _PyCFrame inside it; others: its own field), data stack [chunk, top)
 * from 3.11 on. */
static void make_tstate(const recs__py_layout *l, unsigned char *ts,
                        uint64_t fr, uint64_t chunk, uint64_t top)
{
    memset(ts, 0, 512);
    if (l->ts_cframe == RECS_PY_NONE) {
        put64(ts, l->current_frame, fr);
    } else {
        /* The root cframe at byte 320 of the thread state: outside the
         * part the walk copies, so read through the kernel. */
        put64(ts, l->ts_cframe, (uint64_t)(uintptr_t)(ts + 320));
        put64(ts + 320, l->current_frame, fr);
    }
    if (l->ts_chunk != RECS_PY_NONE) {
        put64(ts, l->ts_chunk, chunk);
        put64(ts, l->ts_top, top);
    }
}

#define FRAME_BYTES 128              /* a frame's room here, any version */

static void make_frame(const recs__py_layout *l, unsigned char *f,
                       uint64_t code, unsigned instr_units, uint64_t prev,
                       bool entry, unsigned owner)
{
    memset(f, 0, FRAME_BYTES);
    put64(f, l->fr_code, code);
    put64(f, l->fr_previous, prev);
    if (l->fr_lasti != RECS_PY_NONE) {
        int32_t lasti = (int32_t)(instr_units << l->lasti_shift);
        put64(f, 8, (uint64_t)(uintptr_t)frame_type);
        memcpy(f + l->fr_lasti, &lasti, 4);
        return;
    }
    put64(f, l->fr_instr, code + l->co_code + 2ull * instr_units);
    if (l->fr_entry != RECS_PY_NONE)
        f[l->fr_entry] = entry;
    f[l->fr_owner] = (unsigned char)owner;
}

static unsigned walk_seen(uint64_t seen[3], uint64_t *out, unsigned max)
{
    uint64_t sp = (uint64_t)(uintptr_t)&sp;
    return recs__py_walk(sp, sp + 4096, seen, out, max);
}

static unsigned walk(uint64_t *out, unsigned max)
{
    uint64_t seen[3] = { 0, 0, 0 };
    return walk_seen(seen, out, max);
}

/* A thread state read in place once the kernel has read it: and when
 * Py_Finalize frees it under a thread that still has it in its key, the
 * kernel again. */
static void freed_state(const recs__py_layout *l, uint64_t code)
{
    unsigned char *page = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char *ts = page, *chunk = page + 4096, *f = chunk + 64;
    uint64_t seen[3] = { 0, 0, 0 }, out[8], one = 1;
    unsigned v = l->version;

    if (page == MAP_FAILED) {
        tap_ok(0, "%x: mmap", v);
        return;
    }
    put64(chunk, 8, 4096);
    make_frame(l, f, code, 1, 0, true, 0);
    make_tstate(l, ts, (uint64_t)(uintptr_t)f, (uint64_t)(uintptr_t)chunk,
                (uint64_t)(uintptr_t)chunk + 1024);
    pthread_setspecific(key, ts);
    tap_ok(walk_seen(seen, out, 8) == 1 && seen[0] == (uint64_t)(uintptr_t)ts &&
           seen[1] == (l->ts_chunk == RECS_PY_NONE ? 0 : (uint64_t)(uintptr_t)chunk) &&
           walk_seen(seen, out, 8) == 1,
           "%x: a thread state and chunk read through the kernel once, then in place", v);
    memcpy(runtime + l->rt_finalizing, &one, 8);
    munmap(page, 8192);
    tap_ok(walk_seen(seen, out, 8) == 0 && seen[0] == 0,
           "%x: during Py_Finalize a freed thread state is not read in place", v);
    memset(runtime + l->rt_finalizing, 0, 8);
    pthread_setspecific(key, NULL);
}

static void one_version(const recs__py_layout *l)
{
    static unsigned char chunk[16384] __attribute__((aligned(16)));
    static unsigned char ts[512] __attribute__((aligned(16)));
    static unsigned char gen[FRAME_BYTES] __attribute__((aligned(16)));
    static unsigned char entry[FRAME_BYTES] __attribute__((aligned(16)));
    uint64_t out[RECS_PY_DEPTH];
    uint64_t c = (uint64_t)(uintptr_t)chunk;
    uint64_t code1 = 0x7f0000001000ull, code2 = 0x7f0000002008ull,
             code3 = 0x7f0000003010ull;
    unsigned char *f1 = chunk + 64, *f2 = chunk + 256;
    bool v311 = l->fr_entry != RECS_PY_NONE;
    bool objects = l->fr_owner == RECS_PY_NONE;   /* before 3.11 */
    unsigned n, v = l->version;

    use(l);
    /* chunk header: previous, size */
    put64(chunk, 0, 0);
    put64(chunk, 8, sizeof chunk);
    /* f1 (innermost, in the data stack) called by f2 (same eval-loop
     * call); f2 is its call's outermost (3.11: is_entry; later: the
     * entry frame that follows it); then a generator's frame on the heap
     * running in an outer call. */
    make_frame(l, f1, code1, 7, (uint64_t)(uintptr_t)f2, false, 0);
    if (v311 || objects) {
        make_frame(l, f2, code2, 0, (uint64_t)(uintptr_t)gen, true, 0);
    } else {
        make_frame(l, f2, code2, 0, (uint64_t)(uintptr_t)entry, false, 0);
        make_frame(l, entry, 0, 0, (uint64_t)(uintptr_t)gen, false,
                   l->owner_cstack);
    }
    make_frame(l, gen, code3, 3, 0, false, 1);
    make_tstate(l, ts, (uint64_t)(uintptr_t)f1, c, c + 1024);
    pthread_setspecific(key, ts);
    n = walk(out, RECS_PY_DEPTH);
    tap_ok(n == 3 && recs__py_code(out[0]) == code1 && recs__py_off(out[0]) == 7 &&
           !(out[0] & RECS_PY_END) == !objects && recs__py_code(out[1]) == code2 &&
           (out[1] & RECS_PY_END) && recs__py_code(out[2]) == code3 &&
           recs__py_off(out[2]) == 3,
           "%x: three frames, code and instruction each, the call's end marked (%u)", v, n);
    tap_ok(walk(out, 2) == 2, "%x: at most max frames", v);
    if (objects) {
        /* Before its first instruction f_lasti is -1. */
        int32_t minus = -1;
        memcpy(gen + l->fr_lasti, &minus, 4);
        n = walk(out, RECS_PY_DEPTH);
        tap_ok(n == 3 && recs__py_off(out[2]) == 0,
               "%x: a frame not started yet is at its first instruction", v);
        /* Freed, or never one: not of the frame type. */
        put64(f2, 8, (uint64_t)(uintptr_t)frame_type + 8);
        n = walk(out, RECS_PY_DEPTH);
        tap_ok(n == 1, "%x: an object of another type ends the walk (%u frames)", v, n);
        put64(f2, 8, (uint64_t)(uintptr_t)frame_type);
    }

    /* A frame whose caller is unmapped: the frames before it. */
    put64(f2, l->fr_previous, bad);
    n = walk(out, RECS_PY_DEPTH);
    tap_ok(n == 2, "%x: a caller on an unmapped page ends the walk (%u frames)", v, n);
    put64(f2, l->fr_previous, (uint64_t)(uintptr_t)f2);
    n = walk(out, RECS_PY_DEPTH);
    tap_ok(n <= RECS_PY_DEPTH, "%x: a cycle is bounded (%u frames)", v, n);
    put64(f2, l->fr_previous, 0);

    /* The data stack's chunk unmapped, the frame said to be in it. */
    make_tstate(l, ts, bad + 64, bad, bad + 1024);
    n = walk(out, RECS_PY_DEPTH);
    tap_ok(n == 0, "%x: an unmapped data stack reads nothing in place (%u)", v, n);
    /* The current frame unmapped. */
    make_tstate(l, ts, bad, c, c + 1024);
    tap_ok(walk(out, RECS_PY_DEPTH) == 0, "%x: an unmapped current frame", v);
    if (l->ts_cframe != RECS_PY_NONE) {
        make_tstate(l, ts, (uint64_t)(uintptr_t)f1, c, c + 1024);
        put64(ts, l->ts_cframe, bad);
        tap_ok(walk(out, RECS_PY_DEPTH) == 0, "%x: an unmapped _PyCFrame", v);
    } else {
        tap_ok(1, "%x: no _PyCFrame in this version", v);
    }
    /* The thread state itself unmapped, then none. */
    pthread_setspecific(key, (void *)(uintptr_t)bad);
    tap_ok(walk(out, RECS_PY_DEPTH) == 0, "%x: an unmapped thread state", v);
    pthread_setspecific(key, NULL);
    tap_ok(walk(out, RECS_PY_DEPTH) == 0, "%x: no thread state: no frames", v);
    freed_state(l, code1);
    /* The interpreter not initialized: its key is not read. */
    memset(runtime + l->tss_key - 4, 0, 4);
    pthread_setspecific(key, ts);
    tap_ok(walk(out, RECS_PY_DEPTH) == 0, "%x: an interpreter not started", v);
}

int main(void)
{
    size_t nl = sizeof recs__py_layouts / sizeof recs__py_layouts[0];
    void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED || pthread_key_create(&key, NULL) != 0)
        return 1;
    bad = (uint64_t)(uintptr_t)p;
    for (size_t i = 0; i < nl; i++)
        one_version(&recs__py_layouts[i]);
    uint64_t w = recs__py_word(0x7fffffffeff8ull, 1u << 20, true);
    tap_ok(recs__py_code(w) == 0x7fffffffeff8ull && recs__py_off(w) == RECS_PY_OFF_MAX &&
           (w & RECS_PY_END), "a frame word keeps a 47-bit code address and saturates its offset");
    return tap_done();
}
