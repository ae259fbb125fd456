/* tests/test-abi.c - the ABI of the two libraries' caller-allocated structs.
 *
 * The layouts are pinned (LP64): a change to one is an ABI change, made on
 * purpose with the pins, the soname and librecord(3) updated together.
 * Then callers of other versions: an older caller's smaller struct (a
 * local copy without the members appended since, allocated at exactly its
 * size so that AddressSanitizer, in a --enable-sanitizers build, reports
 * any byte read or written past it) and a newer caller's larger one. */
#include <config.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rec/record.h>
#include <rec/sampler.h>
#include "tap.h"

#define END(type, m) (offsetof(type, m) + sizeof(((type *)0)->m))

/* A struct's pins: its size, its first member at 0, where its last one
 * ends (an appended member moves that). */
#define PIN(type, first, last, size_, end_) \
    tap_ok(sizeof(type) == (size_) && offsetof(type, first) == 0 && \
           END(type, last) == (end_), \
           #type ": %zu bytes (pinned %u), " #first " at %zu, " #last \
           " ends at %zu (pinned %u)", sizeof(type), (unsigned)(size_), \
           offsetof(type, first), END(type, last), (unsigned)(end_))

static void pins(void)
{
    PIN(rec_writer_options, size, no_compress, 40, 35);
    PIN(rec_follow_options, size, from_end, 40, 33);
    PIN(rec_seal_info, size, was_open, 32, 25);
    PIN(rec_relay_options, size, offset, 24, 24);
    PIN(rec_chunk_info, struct_size, ticks_per_second, 64, 64);
    PIN(recs_options, size, engine, 80, 80);
    PIN(recs_stats, size, period_ns, 56, 56);
    /* Arrays of it cross the API: fixed for the soname. */
    PIN(rec_value, kind, v, 24, 24);
    /* Generated from the schema; an optional field appended moves the
     * end, and starts on 8 bytes past the struct before it. */
    PIN(struct rec_String, value, value, 8, 8);
    PIN(struct rec_Thread, osThreadId, processId, 24, 24);
    PIN(struct rec_Module, path, size, 24, 24);
    PIN(struct rec_Frame, function, kind, 48, 44);
    PIN(struct rec_StackTrace, truncated, truncationReason, 32, 28);
    PIN(struct rec_CPUTimeSample, eventThread, startTime, 32, 32);
    PIN(struct rec_CPUTimeSampleLost, eventThread, startTime, 40, 40);
    PIN(struct rec_ThreadStart, eventThread, engine, 32, 28);
    PIN(struct rec_ThreadEnd, eventThread, startTime, 32, 32);
    PIN(struct rec_RecordingSettings, throttle, engineNote, 72, 68);
    PIN(struct rec_ProcessInfo, processId, startTime, 40, 40);
    PIN(struct rec_CPUInfo, onlineCpus, startTime, 40, 40);
    PIN(struct rec_ModuleLoad, module, restated, 24, 17);
    PIN(struct rec_ProcessUsage, userTime, earlyStacks, 64, 64);
    PIN(struct rec_JitCodeName, address, startTime, 32, 32);
}

/* The structs as a caller built before their optional fields saw them. */
struct old_Frame {
    rec_id function, module;
    uint64_t offset;
    rec_id file;
    uint64_t line;
    bool inlined;
};
struct old_StackTrace {
    bool truncated;
    const rec_id *frames;
    size_t frames_count;
};
struct old_ThreadStart {
    rec_id eventThread, parentThread;
    uint64_t cpuTime, startTime;
};
struct old_ProcessUsage {
    uint64_t userTime, systemTime, maxRss, voluntarySwitches,
             involuntarySwitches, startTime;
};

/* A copy of n bytes in a block of exactly n bytes. */
static void *exact(const void *p, size_t n)
{
    void *q = malloc(n);
    if (!q)
        abort();
    memcpy(q, p, n);
    return q;
}

static char path[256];

static int write_old_callers(void)
{
    rec_writer *w;
    rec_stream *s;
    rec_id th, fn, fr, st;
    int rc = 0;

    /* Options of the first version's size, without tail padding; the
     * test reads and writes them through a full copy (in bounds). */
    size_t n = END(rec_writer_options, no_compress);
    void *wo = malloc(n);
    rec_writer_options o;
    if (!wo)
        abort();
    memset(&o, 0, sizeof o);
    rc = rec_writer_options_init_sized(wo, n);
    memcpy(&o, wo, n);
    tap_ok(rc == 0 && o.size == n && o.tick_ns == 1000,
           "writer options of the first version's size: defaults, its size");
    o.overwrite = true;
    memcpy(wo, &o, n);
    rc = rec_writer_open(&w, path, wo);
    free(wo);
    if (!tap_ok(rc == 0, "a writer opened with them (%s)", rec_strerror(rc)))
        return -1;
    rec_stream_open(w, &s);
    struct rec_Thread t = { .osThreadId = 7, .processId = 7 };
    rc |= rec_intern_Thread(w, &t, &th) | rec_intern_cstr(w, "f", &fn);

    struct old_Frame of = { .function = fn, .offset = 16, .line = 3 };
    void *p = exact(&of, sizeof of);
    rc |= rec_intern_Frame_sized(w, p, &fr, sizeof of);
    free(p);
    struct old_StackTrace os = { .frames = &fr, .frames_count = 1 };
    p = exact(&os, sizeof os);
    rc |= rec_intern_StackTrace_sized(w, p, &st, sizeof os);
    free(p);
    struct rec_CPUTimeSample cs = { .eventThread = th, .samplingPeriod = 1000,
                                    .stackTrace = st };
    rc |= rec_emit_CPUTimeSample(s, &cs);

    struct old_ThreadStart ot = { .eventThread = th, .cpuTime = 5 };
    p = exact(&ot, sizeof ot);
    rc |= rec_emit_ThreadStart_sized(s, p, sizeof ot);
    free(p);
    struct old_ProcessUsage ou = { .userTime = 11, .maxRss = 4096 };
    p = exact(&ou, sizeof ou);
    rc |= rec_emit_ProcessUsage_sized(s, p, sizeof ou);
    free(p);
    tap_ok(rc == 0, "older callers' frame, stack, ThreadStart and ProcessUsage "
           "interned and emitted (%d)", rc);

    /* Short of a field that is not optional: refused. */
    p = exact(&ot, offsetof(struct old_ThreadStart, startTime));
    tap_ok(rec_emit_ThreadStart_sized(s, p, offsetof(struct old_ThreadStart, startTime))
           == REC_EINVAL, "a ThreadStart without its startTime: REC_EINVAL");
    free(p);
    tap_ok(rec_emit_ThreadStart_sized(s, &(struct rec_ThreadStart){ .eventThread = th }, 0)
           == REC_EINVAL, "size 0: REC_EINVAL");

    /* A newer caller's: accepted while what this library does not know is
     * zero, refused once it is set. */
    struct { struct rec_ThreadStart e; uint64_t newer; } nt;
    memset(&nt, 0, sizeof nt);
    nt.e.eventThread = th;
    nt.e.cpuTime = 6;
    rc = rec_emit_ThreadStart_sized(s, &nt.e, sizeof nt);
    nt.newer = 1;
    tap_ok(rc == 0 && rec_emit_ThreadStart_sized(s, &nt.e, sizeof nt) == REC_ETOOBIG,
           "a newer caller's ThreadStart: taken with its unknown member zero, "
           "REC_ETOOBIG with it set");

    rec_stream_close(s);
    return rec_writer_close(w);
}

static long field(const rec_type *t, const char *name)
{
    return rec_type_field_index(t, name);
}

/* Read back: what the older callers' structs lacked is null (0 for a
 * plain count). */
static void read_old_callers(void)
{
    rec_reader *r;
    const rec_event *ev;
    rec_value v, fv;
    int starts = 0, starts_null = 0, usage_ok = 0, stack_ok = 0;

    if (rec_reader_open(&r, path, REC_READ_STRICT) != 0) {
        tap_ok(0, "reopen %s", path);
        return;
    }
    while (rec_reader_next(r, &ev) == 1) {
        const rec_type *t = rec_event_type(ev);
        const char *name = rec_type_name(t);
        if (!strcmp(name, "ThreadStart")) {
            starts++;
            if (rec_event_get(ev, (size_t)field(t, "engine"), &v) == 0 &&
                v.kind == REC_NULL)
                starts_null++;
        } else if (!strcmp(name, "ProcessUsage")) {
            rec_value a, b, c;
            usage_ok = rec_event_get(ev, (size_t)field(t, "samplerCpuTime"), &a) == 0 &&
                       rec_event_get(ev, (size_t)field(t, "earlyStacks"), &b) == 0 &&
                       rec_event_get(ev, (size_t)field(t, "maxRss"), &c) == 0 &&
                       a.kind == REC_NULL && b.kind == REC_UINT && b.v.u == 0 &&
                       c.kind == REC_UINT && c.v.u == 4096;
        } else if (!strcmp(name, "CPUTimeSample")) {
            if (rec_event_get(ev, (size_t)field(t, "stackTrace"), &v) != 0 ||
                v.kind != REC_REF || !v.v.ref.entry)
                continue;
            const rec_entry *se = v.v.ref.entry;
            const rec_type *stt = rec_entry_type(se);
            rec_value reason, frames;
            if (rec_entry_get(se, (size_t)field(stt, "truncationReason"), &reason) ||
                rec_entry_get(se, (size_t)field(stt, "frames"), &frames) ||
                frames.kind != REC_ARRAY || frames.v.array.n != 1 ||
                !frames.v.array.items[0].v.ref.entry)
                continue;
            const rec_entry *fe = frames.v.array.items[0].v.ref.entry;
            const rec_type *ft = rec_entry_type(fe);
            stack_ok = reason.kind == REC_NULL &&
                       rec_entry_get(fe, (size_t)field(ft, "kind"), &fv) == 0 &&
                       fv.kind == REC_NULL &&
                       rec_entry_get(fe, (size_t)field(ft, "line"), &v) == 0 &&
                       v.kind == REC_UINT && v.v.u == 3;
        }
    }
    tap_ok(starts == 2 && starts_null == 2,
           "read back: both ThreadStarts without an engine (null) (%d of %d)",
           starts_null, starts);
    tap_ok(usage_ok, "read back: the older ProcessUsage's samplerCpuTime null, "
           "earlyStacks 0, its own fields kept");
    tap_ok(stack_ok, "read back: the older stack's truncationReason and its "
           "frame's kind null, the frame's own fields kept");

    /* Chunk info: the first version at exactly its size, a smaller one
     * refused, a newer caller's unknown tail zeroed. */
    rec_chunk_info *ci = malloc(END(rec_chunk_info, ticks_per_second));
    if (!ci)
        abort();
    int rc = rec_reader_chunk_sized(r, ci, END(rec_chunk_info, ticks_per_second));
    tap_ok(rc == 0 && ci->struct_size == END(rec_chunk_info, ticks_per_second) &&
           ci->ticks_per_second > 0, "chunk info of the first version's size filled");
    tap_ok(rec_reader_chunk_sized(r, ci, offsetof(rec_chunk_info, ticks_per_second))
           == REC_EINVAL, "chunk info smaller than the first version: REC_EINVAL");
    free(ci);
    struct { rec_chunk_info info; uint64_t newer; } nc;
    memset(&nc, 0xff, sizeof nc);
    rc = rec_reader_chunk_sized(r, &nc.info, sizeof nc);
    tap_ok(rc == 0 && nc.info.struct_size == sizeof nc.info && nc.newer == 0,
           "a newer caller's chunk info: filled, the member this library does "
           "not know zeroed, struct_size what was filled");
    rec_reader_close(r);
}

static void options(void)
{
    rec_writer *w;
    rec_follow *f;
    rec_writer_options wo;

    rec_writer_options_init(&wo);
    tap_ok(wo.size == sizeof wo, "rec_writer_options_init() sets the caller's sizeof");
    wo.size = END(rec_writer_options, no_compress) - 1;
    tap_ok(rec_writer_open(&w, path, &wo) == REC_EINVAL,
           "writer options below the first version: REC_EINVAL");
    wo.size = 0;
    tap_ok(rec_writer_open(&w, path, &wo) == REC_EINVAL,
           "writer options of size 0 (not initialised): REC_EINVAL");
    tap_ok(rec_writer_options_init_sized(&wo, 8) == REC_EINVAL,
           "init below the first version: REC_EINVAL");

    struct { rec_writer_options o; uint64_t newer; } nw;
    rec_writer_options_init_sized(&nw.o, sizeof nw);
    nw.o.overwrite = true;
    tap_ok(nw.o.size == sizeof nw && nw.newer == 0,
           "init of a newer caller's options: its size, its unknown member zeroed");
    nw.newer = 42;
    tap_ok(rec_writer_open(&w, path, &nw.o) == REC_ETOOBIG,
           "a newer caller's options that set a member unknown here: REC_ETOOBIG");

    size_t n = END(rec_follow_options, from_end);
    void *fo = malloc(n);
    rec_follow_options o;
    if (!fo)
        abort();
    memset(&o, 0, sizeof o);
    int rc = rec_follow_options_init_sized(fo, n);
    memcpy(&o, fo, n);
    tap_ok(rc == 0 && o.size == n && o.finish_wait_ms == -1,
           "follow options of the first version's size");
    o.stall_timeout_ms = 1;
    memcpy(fo, &o, n);
    rc = rec_follow_open(&f, path, fo);
    if (rc == 0)
        rec_follow_close(f);
    tap_ok(rc == 0, "a follower opened with them (%s)", rec_strerror(rc));
    o.size = 3;
    memcpy(fo, &o, n);
    tap_ok(rec_follow_open(&f, path, fo) == REC_EINVAL,
           "follow options below the first version: REC_EINVAL");
    free(fo);

    /* libsampler's: recs_start() refuses before it starts anything. */
    recs_options *so = malloc(sizeof *so);
    if (!so)
        abort();
    tap_ok(recs_options_init_sized(so, sizeof *so) == 0 && so->size == sizeof *so,
           "recs_options_init_sized() at exactly the struct's size");
    so->size = 0;
    so->output = path;
    tap_ok(recs_start(so) == REC_EINVAL, "recs_options of size 0: REC_EINVAL");
    free(so);
    struct { recs_options o; uint64_t newer; } ns;
    recs_options_init_sized(&ns.o, sizeof ns);
    ns.newer = 1;
    tap_ok(recs_start(&ns.o) == REC_ETOOBIG,
           "a newer caller's recs_options that set a member unknown here: REC_ETOOBIG");

    recs_stats *st = malloc(sizeof *st);
    if (!st)
        abort();
    tap_ok(recs_get_stats_sized(st, sizeof *st) == 0 && st->size == sizeof *st,
           "recs_get_stats_sized() at exactly the struct's size");
    tap_ok(recs_get_stats_sized(st, offsetof(recs_stats, period_ns)) == REC_EINVAL,
           "stats below the first version: REC_EINVAL");
    free(st);
    struct { recs_stats s; uint64_t newer; } nst;
    memset(&nst, 0xff, sizeof nst);
    tap_ok(recs_get_stats_sized(&nst.s, sizeof nst) == 0 && nst.newer == 0 &&
           nst.s.size == sizeof nst.s,
           "a newer caller's stats: the member unknown here zeroed, size what was filled");
}

int main(void)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

#if defined(__LP64__) && (defined(__x86_64__) || defined(__aarch64__))
    pins();
#else
    tap_diag("layouts pinned for LP64 x86_64 and aarch64 only");
#endif
    snprintf(path, sizeof path, "%s/rec-abi-%d.rec", dir, (int)getpid());
    if (write_old_callers() == 0)
        read_old_callers();
    else
        tap_ok(0, "the older callers' recording closed");
    options();
    unlink(path);
    return tap_done();
}
