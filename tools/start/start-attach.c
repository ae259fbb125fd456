/*
 * tools/start/start-attach.c - rec-start -p PID: record a process that is
 * already running, then leave it as it was.
 *
 * rec-start makes two FIFOs, has the sampler loaded into the process
 * (start-inject.c) with the settings and the FIFOs' paths, and waits. The
 * session is then the sampler's (libsampler/session-attach.c): it adopts
 * the process's threads and records until rec-start closes the control
 * FIFO (--duration, Ctrl-C, or rec-start's own death), and says
 * "detached" on the status FIFO once the recording is finished and its
 * thread gone.
 */
#include <config.h>
#include "start.h"
#include "recenv.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *prog = "rec-start";

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ------------------------------------------------------------------ */
/* The session                                                         */
/* ------------------------------------------------------------------ */

static volatile sig_atomic_t stop_asked;

static void on_stop(int sig)
{
    (void)sig;
    stop_asked = 1;
}

static void add_line(char *spec, size_t size, const char *name, const char *v)
{
    size_t n = strlen(spec);
    if (v)
        snprintf(spec + n, size - n, "%s=%s\n", name, v);
}

int start_attach(const start_attach_opts *o, const char *lib)
{
    char dir[] = "/tmp/rec-attach-XXXXXX", ctl[64], stf[64], msg[1024],
         spec[8192] = "", out[PATH_MAX], real[PATH_MAX], why[512] = "";
    int ctl_fd = -1, st_fd = -1, rc = 1;
    start_status st = { .why = why, .wsize = sizeof why };
    bool ended = false;
    uint64_t t0 = now_ms(), t_attached = 0, t_stop = 0;
    struct sigaction sa;
    start_total tot = { 0 };

    if (!realpath(lib, real)) {
        fprintf(stderr, "%s: %s: %s\n", prog, lib, strerror(errno));
        return 1;
    }
    if (o->output) {
        char *a = start_absolute(o->output);
        if (!a) {
            fprintf(stderr, "%s: %s: %s\n", prog, o->output, strerror(errno));
            return 1;
        }
        snprintf(out, sizeof out, "%s", a);
        free(a);
    } else {
        char name[64], *a;
        snprintf(name, sizeof name, "rec-%d.rec", (int)o->pid);
        if (!(a = start_absolute(name)))
            return 1;
        snprintf(out, sizeof out, "%s", a);
        free(a);
    }
    if (access(out, F_OK) == 0) {
        if (!o->force) {
            fprintf(stderr, "%s: %s exists (use -f to replace it)\n", prog, out);
            return 1;
        }
        if (unlink(out) != 0) {
            fprintf(stderr, "%s: %s: %s\n", prog, out, strerror(errno));
            return 1;
        }
    }
    if (!mkdtemp(dir)) {
        fprintf(stderr, "%s: mkdtemp: %s\n", prog, strerror(errno));
        return 1;
    }
    snprintf(ctl, sizeof ctl, "%s/ctl", dir);
    snprintf(stf, sizeof stf, "%s/status", dir);
    if (mkfifo(ctl, 0600) != 0 || mkfifo(stf, 0600) != 0) {
        fprintf(stderr, "%s: mkfifo: %s\n", prog, strerror(errno));
        goto cleanup;
    }
    {
        /* root attaching to another user's process: the FIFOs are its. */
        char v[128];
        unsigned uid, gid;
        if (geteuid() == 0 && start_proc_status(o->pid, "Uid", v, sizeof v) &&
            sscanf(v, "%u", &uid) == 1 && start_proc_status(o->pid, "Gid", v, sizeof v) &&
            sscanf(v, "%u", &gid) == 1 && uid != 0) {
            if (chown(dir, uid, gid) != 0 || chown(ctl, uid, gid) != 0 ||
                chown(stf, uid, gid) != 0)
                fprintf(stderr, "%s: chown %s: %s\n", prog, dir, strerror(errno));
        }
    }
    /* Ours first: the sampler's opens, non-blocking, then succeed, and
     * our end of ctl (read-write: never blocks) is the only writer. */
    if ((st_fd = open(stf, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) < 0 ||
        (ctl_fd = open(ctl, O_RDWR | O_CLOEXEC)) < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, dir, strerror(errno));
        goto cleanup;
    }
    add_line(spec, sizeof spec, REC_ENV_OUTPUT, out);
    add_line(spec, sizeof spec, REC_ENV_THROTTLE, o->throttle);
    add_line(spec, sizeof spec, REC_ENV_STACK_DEPTH, o->depth);
    add_line(spec, sizeof spec, REC_ENV_STACK_WALKER, o->walker);
    add_line(spec, sizeof spec, REC_ENV_MAX_CHUNK_SIZE, o->max_chunk);
    add_line(spec, sizeof spec, REC_ENV_FLUSH_INTERVAL, o->flush);
    add_line(spec, sizeof spec, REC_ENV_SIGNAL, o->signal);
    add_line(spec, sizeof spec, "REC_ENGINE", o->engine);
    add_line(spec, sizeof spec, REC_ENV_NO_COMMAND_LINE, o->no_cmdline ? "1" : NULL);
    add_line(spec, sizeof spec, REC_ENV_PYTHON, o->no_python ? "0" : NULL);
    add_line(spec, sizeof spec, REC_ENV_RUN_ID, o->run_id);
    add_line(spec, sizeof spec, REC_ENV_ATTACH_CTL, ctl);
    add_line(spec, sizeof spec, REC_ENV_ATTACH_STATUS, stf);

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (start_inject(o->pid, real, spec, msg, sizeof msg) < 0) {
        fprintf(stderr, "%s: %s\n", prog, msg);
        goto cleanup;
    }
    /* Both FIFOs are open at both ends now (recs_attach() opened its ends
     * before it returned): their names can go, so that nothing is left in
     * /tmp whatever becomes of rec-start. */
    unlink(ctl);
    unlink(stf);
    rmdir(dir);
    /* The session is the sampler's now: wait for its status lines, the
     * duration, a signal, or the process's end. */
    {
        int pfd = (int)syscall(SYS_pidfd_open, o->pid, 0);
        uint64_t deadline = o->duration_ms ? now_ms() + o->duration_ms : 0;
        for (;;) {
            struct pollfd p[2] = { { st_fd, POLLIN, 0 }, { pfd, POLLIN, 0 } };
            int tmo = 200;
            /* Its end, or the sampler done (a child the process forked
             * may hold the FIFO open). */
            if (start_status_read(&st, st_fd) < 0 || st.detached || st.failed) {
                ended = true;
                break;
            }
            if (st.attached && !t_attached) {
                t_attached = now_ms();
                if (!o->quiet)
                    fprintf(stderr, "%s: attached to process %d in %llu ms; "
                            "recording into %s%s\n", prog, (int)o->pid,
                            (unsigned long long)(t_attached - t0), out,
                            o->duration_ms ? "" : " (Ctrl-C ends it)");
            }
            if (ctl_fd >= 0 && (stop_asked || (deadline && now_ms() >= deadline))) {
                /* The sampler sees its end within its next wake-up. */
                close(ctl_fd);
                ctl_fd = -1;
                t_stop = now_ms();
            }
            if (ctl_fd < 0 && t_stop && now_ms() - t_stop > 10000) {
                fprintf(stderr, "%s: process %d did not finish its recording "
                        "within 10 s of the request\n", prog, (int)o->pid);
                break;
            }
            if (deadline && ctl_fd >= 0) {
                uint64_t left = deadline > now_ms() ? deadline - now_ms() : 0;
                if (left < (uint64_t)tmo)
                    tmo = (int)left;
            }
            if (poll(p, pfd >= 0 ? 2 : 1, tmo) > 0 && pfd >= 0 &&
                (p[1].revents & POLLIN)) {
                /* The process ended: what it wrote is all there is. */
                start_status_read(&st, st_fd);
                if (!why[0])
                    snprintf(why, sizeof why, "process %d ended", (int)o->pid);
                ended = true;
                break;
            }
            if (pfd < 0 && kill(o->pid, 0) != 0 && errno == ESRCH) {
                ended = true;
                break;
            }
        }
        if (pfd >= 0)
            close(pfd);
    }
    if (st.failed) {
        fprintf(stderr, "%s: the sampler could not start in process %d\n",
                prog, (int)o->pid);
        goto cleanup;
    }
    if (!o->quiet && t_stop && ended)
        fprintf(stderr, "%s: detached from process %d in %llu ms\n", prog,
                (int)o->pid, (unsigned long long)(now_ms() - t_stop));
    rc = 0;
    if (!o->quiet)
        start_summarize(out, false, false, why, &tot);

cleanup:
    if (ctl_fd >= 0)
        close(ctl_fd);
    if (st_fd >= 0)
        close(st_fd);
    unlink(ctl);
    unlink(stf);
    rmdir(dir);
    return rc;
}

