/*
 * libsampler/engine-timer.c - the CPU-time timer engine: one POSIX timer
 * per thread on the thread's CPU clock, its signal sent to that thread
 * (SIGEV_THREAD_ID) with our cookie in si_value. Also the fallback of a
 * thread whose perf event cannot be created. reg_lock held throughout.
 */
#include <config.h>

#include "internal.h"

#include <string.h>

static int timer_create_op(recs__thread *t, uint64_t period_ns)
{
    struct sigevent sev;

    (void)period_ns;                 /* set by settime */
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = recs__g.signo;
    sev._sigev_un._tid = t->tid;
    sev.sigev_value.sival_ptr = &recs__timer_cookie;
    if (timer_create(t->cpuclock, &sev, &t->timer) != 0)
        return REC_EIO;
    t->engine = RECS_ENGINE_TIMER;
    t->has_timer = true;
    return 0;
}

/* Arm t's timer: every period_ns, the first expiry after first_ns. */
static int timer_settime_op(recs__thread *t, uint64_t period_ns, uint64_t first_ns)
{
    struct itimerspec its;

    its.it_interval.tv_sec = (time_t)(period_ns / 1000000000u);
    its.it_interval.tv_nsec = (long)(period_ns % 1000000000u);
    its.it_value.tv_sec = (time_t)(first_ns / 1000000000u);
    its.it_value.tv_nsec = (long)(first_ns % 1000000000u);
    return timer_settime(t->timer, 0, &its, NULL) == 0 ? 0 : REC_EIO;
}

static int timer_pause(recs__thread *t)
{
    return timer_settime_op(t, 0, 0);
}

static void timer_delete_op(recs__thread *t)
{
    timer_delete(t->timer);
}

/* Signal-safe. One signal for 1 + its overruns. */
static uint64_t timer_periods(recs__thread *t, const siginfo_t *si)
{
    (void)t;
    return (uint64_t)(si->si_overrun > 0 ? si->si_overrun : 0) + 1;
}

/* Signal-safe. A periodic timer needs nothing. */
static void timer_rearm(recs__thread *t, const siginfo_t *si)
{
    (void)t;
    (void)si;
}

const recs__engine_ops recs__timer_ops = {
    .engine = RECS_ENGINE_TIMER,
    .name = "cpu-timer",
    .create = timer_create_op,
    .settime = timer_settime_op,
    .pause = timer_pause,
    .destroy = timer_delete_op,
    .periods = timer_periods,
    .rearm = timer_rearm,
};
