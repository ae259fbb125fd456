/*
 * tests/test-jit.c - code of no module (libsampler/sym-jit.c): the executable
 * mappings no file backs, and the names of a perf map as a runtime writes
 * it (appended, partial lines, code written again at an address, the file
 * replaced), and those of a jitdump file, found as the runtime maps it
 * (code loads, a record being written, code moved, a record that makes
 * no sense), as they were at a sample's time (code moved, its address
 * reused; times of another clock), and the bound on what is kept (built
 * with a small one, JIT_MAX_NAMES).
 */
#include <config.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "../libsampler/sym-jit.h"

static char path[64];

static void bail(const char *what)
{
    printf("Bail out! cannot write %s\n", what);
    exit(1);
}

static void append(const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        bail(path);
    close(fd);
}

static const char *name(uint64_t pc)
{
    bool prov = false;
    return recs__jit_lookup(pc, NULL, &prov);
}

static int same(const char *a, const char *b)
{
    return a && b && !strcmp(a, b);
}

static void test_ranges(void)
{
    long pg = sysconf(_SC_PAGESIZE);
    void *code = mmap(NULL, (size_t)pg, PROT_READ | PROT_EXEC,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    recs__jit_range r[256];
    size_t n = recs__jit_ranges(r, 256);
    int anon = 0, libc = 0;

    for (size_t i = 0; i < n; i++) {
        if (r[i].lo <= (uint64_t)(uintptr_t)code && (uint64_t)(uintptr_t)code < r[i].hi)
            anon = 1;
        if (r[i].lo <= (uint64_t)(uintptr_t)&printf && (uint64_t)(uintptr_t)&printf < r[i].hi)
            libc = 1;
    }
    tap_ok(code != MAP_FAILED && anon, "an anonymous executable mapping is JIT code");
    tap_ok(!libc, "a library's code is not");
    munmap(code, (size_t)pg);
}

static void test_names(void)
{
    snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
    unlink(path);
    tap_ok(name(0x1000) == NULL, "no map: no name");
    tap_ok(recs__jit_unnamed() == 1, "counted unnamed");

    append("1000 100 JS:*inner /tmp/a.js:1\n2000 80 Builtin:Foo\n3000 10 par");
    recs__jit_poll();
    tap_ok(same(name(0x1050), "JS:*inner /tmp/a.js:1") && same(name(0x2000), "Builtin:Foo"),
           "entries found by address");
    tap_ok(name(0x1100) == NULL && name(0xfff) == NULL, "ends are exclusive");
    tap_ok(name(0x3005) == NULL, "a line not ended yet is not read");
    append("tial\n1040 20 JS:*inner2 /tmp/a.js:9\n");
    recs__jit_poll();
    tap_ok(same(name(0x3005), "partial"), "the line, once ended");
    tap_ok(same(name(0x1045), "JS:*inner2 /tmp/a.js:9") &&
           same(name(0x1030), "JS:*inner /tmp/a.js:1"),
           "code written again at an address: the later line wins there only");
    append("zzz not a line\n4000 0 empty\n");
    recs__jit_poll();
    tap_ok(name(0x4000) == NULL && same(name(0x2010), "Builtin:Foo"),
           "malformed and empty lines are skipped");

    /* Replaced (a new inode): read again from its start. */
    char tmp[80];
    snprintf(tmp, sizeof tmp, "%s.new", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const char *t = "5000 10 fresh\n";
    if (fd < 0 || write(fd, t, strlen(t)) != (ssize_t)strlen(t))
        bail(tmp);
    close(fd);
    rename(tmp, path);
    recs__jit_poll();
    tap_ok(same(name(0x5001), "fresh") && name(0x1050) == NULL,
           "a replaced map is read anew");
    unlink(path);
}

/* ---- jitdump ---- */

static char dump[256], dump_dir[64];
static void *dump_mark;

static void put32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

/* Append len bytes of a record (or all of it when len is 0). */
static void dump_append(const unsigned char *b, size_t n)
{
    int fd = open(dump, O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd < 0 || write(fd, b, n) != (ssize_t)n)
        bail(dump);
    close(fd);
}

/* A code load record of name at [addr, addr + size), written at time ts,
 * into b; its size. */
static size_t load_at(unsigned char *b, uint64_t ts, uint64_t addr,
                      uint64_t size, const char *name)
{
    size_t n = 16 + 40 + strlen(name) + 1 + 8;   /* 8 bytes of "code" */
    memset(b, 0, n);
    put32(b, 0);
    put32(b + 4, (uint32_t)n);
    put64(b + 8, ts);
    put32(b + 16, (uint32_t)getpid());
    put64(b + 24, addr);
    put64(b + 32, addr);
    put64(b + 40, size);
    put64(b + 48, 7);
    memcpy(b + 56, name, strlen(name) + 1);
    return n;
}

static size_t load_record(unsigned char *b, uint64_t addr, uint64_t size,
                          const char *name)
{
    return load_at(b, 1, addr, size, name);
}

/* A move record of [from, from + size) to to at time ts, appended. */
static void dump_move(uint64_t ts, uint64_t from, uint64_t to, uint64_t size)
{
    unsigned char b[72] = { 0 };

    put32(b, 1);
    put32(b + 4, 72);
    put64(b + 8, ts);
    put32(b + 16, (uint32_t)getpid());
    put64(b + 32, from);
    put64(b + 40, to);
    put64(b + 48, size);
    dump_append(b, 72);
}

/* A new jitdump file (header flags as given), mapped the way runtimes
 * tell profilers where it is: one executable page of it. False if such
 * a mapping is refused here. */
static bool dump_open(uint64_t flags)
{
    unsigned char h[40] = { 0 };
    recs__jit_range r[256];
    int fd;

    snprintf(dump_dir, sizeof dump_dir, "jitdump.XXXXXX");
    if (!mkdtemp(dump_dir))
        bail("a directory");
    snprintf(dump, sizeof dump, "%s/%s/jit-%d.dump", getcwd((char[4096]){ 0 }, 4096),
             dump_dir, (int)getpid());
    put32(h, 0x4A695444u);
    put32(h + 4, 1);
    put32(h + 8, 40);
    put32(h + 12, 62);
    put32(h + 20, (uint32_t)getpid());
    put64(h + 32, flags);
    dump_append(h, sizeof h);
    fd = open(dump, O_RDONLY);
    dump_mark = fd < 0 ? MAP_FAILED
                       : mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    if (fd >= 0)
        close(fd);
    if (dump_mark == MAP_FAILED) {
        unlink(dump);
        rmdir(dump_dir);
        return false;
    }
    recs__jit_ranges(r, 256);
    return true;
}

static void dump_close(void)
{
    munmap(dump_mark, 4096);
    unlink(dump);
    rmdir(dump_dir);
}

static void test_jitdump(void)
{
    unsigned char b[512];
    size_t n;

    if (!dump_open(0)) {
        tap_ok(1, "# SKIP an executable mapping of a file here is refused");
        return;
    }
    n = load_record(b, 0x9000, 0x100, "JS:*hot /x.js:3");
    dump_append(b, n);
    recs__jit_poll();
    tap_ok(same(name(0x9050), "JS:*hot /x.js:3") && name(0x9100) == NULL,
           "jitdump: a code load named, found through the process's mappings");
    /* A record half written: not read until it is whole. */
    n = load_record(b, 0xa000, 0x80, "JS:*later /x.js:9");
    dump_append(b, 20);
    recs__jit_poll();
    tap_ok(name(0xa010) == NULL, "jitdump: a record being written is not read");
    dump_append(b + 20, n - 20);
    recs__jit_poll();
    tap_ok(same(name(0xa010), "JS:*later /x.js:9"), "jitdump: ... once whole");
    /* Code moved: its name at the new place, none at the old one. */
    dump_move(2, 0x9000, 0xc000, 0x100);
    recs__jit_poll();
    tap_ok(same(name(0xc0ff), "JS:*hot /x.js:3") && name(0x9050) == NULL,
           "jitdump: moved code keeps its name, and leaves its old place unnamed");
    /* A record of size 4: reading stops there, nothing after is taken. */
    memset(b, 0, 16);
    put32(b + 4, 4);
    dump_append(b, 16);
    n = load_record(b, 0xd000, 0x10, "after");
    dump_append(b, n);
    recs__jit_poll();
    tap_ok(name(0xd000) == NULL && same(name(0xc050), "JS:*hot /x.js:3"),
           "jitdump: a senseless record ends the reading, the names before it kept");
    dump_close();
}

static uint64_t mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The name of pc for a sample at time t; *w what the lookup said. */
static const char *name_at(uint64_t pc, uint64_t t, recs__jit_when *w)
{
    bool prov = false;

    *w = (recs__jit_when){ .t = t, .until = UINT64_MAX };
    return recs__jit_lookup(pc, w, &prov);
}

/* A at X, B at Y (time 100); B moves Y -> Z (200), A moves X -> Y (210);
 * C is loaded at X (300), shorter than A was. */
#define X 0x10000u
#define Y 0x20000u
#define Z 0x30000u

static void test_history(void)
{
    unsigned char b[512];
    recs__jit_when w;
    uint64_t g;
    bool ok;

    if (!dump_open(0)) {
        tap_ok(1, "# SKIP an executable mapping of a file here is refused");
        return;
    }
    dump_append(b, load_at(b, 100, X, 0x100, "A"));
    dump_append(b, load_at(b, 100, Y, 0x100, "B"));
    recs__jit_poll();
    g = recs__jit_generation();
    dump_move(200, Y, Z, 0x100);
    dump_move(210, X, Y, 0x100);
    dump_append(b, load_at(b, 300, X, 0x80, "C"));
    recs__jit_poll();
    tap_ok(recs__jit_generation() != g,
           "history: moves change the generation (answers given may change)");

    ok = same(name_at(X + 0x10, 150, &w), "A");
    tap_ok(ok && w.from == 100 && w.until == 210 && w.jit,
           "history: before its move, code is named at its old place "
           "(for samples in [100, 210): [%llu, %llu))",
           (unsigned long long)w.from, (unsigned long long)w.until);
    ok = name_at(X + 0x10, 250, &w) == NULL && w.gone;
    tap_ok(ok, "history: after it, nothing stale is named there");
    ok = same(name_at(X + 0x10, 350, &w), "C") && w.from == 300 && w.until > 350;
    tap_ok(ok, "history: an address reused by later code takes its name");
    tap_ok(name_at(X + 0x90, 350, &w) == NULL,
           "history: beyond the shorter code loaded there, the old name is gone");
    tap_ok(name_at(X + 0x10, 50, &w) == NULL && !w.gone,
           "history: before any code was loaded, no name");
    tap_ok(same(name_at(Y + 0x10, 150, &w), "B") &&
           name_at(Y + 0x10, 205, &w) == NULL && w.gone &&
           same(name_at(Y + 0x10, 250, &w), "A"),
           "history: an address whose code moved away and other code moved in: "
           "the old occupant, nothing, then the new one");
    tap_ok(name_at(Z + 0x10, 150, &w) == NULL && same(name_at(Z + 0x10, 250, &w), "B"),
           "history: the new place is named from the move on");
    tap_ok(same(name(Y + 0x10), "A") && same(name(X + 0x10), "C"),
           "history: without a time, the latest names");
    tap_ok(recs__jit_untimed() == NULL, "history: the file's times are used");
    dump_close();
}

/* Code reloaded at one address, again and again: what samples can no
 * longer need is dropped, what they can is kept and counted when it does
 * not fit. */
static void test_churn(void)
{
    unsigned char b[512];
    char nm[32];
    size_t most = 0;
    uint64_t old = mono() - 20000000000ull;    /* before every drain */

    if (!dump_open(0)) {
        tap_ok(1, "# SKIP an executable mapping of a file here is refused");
        return;
    }
    for (int i = 0; i < 2000; i++) {
        snprintf(nm, sizeof nm, "churn%d", i);
        dump_append(b, load_at(b, old + (uint64_t)i, 0x40000, 0x40, nm));
        if (i % 100 == 99) {
            recs__jit_poll();
            if (recs__jit_entries() > most)
                most = recs__jit_entries();
        }
    }
    tap_ok(most <= JIT_MAX_NAMES && recs__jit_dropped() == 0 &&
           same(name(0x40010), "churn1999"),
           "churn: %d loads at one address long ago kept within %d entries "
           "(at most %zu), the latest named, none dropped",
           2000, JIT_MAX_NAMES, most);
    uint64_t now = mono();
    for (int i = 0; i < 2 * JIT_MAX_NAMES; i++) {
        snprintf(nm, sizeof nm, "recent%d", i);
        dump_append(b, load_at(b, now - 1000000 + (uint64_t)i, 0x50000, 0x40, nm));
    }
    recs__jit_poll();
    tap_ok(recs__jit_entries() <= JIT_MAX_NAMES && recs__jit_dropped() > 0,
           "churn: recent history that does not fit is counted dropped (%zu), "
           "the bound kept (%zu entries)", recs__jit_dropped(),
           recs__jit_entries());
    dump_close();
}

/* Timestamps of the CPU's counter: names by address alone, each from when
 * it was read (and a first one before that too). */
static void test_untimed(void)
{
    unsigned char b[512];
    recs__jit_when w;
    uint64_t before, mid;

    if (!dump_open(1)) {
        tap_ok(1, "# SKIP an executable mapping of a file here is refused");
        return;
    }
    before = mono();
    dump_append(b, load_at(b, 5, 0x60000, 0x100, "D"));
    recs__jit_poll();
    tap_ok(recs__jit_untimed() != NULL && same(name_at(0x60010, before - 1000, &w), "D"),
           "untimed: said so (%s); the first name there holds before its reading too",
           recs__jit_untimed() ? recs__jit_untimed() : "nothing");
    mid = mono();
    dump_move(7, 0x60000, 0x61000, 0x100);
    recs__jit_poll();
    tap_ok(same(name_at(0x60010, mid, &w), "D") &&
           name_at(0x60010, mono(), &w) == NULL && same(name(0x61010), "D"),
           "untimed: a move holds from its reading on");
    dump_close();
}

int main(void)
{
    test_ranges();
    test_names();
    test_jitdump();
    test_history();
    test_untimed();
    test_churn();           /* last: it leaves the table full */
    return tap_done();
}
