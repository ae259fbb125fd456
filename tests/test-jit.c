/*
 * tests/test-jit.c - code of no module (libsampler/jit.c): the executable
 * mappings no file backs, and the names of a perf map as a runtime writes
 * it (appended, partial lines, code written again at an address, the file
 * replaced).
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

int main(void)
{
    test_ranges();
    test_names();
    return tap_done();
}
