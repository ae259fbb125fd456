/*
 * libsampler/sym-jit.c - code outside every module: the executable mappings
 * of no file (JIT code caches, memfd code), for the walk's frame-pointer
 * rule, and the names JIT runtimes write for it in perf map files
 * (/tmp/perf-PID.map: "START SIZE name" per line, hexadecimal, appended as
 * code is made: node --perf-basic-prof, the JVM's jcmd Compiler.perfmap,
 * Python 3.12's -X perf) and in jitdump files (jit-PID.dump, binary code
 * load and move records: node --perf-prof, Java's perf agent, Julia; found
 * as the runtime maps them, which is how perf finds them too), each name
 * as it was at a sample's time. Sampler thread only.
 */
#include <config.h>
#include "sym-jit.h"

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

/* ---- the names and when they held ---- */

/* Each entry names [lo, hi) from a sample time on (FROM, CLOCK_MONOTONIC
 * ns) until a later entry at the same start, or over it, takes its place:
 * a jitdump says when code was loaded and moved; a perf map line, which
 * has no time, holds from when it was read (and, the first at its start,
 * before that too). Code moved away leaves an entry without a name there:
 * a sample in it after the move names nothing. Entries are sorted by
 * (lo, from, seq), so an address's history is a run ordered by time that
 * a binary search answers for any time. */

#define JIT_POLL_NS 50000000ull   /* a miss reads the files at most this often */

/* Entries kept (a long-running node writes one per compiled function). */
#ifndef JIT_MAX_NAMES
#define JIT_MAX_NAMES (1u << 20)
#endif
/* When they are all taken: an entry that a later one at its start
 * replaced more than this long ago is dropped (a sample is named a drain
 * or two after it is taken, well within it). */
#ifndef JIT_KEEP_NS
#define JIT_KEEP_NS 10000000000ull
#endif
/* Start addresses looked at below a lookup's pc (code of one start may
 * reach over code of the next ones). */
#define JIT_OVERLAP 16
/* Entries read and not sorted yet, at most, when a move record looks up
 * the code it moves. */
#define JIT_TAIL 1024

struct jname {
    uint64_t lo, hi;
    uint64_t from;               /* the sample time it holds from */
    uint64_t seq;                /* order read: the later wins a tie */
    char *name;                  /* NULL: the code moved away */
    bool untimed;                /* from: when it was read */
    bool fresh;                  /* not sorted in yet */
    bool told;                   /* given to recs__jit_late's fn */
};

/* JIT code met that no map named (distinct pcs). */
static size_t unnamed;

static struct jname *names;
static size_t nnames, cnames, nsorted;
static uint64_t next_seq;
static uint64_t gen;              /* changes when an answer given may change */
static uint64_t read_ns;          /* the start of the last poll */
static uint64_t full_ns;          /* the last compaction that freed little */
static size_t dropped;            /* entries not kept: the table was full */
static off_t map_off;
static dev_t map_dev;
static ino_t map_ino;
static void add_line(char *line, void *arg);
static struct lines map_tail = { .fn = add_line };   /* a line not ended yet */

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void names_clear(void)
{
    unnamed = 0;
    for (size_t i = 0; i < nnames; i++)
        free(names[i].name);
    nnames = nsorted = 0;
    next_seq = 0;
    gen++;
    map_off = 0;
    map_tail.len = 0;
    /* The jitdump's names went too: read it again. */
    dump_dev = 0;
    dump_ino = 0;
}

static int cmp_name(const void *a, const void *b)
{
    const struct jname *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->from != y->from)
        return x->from < y->from ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static bool overlap(const struct jname *x, const struct jname *y)
{
    return x->lo < y->hi && y->lo < x->hi;
}

/* The entries added since the last sort, sorted and merged in (a growing
 * map is not sorted again whole at every poll). An entry over code
 * already named changes what samples there may be named: gen. */
static void sort_new(void)
{
    struct jname *m;
    size_t i = 0, j = nsorted, k = 0;
    bool over = false;

    if (nsorted == nnames)
        return;
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
    for (i = 0; i < nnames; i++) {
        if (!names[i].fresh)
            continue;
        names[i].fresh = false;
        over |= i + 1 < nnames && overlap(&names[i], &names[i + 1]);
        for (j = i, k = 0; !over && j-- > 0 && k < JIT_OVERLAP; k++)
            over = overlap(&names[i], &names[j]);
    }
    nsorted = nnames;
    gen += over;
}

/* First index in [lo, hi) of the sorted entries above (a, t). */
static size_t above(size_t lo, size_t hi, uint64_t a, uint64_t t)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (names[mid].lo < a || (names[mid].lo == a && names[mid].from <= t))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* First index in [lo, hi) of the sorted entries starting at or above a. */
static size_t from_start(size_t lo, size_t hi, uint64_t a)
{
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (names[mid].lo < a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Which of two entries holding pc names a sample: the one that took its
 * place later (an untimed first entry, before it was read, counts as the
 * earliest). */
static bool later(const struct jname *e, uint64_t eff,
                  const struct jname *best, uint64_t best_eff)
{
    return !best || eff > best_eff || (eff == best_eff && e->seq > best->seq);
}

/* The sorted entry holding pc at time t, or NULL. At each of the starts
 * below pc, the latest entry by t; of those that hold pc, the latest.
 * [*from, *until) are narrowed to the times for which each start's pick,
 * hence the answer, stays the same. */
static struct jname *lookup_sorted(uint64_t pc, uint64_t t, uint64_t *from,
                                   uint64_t *until)
{
    size_t end = above(0, nsorted, pc, UINT64_MAX);
    struct jname *best = NULL;
    uint64_t best_eff = 0;

    for (unsigned k = 0; end > 0 && k < JIT_OVERLAP; k++) {
        size_t start = from_start(0, end, names[end - 1].lo);
        size_t i = above(start, end, names[start].lo, t);
        struct jname *e = NULL;
        uint64_t eff = 0;

        if (i > start) {
            e = &names[i - 1];
            eff = e->from;
        } else if (names[start].untimed && names[start].name) {
            e = &names[start];    /* a perf map's first line there */
        }
        if (i < end && names[i].from < *until)
            *until = names[i].from;
        if (eff > *from)
            *from = eff;
        if (e && pc < e->hi && later(e, eff, best, best_eff)) {
            best = e;
            best_eff = eff;
        }
        end = start;
    }
    return best;
}

/* The entry holding pc at time t, those read but not sorted yet too (the
 * reader of a move record, which cannot sort at each one). */
static struct jname *lookup_read(uint64_t pc, uint64_t t)
{
    uint64_t from = 0, until = UINT64_MAX;
    struct jname *best = lookup_sorted(pc, t, &from, &until);
    uint64_t best_eff = best && best->from <= t ? best->from : 0;

    for (size_t i = nsorted; i < nnames; i++) {
        struct jname *e = &names[i];
        uint64_t eff = e->from <= t ? e->from : 0;
        if (pc - e->lo < e->hi - e->lo && (e->from <= t || (e->untimed && e->name)) &&
            later(e, eff, best, best_eff)) {
            best = e;
            best_eff = eff;
        }
    }
    return best;
}

/* Drop the entries that a later one at their start replaced before
 * cutoff: no sample still to be named can need them. */
static void compact(uint64_t cutoff)
{
    size_t k = 0;

    sort_new();
    for (size_t i = 0; i < nnames; i++) {
        bool last = i + 1 == nnames || names[i + 1].lo != names[i].lo;
        if (!last && names[i + 1].from <= cutoff) {
            free(names[i].name);
            continue;
        }
        names[k++] = names[i];
    }
    if (k != nnames)
        gen++;
    nnames = nsorted = k;
}

/* [start, start + size) named NAME (NULL: code gone from there) from
 * sample time FROM on. */
static void add_entry(uint64_t start, uint64_t size, uint64_t from,
                      bool untimed, const char *name)
{
    if (!size || (name && !*name) || start + size < start)
        return;
    if (nnames == JIT_MAX_NAMES && read_ns - full_ns >= 1000000000ull) {
        compact(read_ns > JIT_KEEP_NS ? read_ns - JIT_KEEP_NS : 0);
        if (nnames > JIT_MAX_NAMES / 8 * 7)
            full_ns = read_ns;    /* little to drop: not again for a while */
    }
    if (nnames == JIT_MAX_NAMES) {
        dropped++;
        return;
    }
    if (nnames == cnames) {
        size_t c = cnames ? 2 * cnames : 1024;
        if (c > JIT_MAX_NAMES)
            c = JIT_MAX_NAMES;
        struct jname *v = realloc(names, c * sizeof *v);
        if (!v) {
            dropped++;
            return;
        }
        names = v;
        cnames = c;
    }
    names[nnames].name = NULL;
    if (name && !(names[nnames].name = strdup(name))) {
        dropped++;
        return;
    }
    names[nnames].lo = start;
    names[nnames].hi = start + size;
    names[nnames].from = from;
    names[nnames].seq = next_seq++;
    names[nnames].untimed = untimed;
    names[nnames].fresh = true;
    names[nnames].told = false;
    nnames++;
}

/* ---- perf map lines ---- */

static void add_line(char *line, void *arg)
{
    unsigned long long start, size;
    int off = 0;

    (void)arg;
    if (sscanf(line, "%llx %llx %n", &start, &size, &off) < 2 || !off)
        return;
    add_entry(start, size, read_ns, true, line + off);
}

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

/* Read what was appended to this process's perf map since the last poll
 * (all of it again if the file was replaced). */
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

/* ---- jitdump records ---- */

/* The format (perf's tools/perf/Documentation/jitdump-specification.txt):
 * a header (magic, version, its size, machine, pad, pid, timestamp,
 * flags), then records, each a 16-byte prefix (id, total size, timestamp)
 * and its body. A code load record's body: pid, tid (4 bytes each), vma,
 * code address, code size, code index (8 each), then the name,
 * NUL-terminated, then the code. A move record: pid, tid, vma, old
 * address, new address, size, index. Timestamps are CLOCK_MONOTONIC, the
 * samples' clock, unless the header's flags say they are the CPU's
 * counter (JITDUMP_FLAGS_ARCH_TIMESTAMP). */
#define JD_MAGIC      0x4A695444u
#define JD_HEADER_MIN 40
#define JD_FLAG_ARCH  1u
#define JD_LOAD       0
#define JD_MOVE       1
#define JD_PREFIX     16
#define JD_BODY       40          /* the fixed part of load and move */
#define JD_RECORD_MAX (256u << 20)
#define JD_READS      65536       /* records read per poll, at most */
/* A record this far after its reading is of another clock. */
#define JD_AHEAD_NS   1000000000ull

/* Why this jitdump's times are not used, or NULL; the last such reason
 * of any (said at the end). */
static const char *dump_untimed, *untimed_why;

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
    uint64_t a, b, n, ts;

    if (id != JD_LOAD && id != JD_MOVE)
        return true;               /* debug info, unwinding info, close */
    if (size < JD_PREFIX + JD_BODY || pread(fd, rec, want, off) != (ssize_t)want)
        return size >= JD_PREFIX + JD_BODY;
    ts = le64(rec + 8);
    if (!dump_untimed && ts > read_ns + JD_AHEAD_NS)
        dump_untimed = untimed_why = "its times are not CLOCK_MONOTONIC";
    if (dump_untimed)
        ts = read_ns;
    a = le64(rec + JD_PREFIX + 16);
    if (id == JD_LOAD) {
        /* The name: NUL-terminated within what was read (cut if longer). */
        size_t len = strnlen((const char *)rec + JD_PREFIX + JD_BODY,
                             want - JD_PREFIX - JD_BODY);
        char name[1024];
        if (len >= sizeof name)
            len = sizeof name - 1;
        memcpy(name, rec + JD_PREFIX + JD_BODY, len);
        name[len] = '\0';
        n = le64(rec + JD_PREFIX + 24);
        add_entry(a, n, ts, dump_untimed != NULL, name);
    } else {
        /* Code moved: gone from its old place, there under the name it
         * had at the move. */
        const struct jname *e;
        char *name;
        if (nnames - nsorted > JIT_TAIL)
            sort_new();
        e = lookup_read(a, ts);
        name = e && e->name ? strdup(e->name) : NULL;
        b = le64(rec + JD_PREFIX + 24);
        n = le64(rec + JD_PREFIX + 32);
        add_entry(a, n, ts, dump_untimed != NULL, NULL);
        if (name)
            add_entry(b, n, ts, dump_untimed != NULL, name);
        free(name);
        gen++;
    }
    return true;
}

static void poll_dump(void)
{
    unsigned char p[JD_HEADER_MIN];
    struct stat st;
    int fd;

    if (dump_read != dump_found) {
        dump_read = dump_found;
        dump_dev = 0;
        dump_ino = 0;
    }
    if (!dump_path[0] || (fd = open_own(dump_path, &st)) < 0)
        return;
    if (st.st_dev != dump_dev || st.st_ino != dump_ino || st.st_size < dump_off) {
        dump_dev = st.st_dev;
        dump_ino = st.st_ino;
        dump_off = 0;
        dump_bad = false;
        dump_untimed = NULL;
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
        if (!dump_bad && (le64(p + 32) & JD_FLAG_ARCH))
            dump_untimed = untimed_why = "its times are the CPU's timestamp counter";
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

/* ---- lookups ---- */

void recs__jit_poll(void)
{
    read_ns = mono_ns();
    poll_map();
    sort_new();
    poll_dump();
    sort_new();
}

void recs__jit_refresh(uint64_t t)
{
    /* A jitdump found since the last read has records of any time. */
    if (t > read_ns || dump_read != dump_found)
        recs__jit_poll();
}

uint64_t recs__jit_generation(void)
{
    return gen;
}

/* The entry naming pc at time t (all sorted), [w->from, w->until)
 * narrowed. */
static struct jname *find_entry(uint64_t pc, uint64_t t, recs__jit_when *w)
{
    uint64_t from = 0, until = UINT64_MAX;
    struct jname *e;

    sort_new();
    e = lookup_sorted(pc, t, &from, &until);
    if (w) {
        if (from > w->from)
            w->from = from;
        if (until < w->until)
            w->until = until;
    }
    return e;
}

const char *recs__jit_name(uint64_t pc)
{
    const struct jname *e = find_entry(pc, UINT64_MAX, NULL);
    return e ? e->name : NULL;
}

size_t recs__jit_unnamed(void)
{
    return unnamed;
}

const char *recs__jit_lookup(uint64_t pc, recs__jit_when *w, bool *provisional)
{
    uint64_t t = w ? w->t : UINT64_MAX;
    const struct jname *e;

    if (w) {
        recs__jit_refresh(t);
        if (!w->jit)
            w->gen = gen;
        w->jit = true;
        w->gone = false;
    }
    e = find_entry(pc, t, w);
    /* Code made since the last read: its line is there by now. */
    if (!e && mono_ns() - read_ns >= JIT_POLL_NS) {
        recs__jit_poll();
        e = find_entry(pc, t, w);
    }
    if (e && e->name)
        return e->name;
    if (e) {
        /* Moved away before the sample: nothing named it then. */
        if (w)
            w->gone = true;
        return NULL;
    }
    /* A map that does not name it yet may later. */
    if (map_ino || dump_ino)
        *provisional = true;
    else
        unnamed++;
    return NULL;
}

size_t recs__jit_entries(void)
{
    return nnames;
}

size_t recs__jit_dropped(void)
{
    return dropped;
}

const char *recs__jit_untimed(void)
{
    return untimed_why;
}

/* ---- names that came after their samples ---- */

#define JIT_LATE_MAX 65536

struct late_pc {
    uint64_t pc, t;              /* t: the first sample written unnamed */
};

static struct late_pc *late;
static size_t nlate, clate;

void recs__jit_unnamed_pc(uint64_t pc, uint64_t t)
{
    for (size_t i = nlate; i-- > 0 && i + 64 >= nlate;)
        if (late[i].pc == pc)
            return;                /* just added (the same frame again) */
    if (nlate == JIT_LATE_MAX)
        return;
    if (nlate == clate) {
        size_t c = clate ? 2 * clate : 256;
        struct late_pc *v = realloc(late, c * sizeof *v);
        if (!v)
            return;
        late = v;
        clate = c;
    }
    late[nlate].pc = pc;
    late[nlate].t = t;
    nlate++;
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
        struct jname *e = find_entry(late[i].pc, late[i].t, NULL);
        if (!e) {
            i++;
            continue;
        }
        /* Named as it was when first met (an entry without a name: code
         * that had moved away, which nothing will name). */
        if (e->name && !e->told) {
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
    gen++;
    read_ns = full_ns = 0;
    dropped = 0;
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
    dump_untimed = untimed_why = NULL;
}
