/*
 * tests/workloads/jitmove.c - JIT code that moves, as a runtime's jitdump
 * tells it: a tiny loop copied into executable memory at three places X,
 * Y, Z, and a jitdump file (jit-PID.dump in the working directory, mapped
 * the way runtimes tell profilers where it is) saying what is where and
 * since when:
 *   phase 1  fnA loaded at X, fnB at Y;
 *   phase 2  fnB moved Y -> Z, then fnA moved X -> Y (the loop still
 *            at X too: code moved away whose bytes stay);
 *   phase 3  fnC loaded at X (the address reused by other code).
 * Each run of the loop at one place in one phase is its own thread, which
 * burns MS of CPU there (default 300): every sample of it has one right
 * name. The runs are one after another, every record written before the
 * next run starts. For each run, a line on standard output:
 *   TID NAME    NAME the function its samples in the loop must carry,
 *               "-" for none (X in phase 2).
 * Exit 77 on a machine whose loop is not written here.
 *
 * Usage: jitmove [MS]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define FN_SIZE 64

#if defined(__x86_64__)
/* mov %rdi,%rax; 1: dec %rax; jnz 1b; ret */
static const unsigned char loop[] = { 0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8,
                                      0x75, 0xfb, 0xc3 };
#define JD_MACH 62
#elif defined(__aarch64__)
/* 1: subs x0, x0, #1; b.ne 1b; ret */
static const unsigned char loop[] = { 0x00, 0x04, 0x00, 0xf1, 0xe1, 0xff,
                                      0xff, 0x54, 0xc0, 0x03, 0x5f, 0xd6 };
#define JD_MACH 183
#endif

typedef long code_fn(long);

static uint64_t burn_ns = 300000000u;
static unsigned char *code;
static long page;
static int dump_fd = -1;

static uint64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
    perror(what);
    exit(1);
}

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

static void dump_write(const unsigned char *b, size_t n)
{
    if (write(dump_fd, b, n) != (ssize_t)n)
        die("jitdump");
}

/* The record prefix and the pid, tid fields every load and move has. */
static void prefix(unsigned char *b, uint32_t id, size_t n)
{
    memset(b, 0, n);
    put32(b, id);
    put32(b + 4, (uint32_t)n);
    put64(b + 8, clock_ns(CLOCK_MONOTONIC));
    put32(b + 16, (uint32_t)getpid());
    put32(b + 20, (uint32_t)gettid());
}

static void dump_open(void)
{
    char path[64];
    unsigned char h[40] = { 0 };

    snprintf(path, sizeof path, "jit-%d.dump", (int)getpid());
    dump_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (dump_fd < 0)
        die(path);
    put32(h, 0x4A695444u);
    put32(h + 4, 1);
    put32(h + 8, sizeof h);
    put32(h + 12, JD_MACH);
    put32(h + 20, (uint32_t)getpid());
    put64(h + 24, clock_ns(CLOCK_MONOTONIC));
    dump_write(h, sizeof h);
    /* How perf, and the sampler, learn where it is. */
    if (mmap(NULL, (size_t)page, PROT_READ | PROT_EXEC, MAP_PRIVATE, dump_fd, 0) ==
        MAP_FAILED)
        die("mmap jitdump");
}

static uint64_t place(int i)
{
    return (uint64_t)(uintptr_t)(code + i * page);
}

/* The loop at place i (code written while nothing runs). */
static void put_code(int i)
{
    if (mprotect(code, 3 * (size_t)page, PROT_READ | PROT_WRITE) != 0)
        die("mprotect");
    memcpy(code + i * page, loop, sizeof loop);
    if (mprotect(code, 3 * (size_t)page, PROT_READ | PROT_EXEC) != 0)
        die("mprotect");
    __builtin___clear_cache((char *)code, (char *)code + 3 * page);
}

static void load(int i, const char *name)
{
    static uint64_t index;
    unsigned char b[256];
    size_t n = 16 + 40 + strlen(name) + 1 + FN_SIZE;

    put_code(i);
    prefix(b, 0, n);
    put64(b + 24, place(i));
    put64(b + 32, place(i));
    put64(b + 40, FN_SIZE);
    put64(b + 48, index++);
    memcpy(b + 56, name, strlen(name) + 1);
    memcpy(b + 56 + strlen(name) + 1, code + i * page, FN_SIZE);
    dump_write(b, n);
}

static void move(int from, int to)
{
    unsigned char b[72];

    put_code(to);
    prefix(b, 1, sizeof b);
    put64(b + 32, place(from));
    put64(b + 40, place(to));
    put64(b + 48, FN_SIZE);
    dump_write(b, sizeof b);
}

struct run {
    int at;
    const char *want;
};

static void *burn(void *arg)
{
    const struct run *r = arg;
    code_fn *fn = (code_fn *)(uintptr_t)place(r->at);
    uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

    printf("%d %s\n", (int)gettid(), r->want);
    fflush(stdout);
    while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0 < burn_ns)
        fn(20000);
    return NULL;
}

static void run(int at, const char *want)
{
    struct run r = { at, want };
    pthread_t t;

    if (pthread_create(&t, NULL, burn, &r) != 0)
        die("pthread_create");
    pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
    enum { X, Y, Z };

#ifndef JD_MACH
    (void)argc;
    (void)argv;
    fprintf(stderr, "jitmove: no loop for this machine\n");
    return 77;
#else
    if (argc > 1)
        burn_ns = strtoull(argv[1], NULL, 10) * 1000000u;
    page = sysconf(_SC_PAGESIZE);
    code = mmap(NULL, 3 * (size_t)page, PROT_READ | PROT_EXEC,
                MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED)
        die("mmap");
    dump_open();

    load(X, "fnA");
    load(Y, "fnB");
    run(X, "fnA");
    run(Y, "fnB");

    move(Y, Z);
    move(X, Y);
    run(Y, "fnA");
    run(Z, "fnB");
    run(X, "-");

    load(X, "fnC");
    run(X, "fnC");
    run(Y, "fnA");
    return 0;
#endif
}
