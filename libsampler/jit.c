/*
 * libsampler/jit.c - code outside every module: the executable mappings
 * of no file (JIT code caches, memfd code), for the walk's frame-pointer
 * rule, and the names JIT runtimes write for it in perf map files
 * (/tmp/perf-PID.map: "START SIZE name" per line, hexadecimal, appended as
 * code is made: node --perf-basic-prof, the JVM's jcmd Compiler.perfmap,
 * Python 3.12's -X perf) and in jitdump files (jit-PID.dump, binary code
 * load and move records: node --perf-prof, Java's perf agent, Julia; found
 * as the runtime maps them, which is how perf finds them too). Sampler
 * thread only.
 */
#include <config.h>
#include "jit.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* An executable mapping that no file backs, as /proc/self/maps names it:
 * no path, an [anon:...] name (prctl PR_SET_VMA), a memfd, or a file
 * deleted since. Not the kernel's own ([vdso], [vsyscall], [uprobes]). */
static bool jit_path(const char *p)
{
    size_t n = strlen(p);

    if (!*p || !strncmp(p, "[anon", 5) || !strncmp(p, "/memfd:", 7))
        return true;
    return n > 10 && !strcmp(p + n - 10, " (deleted)");
}

/* Lines of a file read in blocks: the bytes of one block, the line not
 * ended yet kept in LINE (cut at its size), FN called on each ended one. */
struct lines {
    char line[512];
    size_t len;
    void (*fn)(char *line, void *arg);
    void *arg;
};

static void feed(struct lines *l, const char *buf, ssize_t r)
{
    for (ssize_t i = 0; i < r; i++) {
        if (buf[i] != '\n') {
            if (l->len < sizeof l->line - 1)
                l->line[l->len++] = buf[i];
            continue;
        }
        l->line[l->len] = '\0';
        l->len = 0;
        l->fn(l->line, l->arg);
    }
}

struct ranges {
    recs__jit_range *out;
    size_t n, max;
};

/* The jitdump file this process's runtime mapped (it maps one executable
 * page of it so that profilers learn where it is), "" if none. */
static char dump_path[4096];
static off_t dump_off;            /* up to the end of the last whole record */
static dev_t dump_dev;
static ino_t dump_ino;
/* Paths found, paths read: another file is read from its start, though
 * its inode may be the last one's, reused. */
static unsigned dump_found, dump_read;
static bool dump_bad;             /* not a jitdump this code reads */

static bool dump_name(const char *p)
{
    char want[32];
    const char *base = strrchr(p, '/');

    snprintf(want, sizeof want, "jit-%d.dump", (int)getpid());
    return base && *p == '/' && !strcmp(base + 1, want);
}

static void maps_line(char *line, void *arg)
{
    struct ranges *rg = arg;
    unsigned long long lo, hi;
    char perm[5];
    int off = 0;

    if (sscanf(line, "%llx-%llx %4s %*s %*s %*s%n", &lo, &hi, perm, &off) < 3 ||
        perm[2] != 'x' || rg->n == rg->max)
        return;
    while (line[off] == ' ')
        off++;
    if (dump_name(line + off) && strcmp(dump_path, line + off)) {
        snprintf(dump_path, sizeof dump_path, "%s", line + off);
        dump_found++;
    } else if (jit_path(line + off)) {
        rg->out[rg->n].lo = lo;
        rg->out[rg->n].hi = hi;
        rg->n++;
    }
}

size_t recs__jit_ranges(recs__jit_range *out, size_t max)
{
    struct ranges rg = { out, 0, max };
    struct lines l = { .fn = maps_line, .arg = &rg };
    char buf[8192];
    ssize_t r;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return 0;
    while ((r = read(fd, buf, sizeof buf)) > 0)
        feed(&l, buf, r);
    close(fd);
    return rg.n;
}

/* ---- perf map names ---- */

#define JIT_POLL_NS 50000000ull   /* a miss reads the map at most this often */

/* Entries kept (a long-running node writes one per compiled function;
 * later ones are not read). */
#define JIT_MAX_NAMES (1u << 20)
/* Overlapping entries looked at below a lookup's position: code moved or
 * made again at an address writes a later line for it. */
#define JIT_OVERLAP 16

struct jname {
    uint64_t lo, hi;
    uint64_t seq;                /* line number: the latest wins */
    char *name;
    bool told;                   /* given to recs__jit_late's fn */
};

/* JIT code met that no map named (distinct pcs). */
static size_t unnamed;

static struct jname *names;
static size_t nnames, cnames, nsorted;
static uint64_t next_seq;
static off_t map_off;
static dev_t map_dev;
static ino_t map_ino;
static void add_line(char *line, void *arg);
static struct lines map_tail = { .fn = add_line };   /* a line not ended yet */

static void names_clear(void)
{
    unnamed = 0;
    for (size_t i = 0; i < nnames; i++)
        free(names[i].name);
    nnames = nsorted = 0;
    next_seq = 0;
    map_off = 0;
    map_tail.len = 0;
    /* The jitdump's names went too: read it again. */
    dump_dev = 0;
    dump_ino = 0;
}

/* A name for [start, start + size), later than every earlier one. */
static void add_name(uint64_t start, uint64_t size, const char *name)
{
    if (!size || !*name || nnames == JIT_MAX_NAMES)
        return;
    if (nnames == cnames) {
        size_t c = cnames ? 2 * cnames : 1024;
        struct jname *v = realloc(names, c * sizeof *v);
        if (!v)
            return;
        names = v;
        cnames = c;
    }
    if (!(names[nnames].name = strdup(name)))
        return;
    names[nnames].lo = start;
    names[nnames].hi = start + size;
    names[nnames].seq = next_seq++;
    names[nnames].told = false;
    nnames++;
}

static void add_line(char *line, void *arg)
{
    unsigned long long start, size;
    int off = 0;

    (void)arg;
    if (sscanf(line, "%llx %llx %n", &start, &size, &off) < 2 || !off)
        return;
    add_name(start, size, line + off);
}

static int cmp_name(const void *a, const void *b)
{
    const struct jname *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Read what was appended to this process's perf map since the last poll
 * (all of it again if the file was replaced). */
/* A regular file of ours at path (/tmp is everyone's), or -1. */
static int open_own(const char *path, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

    if (fd >= 0 && (fstat(fd, st) != 0 || !S_ISREG(st->st_mode) ||
                    st->st_uid != geteuid())) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static void poll_map(void)
{
    char path[64], buf[8192];
    struct stat st;
    ssize_t r;
    int fd;

    snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
    if ((fd = open_own(path, &st)) < 0)
        return;
    if (st.st_dev != map_dev || st.st_ino != map_ino || st.st_size < map_off) {
        names_clear();
        map_dev = st.st_dev;
        map_ino = st.st_ino;
    }
    while (map_off < st.st_size &&
           (r = pread(fd, buf, sizeof buf, map_off)) > 0) {
        map_off += r;
        feed(&map_tail, buf, r);
    }
    close(fd);
}

/* ---- jitdump names ---- */

/* The format (perf's tools/perf/Documentation/jitdump-specification.txt):
 * a header (magic, version, its size, ...), then records, each a 16-byte
 * prefix (id, total size, timestamp) and its body. A code load record's
 * body: pid, tid (4 bytes each), vma, code address, code size, code index
 * (8 each), then the name, NUL-terminated, then the code. A move record:
 * pid, tid, vma, old address, new address, size, index. */
#define JD_MAGIC      0x4A695444u
#define JD_HEADER_MIN 40
#define JD_LOAD       0
#define JD_MOVE       1
#define JD_PREFIX     16
#define JD_BODY       40          /* the fixed part of load and move */
#define JD_RECORD_MAX (256u << 20)
#define JD_READS      65536       /* records read per poll, at most */


static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* One record at off (its prefix read): false when the file ends inside
 * it (written later) or it is not one. */
static bool dump_record(int fd, off_t off, uint32_t id, uint32_t size)
{
    unsigned char rec[JD_PREFIX + JD_BODY + 1024];
    size_t want = size < sizeof rec ? size : sizeof rec;
    uint64_t a, b, n;

    if (id != JD_LOAD && id != JD_MOVE)
        return true;               /* debug info, unwinding info, close */
    if (size < JD_PREFIX + JD_BODY || pread(fd, rec, want, off) != (ssize_t)want)
        return size >= JD_PREFIX + JD_BODY;
    if (id == JD_LOAD) {
        /* The name: NUL-terminated within what was read (cut if longer). */
        size_t len = strnlen((const char *)rec + JD_PREFIX + JD_BODY,
                             want - JD_PREFIX - JD_BODY);
        char name[1024];
        if (len >= sizeof name)
            len = sizeof name - 1;
        memcpy(name, rec + JD_PREFIX + JD_BODY, len);
        name[len] = '\0';
        a = le64(rec + JD_PREFIX + 16);
        n = le64(rec + JD_PREFIX + 24);
        add_name(a, n, name);
    } else {
        /* Code moved: the name it had, at its new place. */
        const char *old;
        a = le64(rec + JD_PREFIX + 16);
        b = le64(rec + JD_PREFIX + 24);
        n = le64(rec + JD_PREFIX + 32);
        old = recs__jit_name(a);
        if (old) {
            char *copy = strdup(old);
            if (copy) {
                add_name(b, n, copy);
                free(copy);
            }
        }
    }
    return true;
}

static void poll_dump(void)
{
    unsigned char p[JD_HEADER_MIN];
    struct stat st;
    int fd;

    if (!dump_path[0] || (fd = open_own(dump_path, &st)) < 0)
        return;
    if (dump_read != dump_found) {
        dump_read = dump_found;
        dump_dev = 0;
        dump_ino = 0;
    }
    if (st.st_dev != dump_dev || st.st_ino != dump_ino || st.st_size < dump_off) {
        dump_dev = st.st_dev;
        dump_ino = st.st_ino;
        dump_off = 0;
        dump_bad = false;
    }
    if (dump_off == 0 && !dump_bad) {
        /* Written in this machine's byte order: another one is not ours. */
        if (pread(fd, p, JD_HEADER_MIN, 0) != JD_HEADER_MIN) {
            close(fd);
            return;
        }
        if (le32(p) != JD_MAGIC || le32(p + 8) < JD_HEADER_MIN)
            dump_bad = true;
        else
            dump_off = le32(p + 8);
    }
    for (unsigned k = 0; !dump_bad && k < JD_READS &&
                         dump_off + JD_PREFIX <= st.st_size; k++) {
        uint32_t id, size;
        if (pread(fd, p, JD_PREFIX, dump_off) != JD_PREFIX)
            break;
        id = le32(p);
        size = le32(p + 4);
        if (size < JD_PREFIX || size > JD_RECORD_MAX) {
            dump_bad = true;       /* lost its way: read no further */
            break;
        }
        if (dump_off + size > st.st_size || !dump_record(fd, dump_off, id, size))
            break;                 /* being written: the next poll */
        dump_off += size;
    }
    close(fd);
}

void recs__jit_poll(void)
{
    poll_map();
    poll_dump();
}

/* The lines added since the last sort, sorted and merged in (a growing map
 * is not sorted again whole at every poll). */
static void sort_new(void)
{
    struct jname *m;
    size_t i = 0, j = nsorted, k = 0;

    qsort(names + nsorted, nnames - nsorted, sizeof *names, cmp_name);
    if (nsorted && (m = malloc(nnames * sizeof *m)) != NULL) {
        while (i < nsorted && j < nnames)
            m[k++] = cmp_name(&names[i], &names[j]) <= 0 ? names[i++] : names[j++];
        while (i < nsorted)
            m[k++] = names[i++];
        while (j < nnames)
            m[k++] = names[j++];
        memcpy(names, m, nnames * sizeof *m);
        free(m);
    } else if (nsorted) {
        qsort(names, nnames, sizeof *names, cmp_name);
    }
    nsorted = nnames;
}

/* The latest entry holding pc among those starting at or below it (sorted
 * by start after each poll that added lines). */
static struct jname *find_entry(uint64_t pc)
{
    size_t lo = 0, hi;
    struct jname *best = NULL;

    if (nsorted != nnames)
        sort_new();
    hi = nnames;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (names[mid].lo <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo, k = 0; i-- > 0 && k < JIT_OVERLAP; k++)
        if (pc - names[i].lo < names[i].hi - names[i].lo &&
            (!best || names[i].seq > best->seq))
            best = &names[i];
    return best;
}

const char *recs__jit_name(uint64_t pc)
{
    const struct jname *e = find_entry(pc);
    return e ? e->name : NULL;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

size_t recs__jit_unnamed(void)
{
    return unnamed;
}

const char *recs__jit_lookup(uint64_t pc, bool *provisional)
{
    static uint64_t last_poll;
    const char *n = recs__jit_name(pc);
    uint64_t now;

    if (n)
        return n;
    /* Code made since the last read: its line is there by now. */
    now = mono_ns();
    if (now - last_poll >= JIT_POLL_NS) {
        last_poll = now;
        recs__jit_poll();
        n = recs__jit_name(pc);
    }
    /* A map that does not name it yet may later. */
    if (!n && (map_ino || dump_ino))
        *provisional = true;
    else if (!n)
        unnamed++;
    return n;
}

/* ---- names that came after their samples ---- */

#define JIT_LATE_MAX 65536

static uint64_t *late;
static size_t nlate, clate;

void recs__jit_unnamed_pc(uint64_t pc)
{
    for (size_t i = nlate; i-- > 0 && i + 64 >= nlate;)
        if (late[i] == pc)
            return;                /* just added (the same frame again) */
    if (nlate == JIT_LATE_MAX)
        return;
    if (nlate == clate) {
        size_t c = clate ? 2 * clate : 256;
        uint64_t *v = realloc(late, c * sizeof *v);
        if (!v)
            return;
        late = v;
        clate = c;
    }
    late[nlate++] = pc;
}

size_t recs__jit_late(bool final, recs__jit_name_fn *fn, void *arg)
{
    static uint64_t last;
    uint64_t now = mono_ns();
    size_t told = 0;

    if (!nlate || (!final && now - last < JIT_POLL_NS))
        return 0;
    last = now;
    recs__jit_poll();
    for (size_t i = 0; i < nlate;) {
        struct jname *e = find_entry(late[i]);
        if (!e) {
            i++;
            continue;
        }
        if (!e->told) {
            e->told = true;
            fn(e->lo, e->hi, e->name, arg);
            told++;
        }
        late[i] = late[--nlate];
    }
    return told;
}

size_t recs__jit_still_unnamed(void)
{
    return nlate;
}

void recs__jit_abandon(void)
{
    late = NULL;
    nlate = clate = 0;
    names = NULL;
    nnames = cnames = nsorted = 0;
    next_seq = 0;
    map_off = 0;
    map_dev = 0;
    map_ino = 0;
    map_tail.len = 0;
    unnamed = 0;
    dump_path[0] = '\0';
    dump_found = dump_read = 0;
    dump_off = 0;
    dump_dev = 0;
    dump_ino = 0;
    dump_bad = false;
}
