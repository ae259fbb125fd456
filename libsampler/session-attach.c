/*
 * libsampler/session-attach.c - recording a process that was already running.
 *
 * rec-start -p stops one thread of the process with ptrace, makes it call
 * dlopen() on this library and then recs_attach(), and lets it go
 * (tools/start/start-attach.c). The program's symbols were bound before
 * we came, so none of our interposers is reached: no pthread_create of
 * ours sees threads start, no exit of ours sees them end. Instead the
 * sampler thread lists /proc/self/task at each wake-up and adopts the
 * threads it has not seen (recs__thread_adopt), and reaps those /proc no
 * longer lists. The handler finds an adopted thread by its tid in a table
 * it reads without locks (recs__adopted).
 *
 * rec-start holds the write end of a control FIFO: when it closes it
 * (--duration, Ctrl-C, or rec-start killed) the sampler thread stops the
 * session, forgets the adopted threads, says "detached" on the status
 * FIFO and ends. The library stays loaded, dormant: its handler passes
 * every signal that is not ours on, and a second recs_attach() reuses it.
 */
#include <config.h>
#include "internal.h"
#include "recenv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* Slots of the tid table: a power of two. Threads beyond it are not
 * adopted: their CPU time is reported lost ("untracked"). */
#define ADOPT_SLOTS   8192u
#define ADOPT_MAX     (ADOPT_SLOTS / 4 * 3)
#define TOMBSTONE     ((pid_t)-1)

typedef struct adopt_slot {
    _Atomic pid_t tid;                 /* 0: never used; TOMBSTONE: freed */
    recs__thread *_Atomic t;
} adopt_slot;

/* Mapped at the first attach and never unmapped: a handler may read it at
 * any time. */
static adopt_slot *slots;
static unsigned nadopted;
static _Atomic pid_t attach_tid;       /* attach_main's, while it runs */

static unsigned slot_of(pid_t tid)
{
    return ((uint32_t)tid * 2654435761u) & (ADOPT_SLOTS - 1);
}

/* Signal-safe. The adopted thread tid, or NULL. Bounded by the table. */
recs__thread *recs__adopted(pid_t tid)
{
    adopt_slot *s = slots;
    unsigned i = slot_of(tid);

    if (!s)
        return NULL;
    for (unsigned n = 0; n < ADOPT_SLOTS; n++, i = (i + 1) & (ADOPT_SLOTS - 1)) {
        pid_t v = atomic_load_explicit(&s[i].tid, memory_order_acquire);
        if (v == tid)
            return atomic_load_explicit(&s[i].t, memory_order_relaxed);
        if (v == 0)
            return NULL;
    }
    return NULL;
}

/* reg_lock held. The thread first, then the tid that makes it found. */
static bool slot_insert(recs__thread *t)
{
    unsigned i = slot_of(t->tid);

    if (nadopted >= ADOPT_MAX)
        return false;
    for (unsigned n = 0; n < ADOPT_SLOTS; n++, i = (i + 1) & (ADOPT_SLOTS - 1)) {
        pid_t v = atomic_load(&slots[i].tid);
        if (v == 0 || v == TOMBSTONE) {
            atomic_store_explicit(&slots[i].t, t, memory_order_relaxed);
            atomic_store_explicit(&slots[i].tid, t->tid, memory_order_release);
            nadopted++;
            return true;
        }
    }
    return false;
}

/* reg_lock held. */
static void slot_remove(pid_t tid)
{
    unsigned i = slot_of(tid);

    for (unsigned n = 0; n < ADOPT_SLOTS; n++, i = (i + 1) & (ADOPT_SLOTS - 1)) {
        pid_t v = atomic_load(&slots[i].tid);
        if (v == tid) {
            atomic_store(&slots[i].tid, TOMBSTONE);
            atomic_store(&slots[i].t, NULL);
            nadopted--;
            return;
        }
        if (v == 0)
            return;
    }
}

/* A thread's start time in clock ticks since boot (/proc's field 22): a
 * tid that comes back is another thread. 0 if gone. */
static uint64_t task_start(pid_t tid)
{
    char path[64], buf[1024], *p;
    ssize_t n;
    int fd;

    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return 0;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* The name, in parentheses, may hold spaces and parentheses. */
    if (!(p = strrchr(buf, ')')))
        return 0;
    p++;
    for (int field = 2; field < 22 && p; field++)
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

typedef struct tidlist {
    pid_t *v;
    size_t n, cap;
} tidlist;

static int list_tasks(tidlist *l)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;

    l->n = 0;
    if (!d)
        return -1;
    while ((e = readdir(d))) {
        long tid = strtol(e->d_name, NULL, 10);
        if (tid <= 0)
            continue;
        if (l->n == l->cap) {
            size_t nc = l->cap ? l->cap * 2 : 64;
            pid_t *nv = realloc(l->v, nc * sizeof *nv);
            if (!nv)
                break;
            l->v = nv;
            l->cap = nc;
        }
        l->v[l->n++] = (pid_t)tid;
    }
    closedir(d);
    return 0;
}

/* True for the threads that are the library's own (self: the caller's). */
static bool ours(pid_t tid, pid_t self)
{
    return tid == self || tid == atomic_load(&recs__g.sampler_tid) ||
           tid == atomic_load(&attach_tid);
}

static int tid_cmp(const void *a, const void *b)
{
    pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
    return (x > y) - (x < y);
}

/* An adopted thread that waits for its stack bounds: a stack pointer its
 * handler saw. A few looks each: a thread whose stack is no stack we know
 * (a coroutine's, a goroutine's) is not worth a read of the maps at every
 * wake-up. */
static bool wants_stack(const recs__thread *t)
{
    return t->adopted && !t->stack_hi && t->stack_tries < 4 &&
           atomic_load_explicit(&t->seen_sp, memory_order_relaxed);
}

/* reg_lock held. Stack bounds for the threads that want them, in one read
 * of the maps: the mapping that holds the stack pointer seen, if it is a
 * stack (the main thread's, or an anonymous mapping right above a guard,
 * as the C library maps thread stacks). Else none: that thread's walks go
 * on reading through the kernel. */
static void find_stacks(void)
{
    unsigned long long prev_end = 0;
    bool prev_guard = false, any = false;
    char line[512];
    FILE *f;

    for (recs__thread *t = recs__g.threads; t && !any; t = t->next)
        any = wants_stack(t);
    if (!any || !(f = fopen("/proc/self/maps", "re")))
        return;
    while (fgets(line, sizeof line, f)) {
        unsigned long long a, b, ino;
        char perms[8], path[256] = "";
        if (sscanf(line, "%llx-%llx %7s %*s %*s %llu %255s", &a, &b, perms,
                   &ino, path) < 4)
            continue;
        bool stack = perms[0] == 'r' && perms[1] == 'w' &&
                     (!strcmp(path, "[stack]") ||
                      (ino == 0 && !path[0] && prev_guard && prev_end == a));
        for (recs__thread *t = recs__g.threads; t; t = t->next) {
            uint64_t sp;
            if (!wants_stack(t) ||
                (sp = atomic_load_explicit(&t->seen_sp, memory_order_relaxed)) < a ||
                sp >= b)
                continue;
            t->stack_tries++;
            atomic_store_explicit(&t->seen_sp, 0, memory_order_relaxed);
            if (stack) {
                t->stack_lo = a;
                __atomic_store_n(&t->stack_hi, b, __ATOMIC_RELEASE);
            }
        }
        prev_guard = !strncmp(perms, "---", 3);
        prev_end = b;
    }
    fclose(f);
    /* A stack pointer in no mapping (unmapped since): a look spent too. */
    for (recs__thread *t = recs__g.threads; t; t = t->next)
        if (wants_stack(t)) {
            t->stack_tries++;
            atomic_store_explicit(&t->seen_sp, 0, memory_order_relaxed);
        }
}

/* Adopt the threads /proc lists that we do not know, reap the adopted
 * ones it no longer lists. Without locks held; takes reg_lock. */
static unsigned adopt_scan(void)
{
    static tidlist l;
    unsigned added = 0;

    pid_t self = recs__gettid();

    if (list_tasks(&l) < 0)
        return 0;
    qsort(l.v, l.n, sizeof *l.v, tid_cmp);
    pthread_mutex_lock(&recs__g.reg_lock);
    for (recs__thread *t = recs__g.threads, *next; t; t = next) {
        next = t->next;
        if (!t->adopted)
            continue;
        if (bsearch(&t->tid, l.v, l.n, sizeof *l.v, tid_cmp)) {
            uint64_t cpu = recs__thread_cpu_ns(t);
            if (cpu)
                t->last_cpu = cpu;
            continue;
        }
        slot_remove(t->tid);
        recs__thread_reap(t);
    }
    pthread_mutex_unlock(&recs__g.reg_lock);
    for (size_t i = 0; i < l.n; i++) {
        pid_t tid = l.v[i];
        recs__thread *t;
        uint64_t start;
        if (ours(tid, self) || recs__adopted(tid))
            continue;
        /* A thread of the registry proper: the program linked us. */
        pthread_mutex_lock(&recs__g.reg_lock);
        for (t = recs__g.threads; t && t->tid != tid; t = t->next)
            ;
        pthread_mutex_unlock(&recs__g.reg_lock);
        if (t || !(start = task_start(tid)))
            continue;
        if (!(t = recs__thread_adopt(tid, start)))
            break;
        /* Masked at our arrival: the expiries it never takes are lost
         * "blocked", as for a thread that masks it for real. */
        t->sig_blocked = recs__task_signal(tid, "SigBlk", recs__g.signo);
        pthread_mutex_lock(&recs__g.reg_lock);
        if (!slot_insert(t)) {
            pthread_mutex_unlock(&recs__g.reg_lock);
            recs__thread_free(t);
            break;
        }
        recs__thread_link_adopted(t);
        pthread_mutex_unlock(&recs__g.reg_lock);
        added++;
    }
    if (l.n > 0) {
        pthread_mutex_lock(&recs__g.reg_lock);
        find_stacks();
        pthread_mutex_unlock(&recs__g.reg_lock);
    }
    return added;
}

/* The sampler thread, at each wake-up of an attached session: threads
 * found and gone, stacks bounded. True once rec-start asked to detach
 * (it closed the control FIFO). */
bool recs__attach_poll(void)
{
    char buf[64];
    ssize_t n;

    if (!recs__g.attached)
        return false;
    adopt_scan();
    if (recs__g.ctl_fd < 0)
        return false;
    while ((n = read(recs__g.ctl_fd, buf, sizeof buf)) > 0)
        ;
    return n == 0;
}

/* rec-start's FIFOs, ours no more: rec-start sees their end. */
static void close_fifos(void)
{
    if (recs__g.ctl_fd >= 0) {
        recs__fd_disown(recs__g.ctl_fd);
        close(recs__g.ctl_fd);
        recs__g.ctl_fd = -1;
    }
    if (recs__g.status_fd >= 0) {
        recs__fd_disown(recs__g.status_fd);
        close(recs__g.status_fd);
        recs__g.status_fd = -1;
    }
}

/* After the stop of an attached session, on the sampler thread: the
 * adopted threads forgotten, rec-start told, and the library dormant. */
void recs__attach_release(void)
{
    pthread_mutex_lock(&recs__g.reg_lock);
    for (unsigned i = 0; i < ADOPT_SLOTS; i++) {
        atomic_store(&slots[i].tid, 0);
        atomic_store(&slots[i].t, NULL);
    }
    nadopted = 0;
    /* A handler that found its thread before the table was cleared. */
    for (int i = 0; atomic_load(&recs__g.inflight) && i < 100000; i++)
        sched_yield();
    for (recs__thread *t = recs__g.threads, *next; t; t = next) {
        next = t->next;
        if (t->adopted)
            recs__thread_forget(t);
    }
    pthread_mutex_unlock(&recs__g.reg_lock);
    recs__status_send("detached samples=%llu lost=%llu",
                      (unsigned long long)recs__g.stats.samples,
                      (unsigned long long)recs__g.stats.lost);
    recs__g.attached = false;
    atomic_store(&attach_tid, 0);
    close_fifos();
}

/* rec-start's lines, "NAME=VALUE" each, cut at their newlines into
 * strings that end with an empty one (spec_split): values are returned in
 * place, and stay valid as long as the copy. */
static const char *spec_get(void *ctx, const char *name)
{
    size_t len = strlen(name);

    for (const char *p = ctx; *p; p += strlen(p) + 1)
        if (!strncmp(p, name, len) && p[len] == '=')
            return p + len + 1;
    return NULL;
}

static char *spec_split(const char *spec)
{
    size_t n = strlen(spec);
    char *c = malloc(n + 2);

    if (!c)
        return NULL;
    memcpy(c, spec, n);
    c[n] = c[n + 1] = '\0';
    for (size_t i = 0; i < n; i++)
        if (c[i] == '\n')
            c[i] = '\0';
    return c;
}

/* The start, on a thread of ours: the program's thread that called
 * recs_attach() is back to its own work already. */
static void *attach_main(void *arg)
{
    recs__config cfg;
    char err[256];
    char *spec = arg;
    unsigned n;

    atomic_store(&attach_tid, recs__gettid());
    if (recs__config_from_vars(&cfg, spec_get, spec, err, sizeof err) < 0) {
        recs__warn("%s; not recording", err);
        goto fail;
    }
    recs__g.registry = true;
    recs__thread_key_init();
    recs__hooks_once();
    recs__install_fatal_handlers();
    if (recs__start_config(&cfg) < 0) {
        recs__config_free(&cfg);
        recs__warn("could not start recording into %s", cfg.output ? cfg.output : "?");
        goto fail;
    }
    recs__config_free(&cfg);
    n = adopt_scan();
    recs__status_send("attached threads=%u", n);
    free(spec);
    /* Still listed until it is gone: the sampler thread skips it. */
    return NULL;

fail:
    free(spec);
    recs__g.attached = false;
    recs__status_send("failed");
    close_fifos();
    return NULL;
}

static int open_fifo(const char *path, int flags, dev_t *dev, ino_t *ino)
{
    struct stat st;
    int fd = open(path, flags | O_NONBLOCK | O_CLOEXEC);

    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return -1;
    }
    if (dev)
        *dev = st.st_dev;
    if (ino)
        *ino = st.st_ino;
    recs__fd_own(fd);
    return fd;
}

int recs_attach(const char *spec)
{
    const char *ctl, *status;
    pthread_t th;
    char *copy;
    int fd;

    if (!spec)
        return REC_EINVAL;
    if (atomic_load(&recs__g.running) || recs__g.attached)
        return REC_EEXIST;   /* recorded already: by rec-start, or attached */
    if (!slots) {
        void *m = mmap(NULL, ADOPT_SLOTS * sizeof *slots, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return REC_ENOMEM;
        slots = m;
    }
    if (!(copy = spec_split(spec)))
        return REC_ENOMEM;
    ctl = spec_get(copy, REC_ENV_ATTACH_CTL);
    if (!ctl || (fd = open_fifo(ctl, O_RDONLY, NULL, NULL)) < 0) {
        free(copy);
        return REC_EINVAL;
    }
    recs__g.ctl_fd = fd;
    status = spec_get(copy, REC_ENV_ATTACH_STATUS);
    if (status && (fd = open_fifo(status, O_WRONLY, &recs__g.status_dev,
                                  &recs__g.status_ino)) >= 0)
        recs__g.status_fd = fd;
    recs__g.preloaded = true;       /* messages name rec-start */
    recs__g.attached = true;
    if (recs__own_pthread_create(&th, attach_main, copy) != 0) {
        recs__g.attached = false;
        free(copy);
        close_fifos();
        return REC_EIO;
    }
    pthread_detach(th);
    return 0;
}
