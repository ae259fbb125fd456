/*
 * libsampler/session-config.c - a session's options: from recs_options (the API)
 * or from the REC_* variables rec-start sets (recenv.h), checked the same
 * way, into the recs__config a session keeps.
 */
#include <config.h>
#include "internal.h"
#include "recenv.h"
#include "sized.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void recs__config_free(recs__config *cfg)
{
    free(cfg->output);
    free(cfg->throttle_text);
    free(cfg->cache_dir);
    memset(cfg, 0, sizeof *cfg);
}

int recs__config_copy(recs__config *dst, const recs__config *src)
{
    *dst = *src;
    dst->output = strdup(src->output);
    dst->throttle_text = strdup(src->throttle_text);
    dst->cache_dir = src->cache_dir ? strdup(src->cache_dir) : NULL;
    if (!dst->output || !dst->throttle_text ||
        (src->cache_dir && !dst->cache_dir)) {
        recs__config_free(dst);
        return REC_ENOMEM;
    }
    return 0;
}

/* The first version of recs_options ended with engine. */
#define OPTIONS_SIZE_V1 REC__SIZE_TO(recs_options, engine)

/* Fill cfg from the caller's options (opt->size bytes of them); strings
 * copied. */
int recs__config_from_options(recs__config *cfg, const recs_options *opt)
{
    recs_options full;
    const recs_options *o = &full;
    int rc;

    memset(cfg, 0, sizeof *cfg);
    cfg->output_fd = -1;
    rc = rec__sized_in(&full, sizeof full, opt, opt->size, OPTIONS_SIZE_V1);
    if (rc)
        return rc;
    const char *thr = o->throttle ? o->throttle : "10ms";
    if (!o->output || !*o->output)
        return REC_EINVAL;
    if (recs__parse_throttle(thr, &cfg->throttle) < 0)
        return REC_EINVAL;
    if (o->stack_depth > RECS_MAX_DEPTH)
        return REC_EINVAL;
    cfg->depth = o->stack_depth ? o->stack_depth : RECS_DEFAULT_DEPTH;
    cfg->max_chunk_bytes = o->max_chunk_bytes;
    cfg->flush_ns = o->flush_interval_ns ? o->flush_interval_ns
                                         : RECS_FLUSH_DEFAULT_NS;
    cfg->flush_auto = !o->flush_interval_ns;
    if (cfg->flush_ns < 10000000ull)
        cfg->flush_ns = 10000000ull;
    cfg->signo = o->signo ? o->signo : SIGPROF;
    cfg->queue_capacity = o->queue_capacity;
    if (o->stack_walker && strcmp(o->stack_walker, "cfi") &&
        strcmp(o->stack_walker, "fp"))
        return REC_EINVAL;
    cfg->fp_walker = o->stack_walker && !strcmp(o->stack_walker, "fp");
    if (recs__engine_parse(o->engine, &cfg->engine) < 0)
        return REC_EINVAL;
    cfg->append = o->append;
    cfg->overwrite = o->overwrite;
    cfg->output = strdup(o->output);
    cfg->throttle_text = strdup(thr);
    if (!cfg->output || !cfg->throttle_text) {
        recs__config_free(cfg);
        return REC_ENOMEM;
    }
    return 0;
}

static const char *env_get(void *ctx, const char *name)
{
    (void)ctx;
    return getenv(name);
}

int recs__config_from_env(recs__config *cfg, char *err, size_t errlen)
{
    return recs__config_from_vars(cfg, env_get, NULL, err, errlen);
}

/* The REC_* variables of libsampler(3), from the environment or, when
 * attached to a running process, from rec-start's lines (session-attach.c). */
int recs__config_from_vars(recs__config *cfg,
                           const char *(*get)(void *ctx, const char *name),
                           void *ctx, char *err, size_t errlen)
{
    recs_options o;
    const char *v;
    uint64_t n;
    bool b, has_id = false;
    int sig, rc;
    dev_t id_dev = 0;
    ino_t id_ino = 0;

    recs_options_init(&o);
    o.output = get(ctx, REC_ENV_OUTPUT);
    /* Created exclusively: rec-start removed what --force allowed. */
#define BAD(name) do { snprintf(err, errlen, "invalid %s=%s", name, v); \
                       return REC_EINVAL; } while (0)
    if ((v = get(ctx, REC_ENV_THROTTLE)) && *v)
        o.throttle = v;
    if ((v = get(ctx, REC_ENV_STACK_DEPTH)) && *v) {
        if (recs__parse_uint(v, 1, RECS_MAX_DEPTH, &n) < 0)
            BAD(REC_ENV_STACK_DEPTH);
        o.stack_depth = (unsigned)n;
    }
    if ((v = get(ctx, REC_ENV_STACK_WALKER)) && *v) {
        if (strcmp(v, "cfi") && strcmp(v, "fp"))
            BAD(REC_ENV_STACK_WALKER);
        o.stack_walker = v;
    }
    if ((v = get(ctx, REC_ENV_MAX_CHUNK_SIZE)) && *v) {
        if (recs__parse_size(v, &n) < 0 || n < 4096)
            BAD(REC_ENV_MAX_CHUNK_SIZE);
        o.max_chunk_bytes = n;
    }
    uint64_t max_age = 0;
    if ((v = get(ctx, REC_ENV_MAX_CHUNK_AGE)) && *v &&
        recs__parse_duration(v, &max_age) < 0)
        BAD(REC_ENV_MAX_CHUNK_AGE);
    if ((v = get(ctx, REC_ENV_FLUSH_INTERVAL)) && *v) {
        if (recs__parse_duration(v, &n) < 0 || n < 10000000ull)
            BAD(REC_ENV_FLUSH_INTERVAL);
        o.flush_interval_ns = n;
    }
    if ((v = get(ctx, REC_ENV_SIGNAL)) && *v) {
        if (recs__parse_signal(v, &sig) < 0)
            BAD(REC_ENV_SIGNAL);
        o.signo = sig;
    }
    if ((v = get(ctx, REC_ENV_QUEUE_CAPACITY)) && *v) {
        if (recs__parse_uint(v, 1, 100000, &n) < 0)
            BAD(REC_ENV_QUEUE_CAPACITY);
        o.queue_capacity = (unsigned)n;
    }
    if ((v = get(ctx, "REC_ENGINE")) && *v) {
        int e;
        if (recs__engine_parse(v, &e) < 0)
            BAD("REC_ENGINE");
        o.engine = v;
    }
    if ((v = get(ctx, REC_ENV_APPEND)) && *v) {
        if (recs__parse_bool(v, &b) < 0)
            BAD(REC_ENV_APPEND);
        o.append = b;
        o.overwrite = !b;
    }
    if ((v = get(ctx, REC_ENV_OUTPUT_ID)) && *v && o.append) {
        if (recs__parse_fd_id(v, NULL, &id_dev, &id_ino) < 0)
            BAD(REC_ENV_OUTPUT_ID);
        has_id = true;
    }
    if ((v = get(ctx, REC_ENV_THROTTLE)) && *v) {
        recs__throttle t;
        if (recs__parse_throttle(v, &t) < 0)
            BAD(REC_ENV_THROTTLE);
    }
    /* Read now: the environment is the program's once it runs. */
    bool no_cmd = false;
    if ((v = get(ctx, REC_ENV_NO_COMMAND_LINE)) && *v &&
        recs__parse_bool(v, &no_cmd) < 0)
        BAD(REC_ENV_NO_COMMAND_LINE);
    bool python = true;
    if ((v = get(ctx, REC_ENV_PYTHON)) && *v && recs__parse_bool(v, &python) < 0)
        BAD(REC_ENV_PYTHON);
    const char *run_id = get(ctx, REC_ENV_RUN_ID);
    v = run_id;
    if (v && *v && (strlen(v) != 32 || strspn(v, "0123456789abcdef") != 32))
        BAD(REC_ENV_RUN_ID);
#undef BAD
    if (!o.output || !*o.output) {
        snprintf(err, errlen, "REC_OUTPUT is not set");
        return REC_EINVAL;
    }
    if ((rc = recs__config_from_options(cfg, &o)) < 0)
        return rc;
    cfg->no_command_line = no_cmd;
    cfg->no_python = !python;
    cfg->max_chunk_age_ns = max_age;
    if (run_id && *run_id)
        memcpy(cfg->run_id, run_id, 33);
    cfg->has_id = has_id;
    cfg->out_dev = id_dev;
    cfg->out_ino = id_ino;
    if ((v = get(ctx, REC_ENV_CACHE_DIR)) && !(cfg->cache_dir = strdup(v))) {
        recs__config_free(cfg);
        return REC_ENOMEM;
    }
    return 0;
}

int recs_options_init_sized(recs_options *opt, size_t size)
{
    recs_options o;
    memset(&o, 0, sizeof o);
    o.size = size;
    if (rec__sized_out(opt, size, &o, sizeof o, OPTIONS_SIZE_V1) < 0)
        return REC_EINVAL;
    return 0;
}
