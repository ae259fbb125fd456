/*
 * libsampler/sym-map.c - the process's module map, the pc -> Frame cache and
 * the Module/Frame pool entries (see sym.h). ELF/DWARF reading is in
 * sym-elf.c.
 *
 * The module list comes from the module registry (unwind-mods.c), which
 * walks the loader's list: exactly what the loader mapped, with load
 * biases and in-memory program headers (build-ids are read from the
 * PT_NOTE segments without opening any file). It is asked without our
 * mutex held so that the lock order is never "ours, then the loader's"
 * against a dlopen constructor that might call into the sampler.
 */
#include <config.h>
#include "sym-internal.h"
#include "unwind.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <link.h>             /* ElfW */
#include <elf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#define RESCAN_NS    100000000ull   /* at most one automatic rescan per 100 ms */
#define CACHE_MAX    (1u << 16)     /* pcs cached before the cache restarts (2 MiB) */

struct cache_slot {
    uint64_t key;                   /* (pc << 1 | is_return) + 1; 0 = empty */
    uint32_t first;                 /* index in ids[] */
    uint16_t count;
    uint16_t unresolved;            /* no module: retry after a new scan */
};

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

struct recs__symbols {
    pthread_mutex_t lock;
    rec_writer *w;
    demangle_fn demangle;           /* __cxa_demangle if the program has it */
    recs__module **mods;             /* sorted by lo */
    size_t nmods;
    recs__range *ranges;             /* executable segments, sorted */
    size_t nranges;
    uint64_t generation;
    uint64_t last_scan_ns;
    struct cache_slot *slots;       /* open addressing, power-of-two size */
    size_t cap, used;
    rec_id *ids;
    size_t nids, capids;
    recs__symbols_stats stats;
    bool retry;                     /* resolve(): result incomplete */
};

/* ------------------------------------------------------------------ */
/* Scanning                                                            */
/* ------------------------------------------------------------------ */

/* One module as the registry reports it. */
struct found {
    char *path;
    uint64_t bias;
    recs__range seg[RECS_MAX_SEGMENTS];
    unsigned nseg;
    char build_id[129];
    const unsigned char *vdso;      /* ELF header of the vdso, else NULL */
};

struct found_list {
    struct found *v;
    size_t n, cap;
    int err;
    uintptr_t vdso_ehdr;
};

static char *self_exe(void)
{
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);

    if (n <= 0)
        return strdup("[main]");
    buf[n] = '\0';
    return strdup(buf);
}

/* One module of the registry (under its lock: copies only). */
static void found_cb(const struct recs__uw_modinfo *m, void *arg)
{
    struct found_list *l = arg;
    struct found f;

    if (l->err)
        return;
    memset(&f, 0, sizeof f);
    f.bias = m->bias;
    for (unsigned i = 0; i < m->nseg && f.nseg < RECS_MAX_SEGMENTS; i++) {
        f.seg[f.nseg].start = m->segs[i].lo;
        f.seg[f.nseg].end = m->segs[i].hi;
        f.nseg++;
    }
    snprintf(f.build_id, sizeof f.build_id, "%s", m->build_id);
    if (f.nseg == 0)
        return;
    if (m->vdso && l->vdso_ehdr) {
        f.vdso = (const unsigned char *)l->vdso_ehdr;
        f.path = strdup("[vdso]");
    } else if (m->name[0]) {
        f.path = strdup(m->name);
    } else if (m->main) {
        f.path = self_exe();
    } else {
        return;
    }
    if (!f.path)
        goto nomem;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 32;
        struct found *v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            free(f.path);
            goto nomem;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = f;
    return;
nomem:
    l->err = REC_ENOMEM;
}

/* Copy of the vdso image (the ELF file is not on disk). Its PT_LOAD maps
 * whole pages from the image's start; the section headers follow the
 * loaded bytes but lie in those pages. Nothing beyond them is read. */
static int copy_vdso(recs__module *m, const unsigned char *ehdr_p)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)ehdr_p;
    size_t size = 0, page = (size_t)sysconf(_SC_PAGESIZE), sh_end;

    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_phentsize != sizeof(ElfW(Phdr)))
        return REC_EINVAL;
    for (int i = 0; i < eh->e_phnum; i++) {
        const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(ehdr_p + eh->e_phoff) + i;
        if (ph->p_type == PT_LOAD && ph->p_offset + ph->p_filesz > size)
            size = ph->p_offset + ph->p_filesz;
    }
    sh_end = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
    if (size < sizeof *eh || size > (1u << 20) ||
        sh_end > (size + page - 1) / page * page)
        return REC_EINVAL;
    if (sh_end > size)
        size = sh_end;
    m->image = malloc(size);
    if (!m->image)
        return REC_ENOMEM;
    memcpy(m->image, ehdr_p, size);
    m->image_size = size;
    return 0;
}

static void module_free(recs__module *m)
{
    if (!m)
        return;
    recs__module_unload(m);
    free(m->image);
    free(m->path);
    free(m);
}

static int module_new(recs__symbols *s, struct found *f, recs__module **out)
{
    recs__module *m = calloc(1, sizeof *m);
    struct rec_Module mod;
    rec_id bid = 0;
    int rc;

    if (!m)
        return REC_ENOMEM;
    m->fd = m->dbg_fd = -1;
    m->path = f->path;
    f->path = NULL;
    m->bias = f->bias;
    memcpy(m->seg, f->seg, sizeof m->seg);
    m->nseg = f->nseg;
    m->lo = UINT64_MAX;
    for (unsigned i = 0; i < m->nseg; i++) {
        if (m->seg[i].start < m->lo)
            m->lo = m->seg[i].start;
        if (m->seg[i].end > m->hi)
            m->hi = m->seg[i].end;
    }
    memcpy(m->build_id, f->build_id, sizeof m->build_id);
    if (f->vdso && (rc = copy_vdso(m, f->vdso)) == REC_ENOMEM)
        goto fail;
    if ((rc = rec_intern_cstr(s->w, m->path, &m->path_id)) < 0)
        goto fail;
    if (m->build_id[0] && (rc = rec_intern_cstr(s->w, m->build_id, &bid)) < 0)
        goto fail;
    memset(&mod, 0, sizeof mod);
    mod.path = m->path_id;
    mod.buildId = bid;
    mod.baseAddress = m->bias;
    mod.size = m->hi - m->lo;
    if ((rc = rec_intern_Module(s->w, &mod, &m->module_id)) < 0)
        goto fail;
    *out = m;
    return 0;
fail:
    module_free(m);
    return rc;
}

static int cmp_mod(const void *a, const void *b)
{
    const recs__module *x = *(recs__module *const *)a, *y = *(recs__module *const *)b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int cmp_range(const void *a, const void *b)
{
    const recs__range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

static void cache_clear(recs__symbols *s, bool unresolved_only);

/* Merge a scan into the module list (lock held). */
static int merge(recs__symbols *s, struct found_list *l)
{
    size_t added = 0, removed = 0, nr = 0;
    recs__module **mods;
    recs__range *ranges;
    int rc = 0;

    for (size_t i = 0; i < s->nmods; i++)
        s->mods[i]->seen = false;
    mods = malloc((s->nmods + l->n + 1) * sizeof *mods);
    if (!mods)
        return REC_ENOMEM;
    for (size_t i = 0; i < l->n; i++) {
        struct found *f = &l->v[i];
        recs__module *m = NULL;
        for (size_t j = 0; j < s->nmods; j++) {
            recs__module *o = s->mods[j];
            if (!o->seen && o->bias == f->bias && o->seg[0].start == f->seg[0].start &&
                !strcmp(o->path, f->path)) {
                m = o;
                break;
            }
        }
        if (m) {
            m->seen = true;
            continue;
        }
        if ((rc = module_new(s, f, &m)) < 0)
            break;
        m->seen = true;
        mods[s->nmods + added++] = m;
    }
    /* Keep the known modules still mapped, drop the others. */
    size_t n = 0;
    for (size_t i = 0; i < s->nmods; i++) {
        if (s->mods[i]->seen) {
            mods[n++] = s->mods[i];
        } else {
            module_free(s->mods[i]);
            removed++;
        }
    }
    for (size_t i = 0; i < added; i++)
        mods[n++] = mods[s->nmods + i];
    qsort(mods, n, sizeof *mods, cmp_mod);
    free(s->mods);
    s->mods = mods;
    s->nmods = n;

    for (size_t i = 0; i < n; i++)
        nr += mods[i]->nseg;
    ranges = malloc((nr ? nr : 1) * sizeof *ranges);
    if (ranges) {
        nr = 0;
        for (size_t i = 0; i < n; i++)
            for (unsigned j = 0; j < mods[i]->nseg; j++)
                ranges[nr++] = mods[i]->seg[j];
        qsort(ranges, nr, sizeof *ranges, cmp_range);
        free(s->ranges);
        s->ranges = ranges;
        s->nranges = nr;
    } else if (rc == 0) {
        rc = REC_ENOMEM;
    }
    if (added || removed) {
        s->generation++;
        /* An unloaded module's addresses may be reused by the next one. */
        cache_clear(s, removed == 0);
    }
    s->stats.modules = n;
    return rc < 0 ? rc : (int)added;
}

int recs__symbols_scan(recs__symbols *s)
{
    struct found_list l = { 0 };
    int rc;

    /* C++ programs carry the demangler (libstdc++); looked up here, with
     * the loader's lock, not under ours. */
    demangle_fn dm = (demangle_fn)dlsym(RTLD_DEFAULT, "__cxa_demangle");

    l.vdso_ehdr = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    rc = recs__uw_modules(found_cb, &l);
    if (rc < 0 && !l.err)
        l.err = rc;
    pthread_mutex_lock(&s->lock);
    if (dm)
        s->demangle = dm;
    s->stats.scans++;
    s->last_scan_ns = rec_now_ns();
    rc = l.err ? l.err : merge(s, &l);
    pthread_mutex_unlock(&s->lock);
    for (size_t i = 0; i < l.n; i++)
        free(l.v[i].path);
    free(l.v);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Lifetime, module events, ranges                                     */
/* ------------------------------------------------------------------ */

int recs__symbols_create(recs__symbols **out, rec_writer *w)
{
    recs__symbols *s;

    if (!out || !w)
        return REC_EINVAL;
    s = calloc(1, sizeof *s);
    if (!s)
        return REC_ENOMEM;
    pthread_mutex_init(&s->lock, NULL);
    s->w = w;
    *out = s;
    return 0;
}

void recs__symbols_destroy(recs__symbols *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nmods; i++)
        module_free(s->mods[i]);
    free(s->mods);
    free(s->ranges);
    free(s->slots);
    free(s->ids);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

struct late_ctx {
    recs__symbols *s;
    rec_stream *st;
    int rc;
};

static void late_name(uint64_t lo, uint64_t hi, const char *name, void *arg)
{
    struct late_ctx *c = arg;
    struct rec_JitCodeName ev;

    if (c->rc < 0)
        return;
    memset(&ev, 0, sizeof ev);
    ev.address = lo;
    ev.size = hi - lo;
    ev.startTime = rec_now_ns();
    if ((c->rc = rec_intern_cstr(c->s->w, name, &ev.name)) >= 0)
        c->rc = rec_emit_JitCodeName(c->st, &ev);
}

extern size_t recs__jit_late(bool final, void (*fn)(uint64_t, uint64_t,
                                                    const char *, void *),
                             void *arg) __attribute__((weak));

int recs__symbols_emit_jit_names(recs__symbols *s, rec_stream *st, bool final)
{
    struct late_ctx c = { s, st, 0 };
    size_t n;

    if (!recs__jit_late)
        return 0;
    pthread_mutex_lock(&s->lock);
    n = recs__jit_late(final, late_name, &c);
    pthread_mutex_unlock(&s->lock);
    return c.rc < 0 ? c.rc : (int)n;
}

int recs__symbols_emit_modules(recs__symbols *s, rec_stream *st, bool all)
{
    int rc = 0, n = 0;

    pthread_mutex_lock(&s->lock);
    for (size_t i = 0; i < s->nmods; i++) {
        recs__module *m = s->mods[i];
        struct rec_ModuleLoad ev;
        if (m->emitted && !all)
            continue;
        memset(&ev, 0, sizeof ev);
        ev.module = m->module_id;
        ev.startTime = rec_now_ns();
        ev.restated = m->emitted;
        if ((rc = rec_emit_ModuleLoad(st, &ev)) < 0)
            break;
        m->emitted = true;
        n++;
    }
    pthread_mutex_unlock(&s->lock);
    return rc < 0 ? rc : n;
}

static bool in_ranges(const recs__symbols *s, uint64_t pc)
{
    size_t lo = 0, hi = s->nranges;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->ranges[mid].start <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && pc < s->ranges[lo - 1].end;
}

bool recs__symbols_is_executable(recs__symbols *s, uint64_t pc)
{
    bool r;

    pthread_mutex_lock(&s->lock);
    r = in_ranges(s, pc);
    pthread_mutex_unlock(&s->lock);
    return r;
}

size_t recs__symbols_ranges(recs__symbols *s, recs__range *out, size_t max,
                           uint64_t *generation)
{
    size_t n;

    pthread_mutex_lock(&s->lock);
    n = s->nranges;
    if (out)
        memcpy(out, s->ranges, (n < max ? n : max) * sizeof *out);
    if (generation)
        *generation = s->generation;
    pthread_mutex_unlock(&s->lock);
    return n;
}

void recs__symbols_get_stats(recs__symbols *s, recs__symbols_stats *st)
{
    pthread_mutex_lock(&s->lock);
    *st = s->stats;
    pthread_mutex_unlock(&s->lock);
}

/* ------------------------------------------------------------------ */
/* pc cache                                                            */
/* ------------------------------------------------------------------ */

static uint64_t hash64(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    return k ^ (k >> 33);
}

static struct cache_slot *cache_find(recs__symbols *s, uint64_t key)
{
    if (!s->cap)
        return NULL;
    for (size_t i = hash64(key) & (s->cap - 1);; i = (i + 1) & (s->cap - 1)) {
        if (s->slots[i].key == key)
            return &s->slots[i];
        if (s->slots[i].key == 0)
            return NULL;
    }
}

static void cache_put_slot(struct cache_slot *slots, size_t cap,
                           const struct cache_slot *e)
{
    size_t i = hash64(e->key) & (cap - 1);
    while (slots[i].key != 0 && slots[i].key != e->key)
        i = (i + 1) & (cap - 1);
    slots[i] = *e;
}

static void cache_clear(recs__symbols *s, bool unresolved_only)
{
    if (!unresolved_only || !s->cap) {
        if (s->cap)
            memset(s->slots, 0, s->cap * sizeof *s->slots);
        s->used = 0;
        s->nids = 0;
        return;
    }
    /* Rebuild without the unresolved entries (their ids stay in ids[]). */
    struct cache_slot *old = s->slots;
    struct cache_slot *slots = calloc(s->cap, sizeof *slots);
    if (!slots) {
        cache_clear(s, false);
        return;
    }
    s->used = 0;
    for (size_t i = 0; i < s->cap; i++)
        if (old[i].key && !old[i].unresolved) {
            cache_put_slot(slots, s->cap, &old[i]);
            s->used++;
        }
    s->slots = slots;
    free(old);
}

static int cache_put(recs__symbols *s, uint64_t key, const rec_id *ids,
                     size_t n, bool unresolved)
{
    struct cache_slot e;

    if (s->used >= CACHE_MAX)
        cache_clear(s, false);
    if ((s->used + 1) * 2 > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        struct cache_slot *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return REC_ENOMEM;
        for (size_t i = 0; i < s->cap; i++)
            if (s->slots[i].key)
                cache_put_slot(slots, cap, &s->slots[i]);
        free(s->slots);
        s->slots = slots;
        s->cap = cap;
    }
    if (s->nids + n > s->capids) {
        size_t cap = s->capids ? 2 * s->capids : 4096;
        rec_id *v;
        while (cap < s->nids + n)
            cap *= 2;
        v = realloc(s->ids, cap * sizeof *v);
        if (!v)
            return REC_ENOMEM;
        s->ids = v;
        s->capids = cap;
    }
    e.key = key;
    e.first = (uint32_t)s->nids;
    e.count = (uint16_t)n;
    e.unresolved = unresolved;
    memcpy(s->ids + s->nids, ids, n * sizeof *ids);
    s->nids += n;
    if (!cache_find(s, key))
        s->used++;
    cache_put_slot(s->slots, s->cap, &e);
    return 0;
}

/* ------------------------------------------------------------------ */
/* Resolution                                                          */
/* ------------------------------------------------------------------ */

static recs__module *find_module(recs__symbols *s, uint64_t addr)
{
    size_t lo = 0, hi = s->nmods;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->mods[mid]->lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Extents of different modules do not overlap; check the segments so a
     * gap between them is not taken for code. */
    if (lo == 0)
        return NULL;
    recs__module *m = s->mods[lo - 1];
    for (unsigned i = 0; i < m->nseg; i++)
        if (addr >= m->seg[i].start && addr < m->seg[i].end)
            return m;
    return NULL;
}

/* Function names as people read them: without the version of a versioned
 * alias ("clock_gettime@@GLIBC_2.17"), C++ names demangled when the
 * program has the demangler. */
static int intern_function(recs__symbols *s, const char *name, rec_id *id)
{
    char buf[1024];
    int rc;

    if (strchr(name, '@') && name[0] != '@') {
        snprintf(buf, sizeof buf, "%.*s", (int)strcspn(name, "@"), name);
        name = buf;
    }
    if (s->demangle && name[0] == '_' && name[1] == 'Z') {
        int status = -1;
        char *d = s->demangle(name, NULL, NULL, &status);
        if (d && status == 0) {
            rc = rec_intern_cstr(s->w, d, id);
            free(d);
            return rc;
        }
        free(d);
    }
    return rec_intern_cstr(s->w, name, id);
}

static int intern_frame(recs__symbols *s, const char *function, rec_id module,
                        uint64_t offset, const char *file, unsigned line,
                        bool inlined, bool jit, rec_id *id)
{
    struct rec_Frame f;
    int rc;

    memset(&f, 0, sizeof f);
    if (function && (rc = intern_function(s, function, &f.function)) < 0)
        return rc;
    if (file && (rc = rec_intern_cstr(s->w, file, &f.file)) < 0)
        return rc;
    f.module = module;
    f.offset = offset;
    f.line = file ? line : 0;
    f.inlined = inlined;
    if ((rc = rec_intern_cstr(s->w, jit ? "jit" : "native", &f.kind)) < 0)
        return rc;
    rc = rec_intern_Frame(s->w, &f, id);
    if (rc >= 0)
        s->stats.frames++;
    return rc;
}

/* A function without a symbol (a stripped module's static functions) is
 * named by its module and its start as its FDE gives it,
 * "libz.so.1+0x2a30", so that distinct functions stay distinct; NULL when
 * no FDE covers addr. The unwinder owns the tables (weak: the symbolizer
 * is also linked without it). */
extern int recs__uw_symbolic_start(uint64_t pc, uint64_t *vaddr)
    __attribute__((weak));

static const char *start_name(recs__symbols *s, const recs__module *m,
                              uint64_t addr, char *buf, size_t size)
{
    const char *base = strrchr(m->path, '/');
    uint64_t start;
    int rc;

    if (!recs__uw_symbolic_start)
        return NULL;
    rc = recs__uw_symbolic_start(addr, &start);
    if (rc < 0)
        s->retry = true;      /* tables not built yet: do not cache */
    if (rc <= 0)
        return NULL;
    snprintf(buf, size, "%s+0x%" PRIx64, base ? base + 1 : m->path, start);
    return buf;
}

/* Code of no module (JIT code): named from the runtime's perf map. Both
 * weak: the symbolizer is also linked without the unwinder. */
extern int recs__uw_code(uint64_t pc) __attribute__((weak));

static bool in_jit(uint64_t addr)
{
    return recs__uw_code && recs__uw_code(addr) == RECS_CODE_JIT;
}
extern const char *recs__jit_lookup(uint64_t pc, recs__jit_when *w,
                                    bool *provisional) __attribute__((weak));

extern void recs__jit_unnamed_pc(uint64_t pc, uint64_t t) __attribute__((weak));

/* Named as it was at w->t (the latest without w). */
static int jit_frame(recs__symbols *s, uint64_t addr, recs__jit_when *w,
                     rec_id *id)
{
    const char *name;
    rec_id mod = 0;
    int rc;

    name = recs__jit_lookup ? recs__jit_lookup(addr, w, &s->retry) : NULL;
    if ((rc = rec_intern_cstr(s->w, "[jit]", &mod)) < 0)
        return rc;
    /* Written unnamed: a name that comes later goes in a JitCodeName
     * (none will for code that had moved away). */
    if (!name && !(w && w->gone) && recs__jit_unnamed_pc)
        recs__jit_unnamed_pc(addr, w ? w->t : rec_now_ns());
    return intern_frame(s, name ? name : "[jit]", mod, addr, NULL, 0, false, true, id);
}

/* Frames for addr (lock held). A return address that follows no symbol
 * but precedes one is the signal trampoline's (glibc puts a nop before
 * __restore_rt for the pc - 1 lookup): named by the next symbol. */
static int resolve(recs__symbols *s, recs__module *m, bool jit, uint64_t addr,
                   recs__jit_when *w, rec_id *ids, size_t *n)
{
    char name[300];
    recs__srcframe sf[RECS_MAX_INLINE];
    size_t nsf = 0;
    const char *sym = NULL;
    uint64_t vaddr;
    int rc;

    *n = 0;
    if (jit)
        return jit_frame(s, addr, w, &ids[(*n)++]);
    if (!m)
        return intern_frame(s, NULL, 0, addr, NULL, 0, false, false, &ids[(*n)++]);
    vaddr = addr - m->bias;
    if (recs__module_load(m) == 0) {
        nsf = recs__module_srcframes(m, vaddr, sf, RECS_MAX_INLINE);
        sym = recs__module_symbol(m, vaddr);
    }
    if (nsf == 0 && !sym && m->load_state > 0)
        sym = recs__module_symbol(m, vaddr + 1);   /* see below */
    if (nsf == 0 && !sym)
        sym = start_name(s, m, addr, name, sizeof name);
    if (nsf == 0)
        return intern_frame(s, sym, m->path_id, vaddr, NULL, 0, false, false, &ids[(*n)++]);
    for (size_t i = 0; i < nsf; i++) {
        /* The physical function by its symbol (C++ mangled like the rest of
         * the toolchain shows it), unless the symbol is a compiler part or
         * clone (foo.cold, foo.constprop.0): DWARF names the source
         * function then. Inlined calls exist only in DWARF. */
        const char *fn = sf[i].function;
        if (!sf[i].inlined && sym && (!fn || !strchr(sym, '.')))
            fn = sym;
        rc = intern_frame(s, fn, m->path_id, vaddr, sf[i].file, sf[i].line,
                          sf[i].inlined, false, &ids[(*n)++]);
        if (rc < 0)
            return rc;
    }
    return 0;
}

int recs__symbols_frames(recs__symbols *s, uint64_t pc, bool is_return_address,
                        rec_id *frames, size_t max, size_t *n)
{
    return recs__symbols_frames_at(s, pc, is_return_address, NULL, frames,
                                   max, n);
}

int recs__symbols_frames_at(recs__symbols *s, uint64_t pc,
                            bool is_return_address, recs__jit_when *w,
                            rec_id *frames, size_t max, size_t *n)
{
    uint64_t key = ((pc << 1) | is_return_address) + 1;
    uint64_t addr = is_return_address && pc ? pc - 1 : pc;
    rec_id ids[RECS_MAX_INLINE + 1];
    struct cache_slot *e;
    recs__module *m;
    size_t k = 0;
    bool jit;
    int rc;

    *n = 0;
    if (max == 0)
        return REC_EINVAL;
    pthread_mutex_lock(&s->lock);
    s->stats.lookups++;
    e = cache_find(s, key);
    if (e) {
        k = e->count < max ? e->count : max;
        memcpy(frames, s->ids + e->first, k * sizeof *frames);
        pthread_mutex_unlock(&s->lock);
        *n = k;
        return 0;
    }
    s->stats.misses++;
    m = find_module(s, addr);
    if (!m && rec_now_ns() - s->last_scan_ns >= RESCAN_NS) {
        /* Maybe dlopen()ed since the last scan. */
        pthread_mutex_unlock(&s->lock);
        recs__symbols_scan(s);
        pthread_mutex_lock(&s->lock);
        m = find_module(s, addr);
    }
    s->retry = false;
    jit = !m && in_jit(addr);
    rc = resolve(s, m, jit, addr, w, ids, &k);
    /* JIT code's name depends on the sample's time: the caller keeps it
     * for the times it holds (w). */
    if (rc >= 0 && s->retry)
        rc = 1;
    else if (rc >= 0 && !jit)
        rc = cache_put(s, key, ids, k, m == NULL);
    /* In code the unwinder knows but no scan of ours found yet (a library
     * just loaded): provisional, its stack is not cached either. */
    if (rc == 0 && !m && !jit)
        rc = 1;
    pthread_mutex_unlock(&s->lock);
    if (rc < 0)
        return rc;
    if (k > max)
        k = max;
    memcpy(frames, ids, k * sizeof *frames);
    *n = k;
    return rc;
}

int recs__symbols_unknown_frame(recs__symbols *s, uint64_t pc, rec_id *frame,
                                size_t *n)
{
    int rc;

    pthread_mutex_lock(&s->lock);
    rc = intern_frame(s, NULL, 0, pc, NULL, 0, false, false, frame);
    pthread_mutex_unlock(&s->lock);
    *n = rc < 0 ? 0 : 1;
    return rc < 0 ? rc : 0;
}

int recs__symbols_leaf_return(recs__symbols *s, uint64_t pc, uint64_t sp,
                             const uint64_t *stack_window, size_t nwords,
                             uint64_t *ret)
{
    int rc;

    (void)sp;
#if defined(__x86_64__)
    /* The unwinder's own tables: one reader of a module's CFI. */
    (void)s;
    rc = recs__uw_leaf_return(pc, stack_window, nwords, ret);
#else
    /* No tables of ours on this architecture: libdw's CFI. */
    recs__module *m;

    pthread_mutex_lock(&s->lock);
    m = find_module(s, pc);
    if (!m || recs__module_load_elf(m) < 0)
        rc = REC_EINVAL;
    else
        rc = recs__module_leaf_return(m, pc - m->bias, stack_window, nwords, ret);
    pthread_mutex_unlock(&s->lock);
#endif
    return rc;
}
