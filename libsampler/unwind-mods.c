/*
 * libsampler/unwind-mods.c - the loaded modules' unwind tables, published
 * to the signal handler without locks.
 *
 * Tables are built from the .eh_frame each module has mapped (found via
 * PT_GNU_EH_FRAME), inside the dl_iterate_phdr callback: the loader's lock
 * is held there, so a concurrent dlclose cannot unmap the bytes being read.
 * A module whose .eh_frame leaves most of its code out (built with
 * -fno-asynchronous-unwind-tables -g: only .debug_frame describes it) also
 * gets the .debug_frame of its file, read there too.
 * The vdso is covered the same way. The handler reads one immutable set
 * (segments sorted by address, each with its module's table) through an
 * atomic pointer. A replaced set, and the tables of modules that went away,
 * are retired and freed only once no handler is inside the sampling path
 * (recs__g.inflight seen at zero after the swap: a handler that starts
 * later loads the new set).
 *
 * This list is the process's one module registry: the symbolizer takes
 * its modules from it (recs__uw_modules), so the loader's list is walked
 * in one place, under uw_lock, which a fork waits for.
 *
 * New modules are picked up at start, on every drain when the loader's
 * add/remove counters moved, and promptly when a handler meets code
 * outside every known segment (it flags the set stale and wakes the
 * sampler thread). No dlopen interposition: glibc resolves $ORIGIN, RPATH
 * and the namespace from dlopen's caller, which a wrapper would change.
 */
#include <config.h>

#include "internal.h"
#include "unwind.h"

#include "unwind-fp.h"
#include "sym.h"
#include "cache.h"
#include "sym-dwload.h"
#include "sym-jit.h"

#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <pthread.h>
#include <sys/auxv.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEGS 8

struct umod {
    char *name;
    uint64_t bias, first;            /* identity with the name */
    uint64_t serial;                 /* identity across sets (want[]) */
    recs_uw_seg segs[MAX_SEGS];
    unsigned nseg;
    recs_uw_table *tab;
    char build_id[136];
    bool seen;
    bool built;                      /* tab is final (NULL: no CFI) */
    bool want;                       /* a walk met it pending */
    bool store;                      /* built here: share it */
    bool main;                       /* the program (first in the list) */
    bool vdso;
    bool go;                         /* the program, and Go's */
};

static pthread_mutex_t uw_lock = PTHREAD_MUTEX_INITIALIZER;

/* Executable mappings of no file (JIT code): segments without a table,
 * where the walk takes the frame-pointer rule and return addresses count
 * as code. Read from /proc/self/maps when a walk met a pc outside every
 * segment (uw_unknown): 100 ms after a scan that found new ranges (a JVM
 * commits its code cache piece by piece as it compiles: its walks end at
 * unknown code until a scan sees the new piece), then twice as long
 * after each scan that found nothing new, up to a second (a JVM maps
 * thousands of areas). */
#define MAX_JIT 256
#define JIT_SCAN_MIN_NS 100000000ull
#define JIT_SCAN_MAX_NS 1000000000ull
static uint64_t jit_scan_gap = JIT_SCAN_MIN_NS;
static recs__jit_range jit[MAX_JIT];
static size_t njit;
static _Atomic int uw_unknown;
static uint64_t jit_scan_ns;
static _Atomic(recs_uw_set *) uw_set;
static _Atomic int uw_stale;
static struct umod *mods;
static size_t nmods, capmods;
static uint64_t next_serial;
static struct retired *retired;
static size_t nretired, capretired;
static unsigned long long last_adds, last_subs;
static recs_uw_stats stats;
static char *cache_setting;          /* REC_CACHE_DIR, until configured */
static bool cache_configured;
static char self_build_id[136];

/* Read a DW_EH_PE-encoded pointer of .eh_frame_hdr (the encodings the
 * linkers write there). */
static bool hdr_ptr(const uint8_t **p, uint8_t enc, uintptr_t hdr,
                    uint64_t *out)
{
    const uint8_t *q = *p;
    uint64_t v;

    switch (enc & 0x0f) {
    case 0x03: {
        uint32_t x;
        memcpy(&x, q, 4);
        v = x;
        q += 4;
        break;
    }
    case 0x0b: {
        int32_t x;
        memcpy(&x, q, 4);
        v = (uint64_t)(int64_t)x;
        q += 4;
        break;
    }
    case 0x00:
    case 0x04:
    case 0x0c: memcpy(&v, q, 8); q += 8; break;
    default: return false;
    }
    switch (enc & 0x70) {
    case 0x00: break;
    case 0x10: v += (uintptr_t)*p; break;
    case 0x30: v += hdr; break;
    default: return false;
    }
    *p = q;
    *out = v;
    return true;
}

static size_t table_bytes(const recs_uw_table *t)
{
    return sizeof *t + recs__uw_table_bytes(t);
}

/* The mapped .eh_frame of a module (false if it has none). */
static bool find_eh_frame(struct dl_phdr_info *info, recs_uw_source *src)
{
    const ElfW(Phdr) *hdr_ph = NULL;
    const uint8_t *p;
    uint64_t eh = 0, end = 0;

    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
            hdr_ph = &info->dlpi_phdr[i];
    if (!hdr_ph || hdr_ph->p_memsz < 8)
        return false;
    p = (const uint8_t *)(info->dlpi_addr + hdr_ph->p_vaddr);
    if (p[0] != 1 || !(p += 4, hdr_ptr(&p, p[-3], (uintptr_t)(p - 4), &eh)))
        return false;
    /* .eh_frame runs to its terminator, at most to its segment's end. */
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uint64_t s = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && eh >= s && eh < s + ph->p_filesz)
            end = s + ph->p_filesz;
    }
    if (!end)
        return false;
    src->eh_frame = (const uint8_t *)(uintptr_t)eh;
    src->eh_size = end - eh;
    src->eh_vaddr = eh - info->dlpi_addr;
    return true;
}

/* True if t's FDEs describe less than half of m's executable bytes. */
static bool poorly_covered(const struct umod *m, const recs_uw_table *t)
{
    uint64_t code = 0, covered = 0;

    for (unsigned i = 0; i < m->nseg; i++)
        code += m->segs[i].hi - m->segs[i].lo;
    for (size_t i = 0; t && i + 1 < t->nrows; i++)
        if (!(t->rows[i].flags & RECS_UW_GAP))
            covered += t->rows[i + 1].start - t->rows[i].start;
    return covered < code / 2;
}

/* A table wanted libdw while it was not loaded (build_table). */
static bool need_dw;

/* A malloc'd copy of the .debug_frame of the module's file, or NULL. */
static uint8_t *read_debug_frame(const char *name, size_t *size)
{
    int fd = open(*name ? name : "/proc/self/exe", O_RDONLY | O_CLOEXEC);
    Elf *elf;
    Elf_Scn *scn = NULL;
    size_t shstrndx;
    uint8_t *copy = NULL;

    if (fd < 0)
        return NULL;
    if (!recs__dw_load()) {
        close(fd);
        return NULL;
    }
    elf = elf_begin(fd, ELF_C_READ, NULL);
    if (!elf || elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx))
        goto out;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        const char *sn;
        Elf_Data *d;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
            (sh.sh_flags & SHF_COMPRESSED) ||
            !(sn = elf_strptr(elf, shstrndx, sh.sh_name)) ||
            strcmp(sn, ".debug_frame"))
            continue;
        d = elf_getdata(scn, NULL);
        if (d && d->d_buf && d->d_size && (copy = malloc(d->d_size))) {
            memcpy(copy, d->d_buf, d->d_size);
            *size = d->d_size;
        }
        break;
    }
out:
    if (elf)
        elf_end(elf);
    close(fd);
    return copy;
}

/* Build m's table from its mapped .eh_frame, and its file's .debug_frame
 * where that leaves code out; or map the one the shared cache holds
 * (loader lock held: the module stays mapped). */
static void build_table(struct umod *m, struct dl_phdr_info *info)
{
    recs_uw_source src;
    uint64_t t0 = recs__now_ns();
    uint8_t *df;

    m->built = true;
    if (m->build_id[0] && recs__cache_enabled() &&
        (m->tab = recs__uwc_load(m->build_id)) != NULL) {
        stats.cached++;
        goto done;
    }
    m->store = m->build_id[0] != '\0';
    memset(&src, 0, sizeof src);
    if (find_eh_frame(info, &src) && recs__uw_build(&src, &m->tab, NULL) < 0)
        m->tab = NULL;
    if (poorly_covered(m, m->tab) && !recs__dw_tried()) {
        /* Reading .debug_frame needs libdw, loaded by dlopen, which must
         * not run here, inside dl_iterate_phdr: a dlclose on another
         * thread holds the loader's lock and waits for the one the
         * iteration holds. Loaded after the scan; built at the next. */
        free(m->tab);
        m->tab = NULL;
        m->built = false;
        need_dw = true;
        return;
    }
    if (poorly_covered(m, m->tab) &&
        (df = read_debug_frame(m->name, &src.debug_size)) != NULL) {
        recs_uw_table *both;
        src.debug_frame = df;
        if (recs__uw_build(&src, &both, NULL) == 0) {
            free(m->tab);
            m->tab = both;
        }
        free(df);
    }
done:
    for (unsigned i = 0; i < m->nseg; i++)
        m->segs[i].tab = m->tab;
    if (m->tab) {
        stats.tables++;
        stats.rows += m->tab->nrows;
        stats.bytes += table_bytes(m->tab);
    }
    stats.build_ns += recs__now_ns() - t0;
}

/* Freed once no handler can hold it: a set (free) or a table (unmapped
 * too, if it came from the shared cache). */
struct retired {
    void *p;
    bool table;
};

static void retire_as(void *p, bool table)
{
    if (!p)
        return;
    if (nretired == capretired) {
        size_t cap = capretired ? 2 * capretired : 16;
        struct retired *v = realloc(retired, cap * sizeof *v);
        if (!v)
            return;          /* leaked rather than freed under a reader */
        retired = v;
        capretired = cap;
    }
    retired[nretired].p = p;
    retired[nretired++].table = table;
}

static void retire(void *p)
{
    retire_as(p, false);
}

static void retire_table(recs_uw_table *t)
{
    retire_as(t, true);
}

struct scan {
    int added;
    bool all;                        /* build every table now */
    bool after_first;                /* the program was seen */
    uintptr_t vdso_ehdr;
};

static int found_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct scan *sc = arg;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    uint64_t first = 0;
    struct umod *m = NULL;
    unsigned nseg = 0;
    recs_uw_seg segs[MAX_SEGS];
    uintptr_t self = (uintptr_t)&recs__uw_refresh;
    bool is_main = !sc->after_first;

    sc->after_first = true;
    /* The counters the next check compares (recs__uw_reclaim). */
    if (is_main && size >= offsetof(struct dl_phdr_info, dlpi_subs) +
                           sizeof info->dlpi_subs) {
        last_adds = info->dlpi_adds;
        last_subs = info->dlpi_subs;
    }
    for (int i = 0; i < info->dlpi_phnum && nseg < MAX_SEGS; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && ph->p_memsz) {
            memset(&segs[nseg], 0, sizeof segs[nseg]);
            segs[nseg].lo = info->dlpi_addr + ph->p_vaddr;
            segs[nseg].hi = segs[nseg].lo + ph->p_memsz;
            segs[nseg].bias = info->dlpi_addr;
            nseg++;
        }
    }
    if (nseg == 0)
        return 0;
    first = segs[0].lo;
    for (size_t i = 0; i < nmods; i++)
        if (!mods[i].seen && mods[i].bias == info->dlpi_addr &&
            mods[i].first == first && !strcmp(mods[i].name, name)) {
            mods[i].seen = true;
            if (!mods[i].built && (mods[i].want || sc->all))
                build_table(&mods[i], info);
            return 0;
        }
    if (nmods == capmods) {
        size_t cap = capmods ? 2 * capmods : 32;
        struct umod *v = realloc(mods, cap * sizeof *v);
        if (!v)
            return 0;
        mods = v;
        capmods = cap;
    }
    m = &mods[nmods];
    memset(m, 0, sizeof *m);
    m->name = strdup(name);
    if (!m->name)
        return 0;
    m->bias = info->dlpi_addr;
    m->first = first;
    m->serial = ++next_serial;
    m->nseg = nseg;
    memcpy(m->segs, segs, sizeof segs);
    m->seen = true;
    m->main = is_main;
    m->go = is_main && recs__phdr_is_go(info);
    m->vdso = sc->vdso_ehdr && info->dlpi_phnum &&
              (uintptr_t)info->dlpi_phdr - sc->vdso_ehdr < 4096;
    recs__phdr_build_id(info, m->build_id, sizeof m->build_id);
    for (unsigned i = 0; i < nseg; i++)
        if (self - segs[i].lo < segs[i].hi - segs[i].lo)
            memcpy(self_build_id, m->build_id, sizeof self_build_id);
    if (sc->all)
        build_table(m, info);
    nmods++;
    stats.modules = nmods;
    sc->added++;
    return 0;
}

static int cmp_seg(const void *a, const void *b)
{
    const recs_uw_seg *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void reclaim_locked(void)
{
    /* Any handler that could hold a retired pointer entered before the
     * swap and has not left yet. */
    if (atomic_load(&recs__g.inflight) != 0)
        return;
    for (size_t i = 0; i < nretired; i++) {
        if (retired[i].table)
            recs__uw_table_free(retired[i].p);
        else
            free(retired[i].p);
    }
    nretired = 0;
}

/* The modules a walk found pending in the current set (uw_lock held). */
static void take_wants(const recs_uw_set *set)
{
    for (size_t i = 0; set && i < set->nmods; i++) {
        if (!atomic_load_explicit(&set->want[i], memory_order_relaxed))
            continue;
        for (size_t j = 0; j < nmods; j++)
            if (mods[j].serial == set->serial[i])
                mods[j].want = true;
    }
}

/* A new set of the modules and their tables (uw_lock held). */
static recs_uw_set *new_set(void)
{
    size_t total = 0, off_serial, off_want, bytes;
    recs_uw_set *set;
    uint64_t *serial;

    for (size_t i = 0; i < nmods; i++)
        total += mods[i].nseg;
    total += njit;
    off_serial = sizeof *set + total * sizeof set->segs[0];
    off_want = off_serial + nmods * sizeof *serial;
    bytes = off_want + nmods + 1;
    if (!(set = malloc(bytes)))
        return NULL;
    serial = (uint64_t *)((char *)set + off_serial);
    set->want = (_Atomic unsigned char *)((char *)set + off_want);
    set->unknown = set->want + nmods;
    atomic_init(set->unknown, 0);
    set->serial = serial;
    set->nmods = nmods;
    set->n = 0;
    for (size_t i = 0; i < nmods; i++) {
        serial[i] = mods[i].serial;
        atomic_init(&set->want[i], 0);
        for (unsigned j = 0; j < mods[i].nseg; j++) {
            recs_uw_seg *g = &set->segs[set->n++];
            *g = mods[i].segs[j];
            g->mod = (uint32_t)i;
            g->pending = !mods[i].built;
        }
    }
    for (size_t i = 0; i < njit; i++) {
        recs_uw_seg *g = &set->segs[set->n++];
        memset(g, 0, sizeof *g);
        g->lo = jit[i].lo;
        g->hi = jit[i].hi;
        g->mod = RECS_UW_JIT;
    }
    qsort(set->segs, set->n, sizeof set->segs[0], cmp_seg);
    return set;
}

/* The JIT ranges now: those of /proc/self/maps that no module's segment
 * overlaps (a module's file replaced on disk shows as deleted). */
static void jit_scan(void)
{
    recs__jit_range v[MAX_JIT], v2[MAX_JIT] = { { 0, 0 } };
    size_t n = recs__jit_ranges(v, MAX_JIT), k = 0;
    bool changed;

    for (size_t i = 0; i < n; i++) {
        bool mod = false;
        for (size_t j = 0; j < nmods && !mod; j++)
            for (unsigned g = 0; g < mods[j].nseg && !mod; g++)
                mod = v[i].lo < mods[j].segs[g].hi && mods[j].segs[g].lo < v[i].hi;
        if (!mod)
            v2[k++] = v[i];
    }
    changed = k != njit || memcmp(jit, v2, k * sizeof *jit) != 0;
    memcpy(jit, v2, k * sizeof *jit);
    njit = k;
    stats.jit_ranges = njit;
    if (changed)
        jit_scan_gap = JIT_SCAN_MIN_NS;
    else if ((jit_scan_gap *= 2) > JIT_SCAN_MAX_NS)
        jit_scan_gap = JIT_SCAN_MAX_NS;
}

int recs__uw_code(uint64_t pc)
{
    const recs_uw_seg *seg;
    int r;

    pthread_mutex_lock(&uw_lock);
    seg = recs__uw_find(atomic_load(&uw_set), pc);
    r = !seg ? RECS_CODE_NONE : seg->mod == RECS_UW_JIT ? RECS_CODE_JIT
                                                          : RECS_CODE_MODULE;
    pthread_mutex_unlock(&uw_lock);
    return r;
}

/* A scan of the loader's list and a new set (uw_lock held). */
static int refresh_locked(bool all)
{
    struct scan sc = { 0, all, false, (uintptr_t)getauxval(AT_SYSINFO_EHDR) };
    size_t n = 0;
    recs_uw_set *set, *old;

    atomic_store(&uw_stale, 0);
    take_wants(atomic_load(&uw_set));
    for (size_t i = 0; i < nmods; i++)
        mods[i].seen = false;
    dl_iterate_phdr(found_cb, &sc);
    if (need_dw) {
        /* Outside the iteration (see build_table), and a new scan soon. */
        need_dw = false;
        recs__dw_load();
        atomic_store(&uw_stale, 1);
    }
    if (!cache_configured) {
        /* Our own build-id is known now: it names the builder. */
        recs__cache_configure(cache_setting, self_build_id);
        cache_configured = true;
    }
    stats.pending = 0;
    for (size_t i = 0; i < nmods; i++) {
        if (mods[i].seen) {
            mods[n++] = mods[i];
            stats.pending += !mods[i].built;
        } else {
            if (mods[i].tab) {
                stats.tables--;
                stats.rows -= mods[i].tab->nrows;
                stats.bytes -= table_bytes(mods[i].tab);
            }
            retire_table(mods[i].tab);
            free(mods[i].name);
        }
    }
    nmods = n;
    stats.modules = nmods;
    if (atomic_load(&uw_unknown) &&
        recs__now_ns() - jit_scan_ns >= jit_scan_gap) {
        atomic_store(&uw_unknown, 0);
        jit_scan_ns = recs__now_ns();
        jit_scan();
    }
    if (!(set = new_set()))
        return REC_ENOMEM;
    old = atomic_exchange(&uw_set, set);
    retire(old);
    reclaim_locked();
    /* Shared after the swap: the walks use the tables meanwhile. */
    for (size_t i = 0; i < nmods; i++) {
        if (!mods[i].store)
            continue;
        mods[i].store = false;
        if (mods[i].tab && recs__cache_enabled() &&
            recs__uwc_store(mods[i].build_id, mods[i].tab) == 0)
            stats.stored++;
    }
    return sc.added;
}

static int refresh(bool all)
{
    int rc;

    pthread_mutex_lock(&uw_lock);
    rc = refresh_locked(all);
    pthread_mutex_unlock(&uw_lock);
    return rc;
}

int recs__uw_refresh(void)
{
    return refresh(false);
}

int recs__uw_refresh_all(void)
{
    bool retry = !recs__dw_tried();
    int rc = refresh(true);

    /* A table that needed libdw was left for a scan after it loaded. */
    if (rc >= 0 && retry && recs__dw_tried())
        rc = refresh(true);
    return rc;
}

void recs__uw_configure(const char *cache_dir)
{
    pthread_mutex_lock(&uw_lock);
    free(cache_setting);
    cache_setting = cache_dir ? strdup(cache_dir) : NULL;
    cache_configured = false;
    pthread_mutex_unlock(&uw_lock);
}

static int counters_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    unsigned long long *c = arg;

    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) +
                sizeof info->dlpi_subs) {
        c[0] = info->dlpi_adds;
        c[1] = info->dlpi_subs;
    }
    return 1;
}

/* Whether the loader (un)loaded anything since the last scan, by its
 * counters (uw_lock held: as every walk of the loader's list here, a fork
 * waits for it (recs__uw_fork_prepare), so that no thread of ours holds
 * the loader's lock in the child, whose start walks that list too). */
static bool loader_moved_locked(void)
{
    unsigned long long c[2] = { 0, 0 };

    dl_iterate_phdr(counters_cb, c);
    return atomic_load(&uw_stale) || c[0] != last_adds || c[1] != last_subs;
}

void recs__uw_reclaim(void)
{
    pthread_mutex_lock(&uw_lock);
    if (loader_moved_locked())
        refresh_locked(false);
    else
        reclaim_locked();
    pthread_mutex_unlock(&uw_lock);
}

int recs__uw_modules(recs__uw_module_fn *fn, void *arg)
{
    int rc = 0;

    pthread_mutex_lock(&uw_lock);
    if (!atomic_load(&uw_set) || loader_moved_locked())
        rc = refresh_locked(false);
    if (rc >= 0) {
        for (size_t i = 0; i < nmods; i++) {
            struct recs__uw_modinfo mi = {
                mods[i].name, mods[i].bias, mods[i].segs, mods[i].nseg,
                mods[i].build_id, mods[i].main, mods[i].vdso, mods[i].go };
            fn(&mi, arg);
        }
    }
    pthread_mutex_unlock(&uw_lock);
    return rc < 0 ? rc : 0;
}

void recs__uw_abandon(void)
{
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;

    atomic_store(&uw_set, NULL);
    atomic_store(&uw_stale, 0);
    atomic_store(&uw_unknown, 0);
    njit = 0;
    jit_scan_ns = 0;
    memcpy(&uw_lock, &fresh, sizeof fresh);
    mods = NULL;
    nmods = capmods = 0;
    retired = NULL;
    nretired = capretired = 0;
    last_adds = last_subs = 0;
    memset(&stats, 0, sizeof stats);
}

/* Whether fork_prepare holds uw_lock (the forking thread's, then the
 * child's copy). */
static bool uw_fork_locked;

void recs__uw_fork_prepare(void)
{
    struct timespec until;

    /* A build takes milliseconds. The bound is for a thread that forks
     * from a dlopen constructor: it holds the loader's lock, which a
     * refresh under uw_lock may be waiting for. */
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += 200000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    uw_fork_locked = pthread_mutex_clocklock(&uw_lock, CLOCK_MONOTONIC,
                                             &until) == 0;
}

void recs__uw_fork_parent(void)
{
    if (uw_fork_locked)
        pthread_mutex_unlock(&uw_lock);
    uw_fork_locked = false;
}

void recs__uw_fork_child(void)
{
    /* Every change to the list is made under uw_lock: held by us at the
     * fork means nothing was half done. Else its owner is gone for good. */
    if (!uw_fork_locked) {
        recs__uw_abandon();
        return;
    }
    uw_fork_locked = false;
    pthread_mutex_unlock(&uw_lock);
}

/* Signal-safe. Sequentially consistent, as the handler's increment of
 * recs__g.inflight before it and the swap and the reclaimer's load of
 * inflight after it: in that single order either the handler sees the new
 * set or the reclaimer sees the handler inside. An acquire load alone
 * would not be ordered after the increment on every architecture, and a
 * freed set could be walked. */
const recs_uw_set *recs__uw_current(void)
{
    return atomic_load(&uw_set);
}

/* Signal-safe. */
void recs__uw_mark_stale(void)
{
    if (!atomic_exchange(&uw_stale, 1))
        sem_post(&recs__g.wake);
}

bool recs__uw_stale(void)
{
    return atomic_load(&uw_stale) != 0;
}

int recs__uw_symbolic_start(uint64_t pc, uint64_t *vaddr)
{
    const recs_uw_set *set;
    const recs_uw_seg *seg;
    int rc = -1;

    pthread_mutex_lock(&uw_lock);
    set = atomic_load(&uw_set);
    seg = recs__uw_find(set, pc);
    if (seg && seg->pending) {
        /* Asked for by the next refresh: until then, like code outside
         * every known segment. */
        recs__uw_want(set, seg);
        atomic_store(&uw_stale, 1);
    } else if (seg) {
        rc = seg->tab && recs__uw_func_start(seg->tab, pc - seg->bias, vaddr);
    }
    pthread_mutex_unlock(&uw_lock);
    return rc;
}

int recs__uw_leaf_return(uint64_t pc, const uint64_t *window, size_t nwords,
                         uint64_t *ret)
{
    const recs_uw_set *set;
    const recs_uw_seg *seg;
    const recs_uw_row *row;
    int rc = REC_EINVAL;

    pthread_mutex_lock(&uw_lock);
    set = atomic_load(&uw_set);
    seg = recs__uw_find(set, pc);
    if (seg && seg->pending && seg->mod < set->nmods) {
        /* The frame-pointer walk asks for no table: built now, once. */
        recs__uw_want(set, seg);
        refresh_locked(false);
        set = atomic_load(&uw_set);
        seg = recs__uw_find(set, pc);
    }
    row = seg && seg->tab ? recs__uw_lookup(seg->tab, pc - seg->bias) : NULL;
    if (!row || (row->flags & RECS_UW_KIND) == RECS_UW_NONE ||
        (row->flags & RECS_UW_KIND) == RECS_UW_SIGNAL || row->cfa_bx) {
        rc = REC_EINVAL;
    } else if ((row->flags & RECS_UW_KIND) == RECS_UW_FP ||
               (row->flags & RECS_UW_OUTER)) {
        /* The frame is set up, the walk is right; or nothing calls it. */
        rc = REC_ENOTFOUND;
    } else {
        rc = recs__window_word((int64_t)row->cfa_off + row->ra_off, window,
                               nwords, ret);
    }
    pthread_mutex_unlock(&uw_lock);
    return rc;
}

void recs__uw_get_stats(recs_uw_stats *st)
{
    pthread_mutex_lock(&uw_lock);
    *st = stats;
    pthread_mutex_unlock(&uw_lock);
}

/* Signal-safe. */
unsigned recs__uw_stack(bool cfi, uint64_t pc, uint64_t sp, uint64_t fp,
                        uint64_t bx, uint64_t lo, uint64_t hi, uint64_t *out,
                        unsigned max, unsigned *stop)
{
    const recs_uw_set *set = recs__uw_current();
    unsigned n, k;

    if (set && !recs__uw_find(set, pc)) {
        atomic_store(&uw_unknown, 1);
        recs__uw_mark_stale();
    }
    if (cfi) {
        n = recs__uw_walk(set, pc, sp, fp, bx, lo, hi, out, max, stop);
        if (*stop == RECS_STOP_EARLY)
            recs__uw_mark_stale();
        /* A walk that left for code of no known segment (a trampoline of
         * Python's -X perf, JIT code called from a library): once a set. */
        if (set && atomic_load_explicit(set->unknown, memory_order_relaxed) == 1) {
            atomic_store_explicit(set->unknown, 2, memory_order_relaxed);
            atomic_store(&uw_unknown, 1);
            recs__uw_mark_stale();
        }
        return n;
    }
    n = recs__fp_walk(fp, sp, hi, out, max, stop);
    k = recs__uw_keep_code(set, out, n);
    if (k < n)
        *stop = RECS_STOP_UNKNOWN_CODE;
    return k;
}
