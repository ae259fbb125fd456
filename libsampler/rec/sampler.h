/*
 * rec/sampler.h - libsampler: per-thread CPU-time sampling of the
 * calling process into a rec recording.
 *
 * Every thread gets a timer on its own CPU clock (timer_create on the
 * thread's CPU-time clock, SIGEV_THREAD_ID) that sends a signal every
 * period of CPU time the thread consumes. The handler only copies the
 * registers and a bounds-checked stack walk (CFI tables, or frame
 * pointers) into the thread's bounded queue; a sampler thread drains the
 * queues, symbolizes and writes
 * CPUTimeSample / CPUTimeSampleLost / ThreadStart / ThreadEnd events.
 *
 * Normally loaded with LD_PRELOAD by rec-start(1), which configures it
 * through REC_* environment variables (libsampler(3)). Programs can also
 * link it and drive it with the functions below. Threads are caught through
 * the library's pthread_create(); threads created otherwise (raw clone) are
 * not sampled.
 *
 * Functions return 0 or a negative REC_E* code (rec_strerror()).
 */
#ifndef REC_SAMPLER_H
#define REC_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <rec/record.h>   /* REC_E* codes, rec_strerror() */

#ifdef __cplusplus
extern "C" {
#endif

/* Structs cross the API with their size as the caller's compiler saw it,
 * as in librecord (librecord(3), VERSIONS AND ABI): the library reads and
 * writes that many bytes and no more. A member is appended only past the
 * struct's sizeof, and its zero means its default. */
typedef struct recs_options {
    size_t size;                 /* sizeof, set by recs_options_init() */
    const char *output;          /* recording path (required) */
    const char *throttle;        /* "10ms", "500us", "500/s" (NULL: "10ms") */
    unsigned stack_depth;        /* frames per sample (0: 64, max 1024) */
    uint64_t max_chunk_bytes;    /* rotate chunks above this (0: writer default) */
    uint64_t flush_interval_ns;  /* data visible to readers within (0: about
                                    every 128 samples, 10 ms to 1 s apart,
                                    and 1 s idle: see libsampler(3)) */
    int signo;                   /* timer signal (0: SIGPROF) */
    unsigned queue_capacity;     /* requests per thread (0: sized from the period) */
    bool append;                 /* append a recording to an existing file */
    bool overwrite;              /* replace an existing file (else REC_EEXIST) */
    const char *stack_walker;    /* "cfi" (NULL: default) or "fp" */
    const char *engine;          /* "auto" (NULL), "perf", "timer": see
                                    libsampler(3) */
} recs_options;

/* Defaults as documented above, with opt->size the caller's sizeof
 * (REC_EINVAL below the first version's). */
int recs_options_init_sized(recs_options *opt, size_t size);
static inline void recs_options_init(recs_options *opt)
{
    recs_options_init_sized(opt, sizeof *opt);
}

/* Start recording (opt->size bytes of opt: REC_EINVAL below the first
 * version's, REC_ETOOBIG for a newer caller's that sets a member this
 * library does not know): open the output, arm a timer for every thread
 * known to the library (threads created through pthread_create after the
 * library was loaded, and the calling thread). Other threads are not
 * sampled; their CPU time in the recording is reported lost (reason
 * "untracked") and a warning is printed. REC_EINVAL if already recording. */
int recs_start(const recs_options *opt);

/* Stop: delete the timers, wait for handlers in flight, drain every queue,
 * write ThreadEnd snapshots of live threads and ProcessUsage, close the
 * recording. 0 if not recording. The signal handler stays installed (a
 * signal still pending must not take the default action). */
int recs_stop(void);

/* Change the throttle ("10ms", "500/s") of the running recording: timers
 * are re-armed and a RecordingSettings event is written. */
int recs_set_throttle(const char *throttle);

/* Explicit safe point: drain every thread's queue now (the sampler thread
 * does it periodically anyway) and flush the recording so that a reader
 * sees all samples taken before the call. */
int recs_drain(void);

typedef struct recs_stats {
    size_t size;                 /* bytes recs_get_stats() filled */
    uint64_t samples;            /* CPUTimeSample events written */
    uint64_t lost;               /* samples lost, overruns included */
    uint64_t lost_ns;            /* CPU time those stood for */
    uint64_t threads;            /* threads sampled so far */
    uint64_t timer_failures;     /* timer_create failures (EAGAIN...) */
    uint64_t period_ns;          /* current effective period */
} recs_stats;

/* Totals of the current (or, after recs_stop(), the last) recording:
 * sizeof *st bytes at most are written, members this library does not
 * know are zeroed, st->size is what it filled. */
int recs_get_stats_sized(recs_stats *st, size_t size);
static inline int recs_get_stats(recs_stats *st)
{
    return recs_get_stats_sized(st, sizeof *st);
}

/* Record the running process this library was just loaded into: the entry
 * point of rec-start -p (rec-start(1), ATTACHING), called on one of the
 * process's threads that rec-start stopped, after dlopen(). spec holds
 * "NAME=VALUE" lines: the REC_* settings of libsampler(3), and the paths
 * of rec-start's two FIFOs, REC_ATTACH_CTL (read: its end, when rec-start
 * closes it, ends the recording) and REC_ATTACH_STATUS (written: status
 * lines). Returns at once: a thread of the library starts the recording,
 * adopts every thread of the process and, at the end, leaves the library
 * dormant for the next call. REC_EEXIST if the process is being recorded
 * already. */
int recs_attach(const char *spec);

#ifdef __cplusplus
}
#endif
#endif
