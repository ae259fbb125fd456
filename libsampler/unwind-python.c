/*
 * libsampler/unwind-python.c - the interpreter found, and its frames read in the
 * signal handler (unwind-python.h).
 */
#include <config.h>
#include "internal.h"
#include "unwind-python.h"
#include "unwind-py-layouts.h"
#include "unwind-fp.h"
#include "unwind.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

recs__py_state recs__py;

/* ------------------------------------------------------------------ */
/* Finding the interpreter (sampler thread)                            */
/* ------------------------------------------------------------------ */

struct found {
    bool done;
    char why[320];               /* why an interpreter gets no frames */
};

static const recs__py_layout *layout_for(uint16_t version)
{
    for (size_t i = 0; i < sizeof recs__py_layouts / sizeof recs__py_layouts[0]; i++)
        if (recs__py_layouts[i].version == version)
            return &recs__py_layouts[i];
    return NULL;
}

/* The interpreter's minor version (0x30b is 3.11), 0 if older than 3.9:
 * Py_Version from 3.11 on; before, by a function each version was the
 * first to export. */
static uint16_t version_of(void *h)
{
    const unsigned long *ver = dlsym(h, "Py_Version");

    if (ver)
        return (uint16_t)(*ver >> 16);
    if (dlsym(h, "PyModule_AddObjectRef"))
        return 0x30a;
    if (dlsym(h, "PyFrame_GetCode"))
        return 0x309;
    return 0;
}

/* The interpreter's symbols in the module of handle h, if it has them. */
static bool try_handle(void *h, const char *name, struct found *f)
{
    void *rt = dlsym(h, "_PyRuntime");
    void *type = dlsym(h, "PyCode_Type");
    void *eval = dlsym(h, "_PyEval_EvalFrameDefault");
    void *frame = dlsym(h, "PyFrame_Type");
    const ElfW(Sym) *sym = NULL;
    Dl_info info;
    const recs__py_layout *l;
    uint16_t v;
    long basicsize = 0;

    if (!rt || !type || !eval || !frame)
        return false;
    v = version_of(h);
    l = layout_for(v);
    /* PyCode_Type's tp_basicsize follows its object header, its ob_size
     * and tp_name: another header moves it, and every offset with it. */
    if (l)
        memcpy(&basicsize, (const char *)type + 32, sizeof basicsize);
    if (!l || basicsize != l->co_basicsize) {
        if (!v)
            snprintf(f->why, sizeof f->why, "older than 3.9");
        else
            snprintf(f->why, sizeof f->why, "%u.%u%s", (unsigned)v >> 8,
                     (unsigned)v & 0xff,
                     l ? " built with other object headers than usual"
                       : ", a version without a frame layout here");
        snprintf(f->why + strlen(f->why), sizeof f->why - strlen(f->why),
                 " in %s", name);
        f->done = true;
        return true;
    }
    if (!dladdr1(eval, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
        !sym->st_size)
        return false;
    recs__py.layout = l;
    recs__py.runtime = (uint64_t)(uintptr_t)rt;
    recs__py.code_type = (uint64_t)(uintptr_t)type;
    recs__py.frame_type = (uint64_t)(uintptr_t)frame;
    recs__py.eval_lo = (uint64_t)(uintptr_t)eval;
    recs__py.eval_hi = recs__py.eval_lo + sym->st_size;
    atomic_store_explicit(&recs__py.on, 1, memory_order_release);
    f->done = true;
    return true;
}

/* Under the registry's lock, which a fork waits for: the loader's lock,
 * taken by dlopen and dlsym, is never held by this thread across a fork
 * (a child would inherit it held). */
static void found_cb(const struct recs__uw_modinfo *m, void *arg)
{
    struct found *f = arg;
    const char *base;
    void *h;

    if (f->done || m->vdso)
        return;
    if (m->main) {
        /* The program and what it was linked with: python3.11 carries
         * the interpreter, pyenv's python3.12 links libpython. */
        h = dlopen(NULL, RTLD_LAZY);
    } else {
        base = strrchr(m->name, '/');
        base = base ? base + 1 : m->name;
        if (strncmp(base, "libpython", 9) != 0)
            return;
        /* Loaded by an embedding program, maybe RTLD_LOCAL. */
        h = dlopen(m->name, RTLD_LAZY | RTLD_NOLOAD);
    }
    if (!h)
        return;
    try_handle(h, m->main ? "the program" : m->name, f);
    dlclose(h);
}

void recs__py_detect(void)
{
    static struct found f;

    if (f.done || atomic_load(&recs__py.on) || recs__g.cfg.no_python)
        return;
    recs__uw_modules(found_cb, &f);
    if (f.why[0])
        recs__warn("python frames: the interpreter is %s (3.9 to 3.13 have a "
                   "frame layout): its stacks show its C code only", f.why);
}

/* ------------------------------------------------------------------ */
/* The frames (signal handler)                                         */
/* ------------------------------------------------------------------ */

#define TS_WORDS    40           /* the thread state's first 320 bytes */
#define FRAME_WORDS 9            /* an interpreter frame's first 72 bytes */
#define FROBJ_WORDS 16           /* a frame object's first 128, at most */
#define CHUNK_MAX   (64u << 20)  /* a data stack chunk's size, at most */

/* Signal-safe. n words at addr through the kernel: false if not all. */
static bool read_self(uint64_t *dst, uint64_t addr, unsigned n)
{
    return recs__read_self(dst, addr, (size_t)n * 8) == (long)n * 8;
}

static inline uint64_t word_at(const uint64_t *w, unsigned off)
{
    return w[off / 8];
}

static inline unsigned byte_at(const uint64_t *w, unsigned off)
{
    return ((const unsigned char *)w)[off];
}

static inline int32_t int_at(const uint64_t *w, unsigned off)
{
    int32_t v;
    memcpy(&v, (const unsigned char *)w + off, sizeof v);
    return v;
}

/* Signal-safe. A frame's first nw words: in place where the memory is
 * known to be live (the data stack below its top, the thread's own
 * stack), through the kernel elsewhere. */
RECS_NO_SANITIZE static bool read_frame(uint64_t *dst, unsigned nw,
                                        uint64_t fr, uint64_t chunk,
                                        uint64_t top, uint64_t sp, uint64_t hi)
{
    if ((fr >= chunk && fr < top && top - fr >= nw * 8ull) ||
        recs__in_stack(fr, nw * 8ull, sp, hi)) {
        recs__copy_stack(dst, fr, nw);
        return true;
    }
    return read_self(dst, fr, nw);
}

/* Signal-safe. The current frame from the thread state ts (at tstate),
 * 0 if it cannot be read. */
RECS_NO_SANITIZE static uint64_t current_frame(const recs__py_layout *l,
                                               const uint64_t *ts,
                                               uint64_t tstate, uint64_t sp,
                                               uint64_t hi)
{
    uint64_t cf, fr;

    if (l->ts_cframe == RECS_PY_NONE)
        return word_at(ts, l->current_frame);
    /* The _PyCFrame: on this stack (the eval loop's own), or the thread
     * state's root one. */
    cf = word_at(ts, l->ts_cframe);
    if (!cf || (cf & 7))
        return 0;
    if (cf >= tstate && cf + l->current_frame + 8 <= tstate + TS_WORDS * 8)
        return word_at(ts, (unsigned)(cf - tstate) + l->current_frame);
    if (recs__in_stack(cf + l->current_frame, 8, sp, hi))
        return *(const volatile uint64_t *)(uintptr_t)(cf + l->current_frame);
    return read_self(&fr, cf + l->current_frame, 1) ? fr : 0;
}

/* Signal-safe. */
RECS_NO_SANITIZE unsigned recs__py_walk(uint64_t sp, uint64_t hi,
                                        uint64_t seen[3], uint64_t *out,
                                        unsigned max)
{
    const recs__py_layout *l;
    const volatile int *tss;
    uint64_t ts[TS_WORDS], fb[FROBJ_WORDS], fr, chunk = 0, top = 0, fin;
    unsigned n = 0, nw;
    void *tstate;

    if (!atomic_load_explicit(&recs__py.on, memory_order_acquire) || !max)
        return 0;
    l = recs__py.layout;
    /* Before 3.11 a frame is an object of its own, its f_lasti after
     * the fields the walk reads. */
    nw = l->fr_lasti == RECS_PY_NONE ? FRAME_WORDS : (l->fr_lasti + 4u + 7) / 8;
    if (nw > FROBJ_WORDS)
        return 0;
    /* In the interpreter's own data, mapped as long as it is loaded. */
    tss = (const volatile int *)(uintptr_t)(recs__py.runtime + l->tss_key - 4);
    if (!tss[0])
        return 0;                 /* not initialized yet */
    tstate = pthread_getspecific((pthread_key_t)tss[1]);
    if (!tstate || ((uintptr_t)tstate & 7))
        return 0;
    /* A thread's state lives until the thread drops it (after clearing
     * the key), or until Py_Finalize frees every thread's: in place when
     * the kernel has read it before and no finalization runs. */
    fin = *(const volatile uint64_t *)(uintptr_t)(recs__py.runtime + l->rt_finalizing);
    if ((uint64_t)(uintptr_t)tstate == seen[0] && !fin) {
        recs__copy_stack(ts, (uint64_t)(uintptr_t)tstate, TS_WORDS);
    } else {
        seen[0] = 0;
        if (!read_self(ts, (uint64_t)(uintptr_t)tstate, TS_WORDS))
            return 0;
        seen[0] = fin ? 0 : (uint64_t)(uintptr_t)tstate;
    }
    fr = current_frame(l, ts, (uint64_t)(uintptr_t)tstate, sp, hi);
    if (l->ts_chunk != RECS_PY_NONE) {
        chunk = word_at(ts, l->ts_chunk);
        top = word_at(ts, l->ts_top);
    }
    if (chunk && (fin || chunk != seen[1] || top > seen[2] || top < chunk)) {
        /* A chunk not seen yet: its header (previous, size) says how far
         * it is mapped; until then no frame is read in place. */
        uint64_t hdr[2];
        seen[1] = seen[2] = 0;
        if (!fin && !(chunk & 7) && read_self(hdr, chunk, 2) &&
            hdr[1] <= CHUNK_MAX && top >= chunk && top <= chunk + hdr[1]) {
            seen[1] = chunk;
            seen[2] = chunk + hdr[1];
        } else {
            chunk = top = 0;
        }
    }
    /* Bounded twice: by out's room and by the chain's length, a cycle in
     * a torn chain included. */
    for (unsigned i = 0; fr && !(fr & 7) && i < 2 * RECS_PY_DEPTH && n < max; i++) {
        uint64_t code, instr, off;
        if (!read_frame(fb, nw, fr, chunk, top, sp, hi))
            break;
        code = word_at(fb, l->fr_code);
        if (l->fr_owner == RECS_PY_NONE) {
            /* A frame object, each its eval-loop call's only one (the
             * call sets it current, and its caller back when it ends):
             * anything else is no frame of this thread's chain. */
            int32_t lasti = int_at(fb, l->fr_lasti);
            if (word_at(fb, 8) != recs__py.frame_type)
                break;
            if (code && !(code & 7))
                out[n++] = recs__py_word(code,
                                         lasti > 0 ? (uint64_t)lasti >> l->lasti_shift : 0,
                                         true);
        } else if (byte_at(fb, l->fr_owner) == l->owner_cstack) {
            /* The entry of an eval-loop call: the frame before it was
             * that call's outermost. */
            if (n)
                out[n - 1] |= RECS_PY_END;
        } else if (code && !(code & 7)) {
            instr = word_at(fb, l->fr_instr);
            off = instr > code + l->co_code ? (instr - code - l->co_code) / 2 : 0;
            out[n++] = recs__py_word(code, off,
                                     l->fr_entry != RECS_PY_NONE &&
                                     byte_at(fb, l->fr_entry));
        }
        fr = word_at(fb, l->fr_previous);
    }
    return n;
}
