/*
 * libsampler/drain-stacks.c - sample request -> StackTrace pool entry.
 *
 * The handler leaves the interrupted pc, a frame-pointer chain and a copy
 * of the top of the stack. Here, outside the handler:
 *   - a pc outside every executable mapping (JIT code, a trampoline the
 *     scan cannot see) is dropped and the caller becomes the top frame:
 *     the sample is marked biased;
 *   - the frameless-leaf correction (sym.h) puts back the caller that
 *     a walk starting in a function without its frame (a leaf, or any
 *     function in its prologue/epilogue) skips;
 *   - identical raw stacks are looked up in a cache so that each is
 *     symbolized once (one through JIT code, whose names depend on the
 *     sample's time, for the times its names hold: sym-jit.h).
 */
#include <config.h>
#include "internal.h"
#include "sym.h"
#include "format.h"
#include "unwind.h"
#include "unwind-python.h"
#include "unwind-fp.h"

#include <stdlib.h>
#include <string.h>

/* The cache starts small and doubles up to CACHE_SLOTS: a fresh 512 KiB
 * table costs a process one copy-on-write fault per page as its first
 * stacks land (with a TLB shootdown to the program's CPUs each), about
 * 2 ms on a VM, whereas most programs have a few hundred stacks. */
#define CACHE_FIRST  (1u << 9)
#define CACHE_SLOTS  (1u << 14)
#define ARENA_MAX    (8u << 20)          /* pcs kept before the cache restarts */
#define MAX_PCS      (RECS_MAX_DEPTH + 2 + RECS_PY_DEPTH)
#define RESCAN_NS    100000000ull

struct slot {
    uint64_t hash;                       /* 0: empty */
    uint32_t off;                        /* key words in the arena */
    rec_id stack;
    uint32_t span;                       /* JIT frames: spans[span - 1] */
    uint16_t n;
    bool biased;
};

/* When a stack through JIT code holds: samples in [from, until) while
 * recs__jit_generation() is gen. */
struct span {
    uint64_t from, until, gen;
};

static struct slot *slots;
static size_t used, nslots;
static struct span *spans;
static size_t nspans, cspans;
static uint64_t *arena;
static size_t arena_len, arena_cap;
static uint64_t last_scan_ns;

int recs__stacks_init(void)
{
    recs__stacks_free();
    slots = calloc(CACHE_FIRST, sizeof *slots);
    nslots = slots ? CACHE_FIRST : 0;
    return slots ? 0 : REC_ENOMEM;
}

/* In a fork child: forget the parent's cache without calling free(). */
void recs__stacks_abandon(void)
{
    recs__py_names_abandon();
    slots = NULL;
    arena = NULL;
    spans = NULL;
    used = nslots = arena_len = arena_cap = nspans = cspans = 0;
}

void recs__stacks_free(void)
{
    recs__py_names_free();
    free(slots);
    free(arena);
    free(spans);
    slots = NULL;
    arena = NULL;
    spans = NULL;
    used = nslots = arena_len = arena_cap = nspans = cspans = 0;
}

static uint64_t hash_words(const uint64_t *w, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (size_t i = 0; i < n; i++) {
        h ^= w[i];
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h ? h : 1;
}

static void cache_reset(void)
{
    memset(slots, 0, nslots * sizeof *slots);
    used = 0;
    arena_len = 0;
    nspans = 0;
}

static size_t free_slot(const struct slot *v, size_t n, uint64_t h)
{
    size_t i = h & (n - 1);

    while (v[i].hash)
        i = (i + 1) & (n - 1);
    return i;
}

/* Three quarters full: twice the slots, else (at CACHE_SLOTS, or without
 * memory) start over. */
static void make_room(void)
{
    struct slot *v;

    if (used < nslots / 4 * 3)
        return;
    if (nslots < CACHE_SLOTS && (v = calloc(2 * nslots, sizeof *v)) != NULL) {
        for (size_t i = 0; i < nslots; i++)
            if (slots[i].hash)
                v[free_slot(v, 2 * nslots, slots[i].hash)] = slots[i];
        free(slots);
        slots = v;
        nslots *= 2;
        return;
    }
    cache_reset();
}

static bool in_exec(uint64_t pc)
{
    static uint64_t last_forced_ns;
    uint64_t now;
    int code;
    bool module;

    if (recs__symbols_is_executable(recs__g.sym, pc))
        return true;
    code = recs__uw_code(pc);
    if (code == RECS_CODE_JIT)
        return true;
    /* A library loaded since the symbolizer's last scan: the unwinder's
     * set may have it already (then a scan finds it: at most one a
     * millisecond), or not yet (a scan every RESCAN_NS). */
    module = code == RECS_CODE_MODULE;
    now = recs__now_ns();
    if (module ? now - last_forced_ns < 1000000 : now - last_scan_ns < RESCAN_NS)
        return module;
    if (module)
        last_forced_ns = now;
    else
        last_scan_ns = now;
    if (recs__symbols_scan(recs__g.sym) > 0) {
        recs__symbols_emit_modules(recs__g.sym, recs__g.st, false);
        recs__py_detect();
    }
    return module || recs__symbols_is_executable(recs__g.sym, pc);
}

/* The key words: [flags, pc0, pc1, ..., py0, py1, ...]; flags bit0 = the
 * first pc is a return address (biased), bit2 = the only pc, in no known
 * code, bits 8..15 = the Python frames at the end, bits 16..19 = why the
 * walk stopped (RECS_STOP_*). */
static size_t build_key(const recs__request *r, uint64_t *key, bool *biased)
{
    size_t n = 1;
    uint64_t flags = 0;
    uint32_t first = 0;

    *biased = false;
    if (in_exec(r->pc) && (r->flags & RECS_REQ_COMPLETE)) {
        key[n++] = r->pc;
    } else if (in_exec(r->pc)) {
        uint64_t ret = 0;
        int rc;
        key[n++] = r->pc;
        rc = recs__symbols_leaf_return(recs__g.sym, r->pc, r->sp,
                                      recs__request_window(r),
                                      r->nwindow, &ret);
        if (rc == 1 && r->lr)
            ret = r->lr;
        /* The caller only if it is code: the words above a stack
         * pointer that cannot be trusted are anything. */
        if ((rc == 0 || rc == 1) && ret && in_exec(ret)) {
            key[n++] = ret;
            /* The chain may already start at that caller (a walk from a
             * frame the leaf did set up, seen through a stale rbp). */
            if (r->nframes && recs__request_frames(r)[0] == ret)
                first = 1;
        }
    } else if (r->nframes == 0 && r->npy == 0) {
        /* Nothing else to show: the interrupted pc itself, in code no
         * module holds, rather than no stack; not named (a module the
         * symbolizer still knows there may be gone). */
        key[n++] = r->pc;
        flags |= 4;
    } else {
        *biased = true;
        flags |= 1;
    }
    const uint64_t *frames = recs__request_frames(r);
    for (uint32_t i = first; i < r->nframes && n < MAX_PCS - RECS_PY_DEPTH; i++)
        key[n++] = frames[i];
    for (uint32_t i = 0; i < r->npy && i < RECS_PY_DEPTH; i++)
        key[n++] = frames[r->nframes + i];
    flags |= (uint64_t)(r->npy < RECS_PY_DEPTH ? r->npy : RECS_PY_DEPTH) << 8;
    flags |= (uint64_t)recs__request_stop(r) << 16;
    key[0] = flags;
    return n;
}

/* StackTrace.truncationReason, by RECS_STOP_*. */
static const char *const stop_names[RECS_STOP_N] = {
    [RECS_STOP_ROOT] = "",
    [RECS_STOP_DEPTH] = "depth",
    [RECS_STOP_EARLY] = "early",
    [RECS_STOP_NO_UNWIND] = "no-unwind-info",
    [RECS_STOP_JIT] = "jit",
    [RECS_STOP_BAD_CFA] = "bad-cfa",
    [RECS_STOP_STACK_BOUND] = "stack-bound",
    [RECS_STOP_UNKNOWN_CODE] = "unknown-code",
    [RECS_STOP_FOREIGN] = "foreign-read",
};

/* The Python frames of one eval-loop call, from key[py] up to the one that
 * ends it; the index after them. */
static size_t py_group(const uint64_t *key, size_t py, size_t n, rec_id *ids,
                       size_t *nids)
{
    while (py < n && *nids < REC_MAX_ARRAY) {
        uint64_t w = key[py++];
        if (recs__py_frame(recs__g.w, w, &ids[*nids]) == 0)
            (*nids)++;
        if (w & RECS_PY_END)
            break;
    }
    return py;
}

/* Of a stack walked to its root: the innermost eval-loop calls that have
 * no Python frames of their own. Only the innermost call can lack them:
 * sampled between its start and setting its frame current, or between
 * giving the caller's back and its return; paired from the innermost,
 * every call would be given its callee's frames. */
static size_t evals_without(const uint64_t *key, size_t n, size_t npy)
{
    size_t evals = 0, calls = 0;

    for (size_t i = 1; i < n - npy; i++)
        evals += recs__py_in_eval(i > 1 || (key[0] & 1) ? key[i] - 1 : key[i]);
    for (size_t i = n - npy; i < n; i++)
        calls += (key[i] & RECS_PY_END) || i == n - 1;
    return evals > calls ? evals - calls : 0;
}

/* The stack's id, 0 if none; *provisional: a frame's name is (see
 * recs__symbols_frames), so the stack must not be cached; w: its JIT
 * frames named at w->t, and when that holds. */
static rec_id intern_stack(const uint64_t *key, size_t n, bool *provisional,
                           recs__jit_when *w)
{
    static rec_id ids[REC_MAX_ARRAY];
    size_t nids = 0;
    unsigned stop = (unsigned)(key[0] >> 16 & 0xf);
    size_t npy = (size_t)(key[0] >> 8 & 0xff), py = n - npy;
    size_t bare = npy && stop == RECS_STOP_ROOT ? evals_without(key, n, npy) : 0;
    struct rec_StackTrace st;
    rec_id id = 0;

    for (size_t i = 1; i < n - npy; i++) {
        size_t got = 0;
        bool is_ret = i > 1 || (key[0] & 1);
        if (nids == REC_MAX_ARRAY) {
            stop = RECS_STOP_DEPTH;
            break;
        }
        int rc = (key[0] & 4)
            ? recs__symbols_unknown_frame(recs__g.sym, key[i], ids + nids, &got)
            : recs__symbols_frames_at(recs__g.sym, key[i], is_ret, w,
                                      ids + nids, REC_MAX_ARRAY - nids, &got);
        if (rc < 0)
            continue;
        *provisional |= rc > 0;
        nids += got;
        /* An eval-loop call: the Python functions it runs go between the
         * code inlined into it, which works for them, and the call's
         * physical frame (the last of the pc's frames); a bare one has
         * none (evals_without). */
        if (!got || py >= n || !recs__py_in_eval(is_ret ? key[i] - 1 : key[i]))
            continue;
        if (bare) {
            bare--;
        } else {
            rec_id call = ids[--nids];
            py = py_group(key, py, n, ids, &nids);
            if (nids < REC_MAX_ARRAY)
                ids[nids++] = call;
        }
    }
    /* Calls whose eval loop the native walk did not reach: outermost. */
    while (py < n && nids < REC_MAX_ARRAY)
        py = py_group(key, py, n, ids, &nids);
    if (nids == 0)
        return 0;
    memset(&st, 0, sizeof st);
    st.truncated = stop != RECS_STOP_ROOT;
    if (st.truncated && stop < RECS_STOP_N &&
        rec_intern_cstr(recs__g.w, stop_names[stop], &st.truncationReason) < 0)
        return 0;
    st.frames = ids;
    st.frames_count = nids;
    if (rec_intern_StackTrace(recs__g.w, &st, &id) < 0)
        return 0;
    return id;
}

/* Whether a cached stack through JIT code is named right for a sample at
 * t: the files read up to t, nothing read since changing a name given,
 * t within the times its names hold. */
static bool span_holds(const struct slot *s, uint64_t t)
{
    const struct span *sp = &spans[s->span - 1];

    recs__jit_refresh(t);
    return sp->gen == recs__jit_generation() && sp->from <= t && t < sp->until;
}

/* A stack's span, in place of OLD (1-based) or new; 0: no room. */
static uint32_t span_put(uint32_t old, const recs__jit_when *w)
{
    uint32_t k = old;

    if (!k) {
        if (nspans == cspans) {
            size_t c = cspans ? 2 * cspans : 256;
            struct span *v = realloc(spans, c * sizeof *v);
            if (!v)
                return 0;
            spans = v;
            cspans = c;
        }
        k = (uint32_t)++nspans;
    }
    spans[k - 1] = (struct span){ w->from, w->until, w->gen };
    return k;
}

rec_id recs__stack_for(const recs__request *r, bool *biased)
{
    static uint64_t key[MAX_PCS + 1];
    recs__jit_when w = { r->time_ns, 0, UINT64_MAX, 0, false, false };
    struct slot *s = NULL;
    uint64_t h;
    size_t n;
    size_t i;
    rec_id id;

    *biased = false;
    if (r->flags & RECS_REQ_FAILED)
        return 0;
    n = build_key(r, key, biased);
    if (n < 2)
        return 0;
    h = hash_words(key, n);
    for (i = h & (nslots - 1);; i = (i + 1) & (nslots - 1)) {
        if (!slots[i].hash)
            break;
        if (slots[i].hash == h && slots[i].n == n &&
            !memcmp(arena + slots[i].off, key, n * sizeof key[0])) {
            s = &slots[i];
            if (!s->span || span_holds(s, r->time_ns))
                return s->stack;
            break;
        }
    }
    bool provisional = false;
    id = intern_stack(key, n, &provisional, &w);
    if (!id || provisional)
        return id;
    if (s) {
        /* The same raw stack at another time: its names then. */
        s->stack = id;
        span_put(s->span, &w);
        return id;
    }
    if (arena_len + n > ARENA_MAX)
        cache_reset();
    make_room();
    i = free_slot(slots, nslots, h);
    if (arena_len + n > arena_cap) {
        size_t nc = arena_cap ? arena_cap * 2 : 4096;
        while (nc < arena_len + n)
            nc *= 2;
        uint64_t *na = realloc(arena, nc * sizeof *na);
        if (!na)
            return id;
        arena = na;
        arena_cap = nc;
    }
    uint32_t span = w.jit ? span_put(0, &w) : 0;
    if (w.jit && !span)
        return id;
    memcpy(arena + arena_len, key, n * sizeof key[0]);
    slots[i] = (struct slot){ h, (uint32_t)arena_len, id, span, (uint16_t)n,
                              *biased };
    arena_len += n;
    used++;
    return id;
}
