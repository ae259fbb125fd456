/*
 * libsampler/unwind-python.h - Python functions in native stacks (CPython 3.9
 * to 3.13, no flag needed).
 *
 * A Python program's native stack shows only the interpreter's C code:
 * each call of _PyEval_EvalFrameDefault runs one or more Python functions
 * (3.11 on run Python-to-Python calls inside one C call; before, each
 * runs exactly one). The thread's own chain of interpreter frames says
 * which. The handler reads that chain (unwind-python.c): the thread state from
 * the interpreter's thread-state key, then each frame's code object and
 * instruction, innermost first; it reads no code object. The drain names
 * each (code, instruction) pair (sym-python.c: qualified name, or the
 * name before 3.11, file, line from the code object's line table) and
 * puts each eval-loop call's Python frames in front of that call's native
 * frame (drain-stacks.c).
 *
 * Where the interpreter keeps these is internal to CPython and changes
 * between minor versions: one row per version (unwind-py-layouts.h), generated
 * from the version's own headers (scripts/py-offsets.c). An interpreter
 * of another version gets no Python frames, and the library says so once.
 */
#ifndef RECS_PYTHON_H
#define RECS_PYTHON_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rec/record.h>

#define RECS_PY_NONE 0xffff      /* a field this version does not have */

typedef struct recs__py_layout {
    uint16_t version;            /* PY_VERSION_HEX >> 16: 0x30b is 3.11 */
    uint16_t tss_key;            /* _PyRuntime: the thread-state key
                                    (Py_tss_t._key; _is_initialized, an
                                    int, just before it) */
    uint16_t rt_finalizing;      /* _PyRuntime: the finalizing thread
                                    state, null until Py_Finalize */
    uint16_t ts_cframe;          /* PyThreadState: its _PyCFrame pointer;
                                    NONE when the thread state holds the
                                    current frame itself (3.9, 3.10, 3.13) */
    uint16_t current_frame;      /* in the _PyCFrame, or the thread state */
    uint16_t ts_chunk, ts_top;   /* PyThreadState: the frames' data stack:
                                    its current chunk and top; NONE before
                                    3.11 (every frame an object of its own) */
    uint16_t fr_code;            /* the frame: its code object */
    uint16_t fr_previous;        /* the caller's frame */
    uint16_t fr_instr;           /* the instruction's address: last
                                    executed (3.11, 3.12), current (3.13);
                                    NONE before */
    uint16_t fr_lasti;           /* 3.9, 3.10: f_lasti, an int: the index of
                                    the instruction running, -1 before the
                                    first; NONE after */
    uint16_t lasti_shift;        /* f_lasti >> this is in code units (3.9
                                    counts bytes) */
    uint16_t fr_entry;           /* 3.11: is_entry, the outermost frame of
                                    its eval-loop call; NONE otherwise */
    uint16_t fr_owner;           /* owner (a byte); NONE before 3.11, where
                                    each frame is an eval-loop call's only
                                    one */
    uint16_t owner_cstack;       /* 3.12 on: the owner of the eval loop's
                                    entry frame (marks a call's start);
                                    0xff before */
    uint16_t co_code;            /* PyCodeObject: its instructions (3.11
                                    on; NONE before) */
    uint16_t co_basicsize;       /* PyCode_Type's tp_basicsize: checked
                                    against the interpreter's own, which
                                    differs in a build of other object
                                    headers (Py_TRACE_REFS, free-threaded) */
    uint16_t co_filename;
    uint16_t co_qualname;        /* co_name before 3.11, which has no
                                    qualified name */
    uint16_t co_firstlineno;
    uint16_t co_linetable;       /* the line table: co_lnotab (3.9), 3.10's
                                    co_linetable, the location table (3.11
                                    on), each its own format */
    uint16_t str_ascii;          /* sizeof(PyASCIIObject): ASCII text */
    uint16_t str_compact;        /* sizeof(PyCompactUnicodeObject) */
} recs__py_layout;

/* The interpreter the program runs, once found (recs__py_detect). */
typedef struct recs__py_state {
    _Atomic int on;              /* the fields below are set */
    const recs__py_layout *layout;
    uint64_t runtime;            /* &_PyRuntime */
    uint64_t code_type;          /* &PyCode_Type */
    uint64_t frame_type;         /* &PyFrame_Type (before 3.11: each frame's
                                    type, checked by the walk) */
    uint64_t eval_lo, eval_hi;   /* _PyEval_EvalFrameDefault */
} recs__py_state;

extern recs__py_state recs__py;

/* One Python frame as the handler leaves it in a request: the code
 * object (8-aligned, 47-bit: its bits 3..46), the instruction's offset in
 * code units (19 bits, saturated), and whether the frame is the outermost
 * of its eval-loop call. */
#define RECS_PY_END       (1ull << 63)
#define RECS_PY_OFF_SHIFT 44
#define RECS_PY_OFF_MAX   ((1u << 19) - 1)
/* A Python program's busy nap, at most (session.c): this, or an eighth of
 * the session's age once that is longer. */
#define RECS_PY_NAP_NS    100000000ull
#define RECS_PY_AGE_PART  8
/* Python frames per sample, at most. */
#define RECS_PY_DEPTH     64

static inline uint64_t recs__py_word(uint64_t code, uint64_t off, bool end)
{
    if (off > RECS_PY_OFF_MAX)
        off = RECS_PY_OFF_MAX;
    return ((code >> 3) & ((1ull << 44) - 1)) | off << RECS_PY_OFF_SHIFT |
           (end ? RECS_PY_END : 0);
}
static inline uint64_t recs__py_code(uint64_t w)
{
    return (w & ((1ull << 44) - 1)) << 3;
}
static inline uint32_t recs__py_off(uint64_t w)
{
    return (uint32_t)(w >> RECS_PY_OFF_SHIFT) & RECS_PY_OFF_MAX;
}

/* Look for an interpreter among the loaded modules (sampler thread, after
 * a scan found new ones); a no-op once found. */
void recs__py_detect(void);

/* Signal-safe. The current thread's Python frames, innermost first, into
 * out (at most max); 0 when it runs no Python. Memory is read in place
 * only where it is known to be mapped: sp..hi, the thread's stack (the
 * eval loop's entry frames); the thread state and the data stack's live
 * part once the kernel has read them (seen: the thread's last thread
 * state, chunk start and end, so that most samples make no system call);
 * everything else (a first sight, a generator's frame, anything during
 * Py_Finalize, which frees other threads' states) through the kernel: a
 * wrong pointer fails only the Python part. */
__attribute__((visibility("hidden")))
unsigned recs__py_walk(uint64_t sp, uint64_t hi, uint64_t seen[3],
                       uint64_t *out, unsigned max);

/* Whether pc lies in the eval loop (drain). */
static inline bool recs__py_in_eval(uint64_t pc)
{
    return atomic_load_explicit(&recs__py.on, memory_order_acquire) &&
           pc >= recs__py.eval_lo && pc < recs__py.eval_hi;
}

/* The Frame of a Python frame word (drain): "qualname", its file and
 * line, kind python; cached by code object and instruction. 0 or < 0. */
int recs__py_frame(rec_writer *w, uint64_t word, rec_id *id);
/* The line of instruction off (code units) from a line table t of n bytes
 * in version's format (cut: the code object's was longer), the code's
 * first line first; 0 if it has none (sym-py-lines.c). */
unsigned recs__py_line(uint16_t version, const unsigned char *t, size_t n,
                       bool cut, int first, uint32_t off);
/* The name cache, with the stack cache's lifetime (drain-stacks.c). */
void recs__py_names_free(void);
void recs__py_names_abandon(void);

#endif
