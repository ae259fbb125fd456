/*
 * libsampler/engine.c - per-thread dispatch to the session's engine (see
 * engine.h), and the fallback of a thread whose perf event cannot be
 * created to a timer of its own.
 */
#include <config.h>

#include "internal.h"

#include <errno.h>
#include <string.h>

static _Atomic int fallback_warned;

int recs__engine_parse(const char *s, int *engine)
{
    if (!s || !strcmp(s, "auto"))
        *engine = RECS_ENGINE_AUTO;
    else if (!strcmp(s, "perf"))
        *engine = RECS_ENGINE_PERF;
    else if (!strcmp(s, "timer"))
        *engine = RECS_ENGINE_TIMER;
    else
        return REC_EINVAL;
    return 0;
}

const char *recs__engine_name(int engine)
{
    return recs__engine_ops_of(engine)->name;
}

int recs__engine_create(recs__thread *t, uint64_t period_ns, bool *fallback)
{
    *fallback = false;
    t->perf_fd = -1;
    if (recs__g.engine == RECS_ENGINE_PERF) {
        if (recs__perf_ops.create(t, period_ns) == 0)
            return 0;
        int err = errno;
        if (atomic_fetch_add(&fallback_warned, 1) == 0)
            recs__warn("cannot create a perf_event for thread %d (%s); that "
                       "thread is sampled with a CPU-time timer",
                       (int)t->tid, strerror(err));
        *fallback = true;
    }
    return recs__timer_ops.create(t, period_ns);
}

int recs__engine_settime(recs__thread *t, uint64_t period_ns, uint64_t first_ns)
{
    return recs__engine_ops_of(t->engine)->settime(t, period_ns, first_ns);
}

int recs__engine_pause(recs__thread *t)
{
    return recs__engine_ops_of(t->engine)->pause(t);
}

void recs__engine_destroy(recs__thread *t)
{
    recs__engine_ops_of(t->engine)->destroy(t);
}
