/*
 * libsampler/handler.c - the code that runs in signal context: the sampling
 * signal handler, the forwarding of the program's own signals, and the
 * handler that finishes the recording on SIGTERM, SIGINT and SIGHUP. The
 * dispositions the program sets and sees are hook-sigaction.c's.
 *
 * Our handler for the sampling signal stays installed once set (a timer
 * signal still pending after a stop must not take the default action,
 * which for SIGPROF terminates the process). If the program installs a
 * handler for the same signal (sigaction/signal are interposed), rec keeps
 * its own, warns once, reports the program's action back to the program
 * from sigaction(), and forwards to the program every signal that is not
 * one of rec's timer signals (its own setitimer/ITIMER_PROF, kill,
 * sigqueue): the program loses nothing but the signals rec's timers send,
 * which it never asked for. The warning says to choose another signal with
 * rec-start --signal.
 *
 * The signals that end a process by default (SIGTERM, SIGINT, SIGSEGV,
 * SIGABRT...): if the program leaves them at the default action, rec
 * installs a handler that asks the sampler thread to finish the
 * recording (bounded wait) and then re-raises the signal with the default
 * action, so the exit status is unchanged. A program that installs its own
 * handler for them later simply replaces ours.
 */
#include <config.h>
#include "internal.h"
#include "unwind-python.h"
#include "unwind-fp.h"
#include "unwind.h"
#include "recenv.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

extern char recs__timer_cookie;

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static sigaction_fn real_sigaction_fn;

/* The program's action for signo, as sigaction() reports it to the
 * program. Written by the interposed sigaction() with every signal blocked
 * (so a handler on the same thread never sees it half-written) under a
 * spin flag, read by forward() in any thread under a seqlock. */
static struct sigaction prog_action;
static _Atomic unsigned prog_seq;
static atomic_flag prog_wlock = ATOMIC_FLAG_INIT;
static _Atomic int hijack_warned;
static _Atomic int prog_warned;

/* Signal-safe. The program's own handler for the sampling signal got its
 * first signal: say it once (forward()). */
static bool prog_warn_once(void)
{
    return !atomic_load_explicit(&prog_warned, memory_order_relaxed) &&
           !atomic_exchange(&prog_warned, 1);
}

/* Every signal whose default action ends the process, but SIGKILL and
 * SIGSTOP (abort() raises SIGABRT; synchronous faults re-raised with the
 * default action end the process as they would have). */
static const int fatal_signals[] = {
    SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE,
    SIGILL, SIGTRAP, SIGSYS, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU,
    SIGXFSZ, SIGVTALRM, SIGPWR, SIGSTKFLT,
};
#define NFATAL (sizeof fatal_signals / sizeof fatal_signals[0])
static _Atomic int fatal_ours[NFATAL];


int recs__real_sigaction(int sig, const struct sigaction *act,
                         struct sigaction *old)
{
    if (!real_sigaction_fn) {          /* not resolved: no dlsym here */
        errno = ENOSYS;
        return -1;
    }
    return real_sigaction_fn(sig, act, old);
}

/* Resolved at load, before any handler of ours exists: never from a
 * signal handler or a vfork child. */
RECS_RESOLVER
static void resolve_sigaction(void)
{
    real_sigaction_fn = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
}

/* For the interposed sigaction() alone, called by another library's
 * constructor before ours ran (a sanitizer's runtime installs its
 * handlers so), in ordinary context. */
void recs__sigaction_early(void)
{
    if (!real_sigaction_fn)
        resolve_sigaction();
}

bool recs__is_handler(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) ||
           (sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN);
}

/* Signal-safe. A consistent copy of the program's action. */
static void prog_load(struct sigaction *out)
{
    for (;;) {
        unsigned s1 = atomic_load(&prog_seq);
        if (s1 & 1)
            continue;
        memcpy(out, &prog_action, sizeof *out);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load(&prog_seq) == s1)
            return;
    }
}

/* Signal-safe. Replace the program's action (all signals blocked). If
 * expect is given, only while the action is still that handler (the
 * SA_RESETHAND reset must not undo a newer sigaction()). */
void recs__prog_store(const struct sigaction *act, struct sigaction *old,
                      sighandler_t expect)
{
    sigset_t all, saved;

    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &saved);
    while (atomic_flag_test_and_set_explicit(&prog_wlock, memory_order_acquire))
        ;
    if (old)
        *old = prog_action;
    if (act && (!expect || prog_action.sa_handler == expect)) {
        atomic_fetch_add(&prog_seq, 1);
        atomic_thread_fence(memory_order_release);
        memcpy(&prog_action, act, sizeof prog_action);
        atomic_fetch_add(&prog_seq, 1);
    }
    atomic_flag_clear_explicit(&prog_wlock, memory_order_release);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
}

/* Signals whose default action is to do nothing. */
static bool default_ignores(int sig)
{
    return sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH ||
           sig == SIGCONT;
}

/* Signal-safe. Deliver sig again with its default action, as if rec had
 * never installed a handler for it. */
static void reraise_default(int sig)
{
    struct sigaction dfl;
    sigset_t set;

    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    recs__real_sigaction(sig, &dfl, NULL);
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    /* The kernel's, not our raise() (hook-sigwait.c), which would forward the
     * sampling signal back here. */
    syscall(SYS_tgkill, getpid(), recs__gettid(), sig);
}

/* Signal-safe. A signal that is not ours, delivered as the program asked:
 * its handler runs with the mask the kernel would have given it (the
 * interrupted mask, its sa_mask, the signal itself unless SA_NODEFER), and
 * SA_RESETHAND resets the program's action. SA_ONSTACK holds because ours
 * has it too (the handler runs on the stack ours runs on). */
static void forward(int sig, siginfo_t *si, void *ucv)
{
    ucontext_t *uc = ucv;
    struct sigaction pa;
    sigset_t old, m;

    /* The program's view of its mask blocks it (hook-sigmask.c): later. */
    if (recs__sigmask_defer(sig, si))
        return;
    prog_load(&pa);
    if (recs__is_handler(&pa)) {
        if (sig == recs__g.signo && prog_warn_once())
            recs__warn_safe("the program's own handler for the sampling "
                            "signal got its first signal: rec shares the "
                            "signal with it, passing it only the signals "
                            "rec's timers did not send. rec-start --signal "
                            "picks a free one.");
        m = uc->uc_sigmask;
        sigorset(&m, &m, &pa.sa_mask);
        if (!(pa.sa_flags & SA_NODEFER))
            sigaddset(&m, sig);
        if (pa.sa_flags & SA_RESETHAND) {
            struct sigaction dfl;
            memset(&dfl, 0, sizeof dfl);
            dfl.sa_handler = SIG_DFL;
            recs__prog_store(&dfl, NULL, pa.sa_handler);
        }
        pthread_sigmask(SIG_SETMASK, &m, &old);
        if (pa.sa_flags & SA_SIGINFO)
            pa.sa_sigaction(sig, si, ucv);
        else
            pa.sa_handler(sig);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    } else if (pa.sa_handler == SIG_IGN || default_ignores(sig)) {
        return;
    } else {
        /* What would have happened without rec (for SIGPROF: terminate). */
        reraise_default(sig);
    }
}

/* Signal-safe. The program's own instance of the sampling signal, taken
 * from the pending set by its raise() (hook-sigwait.c): delivered as the
 * kernel would have, uc holding the caller's context. */
void recs__forward(int sig, siginfo_t *si, void *uc)
{
    forward(sig, si, uc);
}

/* Signal-safe. The Python frames after r's native ones, in the room the
 * queue has left (unwind-python.h); sp..hi where the thread's stack is known. */
static void add_python(recs__thread *t, recs__request *r, uint64_t sp,
                       uint64_t hi)
{
    size_t room = recs__request_spare(&t->q, r);
    uint64_t *py = recs__request_frames(r) + r->nframes;

    if (!atomic_load_explicit(&recs__py.on, memory_order_relaxed))
        return;
    if (room > RECS_PY_DEPTH)
        room = RECS_PY_DEPTH;
    r->npy = (uint16_t)recs__py_walk(sp, hi, t->py_seen, py, (unsigned)room);
}

/* Signal-safe. */
RECS_NO_SANITIZE static void fill_request(recs__thread *t, recs__request *r, const siginfo_t *si,
                         const ucontext_t *uc, uint64_t period)
{
    struct timespec ts;
    /* An adopted thread's bounds are published once, hi last. */
    uint64_t hi = __atomic_load_n(&t->stack_hi, __ATOMIC_ACQUIRE);
    uint64_t lo = t->stack_lo, bx = 0;
    unsigned stop = RECS_STOP_ROOT;
    uint64_t *frames;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    r->time_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    r->period_ns = period;
    r->flags = t->q.window ? RECS_REQ_WINDOW : 0;
    r->nframes = 0;
    r->nwindow = 0;
    r->npy = 0;
    frames = recs__request_frames(r);
#if defined(__x86_64__)
    r->pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    r->sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
    r->fp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
    r->lr = 0;
    bx = (uint64_t)uc->uc_mcontext.gregs[REG_RBX];
#elif defined(__aarch64__)
    r->pc = uc->uc_mcontext.pc;
    r->sp = uc->uc_mcontext.sp;
    r->fp = uc->uc_mcontext.regs[29];
    r->lr = uc->uc_mcontext.regs[30];
#else
    r->pc = r->sp = r->fp = r->lr = 0;
#endif
    (void)si;
    if (r->pc == 0) {
        r->flags |= RECS_REQ_FAILED;
        return;
    }
    /* On another stack (a goroutine's, a coroutine's, a handler's on its
     * sigaltstack) the bounds recorded at registration do not apply and
     * nothing there is known to be mapped: its frame-pointer chain (Go
     * keeps one in all its code) read through the kernel, each return
     * address in known code; the leaf only, cut short (foreign-read),
     * where the kernel refuses. */
    if (!hi && t->adopted)
        atomic_store_explicit(&t->seen_sp, r->sp, memory_order_relaxed);
    if (!recs__in_stack(r->sp, 8, lo, hi)) {
        unsigned got = 0;
        int n = recs__fp_walk_foreign(r->fp, r->sp, frames, t->q.depth,
                                      &stop, recs__request_window(r),
                                      t->q.window, &got);
        if (n < 0) {
            recs__request_set_stop(r, RECS_STOP_FOREIGN);
            add_python(t, r, 0, 0);
            return;
        }
        r->nwindow = (uint16_t)got;
        r->nframes = (uint16_t)recs__uw_keep_code(recs__uw_current(), frames,
                                                  (unsigned)n);
        if ((unsigned)n > r->nframes)
            stop = RECS_STOP_UNKNOWN_CODE;
        recs__request_set_stop(r, stop);
        /* The window feeds the frame-pointer mode's leaf correction; the
         * CFI mode has no table for such code. */
        if (!recs__g.cfg.fp_walker)
            r->flags |= RECS_REQ_COMPLETE;
        add_python(t, r, 0, 0);
        return;
    }
    if (t->q.window) {
        /* Only the frame-pointer mode's leaf correction reads it. */
        uint64_t avail = (hi - r->sp) / 8;
        unsigned nw = avail < t->q.window ? (unsigned)avail : t->q.window;
        recs__copy_stack(recs__request_window(r), r->sp, nw);
        r->nwindow = (uint16_t)nw;
    }
    /* Frames lie above sp: a tighter lower bound than the stack's. */
    r->nframes = (uint16_t)recs__uw_stack(!recs__g.cfg.fp_walker, r->pc,
                                          r->sp, r->fp, bx, r->sp, hi,
                                          frames, t->q.depth, &stop);
    if (!recs__g.cfg.fp_walker)
        r->flags |= RECS_REQ_COMPLETE;
    recs__request_set_stop(r, stop);
    add_python(t, r, r->sp, hi);
}

/* Signal-safe. */
static void on_signal(int sig, siginfo_t *si, void *ucv)
{
    int saved_errno = errno;
    recs__thread *t;
    uint64_t period, n;
    recs__request *r;

    if (!recs__signal_ours(si)) {
        forward(sig, si, ucv);
        errno = saved_errno;
        return;
    }
    atomic_fetch_add(&recs__g.inflight, 1);
    t = recs__self;
    if (!t && recs__g.attached)
        t = recs__adopted(recs__gettid());
    if (!t) {
        atomic_fetch_add_explicit(&recs__g.lost_nostate, 1, memory_order_relaxed);
        goto out;
    }
    if (!atomic_load(&recs__g.running))
        goto out;   /* not in K either: the stop counts it undelivered */
    recs__signal_rearm(t, si);
    if (t->adopted) {
        struct timespec cpu;
        if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
            atomic_store_explicit(&t->seen_cpu, (uint64_t)cpu.tv_sec * 1000000000u +
                                  (uint64_t)cpu.tv_nsec, memory_order_relaxed);
    }
    if (!(n = recs__signal_periods(t, si)))
        goto out;   /* its periods are in an earlier sample */
    period = atomic_load_explicit(&t->period_ns, memory_order_relaxed) * n;
    /* Every expiry that becomes a sample or a lost count below is in K,
     * so that only the others are counted undelivered (session-thread.c). */
    atomic_fetch_add_explicit(&t->expiries, n, memory_order_relaxed);
    if (!atomic_load(&t->safe)) {
        recs__thread_add_lost(t, RECS_LOST_UNSAFE, 1, period);
        goto out;
    }
    if (!recs__queue_try_enqueue_lock(&t->q)) {
        recs__thread_add_lost(t, RECS_LOST_BUSY, 1, period);
        goto out;
    }
    r = recs__queue_reserve(&t->q);
    if (!r) {
        recs__queue_unlock(&t->q);
        recs__thread_add_lost(t, RECS_LOST_FULL, 1, period);
        goto out;
    }
    /* Taken as a wrapped handler began (hook-sigaction.c): the CPU time is
     * the code's that signal interrupted. */
    fill_request(t, r, si, (const ucontext_t *)(recs__wrap_uc ? recs__wrap_uc
                                                              : ucv), period);
    /* Half full: wake the sampler thread before its timeout (sem_post is
     * async-signal-safe; a futex wake only when it sleeps). Queues are
     * small at large depths (7 requests at 1024 frames). A one-request
     * queue (REC_QUEUE_CAPACITY=1, tests) is left to the timeout. */
    if (recs__queue_commit(&t->q, r) &&
        t->q.size >= 2 * recs__request_size(t->q.depth, t->q.window))
        sem_post(&recs__g.wake);
    /* The first sample after an idle spell: the short cadence starts now
     * rather than at the end of a long nap (one post per idle spell). */
    else if (atomic_load_explicit(&recs__g.idle_nap, memory_order_relaxed) &&
             atomic_exchange(&recs__g.idle_nap, 0))
        sem_post(&recs__g.wake);
    recs__queue_unlock(&t->q);
out:
    atomic_fetch_sub(&recs__g.inflight, 1);
    errno = saved_errno;
}

int recs__install_handler(int signo)
{
    struct sigaction sa, old;

    if (recs__g.signo == signo) {
        struct sigaction cur;
        /* Attached again (session-attach.c): between two sessions the program
         * may have set a handler of its own, behind a library whose
         * interposers it never reached. Ours goes back in front of it. */
        if (!recs__g.attached ||
            recs__real_sigaction(signo, NULL, &cur) != 0 ||
            ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_signal))
            return 0;
        recs__g.signo = 0;
        recs__g.hijacked = false;
        atomic_store(&hijack_warned, 0);
    }
    if (recs__g.signo != 0)
        return REC_EINVAL;   /* one signal per process lifetime */
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    /* SA_ONSTACK: on a thread with a sigaltstack, the interrupted stack
     * may be one the program sized for its own code only (a goroutine's,
     * 8 KiB at first, with no guard page: a handler frame below it
     * overwrites the next goroutine), and the Go runtime requires every
     * handler to run on the signal stack. */
    sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    /* Nothing may interrupt it: a program handler that leaves by
     * siglongjmp or pthread_exit would abandon the queue lock. forward()
     * gives the program's handler the mask it expects. */
    sigfillset(&sa.sa_mask);
    if (recs__real_sigaction(signo, &sa, &old) != 0)
        return REC_EIO;
    if (recs__fatal_is_ours(signo)) {
        recs__fatal_disown(signo);
        memset(&old, 0, sizeof old);     /* ours, not the program's */
        old.sa_handler = SIG_DFL;
    }
    recs__prog_store(&old, NULL, NULL);
    recs__g.signo = signo;
    recs__sigmask_adopt(0);
    return 0;
}

static int fatal_index(int sig)
{
    for (size_t i = 0; i < NFATAL; i++)
        if (fatal_signals[i] == sig)
            return (int)i;
    return -1;
}

bool recs__fatal_is_ours(int sig)
{
    int fi = fatal_index(sig);
    return fi >= 0 && atomic_load(&fatal_ours[fi]);
}

void recs__fatal_disown(int sig)
{
    int fi = fatal_index(sig);
    if (fi >= 0)
        atomic_store(&fatal_ours[fi], 0);
}

/* When sig last came from anyone but rec-start's forwarding, in ns. */
static _Atomic uint64_t arrived_ns[NSIG];
/* A forwarded copy this long after the signal itself is a duplicate: a
 * loaded machine may run rec-start's handler that late. */
#define RECS_COPY_WINDOW_NS 1000000000u

/* Signal-safe. */
bool recs__forwarded_copy(int sig, siginfo_t *si)
{
    uint64_t now, t;

    if (sig <= 0 || sig >= NSIG || !si)
        return false;
    now = recs__now_ns();
    if (si->si_code != SI_QUEUE || si->si_value.sival_int != REC_FORWARD_VALUE ||
        si->si_pid != getppid()) {
        atomic_store(&arrived_ns[sig], now);
        return false;
    }
    t = atomic_load(&arrived_ns[sig]);
    if (t && now - t < RECS_COPY_WINDOW_NS)
        return true;
    /* The program's only copy: as rec-start's kill() would have sent it. */
    si->si_code = SI_USER;
    si->si_value.sival_int = 0;
    return false;
}

/* Signal-safe. */
static void on_fatal(int sig, siginfo_t *si, void *uc)
{
    int saved_errno = errno;

    (void)uc;
    if (recs__forwarded_copy(sig, si))
        return;
    recs__finish_by_sampler();
    reraise_default(sig);
    errno = saved_errno;
}

void recs__install_fatal_handlers(void)
{
    for (size_t i = 0; i < NFATAL; i++) {
        struct sigaction sa, old;
        if (atomic_load(&fatal_ours[i]) ||
            recs__real_sigaction(fatal_signals[i], NULL, &old) != 0 ||
            (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_fatal;
        sa.sa_flags = SA_RESTART | SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        if (recs__real_sigaction(fatal_signals[i], &sa, NULL) == 0)
            atomic_store(&fatal_ours[i], 1);
    }
}

/* The safety net, from the sampler thread: is our handler still the one
 * installed? Something that bypassed every interposed entry (a raw
 * rt_sigaction system call, a static helper) may have replaced it; then
 * the timers are stopped before a timer signal reaches a handler that
 * never asked for it or, worse, the default action. Returns true if it
 * has been replaced (warned once). */
bool recs__handler_replaced(void)
{
    struct sigaction cur;

    if (recs__g.signo <= 0 || recs__real_sigaction(recs__g.signo, NULL, &cur) != 0)
        return false;
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_signal)
        return false;
    if (!atomic_exchange(&hijack_warned, 1))
        recs__warn("rec's handler for signal %d (%s) was replaced behind "
                   "its back; sampling stops, the rest of the CPU time is "
                   "reported lost", recs__g.signo, strsignal(recs__g.signo));
    return true;
}
