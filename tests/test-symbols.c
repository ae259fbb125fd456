/*
 * tests/test-symbols.c - libsampler/sym-map.c against this very program:
 * module map, pc -> Frame (symbol, file:line, inlined calls, return
 * addresses), the CFI leaf rule, dlopen rescans, ModuleLoad events.
 *
 * Frames are checked the way users see them: interned into a real
 * recording, referenced by events, read back with the reader.
 * Timings are printed as diagnostics (no timed assertions).
 */
#include <config.h>
#include "sym.h"
#include "tap.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOIPA __attribute__((noipa))

static volatile uint64_t sink;
static int probe_line, inline_call_line;

/* Functions whose pcs the tests resolve. */
NOIPA static uint64_t sym_probe_target(uint64_t x)
{
    probe_line = __LINE__ + 1;
    return x * 3 + 1;
}

NOIPA static uintptr_t sym_return_address(void)
{
    return (uintptr_t)__builtin_return_address(0);
}

static inline __attribute__((always_inline)) uintptr_t sym_inlined_helper(void)
{
    inline_call_line = __LINE__ + 1;
    return sym_return_address();
}

NOIPA static uintptr_t sym_outer_function(void)
{
    return sym_inlined_helper() + 0;
}

static int call_line;
NOIPA static uintptr_t sym_caller(void)
{
    call_line = __LINE__ + 1;
    uintptr_t ra = sym_return_address();
    sink = ra;
    return ra;
}

/* A C++-style name (asm label), for the demangler. */
NOIPA int sym_mangled(int x) __asm__("_Z11sym_mangledi");
NOIPA int sym_mangled(int x)
{
    return x + 5;
}

/* Frameless by construction: no locals, no calls. */
__attribute__((noipa, optimize("omit-frame-pointer")))
static uint64_t sym_frameless(uint64_t x)
{
    return x * 7 + 3;
}

/* ------------------------------------------------------------------ */
/* Reading frames back                                                 */
/* ------------------------------------------------------------------ */

struct frame_view {
    char function[128], module[512], file[512];
    uint64_t offset, line;
    bool inlined;
};

static void get_str(const rec_entry *e, size_t field, char *out, size_t size)
{
    rec_value v, s;
    out[0] = '\0';
    if (rec_entry_get(e, field, &v) < 0 || v.kind != REC_REF || !v.v.ref.entry)
        return;
    if (rec_entry_get(v.v.ref.entry, 0, &s) < 0 || s.kind != REC_STRING)
        return;
    snprintf(out, size, "%.*s", (int)s.v.str.len, s.v.str.s);
}

static void view_frame(const rec_entry *f, struct frame_view *fv)
{
    rec_value v;
    memset(fv, 0, sizeof *fv);
    get_str(f, 0, fv->function, sizeof fv->function);
    get_str(f, 1, fv->module, sizeof fv->module);
    if (rec_entry_get(f, 2, &v) == 0 && v.kind == REC_UINT)
        fv->offset = v.v.u;
    get_str(f, 3, fv->file, sizeof fv->file);
    if (rec_entry_get(f, 4, &v) == 0 && v.kind == REC_UINT)
        fv->line = v.v.u;
    if (rec_entry_get(f, 5, &v) == 0 && v.kind == REC_BOOL)
        fv->inlined = v.v.b;
}

#define MAXCASES 16
#define MAXF 8
static struct frame_view got[MAXCASES][MAXF];
static size_t got_n[MAXCASES];

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Notes as a linker lays them out in a PT_NOTE segment: a GNU build-id,
 * then (GO) Go's, whose owner "Go" is padded to four bytes and counted so
 * in n_namesz. */
static void check_notes(void)
{
    static uint32_t seg[32] __attribute__((aligned(8)));
    ElfW(Phdr) ph;
    struct dl_phdr_info info;
    char hex[64];
    size_t n = 0;

    memset(seg, 0, sizeof seg);
    seg[n++] = 4; seg[n++] = 4; seg[n++] = NT_GNU_BUILD_ID;
    memcpy(&seg[n++], "GNU", 4);
    seg[n++] = 0x04030201u;
    size_t gnu_only = n * 4;
    seg[n++] = 4; seg[n++] = 8; seg[n++] = 4;
    memcpy(&seg[n++], "Go\0\0", 4);
    memcpy(&seg[n], "abcdefgh", 8);
    n += 2;
    memset(&ph, 0, sizeof ph);
    ph.p_type = PT_NOTE;
    ph.p_vaddr = (uintptr_t)seg;
    ph.p_align = 4;
    memset(&info, 0, sizeof info);
    info.dlpi_phdr = &ph;
    info.dlpi_phnum = 1;

    ph.p_memsz = gnu_only;
    recs__phdr_build_id(&info, hex, sizeof hex);
    tap_ok(!strcmp(hex, "01020304") && !recs__phdr_is_go(&info),
           "a C program's notes: its build-id, not Go's");
    ph.p_memsz = n * 4;
    recs__phdr_build_id(&info, hex, sizeof hex);
    tap_ok(!strcmp(hex, "01020304") && recs__phdr_is_go(&info),
           "a Go program's notes: its build-id, and Go's note found");
}

int main(void)
{
    char path[] = "/tmp/rec-test-symbols-XXXXXX";
    int fd = mkstemp(path);
    rec_writer *w;
    rec_stream *st;
    recs__symbols *s;
    recs__symbols_stats stats;
    rec_id thread, ids[MAXCASES][MAXF];
    size_t nids[MAXCASES];
    struct rec_Thread th = { (uint64_t)getpid(), 0, (uint64_t)getpid() };
    uintptr_t ret_in_caller, ret_in_inline;
    int ncases = 0, rc, nmods_emitted;
    void *jansson;
    uintptr_t dl_fn = 0;

    if (fd < 0)
        TAP_BAIL("mkstemp");
    close(fd);
    if (rec_writer_open(&w, path, &(rec_writer_options){
            .size = sizeof(rec_writer_options), .overwrite = true }) < 0 ||
        rec_stream_open(w, &st) < 0 || rec_intern_Thread(w, &th, &thread) < 0)
        TAP_BAIL("cannot open a writer on %s", path);

    tap_ok(recs__symbols_create(&s, w) == 0, "create");
    rc = recs__symbols_scan(s);
    tap_ok(rc >= 3, "scan finds the program, libc and the loader (%d modules)", rc);
    tap_ok(recs__symbols_scan(s) == 0, "a second scan finds nothing new");

    /* is_executable and the range array. */
    tap_ok(recs__symbols_is_executable(s, (uintptr_t)sym_probe_target), "own code is executable");
    tap_ok(!recs__symbols_is_executable(s, (uintptr_t)&rc), "the stack is not");
    {
        uint64_t gen1, gen2;
        size_t n = recs__symbols_ranges(s, NULL, 0, &gen1);
        recs__range r[256];
        bool sorted = true;
        size_t m = recs__symbols_ranges(s, r, 256, &gen2);
        for (size_t i = 1; i < m && i < 256; i++)
            sorted &= r[i - 1].end <= r[i].start;
        tap_ok(n >= 3 && n == m && gen1 == gen2 && sorted,
               "ranges: %zu sorted, disjoint", n);
    }

    /* Case 0: a function entry pc. */
    ret_in_caller = sym_caller();
    ret_in_inline = sym_outer_function();
    sink = sym_probe_target(1) + sym_frameless(2);
    struct { uintptr_t pc; bool ret; } cases[MAXCASES] = {
        { (uintptr_t)sym_probe_target, false },
        { ret_in_caller, true },
        { ret_in_inline, true },
        { (uintptr_t)dlsym(RTLD_DEFAULT, "qsort"), false },
        { 0x1000, false },
    };
    ncases = 5;

    /* A demangler appears with libstdc++ (loaded by any C++ program). */
    void *cxx = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL);
    recs__symbols_scan(s);
    cases[ncases].pc = (uintptr_t)sym_mangled;
    cases[ncases++].ret = false;

    /* dlopen after the first scan: found by the automatic rescan. */
    jansson = dlopen("libjansson.so.4", RTLD_NOW);
    if (jansson) {
        dl_fn = (uintptr_t)dlsym(jansson, "json_object");
        usleep(120000);          /* past the rescan rate limit */
        cases[ncases].pc = dl_fn;
        cases[ncases++].ret = false;
    }

    for (int i = 0; i < ncases; i++) {
        uint64_t t0 = now_ns();
        rc = recs__symbols_frames(s, cases[i].pc, cases[i].ret, ids[i], MAXF, &nids[i]);
        if (rc < 0)
            tap_diag("frames case %d: %s", i, rec_strerror(rc));
        if (i == 0 || i == 3)   /* the first pc of a module opens its files */
            tap_diag("first pc of %s: %.0f us", i ? "libc" : "the program",
                     (now_ns() - t0) / 1e3);
    }
    recs__symbols_get_stats(s, &stats);
    tap_ok(stats.lookups == (uint64_t)ncases && stats.misses == (uint64_t)ncases,
           "first lookups miss the cache");
    {
        rec_id again[MAXF];
        size_t n;
        recs__symbols_frames(s, cases[0].pc, false, again, MAXF, &n);
        recs__symbols_get_stats(s, &stats);
        tap_ok(stats.misses == (uint64_t)ncases && n == nids[0] && again[0] == ids[0][0],
               "a repeated pc is a cache hit with the same ids");
    }

    /* Leaf rule. At a function's first instruction the return address is
     * at sp; after the frame is set up the frame-pointer walk is right. */
    {
        uint64_t window[4] = { 0x1111, 0x2222, 0x3333, 0x4444 }, ret = 0;
        rc = recs__symbols_leaf_return(s, (uintptr_t)sym_probe_target, 0, window, 4, &ret);
        tap_ok(rc == 0 && ret == 0x1111, "leaf rule at function entry: caller at sp (rc %d)", rc);
        ret = 0;
        rc = recs__symbols_leaf_return(s, (uintptr_t)sym_frameless + 1, 0, window, 4, &ret);
        tap_ok(rc == 0 && ret == 0x1111, "leaf rule inside a frameless function (rc %d)", rc);
        rc = recs__symbols_leaf_return(s, ret_in_caller, 0, window, 4, &ret);
        tap_ok(rc == REC_ENOTFOUND, "leaf rule in a function with its frame: fp walk is right (rc %d)", rc);
        rc = recs__symbols_leaf_return(s, (uintptr_t)sym_probe_target, 0, window, 0, &ret);
        tap_ok(rc == REC_ETRUNCATED, "leaf rule with an empty window: truncated");
        rc = recs__symbols_leaf_return(s, 0x1000, 0, window, 4, &ret);
        tap_ok(rc == REC_EINVAL, "leaf rule outside any module: EINVAL");
        uint64_t t0 = now_ns();
        for (int i = 0; i < 10000; i++)
            recs__symbols_leaf_return(s, (uintptr_t)sym_frameless + 1, 0, window, 4, &ret);
        uint64_t t1 = now_ns();
        uintptr_t qs = (uintptr_t)dlsym(RTLD_DEFAULT, "qsort");
        for (int i = 0; i < 10000; i++)
            recs__symbols_leaf_return(s, qs + (uintptr_t)(i % 2000) * 37, 0, window, 4, &ret);
        tap_diag("leaf rule: %.0f ns per call (one pc), %.0f ns (2000 libc pcs)",
                 (t1 - t0) / 1e4, (now_ns() - t1) / 1e4);
    }

    /* Timing: resolve many new pcs of libc, then hit the cache. */
    {
        uintptr_t base = (uintptr_t)dlsym(RTLD_DEFAULT, "qsort");
        enum { N = 2000 };
        rec_id tmp[MAXF];
        size_t n;
        uint64_t t0 = now_ns();
        for (int i = 0; i < N; i++)
            recs__symbols_frames(s, base + 64 + (uintptr_t)i * 37, true, tmp, MAXF, &n);
        uint64_t t1 = now_ns();
        for (int r = 0; r < 10; r++)
            for (int i = 0; i < N; i++)
                recs__symbols_frames(s, base + 64 + (uintptr_t)i * 37, true, tmp, MAXF, &n);
        uint64_t t2 = now_ns();
        uint64_t self0 = now_ns();
        for (int i = 0; i < 200; i++)
            recs__symbols_frames(s, (uintptr_t)main + (uintptr_t)i * 3, false, tmp, MAXF, &n);
        uint64_t self1 = now_ns();
        tap_diag("libc: %.2f us per new pc; cache hit %.0f ns",
                 (t1 - t0) / 1e3 / N, (double)(t2 - t1) / (10.0 * N));
        tap_diag("own code (DWARF lines + inlines): %.2f us per new pc",
                 (self1 - self0) / 1e3 / 200);
        tap_ok(1, "timing measured");
    }

    /* Emit: ModuleLoad for every module, and one sample per case so that
     * the frames land in the file. */
    nmods_emitted = recs__symbols_emit_modules(s, st, false);
    tap_ok(nmods_emitted >= 3, "ModuleLoad events: %d", nmods_emitted);
    tap_ok(recs__symbols_emit_modules(s, st, false) == 0, "emitted once only");
    for (int i = 0; i < ncases; i++) {
        struct rec_StackTrace t = { false, ids[i], nids[i] };
        struct rec_CPUTimeSample ev = { thread, 10000000, false, false, 0, 0 };
        if (rec_intern_StackTrace(w, &t, &ev.stackTrace) < 0 ||
            rec_emit_CPUTimeSample(st, &ev) < 0)
            TAP_BAIL("emit");
    }
    rec_stream_close(st);
    recs__symbols_destroy(s);
    if (jansson)
        dlclose(jansson);
    if (cxx)
        dlclose(cxx);
    tap_ok(rec_writer_close(w) == 0, "recording closed");

    /* Read back. */
    rec_reader *r;
    const rec_event *ev;
    int sample = 0, modules = 0;
    bool self_module = false, self_buildid = false;
    char self[512] = "";
    ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
    if (sl > 0)
        self[sl] = '\0';
    if (rec_reader_open(&r, path, REC_READ_STRICT) < 0)
        TAP_BAIL("reader");
    while (rec_reader_next(r, &ev) > 0) {
        uint32_t id = rec_type_id(rec_event_type(ev));
        rec_value v;
        if (id == REC_TYPE_ModuleLoad) {
            char p[512], b[160];
            modules++;
            if (rec_event_get(ev, 0, &v) == 0 && v.kind == REC_REF && v.v.ref.entry) {
                get_str(v.v.ref.entry, 0, p, sizeof p);
                get_str(v.v.ref.entry, 1, b, sizeof b);
                if (!strcmp(p, self)) {
                    self_module = true;
                    self_buildid = strlen(b) == 40;
                }
            }
        } else if (id == REC_TYPE_CPUTimeSample && sample < MAXCASES) {
            long fi = rec_type_field_index(rec_event_type(ev), "stackTrace");
            rec_value frames;
            if (fi >= 0 && rec_event_get(ev, (size_t)fi, &v) == 0 && v.kind == REC_REF &&
                v.v.ref.entry && rec_entry_get(v.v.ref.entry, 1, &frames) == 0 &&
                frames.kind == REC_ARRAY) {
                for (size_t k = 0; k < frames.v.array.n && k < MAXF; k++)
                    if (frames.v.array.items[k].v.ref.entry)
                        view_frame(frames.v.array.items[k].v.ref.entry, &got[sample][k]);
                got_n[sample] = frames.v.array.n;
            }
            sample++;
        }
    }
    rec_reader_close(r);
    unlink(path);

    tap_ok(modules == nmods_emitted, "ModuleLoad events read back: %d", modules);
    tap_ok(self_module && self_buildid, "the program's module with a 40-digit build-id");

    struct frame_view *f = got[0];
    tap_ok(got_n[0] == 1 && !strcmp(f->function, "sym_probe_target") &&
           !strcmp(f->module, self) && ends_with(f->file, "test-symbols.c") &&
           f->line > 0 && !f->inlined,
           "function entry: %s %s:%lu", f->function, f->file, (unsigned long)f->line);

    f = got[1];
    tap_ok(got_n[1] == 1 && !strcmp(f->function, "sym_caller") &&
           f->line == (uint64_t)call_line,
           "return address: caller and the call's line (%s:%lu, want %d)",
           f->function, (unsigned long)f->line, call_line);

    f = got[2];
    tap_ok(got_n[2] == 2 && !strcmp(f[0].function, "sym_inlined_helper") && f[0].inlined &&
           f[0].line == (uint64_t)inline_call_line &&
           !strcmp(f[1].function, "sym_outer_function") && !f[1].inlined &&
           f[0].offset == f[1].offset,
           "inlined call: %s:%lu (inlined) in %s:%lu",
           f[0].function, (unsigned long)f[0].line, f[1].function, (unsigned long)f[1].line);

    f = got[3];
    tap_ok(got_n[3] == 1 && strstr(f->module, ".so") &&
           strstr(f->function, "qsort"),
           "libc symbol: %s in %s", f->function, f->module);

    f = got[4];
    tap_ok(got_n[4] == 1 && !f->function[0] && !f->module[0] && f->offset == 0x1000,
           "pc in no module: null function and module, absolute offset");

    f = got[5];
    if (cxx)
        tap_ok(got_n[5] == 1 && !strcmp(f->function, "sym_mangled(int)"),
               "C++ names demangled: %s", f->function);
    else
        printf("ok %d # SKIP libstdc++.so.6 not loadable\n", ++tap_n);

    if (jansson) {
        f = got[6];
        tap_ok(got_n[6] == 1 && !strcmp(f->function, "json_object") &&
               strstr(f->module, "libjansson"),
               "dlopen()ed library found by a rescan: %s in %s", f->function, f->module);
    } else {
        printf("ok %d # SKIP libjansson.so.4 not loadable\n", ++tap_n);
    }
    check_notes();
    return tap_done();
}
