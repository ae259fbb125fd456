/*
 * bench/unwind-cost.c - what the CFI unwinder costs (bench/unwind.sh).
 *
 *   unwind-cost walk [DEPTH]   ns per walk of a DEPTH-deep stack built
 *                              without frame pointers (the handler's walk
 *                              without the signal delivery), median of 5
 *   unwind-cost tables FILE... per ELF file: rows, bytes and build time of
 *                              its table from .eh_frame (median of 5)
 *   unwind-cost process        tables of every module of this process,
 *                              built as the sampler does at start
 *   unwind-cost python [DEPTH [LIB]]
 *                              the same walk, then the Python frames' walk
 *                              (unwind-python.c), from inside DEPTH Python calls
 *                              of libpython LIB (loaded here; Debian's
 *                              libpython3.11 unless given): ns per walk
 *                              each, median of 5
 *
 * Links the unwinder's files directly; the sampler's globals they refer
 * to are defined here.
 */
#include <config.h>
#include "internal.h"
#include "unwind-fp.h"
#include "unwind-python.h"
#include "unwind.h"

#include <dlfcn.h>

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

recs__global recs__g;

uint64_t recs__now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t median5(uint64_t *v)
{
    qsort(v, 5, sizeof *v, cmp_u64);
    return v[2];
}

/* ---- walk ---- */

#define ITER 200000
static volatile uint64_t sink;
static uint64_t per_walk[5];
static unsigned frames_seen;
static bool walk_root;

__attribute__((noipa)) static void measure(void)
{
    ucontext_t uc;
    uint64_t out[128];
    pthread_attr_t attr;
    void *addr;
    size_t size;
    uint64_t lo, hi;
    unsigned stop;
    const recs_uw_set *set = recs__uw_current();

    pthread_getattr_np(pthread_self(), &attr);
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    lo = (uintptr_t)addr;
    hi = lo + size;
    getcontext(&uc);
    uint64_t pc = (uint64_t)uc.uc_mcontext.gregs[REG_RIP];
    uint64_t sp = (uint64_t)uc.uc_mcontext.gregs[REG_RSP];
    uint64_t fp = (uint64_t)uc.uc_mcontext.gregs[REG_RBP];
    for (int r = 0; r < 5; r++) {
        uint64_t t0 = recs__now_ns();
        for (int i = 0; i < ITER; i++)
            frames_seen = recs__uw_walk(set, pc, sp, fp, 0, sp, hi, out, 128,
                                        &stop);
        per_walk[r] = (recs__now_ns() - t0) * 1000 / ITER;   /* ps */
    }
    (void)lo;
    walk_root = stop == RECS_STOP_ROOT;
}

__attribute__((noipa)) static void descend(int n)
{
    if (n > 0)
        descend(n - 1);
    else
        measure();
    sink++;            /* not a tail call */
}

static int cmd_walk(int depth)
{
    recs__uw_refresh_all();
    descend(depth);
    printf("walk depth=%u ns_per_walk=%.3f ns_per_frame=%.3f root=%d\n",
           frames_seen, (double)median5(per_walk) / 1000.0,
           (double)median5(per_walk) / 1000.0 / (frames_seen ? frames_seen : 1),
           (int)walk_root);
    return 0;
}

/* ---- python ---- */

/* What a C function called from Python needs of the interpreter's ABI,
 * looked up at run time: no Python headers at build time. */
typedef void *(*py_cfunc)(void *self, void *args);
struct py_methoddef {
    const char *name;
    py_cfunc meth;
    int flags;
    const char *doc;
};
#define PY_METH_NOARGS 0x0004

static void *pylib, *py_none;
static uint64_t per_pywalk[5];
static unsigned py_frames_seen, py_iter;

void recs__warn(const char *fmt, ...)
{
    (void)fmt;
}

__attribute__((noipa)) static void measure_python(void)
{
    pthread_attr_t attr;
    void *addr;
    size_t size;
    uint64_t out[RECS_PY_DEPTH], seen[3] = { 0, 0, 0 };
    ucontext_t uc;

    measure();     /* the native walk, as in walk mode */
    pthread_getattr_np(pthread_self(), &attr);
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
    getcontext(&uc);
    uint64_t sp = (uint64_t)uc.uc_mcontext.gregs[REG_RSP];
    uint64_t hi = (uint64_t)(uintptr_t)addr + size;
    /* Fewer walks where each reads through the kernel (before 3.11):
     * about 0.2 s a run. */
    uint64_t t0 = recs__now_ns();
    for (int i = 0; i < 1000; i++)
        py_frames_seen = recs__py_walk(sp, hi, seen, out, RECS_PY_DEPTH);
    uint64_t each = (recs__now_ns() - t0) / 1000 + 1;
    py_iter = 200000000 / each < ITER ? (unsigned)(200000000 / each) : ITER;
    if (py_iter < 1000)
        py_iter = 1000;
    for (int r = 0; r < 5; r++) {
        t0 = recs__now_ns();
        for (unsigned i = 0; i < py_iter; i++)
            py_frames_seen = recs__py_walk(sp, hi, seen, out, RECS_PY_DEPTH);
        per_pywalk[r] = (recs__now_ns() - t0) * 1000 / py_iter;   /* ps */
    }
}

static void *probe(void *self, void *args)
{
    void (*incref)(void *) = (void (*)(void *))dlsym(pylib, "Py_IncRef");
    (void)self;
    (void)args;
    measure_python();
    incref(py_none);
    return py_none;
}

static int cmd_python(int depth, const char *lib)
{
    static struct py_methoddef def = { "probe", probe, PY_METH_NOARGS, NULL };
    char code[512];

    pylib = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
    if (!pylib) {
        fprintf(stderr, "unwind-cost: %s\n", dlerror());
        return 1;
    }
    void (*init)(int) = (void (*)(int))dlsym(pylib, "Py_InitializeEx");
    void *(*newfunc)(void *, void *, void *) =
        (void *(*)(void *, void *, void *))dlsym(pylib, "PyCFunction_NewEx");
    void *(*addmod)(const char *) = (void *(*)(const char *))dlsym(pylib, "PyImport_AddModule");
    int (*setattr)(void *, const char *, void *) =
        (int (*)(void *, const char *, void *))dlsym(pylib, "PyObject_SetAttrString");
    int (*run)(const char *) = (int (*)(const char *))dlsym(pylib, "PyRun_SimpleString");
    py_none = dlsym(pylib, "_Py_NoneStruct");
    if (!init || !newfunc || !addmod || !setattr || !run || !py_none)
        return 1;
    init(0);
    setattr(addmod("__main__"), "probe", newfunc(&def, NULL, NULL));
    recs__uw_refresh_all();
    recs__py_detect();
    if (!atomic_load(&recs__py.on)) {
        fprintf(stderr, "unwind-cost: no interpreter found\n");
        return 1;
    }
    snprintf(code, sizeof code,
             "def f(n):\n"
             "    if n > 0:\n"
             "        return f(n - 1) + 1\n"
             "    probe()\n"
             "    return 0\n"
             "f(%d)\n", depth);
    if (run(code) != 0)
        return 1;
    printf("python native_frames=%u native_ns=%.3f py_frames=%u py_ns=%.3f "
           "py_walks=%u ratio=%.2f\n", frames_seen,
           (double)median5(per_walk) / 1000.0, py_frames_seen,
           (double)median5(per_pywalk) / 1000.0, py_iter,
           (double)median5(per_pywalk) / (double)median5(per_walk));
    return 0;
}

/* ---- tables ---- */

static int cmd_tables(int argc, char **argv)
{
    elf_version(EV_CURRENT);
    for (int i = 0; i < argc; i++) {
        int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
        Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
        Elf_Scn *scn = NULL;
        size_t shstrndx;
        recs_uw_source src;
        recs_uw_build_stats st;
        recs_uw_table *t = NULL;
        uint64_t ns[5];

        memset(&src, 0, sizeof src);
        if (!elf || elf_getshdrstrndx(elf, &shstrndx) < 0) {
            fprintf(stderr, "%s: not an ELF file\n", argv[i]);
            return 1;
        }
        while ((scn = elf_nextscn(elf, scn)) != NULL) {
            GElf_Shdr sh;
            const char *n;
            Elf_Data *d;
            if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
                continue;
            n = elf_strptr(elf, shstrndx, sh.sh_name);
            if (!n || (strcmp(n, ".eh_frame") && strcmp(n, ".debug_frame")))
                continue;
            d = elf_getdata(scn, NULL);
            if (!d)
                continue;
            if (!strcmp(n, ".eh_frame")) {
                src.eh_frame = d->d_buf;
                src.eh_size = d->d_size;
                src.eh_vaddr = sh.sh_addr;
            } else if (!(sh.sh_flags & SHF_COMPRESSED)) {
                src.debug_frame = d->d_buf;
                src.debug_size = d->d_size;
            }
        }
        for (int r = 0; r < 5; r++) {
            uint64_t t0 = recs__now_ns();
            free(t);
            t = NULL;
            recs__uw_build(&src, &t, &st);
            ns[r] = recs__now_ns() - t0;
        }
        printf("table file=%s fdes=%zu rejected=%zu rows=%zu fallback_rows=%zu "
               "bytes=%zu build_ms=%.3f\n", argv[i], st.fdes, st.rejected,
               t ? t->nrows : 0, st.fallback_rows,
               t ? sizeof *t + t->nrows * sizeof t->rows[0] +
                   t->npages * sizeof t->pages[0] : 0,
               (double)median5(ns) / 1e6);
        free(t);
        elf_end(elf);
        close(fd);
    }
    return 0;
}

static int cmd_process(void)
{
    recs_uw_stats st;

    recs__uw_refresh_all();
    recs__uw_get_stats(&st);
    printf("process modules=%zu tables=%zu rows=%zu bytes=%zu build_ms=%.3f\n",
           st.modules, st.tables, st.rows, st.bytes, (double)st.build_ns / 1e6);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "walk"))
        return cmd_walk(argc > 2 ? atoi(argv[2]) : 30);
    if (argc >= 3 && !strcmp(argv[1], "tables"))
        return cmd_tables(argc - 2, argv + 2);
    if (argc == 2 && !strcmp(argv[1], "process"))
        return cmd_process();
    if (argc >= 2 && !strcmp(argv[1], "python"))
        return cmd_python(argc > 2 ? atoi(argv[2]) : 20,
                          argc > 3 ? argv[3] : "libpython3.11.so.1.0");
    fprintf(stderr, "usage: unwind-cost walk [DEPTH] | tables FILE... | "
            "process | python [DEPTH [LIB]]\n");
    return 2;
}
