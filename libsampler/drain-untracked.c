/*
 * libsampler/drain-untracked.c - threads the sampler does not know: created
 * before it could follow them (by a library constructor that ran before
 * ours, or before the first recs_start() of a program that links the
 * library). They have no per-thread state, so they are not sampled; what
 * rec can do is say so and report their CPU time in the session as lost
 * (reason "untracked"), so that the recording's totals stay complete.
 *
 * Found at the start by listing /proc/self/task; their CPU clocks are read
 * at every drain and at the end. A thread that has ended has no clock to
 * read, and the last drain's reading can be a drain interval old (more on
 * a busy machine): so the threads created through our pthread_create
 * before the registry existed read their own clock one last time as they
 * exit (a key destructor, every exit path), and that reading is the one
 * kept. All under drain_lock, except recs__untracked_early_thread() and
 * its destructor, which run on the thread itself.
 */
#include <config.h>
#include "internal.h"

#include <dirent.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct untracked {
    pid_t tid;
    bool gone;
    uint64_t start_cpu, last_cpu;
    char name[16];
} untracked;

static untracked *list;
static size_t n, cap;

/* Last readings of the early threads that have exited: the slot is taken
 * with a counter, the tid published last (release) so that a reader that
 * sees it sees the reading. Only the first threads fit: the others keep
 * the last drain's reading, as before. */
#define EARLY_MAX 64
static struct {
    _Atomic pid_t tid;
    uint64_t cpu;
} early_end[EARLY_MAX];
static atomic_uint early_used;
static pthread_key_t early_key;
static pthread_once_t early_once = PTHREAD_ONCE_INIT;
static bool early_key_ok;

/* Linux: the CPU clock of any thread of this process, by tid. */
static bool tid_cpu_ns(pid_t tid, uint64_t *ns)
{
    clockid_t c = (clockid_t)((~(unsigned)tid << 3) | 6);
    struct timespec ts;

    if (clock_gettime(c, &ts) != 0)
        return false;
    *ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return true;
}

static void early_exit(void *arg)
{
    pid_t tid = recs__gettid();
    uint64_t c;
    unsigned i;

    (void)arg;
    if (!tid_cpu_ns(tid, &c) ||
        (i = atomic_fetch_add(&early_used, 1)) >= EARLY_MAX)
        return;
    early_end[i].cpu = c;
    atomic_store_explicit(&early_end[i].tid, tid, memory_order_release);
}

static void early_key_make(void)
{
    early_key_ok = pthread_key_create(&early_key, early_exit) == 0;
}

/* On a thread created before the registry existed, before its start
 * routine: have its exit read its CPU clock. */
void recs__untracked_early_thread(void)
{
    pthread_once(&early_once, early_key_make);
    if (early_key_ok)
        pthread_setspecific(early_key, &early_key);
}

/* The reading an early thread made at its exit, if it made one. */
static bool early_final(pid_t tid, uint64_t *ns)
{
    unsigned used = atomic_load(&early_used);
    bool found = false;

    for (unsigned i = 0; i < used && i < EARLY_MAX; i++)
        if (atomic_load_explicit(&early_end[i].tid, memory_order_acquire) ==
            tid) {
            *ns = early_end[i].cpu;   /* the latest of a reused tid wins */
            found = true;
        }
    return found;
}

static bool known(pid_t tid)
{
    bool found = false;

    pthread_mutex_lock(&recs__g.reg_lock);
    for (recs__thread *t = recs__g.threads; t && !found; t = t->next)
        found = t->tid == tid;
    pthread_mutex_unlock(&recs__g.reg_lock);
    return found;
}

static void read_name(pid_t tid, char *out, size_t size)
{
    char path[64];
    FILE *f;

    out[0] = '\0';
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
    if ((f = fopen(path, "re"))) {
        if (fgets(out, (int)size, f))
            out[strcspn(out, "\n")] = '\0';
        fclose(f);
    }
}

/* At the start of a session, before the sampler thread exists. */
void recs__untracked_scan(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;

    n = 0;
    if (!d)
        return;
    while ((e = readdir(d))) {
        pid_t tid = (pid_t)atoi(e->d_name);
        uint64_t c;
        if (tid <= 0 || known(tid) || !tid_cpu_ns(tid, &c))
            continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 8;
            untracked *nl = realloc(list, nc * sizeof *nl);
            if (!nl)
                break;
            list = nl;
            cap = nc;
        }
        memset(&list[n], 0, sizeof list[n]);
        list[n].tid = tid;
        list[n].start_cpu = list[n].last_cpu = c;
        read_name(tid, list[n].name, sizeof list[n].name);
        n++;
    }
    closedir(d);
    if (n)
        recs__warn("%zu thread%s started before rec could follow %s (by a "
                   "library constructor, or before recs_start); not sampled, "
                   "%s CPU time is reported lost (untracked)", n,
                   n == 1 ? "" : "s", n == 1 ? "it" : "them",
                   n == 1 ? "its" : "their");
}

/* Keep the last CPU reading of each (a thread that ends loses its clock). */
void recs__untracked_poll(void)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t c;
        if (list[i].gone)
            continue;
        if (known(list[i].tid)) {
            /* Was being created at the scan: registered since, sampled. */
            list[i].gone = true;
            list[i].last_cpu = list[i].start_cpu;
            continue;
        }
        if (tid_cpu_ns(list[i].tid, &c))
            list[i].last_cpu = c;
        else {
            list[i].gone = true;
            if (early_final(list[i].tid, &c) && c > list[i].last_cpu)
                list[i].last_cpu = c;
        }
    }
}

/* At the end of the session: one lost event per thread. */
void recs__untracked_emit(void)
{
    rec_id reason = 0;

    recs__untracked_poll();
    if (n && rec_intern_cstr(recs__g.w, "untracked", &reason) < 0)
        reason = 0;
    for (size_t i = 0; i < n; i++) {
        struct rec_CPUTimeSampleLost ev;
        uint64_t ns = list[i].last_cpu > list[i].start_cpu ?
                      list[i].last_cpu - list[i].start_cpu : 0;
        uint64_t period = recs__g.period_ns ? recs__g.period_ns : 1;
        if (!ns)
            continue;
        memset(&ev, 0, sizeof ev);
        ev.eventThread = recs__thread_ref_tid(list[i].tid, list[i].name);
        ev.lostSamples = ns / period;
        ev.lostTime = ns;
        ev.reason = reason;
        ev.startTime = recs__now_ns();
        rec_emit_CPUTimeSampleLost(recs__g.st, &ev);
        recs__g.stats.lost += ev.lostSamples;
        recs__g.stats.lost_ns += ns;
    }
    n = 0;
}

/* In a fork child: those threads are the parent's. */
void recs__untracked_reset(void)
{
    n = 0;
}
