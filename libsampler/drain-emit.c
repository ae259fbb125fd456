/*
 * libsampler/drain-emit.c - events that describe the recording rather than the
 * samples: settings, process and CPU information, Thread pool entries.
 * Called with drain_lock held.
 */
#include <config.h>
#include "internal.h"

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* A thread's name is read again 10 ms and 110 ms after it is first
 * seen: threads name themselves just after they start, often after the
 * first drain has seen them. Then it is read again when a rename rec
 * sees happened (hook-names.c), and every 10 s for those it cannot see. (Each
 * read opens a /proc file: once a second, they were a fifth of the
 * sampler thread's CPU time on a busy single-threaded program.) */
#define NAME_FIRST_NS   10000000ull
#define NAME_SECOND_NS  100000000ull
#define NAME_REFRESH_NS 10000000000ull

static rec_id str_id(const char *s)
{
    rec_id id = 0;
    if (s && rec_intern_cstr(recs__g.w, s, &id) < 0)
        id = 0;
    return id;
}

void recs__emit_settings(void)
{
    struct rec_RecordingSettings ev;

    memset(&ev, 0, sizeof ev);
    ev.throttle = str_id(recs__g.cfg.throttle_text);
    ev.samplingPeriod = recs__g.period_ns;
    ev.signal = (uint64_t)recs__g.signo;
    ev.unwinder = str_id(recs__g.cfg.fp_walker ? "frame-pointer+cfi-leaf"
                                               : "cfi");
    ev.stackDepth = recs__g.cfg.depth;
    ev.queueCapacity = recs__g.capacity;
    ev.engine = str_id(recs__engine_name(recs__g.engine));
    ev.engineNote = recs__g.engine_note[0] ? str_id(recs__g.engine_note) : 0;
    ev.startTime = recs__now_ns();
    rec_emit_RecordingSettings(recs__g.st, &ev);
}

/* Read a small /proc file into buf (NUL-terminated); bytes read or -1. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t n = 0;

    if (fd < 0)
        return -1;
    while (n < size - 1) {
        ssize_t r = read(fd, buf + n, size - 1 - n);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    return (ssize_t)n;
}

static void emit_process_info(uint64_t now)
{
    struct rec_ProcessInfo ev;
    char exe[4096], cmd[8192];
    struct utsname u;
    ssize_t n;

    memset(&ev, 0, sizeof ev);
    ev.processId = (uint64_t)getpid();
    ev.parentProcessId = (uint64_t)getppid();
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        ev.executable = str_id(exe);
    }
    n = read_small("/proc/self/cmdline", cmd, sizeof cmd);
    if (n > 0) {
        /* --no-command-line: arguments may hold secrets; argv[0] stays so
         * that the recording still says what ran. */
        for (ssize_t i = 0; i < n - 1 && !recs__g.cfg.no_command_line; i++)
            if (cmd[i] == '\0')
                cmd[i] = ' ';
        ev.commandLine = str_id(cmd);
    }
    if (recs__g.cfg.run_id[0])
        ev.runId = str_id(recs__g.cfg.run_id);
    if (uname(&u) == 0)
        ev.hostName = str_id(u.nodename);
    ev.startTime = now;
    rec_emit_ProcessInfo(recs__g.st, &ev);
}

static void emit_cpu_info(uint64_t now)
{
    struct rec_CPUInfo ev;
    cpu_set_t set;
    /* The first processor's record holds the model: a page of the file,
     * not every processor's (generated per read, and large on big
     * machines), is read by each process. */
    char info[4096];
    char *model = NULL;

    memset(&ev, 0, sizeof ev);
    ev.onlineCpus = recs__g.ncpus;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        ev.availableCpus = (uint64_t)CPU_COUNT(&set);
    /* CONFIG_HZ is not exported; the kernel's tick is left unknown. */
    ev.clockTickHz = 0;
    if (read_small("/proc/cpuinfo", info, sizeof info) > 0) {
        char *p = strstr(info, "model name");
        if (p && (p = strchr(p, ':'))) {
            p++;
            while (*p == ' ' || *p == '\t')
                p++;
            model = p;
            p = strchr(p, '\n');
            if (p)
                *p = '\0';
        }
    }
    ev.model = str_id(model);
    ev.startTime = now;
    rec_emit_CPUInfo(recs__g.st, &ev);
}

void recs__emit_process(void)
{
    uint64_t now = recs__now_ns();
    emit_process_info(now);
    emit_cpu_info(now);
}

rec_id recs__thread_ref_tid(pid_t tid, const char *name)
{
    struct rec_Thread th;
    rec_id id = 0;

    memset(&th, 0, sizeof th);
    th.osThreadId = (uint64_t)tid;
    th.name = name && *name ? str_id(name) : 0;
    th.processId = (uint64_t)getpid();
    if (rec_intern_Thread(recs__g.w, &th, &id) < 0)
        return 0;
    return id;
}

/* The thread's pool entry; its name is read from /proc when refresh is
 * asked and a second has passed (names are set after creation, often by
 * the thread itself). ended and name: what the thread's exit left, as the
 * caller copied them under reg_lock. drain_lock held, reg_lock not. */
rec_id recs__thread_ref(recs__thread *t, bool ended, const char *name,
                        bool refresh)
{
    char path[64], comm[32];
    uint64_t now;
    uint32_t epoch;
    ssize_t n;

    if (ended) {
        if (!t->ref || strncmp(t->ref_name, name, sizeof t->ref_name)) {
            memcpy(t->ref_name, name, sizeof t->ref_name);
            t->ref = recs__thread_ref_tid(t->tid, t->ref_name);
        }
        return t->ref;
    }
    now = recs__now_ns();
    /* Read before the name: a rename during the read moves it again. */
    epoch = atomic_load(&recs__names_epoch);
    if (t->ref && !(refresh && (now - t->ref_checked_ns >= t->ref_every_ns ||
                                epoch != t->ref_epoch)))
        return t->ref;
    t->ref_checked_ns = now;
    t->ref_epoch = epoch;
    t->ref_every_ns = !t->ref ? NAME_FIRST_NS
                      : t->ref_every_ns < NAME_SECOND_NS ? NAME_SECOND_NS
                      : NAME_REFRESH_NS;
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)t->tid);
    n = read_small(path, comm, sizeof comm);
    if (n <= 0)
        comm[0] = '\0';
    else if (comm[n - 1] == '\n')
        comm[n - 1] = '\0';  /* the kernel's; a name may hold others, kept
                                 as PR_GET_NAME gives them at the end */
    if (t->ref && !strncmp(comm, t->ref_name, sizeof t->ref_name))
        return t->ref;
    snprintf(t->ref_name, sizeof t->ref_name, "%s", comm);
    t->ref = recs__thread_ref_tid(t->tid, t->ref_name);
    return t->ref;
}
