/*
 * libsampler/untracked.c - threads the sampler does not know: created
 * before it could follow them (by a library constructor that ran before
 * ours, or before the first recs_start() of a program that links the
 * library). They have no per-thread state, so they are not sampled; what
 * rec can do is say so and report their CPU time in the session as lost
 * (reason "untracked"), so that the recording's totals stay complete.
 *
 * Found at the start by listing /proc/self/task; their CPU clocks are read
 * at every drain (a thread that ends keeps its last reading) and at the
 * end. All under drain_lock.
 */
#include <config.h>
#include "internal.h"

#include <dirent.h>
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
        else
            list[i].gone = true;
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
