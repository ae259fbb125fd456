/*
 * libsampler/recenv.h - the REC_* environment: how rec-start configures the
 * preloaded sampler, and what the sampler hands on to the processes it
 * records (an exec'd image, a followed child). One list, so that the
 * launcher, the sampler and the code that strips the variables from
 * processes that are not recorded agree on every name.
 * Documented in libsampler(3), ENVIRONMENT.
 */
#ifndef RECS_RECENV_H
#define RECS_RECENV_H

/* Set by rec-start, read by the sampler (session.c). */
#define REC_ENV_OUTPUT          "REC_OUTPUT"          /* recording path */
#define REC_ENV_THROTTLE        "REC_THROTTLE"        /* "10ms", "500/s" */
#define REC_ENV_STACK_DEPTH     "REC_STACK_DEPTH"
#define REC_ENV_STACK_WALKER    "REC_STACK_WALKER"
#define REC_ENV_MAX_CHUNK_SIZE  "REC_MAX_CHUNK_SIZE"
#define REC_ENV_FLUSH_INTERVAL  "REC_FLUSH_INTERVAL"
#define REC_ENV_MAX_CHUNK_AGE   "REC_MAX_CHUNK_AGE"   /* rotate at a flush once
                                                         a chunk is older */
#define REC_ENV_SIGNAL          "REC_SIGNAL"
#define REC_ENV_QUEUE_CAPACITY  "REC_QUEUE_CAPACITY"
#define REC_ENV_NO_COMMAND_LINE "REC_NO_COMMAND_LINE" /* argv[0] only */
#define REC_ENV_PYTHON          "REC_PYTHON"          /* 0: no Python frames */
#define REC_ENV_RUN_ID          "REC_RUN_ID"          /* 32 hex digits */
#define REC_ENV_CACHE_DIR       "REC_CACHE_DIR"       /* shared unwind tables
                                                         ("" or off: none) */
/* Lifecycle, between rec-start and the sampler's instances (hook-preload.c). */
#define REC_ENV_ROOT_PID        "REC_ROOT_PID"        /* the recorded process */
#define REC_ENV_FOLLOW_CHILDREN "REC_FOLLOW_CHILDREN" /* children recorded too */
#define REC_ENV_APPEND          "REC_APPEND"          /* exec'd image appends */
#define REC_ENV_STATUS_FD       "REC_STATUS_FD"       /* FD:DEV:INO, rec-start's
                                                         status pipe */
#define REC_ENV_OUTPUT_FD       "REC_OUTPUT_FD"       /* FD:DEV:INO, the file
                                                         rec-start created */
#define REC_ENV_OUTPUT_ID       "REC_OUTPUT_ID"       /* DEV:INO, the file an
                                                         exec'd image appends to */
#define REC_ENV_PRELOAD         "REC_PRELOAD"         /* LD_PRELOAD entries
                                                         rec-start added */
/* rec-start forwards TERM, HUP, USR1 and USR2 sent to it to the program
 * with sigqueue() and this value: a signal sent to the whole process
 * group reaches the program itself, and the sampler drops the copy
 * (handler.c, recs__forwarded_copy). */
#define REC_FORWARD_VALUE       0x72656373            /* "recs" */
/* Attached to a running process (rec-start -p, session-attach.c): rec-start's
 * FIFOs, passed among recs_attach()'s lines, not in any environment. */
#define REC_ENV_ATTACH_CTL      "REC_ATTACH_CTL"      /* closed: detach */
#define REC_ENV_ATTACH_STATUS   "REC_ATTACH_STATUS"   /* status lines */
/* Every REC_* variable is rec's: a process that is not recorded starts
 * programs without any of them (hook-env.c). */
#define REC_ENV_PREFIX          "REC_"
/* Read by rec-start only. */
#define REC_ENV_SAMPLER_LIB     "REC_SAMPLER_LIB"     /* library to preload */
#define REC_ENV_ASAN_RUNTIME    "REC_ASAN_RUNTIME"    /* sanitizer builds */

#endif
