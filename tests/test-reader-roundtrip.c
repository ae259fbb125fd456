/*
 * tests/test-reader-roundtrip.c - every event and pool type of
 * schemas/events.json written with the generated rec_emit_* / rec_intern_*
 * through the real writer, read back and compared field by field (nulls,
 * arrays, empty and UTF-8 strings, extreme integers, tick deltas of both
 * signs), across a rotation that makes the writer emit its pools again, with
 * and without compression.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rec/record.h"
#include "tap.h"

#define TICK_NS 1000u

static char why[512];
#define REQ(c, ...) do { if (!(c)) { snprintf(why, sizeof why, __VA_ARGS__); return false; } } while (0)

/* ---- what was written ---- */

enum { NSTR = 8, NTHR = 2, NMOD = 2, NFRM = 3, NSTK = 3 };
static struct { rec_id id; const char *s; } strs[NSTR];
static struct { rec_id id; struct rec_Thread v; } thrs[NTHR];
static struct { rec_id id; struct rec_Module v; } mods[NMOD];
static struct { rec_id id; struct rec_Frame v; } frms[NFRM];
static struct { rec_id id; struct rec_StackTrace v; } stks[NSTK];
static rec_id stack3_frames[200];

typedef struct expect {
    uint32_t type;
    union {
        struct rec_CPUTimeSample cs;
        struct rec_CPUTimeSampleLost cl;
        struct rec_ThreadStart ts;
        struct rec_ThreadEnd te;
        struct rec_RecordingSettings rs;
        struct rec_ProcessInfo pi;
        struct rec_CPUInfo ci;
        struct rec_ModuleLoad ml;
        struct rec_ProcessUsage pu;
        struct rec_JitCodeName jn;
    } u;
    uint64_t t;     /* startTime in ns */
} expect;

static expect exp_ev[64];
static size_t nexp;

/* ---- reading helpers ---- */

static rec_value bad_value(void)
{
    rec_value v;
    memset(&v, 0, sizeof v);
    v.kind = (enum rec_kind)99;
    return v;
}

static rec_value fev(const rec_event *ev, const char *name)
{
    rec_value v;
    long i = rec_type_field_index(rec_event_type(ev), name);
    if (i < 0 || rec_event_get(ev, (size_t)i, &v) < 0)
        return bad_value();
    return v;
}

static rec_value fen(const rec_entry *e, const char *name)
{
    rec_value v;
    long i = rec_type_field_index(rec_entry_type(e), name);
    if (i < 0 || rec_entry_get(e, (size_t)i, &v) < 0)
        return bad_value();
    return v;
}

static bool chk_uint(rec_value v, uint64_t u, const char *what)
{
    REQ(v.kind == REC_UINT && v.v.u == u, "%s: want uint %llu, kind %d value %llu", what,
        (unsigned long long)u, v.kind, (unsigned long long)v.v.u);
    return true;
}

static bool chk_nuint(rec_value v, uint64_t u, const char *what)
{
    if (u == 0) {
        REQ(v.kind == REC_NULL, "%s: want null, kind %d", what, v.kind);
        return true;
    }
    return chk_uint(v, u, what);
}

static bool chk_bool(rec_value v, bool b, const char *what)
{
    REQ(v.kind == REC_BOOL && v.v.b == b, "%s: want %d", what, b);
    return true;
}

static bool chk_ticks(rec_value v, uint64_t ns, const char *what)
{
    return chk_uint(v, ns / TICK_NS, what);
}

static const rec_entry *chk_ref(rec_value v, rec_id id, const char *type, const char *what)
{
    if (v.kind != REC_REF || v.v.ref.id != id || !v.v.ref.entry ||
        rec_entry_id(v.v.ref.entry) != id ||
        strcmp(rec_type_name(rec_entry_type(v.v.ref.entry)), type) != 0) {
        snprintf(why, sizeof why, "%s: want %s %u, kind %d id %u entry %p", what, type,
                 id, v.kind, v.v.ref.id, (void *)v.v.ref.entry);
        return NULL;
    }
    return v.v.ref.entry;
}

static bool chk_str(rec_value v, rec_id id, const char *what)
{
    if (id == 0) {
        REQ(v.kind == REC_NULL, "%s: want null string, kind %d", what, v.kind);
        return true;
    }
    const rec_entry *e = chk_ref(v, id, "String", what);
    if (!e)
        return false;
    const char *s = NULL;
    for (int i = 0; i < NSTR; i++)
        if (strs[i].id == id)
            s = strs[i].s;
    rec_value x = fen(e, "value");
    REQ(s && x.kind == REC_STRING && x.v.str.len == strlen(s) &&
        memcmp(x.v.str.s, s, x.v.str.len) == 0, "%s: string %u differs", what, id);
    return true;
}

static bool chk_thread(rec_value v, rec_id id, const char *what)
{
    if (id == 0) {
        REQ(v.kind == REC_NULL, "%s: want null thread", what);
        return true;
    }
    const rec_entry *e = chk_ref(v, id, "Thread", what);
    const struct rec_Thread *t = NULL;
    for (int i = 0; i < NTHR; i++)
        if (thrs[i].id == id)
            t = &thrs[i].v;
    return e && t && chk_uint(fen(e, "osThreadId"), t->osThreadId, "Thread.osThreadId") &&
           chk_str(fen(e, "name"), t->name, "Thread.name") &&
           chk_uint(fen(e, "processId"), t->processId, "Thread.processId");
}

static bool chk_module(rec_value v, rec_id id, const char *what)
{
    const rec_entry *e = chk_ref(v, id, "Module", what);
    const struct rec_Module *m = NULL;
    for (int i = 0; i < NMOD; i++)
        if (mods[i].id == id)
            m = &mods[i].v;
    return e && m && chk_str(fen(e, "path"), m->path, "Module.path") &&
           chk_str(fen(e, "buildId"), m->buildId, "Module.buildId") &&
           chk_uint(fen(e, "baseAddress"), m->baseAddress, "Module.baseAddress") &&
           chk_uint(fen(e, "size"), m->size, "Module.size");
}

static bool chk_frame(rec_value v, rec_id id, const char *what)
{
    const rec_entry *e = chk_ref(v, id, "Frame", what);
    const struct rec_Frame *f = NULL;
    for (int i = 0; i < NFRM; i++)
        if (frms[i].id == id)
            f = &frms[i].v;
    return e && f && chk_str(fen(e, "function"), f->function, "Frame.function") &&
           chk_str(fen(e, "module"), f->module, "Frame.module") &&
           chk_uint(fen(e, "offset"), f->offset, "Frame.offset") &&
           chk_str(fen(e, "file"), f->file, "Frame.file") &&
           chk_nuint(fen(e, "line"), f->line, "Frame.line") &&
           chk_bool(fen(e, "inlined"), f->inlined, "Frame.inlined");
}

static bool chk_stack(rec_value v, rec_id id, const char *what)
{
    if (id == 0) {
        REQ(v.kind == REC_NULL, "%s: want null stack", what);
        return true;
    }
    const rec_entry *e = chk_ref(v, id, "StackTrace", what);
    const struct rec_StackTrace *s = NULL;
    for (int i = 0; i < NSTK; i++)
        if (stks[i].id == id)
            s = &stks[i].v;
    if (!e || !s || !chk_bool(fen(e, "truncated"), s->truncated, "StackTrace.truncated"))
        return false;
    rec_value a = fen(e, "frames");
    REQ(a.kind == REC_ARRAY && a.v.array.n == s->frames_count,
        "StackTrace.frames: kind %d n %zu, want %zu", a.kind, a.v.array.n, s->frames_count);
    for (size_t i = 0; i < a.v.array.n; i++)
        if (!chk_frame(a.v.array.items[i], s->frames[i], "StackTrace.frames[]"))
            return false;
    return true;
}

static bool chk_event(const rec_event *ev, const expect *x)
{
    const rec_type *t = rec_event_type(ev);
    REQ(rec_type_id(t) == x->type, "type %u, want %u", rec_type_id(t), x->type);
    REQ(rec_event_bytes(ev) > 2, "size %zu", rec_event_bytes(ev));
    if (!chk_ticks(fev(ev, "startTime"), x->t, "startTime"))
        return false;
    switch (x->type) {
    case REC_TYPE_CPUTimeSample: {
        const struct rec_CPUTimeSample *e = &x->u.cs;
        return chk_thread(fev(ev, "eventThread"), e->eventThread, "eventThread") &&
               chk_uint(fev(ev, "samplingPeriod"), e->samplingPeriod, "samplingPeriod") &&
               chk_bool(fev(ev, "failed"), e->failed, "failed") &&
               chk_bool(fev(ev, "biased"), e->biased, "biased") &&
               chk_stack(fev(ev, "stackTrace"), e->stackTrace, "stackTrace");
    }
    case REC_TYPE_CPUTimeSampleLost: {
        const struct rec_CPUTimeSampleLost *e = &x->u.cl;
        return chk_thread(fev(ev, "eventThread"), e->eventThread, "eventThread") &&
               chk_uint(fev(ev, "lostSamples"), e->lostSamples, "lostSamples") &&
               chk_uint(fev(ev, "lostTime"), e->lostTime, "lostTime") &&
               chk_str(fev(ev, "reason"), e->reason, "reason");
    }
    case REC_TYPE_ThreadStart: {
        const struct rec_ThreadStart *e = &x->u.ts;
        return chk_thread(fev(ev, "eventThread"), e->eventThread, "eventThread") &&
               chk_thread(fev(ev, "parentThread"), e->parentThread, "parentThread") &&
               chk_uint(fev(ev, "cpuTime"), e->cpuTime, "cpuTime");
    }
    case REC_TYPE_ThreadEnd: {
        const struct rec_ThreadEnd *e = &x->u.te;
        return chk_thread(fev(ev, "eventThread"), e->eventThread, "eventThread") &&
               chk_uint(fev(ev, "cpuTime"), e->cpuTime, "cpuTime") &&
               chk_bool(fev(ev, "snapshot"), e->snapshot, "snapshot");
    }
    case REC_TYPE_RecordingSettings: {
        const struct rec_RecordingSettings *e = &x->u.rs;
        return chk_str(fev(ev, "throttle"), e->throttle, "throttle") &&
               chk_uint(fev(ev, "samplingPeriod"), e->samplingPeriod, "samplingPeriod") &&
               chk_uint(fev(ev, "signal"), e->signal, "signal") &&
               chk_str(fev(ev, "unwinder"), e->unwinder, "unwinder") &&
               chk_uint(fev(ev, "stackDepth"), e->stackDepth, "stackDepth") &&
               chk_uint(fev(ev, "queueCapacity"), e->queueCapacity, "queueCapacity");
    }
    case REC_TYPE_ProcessInfo: {
        const struct rec_ProcessInfo *e = &x->u.pi;
        return chk_uint(fev(ev, "processId"), e->processId, "processId") &&
               chk_uint(fev(ev, "parentProcessId"), e->parentProcessId, "parentProcessId") &&
               chk_str(fev(ev, "executable"), e->executable, "executable") &&
               chk_str(fev(ev, "commandLine"), e->commandLine, "commandLine") &&
               chk_str(fev(ev, "hostName"), e->hostName, "hostName");
    }
    case REC_TYPE_CPUInfo: {
        const struct rec_CPUInfo *e = &x->u.ci;
        return chk_uint(fev(ev, "onlineCpus"), e->onlineCpus, "onlineCpus") &&
               chk_uint(fev(ev, "availableCpus"), e->availableCpus, "availableCpus") &&
               chk_uint(fev(ev, "clockTickHz"), e->clockTickHz, "clockTickHz") &&
               chk_str(fev(ev, "model"), e->model, "model");
    }
    case REC_TYPE_ModuleLoad:
        return chk_module(fev(ev, "module"), x->u.ml.module, "module");
    case REC_TYPE_ProcessUsage: {
        const struct rec_ProcessUsage *e = &x->u.pu;
        return chk_uint(fev(ev, "userTime"), e->userTime, "userTime") &&
               chk_uint(fev(ev, "systemTime"), e->systemTime, "systemTime") &&
               chk_uint(fev(ev, "maxRss"), e->maxRss, "maxRss") &&
               chk_uint(fev(ev, "voluntarySwitches"), e->voluntarySwitches, "voluntary") &&
               chk_uint(fev(ev, "involuntarySwitches"), e->involuntarySwitches, "involuntary");
    }
    case REC_TYPE_JitCodeName: {
        const struct rec_JitCodeName *e = &x->u.jn;
        return chk_uint(fev(ev, "address"), e->address, "address") &&
               chk_uint(fev(ev, "size"), e->size, "size") &&
               chk_str(fev(ev, "name"), e->name, "name");
    }
    }
    REQ(false, "unexpected type %u", x->type);
}

/* ---- writing ---- */

static int intern_all(rec_writer *w)
{
    static char longs[3001];
    memset(longs, 'x', 3000);
    longs[0] = '/';
    const char *texts[NSTR] = {
        "main", "w\xc3\xb6rker \xe2\x9c\x93 \xe6\x97\xa5\xe6\x9c\xac", "", longs,
        "tab\there \"quoted\" back\\slash\nnewline", "/usr/lib/libc.so.6", "queue-full",
        "compute_things",
    };
    int rc = 0;
    for (int i = 0; i < NSTR; i++) {
        strs[i].s = texts[i];
        struct rec_String s = { texts[i] };
        rc |= rec_intern_String(w, &s, &strs[i].id);
    }
    thrs[0].v = (struct rec_Thread){ 4242, strs[0].id, 4240 };
    thrs[1].v = (struct rec_Thread){ UINT64_MAX, 0, 0 };
    for (int i = 0; i < NTHR; i++)
        rc |= rec_intern_Thread(w, &thrs[i].v, &thrs[i].id);
    mods[0].v = (struct rec_Module){ strs[5].id, strs[1].id, UINT64_MAX, 1u << 20 };
    mods[1].v = (struct rec_Module){ strs[3].id, 0, 0, 0 };
    for (int i = 0; i < NMOD; i++)
        rc |= rec_intern_Module(w, &mods[i].v, &mods[i].id);
    frms[0].v = (struct rec_Frame){ strs[7].id, strs[5].id, 0x1234, strs[3].id, 42, false };
    frms[1].v = (struct rec_Frame){ 0, 0, UINT64_MAX, 0, 0, true };
    frms[2].v = (struct rec_Frame){ strs[1].id, strs[5].id, 0, strs[4].id, 1, false };
    for (int i = 0; i < NFRM; i++)
        rc |= rec_intern_Frame(w, &frms[i].v, &frms[i].id);
    static rec_id f3[3];
    for (int i = 0; i < 3; i++)
        f3[i] = frms[i].id;
    for (int i = 0; i < 200; i++)
        stack3_frames[i] = frms[i % 3].id;
    stks[0].v = (struct rec_StackTrace){ false, f3, 3 };
    stks[1].v = (struct rec_StackTrace){ true, NULL, 0 };
    stks[2].v = (struct rec_StackTrace){ true, stack3_frames, 200 };
    for (int i = 0; i < NSTK; i++)
        rc |= rec_intern_StackTrace(w, &stks[i].v, &stks[i].id);
    return rc;
}

/* Emit every event type once (some twice); times step back now and then. */
static int emit_all(rec_stream *s, uint64_t base)
{
    int rc = 0;
    uint64_t step[] = { 5000, 1000, 9000, 9000, 2000, 30000, 12000, 1000000, 11000, 400,
                        13000, 8000, 15000, 14000, 20000, 16000 };
    size_t k = 0;
#define EMIT(TYPE, member, ...) do { \
        expect *x = &exp_ev[nexp++]; \
        x->type = REC_TYPE_##TYPE; \
        x->t = base + step[k++ % 16] * TICK_NS; \
        x->u.member = (struct rec_##TYPE){ __VA_ARGS__ }; \
        x->u.member.startTime = x->t; \
        rc |= rec_emit_##TYPE(s, &x->u.member); \
    } while (0)
    EMIT(ProcessInfo, pi, 1234, 1, strs[5].id, strs[3].id, 0, 0);
    EMIT(CPUInfo, ci, 8, 4, 250, strs[1].id, 0);
    EMIT(RecordingSettings, rs, strs[2].id, 1000000, 27, strs[4].id, 64, 0, 0);
    EMIT(ThreadStart, ts, thrs[0].id, 0, 0, 0);
    EMIT(ThreadStart, ts, thrs[1].id, thrs[0].id, UINT64_MAX, 0);
    EMIT(ModuleLoad, ml, mods[0].id, 0);
    EMIT(ModuleLoad, ml, mods[1].id, 0);
    EMIT(CPUTimeSample, cs, thrs[0].id, 4000000, false, true, stks[0].id, 0);
    EMIT(CPUTimeSample, cs, thrs[1].id, 1, true, false, 0, 0);
    EMIT(CPUTimeSample, cs, thrs[0].id, UINT64_MAX, false, false, stks[1].id, 0);
    EMIT(CPUTimeSample, cs, thrs[1].id, 0, false, false, stks[2].id, 0);
    EMIT(CPUTimeSampleLost, cl, thrs[1].id, 5, 5000000, strs[6].id, 0);
    EMIT(CPUTimeSampleLost, cl, thrs[0].id, 0, 0, 0, 0);
    EMIT(ThreadEnd, te, thrs[0].id, 123456789, true, 0);
    EMIT(ThreadEnd, te, thrs[1].id, 0, false, 0);
    EMIT(ProcessUsage, pu, 1, 2, 3, UINT64_MAX, 0, 0);
    EMIT(JitCodeName, jn, UINT64_MAX - 4096, 4096, strs[7].id, 0);
#undef EMIT
    return rc;
}

static void roundtrip(bool compress)
{
    char path[256];
    const char *mode = compress ? "lz4" : "stored";
    snprintf(path, sizeof path, "test-reader-roundtrip.%d.rec", (int)getpid());
    rec_writer_options opt;
    rec_writer_options_init(&opt);
    opt.overwrite = true;
    opt.no_compress = !compress;
    rec_writer *w;
    rec_stream *s;
    nexp = 0;
    if (!tap_ok(rec_writer_open(&w, path, &opt) == 0, "%s: writer open", mode))
        return;
    uint64_t base = rec_now_ns();
    int rc = rec_stream_open(w, &s);
    rc |= intern_all(w);
    rc |= emit_all(s, base);
    rc |= rec_writer_flush(w);
    rc |= rec_writer_rotate(w);
    /* second chunk: same ids, pools emitted again; times before the chunk */
    rc |= emit_all(s, base - 2000000000ull);
    rc |= rec_stream_close(s);
    rc |= rec_writer_close(w);
    tap_ok(rc == 0, "%s: wrote %zu events", mode, nexp);

    rec_reader *r;
    const rec_event *ev;
    rec_chunk_info ci;
    size_t n = 0, bad = 0, chunk1_from = 0;
    uint32_t seen[64] = { 0 };
    if (!tap_ok(rec_reader_open(&r, path, REC_READ_STRICT) == 0, "%s: reader open", mode))
        return;
    *why = 0;
    while ((rc = rec_reader_next(r, &ev)) == 1) {
        if (n < nexp && !chk_event(ev, &exp_ev[n]) && !bad++)
            tap_diag("%s: event %zu: %s", mode, n, why);
        if (rec_type_id(rec_event_type(ev)) < 64)
            seen[rec_type_id(rec_event_type(ev))]++;
        rec_reader_chunk(r, &ci);
        if (ci.index == 1 && !chunk1_from)
            chunk1_from = n;
        n++;
    }
    tap_ok(rc == 0 && n == nexp, "%s: read %zu of %zu events, rc %d %s", mode, n, nexp, rc,
           rec_reader_message(r) ? rec_reader_message(r) : "");
    tap_ok(bad == 0, "%s: every field of every event matches (%zu bad)", mode, bad);
    tap_ok(chunk1_from == nexp / 2 && ci.index == 1 && ci.last && ci.finished,
           "%s: second half in chunk 1 (from event %zu)", mode, chunk1_from);
    tap_ok(!rec_reader_warning(r), "%s: no warning %s", mode,
           rec_reader_warning(r) ? rec_reader_warning(r) : "");

    /* every type of the schema is covered */
    size_t missing = 0, pools = 0;
    for (size_t i = 0; i < rec_reader_ntypes(r); i++) {
        const rec_type *t = rec_reader_type(r, i);
        if (!rec_type_is_event(t)) {
            pools++;
            continue;
        }
        if (rec_type_id(t) >= 64 || !seen[rec_type_id(t)]) {
            tap_diag("event type %s not covered by this test", rec_type_name(t));
            missing++;
        }
    }
    tap_ok(missing == 0 && pools == 5 && rec_reader_ntypes(r) == 15,
           "%s: all %zu types of the schema round-tripped", mode, rec_reader_ntypes(r));
    rec_reader_close(r);
    unlink(path);
}

int main(void)
{
    roundtrip(true);
    roundtrip(false);
    return tap_done();
}
