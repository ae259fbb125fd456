/*
 * tests/test-jit.c - code of no module (libsampler/jit.c): the executable
 * mappings no file backs, and the names of a perf map as a runtime writes
 * it (appended, partial lines, code written again at an address, the file
 * replaced), and those of a jitdump file, found as the runtime maps it
 * (code loads, a record being written, code moved, a record that makes
 * no sense).
 */
#include <config.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tap.h"
#include "../libsampler/jit.h"

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
    return recs__jit_lookup(pc, &prov);
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

static char dump[256];

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

/* A code load record of name at [addr, addr + size) into b; its size. */
static size_t load_record(unsigned char *b, uint64_t addr, uint64_t size,
                          const char *name)
{
    size_t n = 16 + 40 + strlen(name) + 1 + 8;   /* 8 bytes of "code" */
    memset(b, 0, n);
    put32(b, 0);
    put32(b + 4, (uint32_t)n);
    put64(b + 8, 1);
    put32(b + 16, (uint32_t)getpid());
    put64(b + 24, addr);
    put64(b + 32, addr);
    put64(b + 40, size);
    put64(b + 48, 7);
    memcpy(b + 56, name, strlen(name) + 1);
    return n;
}

static void test_jitdump(void)
{
    unsigned char b[512], h[40] = { 0 };
    char dir[] = "jitdump.XXXXXX";
    recs__jit_range r[256];
    size_t n;
    void *mark;
    int fd;

    if (!mkdtemp(dir))
        bail("a directory");
    snprintf(dump, sizeof dump, "%s/%s/jit-%d.dump", getcwd((char[4096]){ 0 }, 4096),
             dir, (int)getpid());
    put32(h, 0x4A695444u);
    put32(h + 4, 1);
    put32(h + 8, 40);
    put32(h + 12, 62);
    put32(h + 20, (uint32_t)getpid());
    dump_append(h, sizeof h);
    n = load_record(b, 0x9000, 0x100, "JS:*hot /x.js:3");
    dump_append(b, n);
    /* How runtimes tell profilers where it is: one executable page of it. */
    fd = open(dump, O_RDONLY);
    mark = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
    if (fd >= 0)
        close(fd);
    if (mark == MAP_FAILED) {
        tap_ok(1, "# SKIP an executable mapping of a file here is refused");
        unlink(dump);
        rmdir(dir);
        return;
    }
    recs__jit_ranges(r, 256);
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
    /* Code moved: its name at the new place. */
    memset(b, 0, 72);
    put32(b, 1);
    put32(b + 4, 72);
    put64(b + 32, 0x9000);
    put64(b + 40, 0xc000);
    put64(b + 48, 0x100);
    dump_append(b, 72);
    recs__jit_poll();
    tap_ok(same(name(0xc0ff), "JS:*hot /x.js:3"), "jitdump: moved code keeps its name");
    /* A record of size 4: reading stops there, nothing after is taken. */
    memset(b, 0, 16);
    put32(b + 4, 4);
    dump_append(b, 16);
    n = load_record(b, 0xd000, 0x10, "after");
    dump_append(b, n);
    recs__jit_poll();
    tap_ok(name(0xd000) == NULL && same(name(0x9050), "JS:*hot /x.js:3"),
           "jitdump: a senseless record ends the reading, the names before it kept");
    munmap(mark, 4096);
    unlink(dump);
    rmdir(dir);
}

int main(void)
{
    test_ranges();
    test_names();
    test_jitdump();
    return tap_done();
}
