/*
 * libsampler/hook-env.c - what a process that is not recorded passes on to
 * the programs it starts: its environment without rec's variables (REC_*)
 * and without the libraries rec added to LD_PRELOAD, so that descendants
 * rec does not record do not load the sampler at all (without
 * --follow-children). The LD_PRELOAD entries the user had are kept.
 *
 * Runs in exec and posix_spawn wrappers, possibly in a vfork child that
 * shares its parent's memory: no allocation here, the caller provides the
 * memory (alloca) sized by recs__env_strip_size().
 */
#include <config.h>
#include "internal.h"
#include "recenv.h"

#include <dlfcn.h>
#include <string.h>

static char self_path[4096];        /* this library, as the loader named it */

__attribute__((constructor))
static void find_self(void)
{
    Dl_info di;

    if (dladdr((void *)find_self, &di) && di.dli_fname &&
        strlen(di.dli_fname) < sizeof self_path)
        strcpy(self_path, di.dli_fname);
}

static bool is_rec_var(const char *e)
{
    return !strncmp(e, REC_ENV_PREFIX, sizeof REC_ENV_PREFIX - 1);
}

/* REC_PRELOAD (set by rec-start): the entries it put before the user's
 * LD_PRELOAD, separated by spaces. */
static const char *rec_preload(char *const envp[])
{
    for (size_t i = 0; envp[i]; i++)
        if (!strncmp(envp[i], REC_ENV_PRELOAD "=", sizeof REC_ENV_PRELOAD))
            return envp[i] + sizeof REC_ENV_PRELOAD;
    return NULL;
}

/* Is the LD_PRELOAD entry [p, p + n) one of rec's? */
static bool ours(const char *p, size_t n, const char *added)
{
    if (self_path[0] && strlen(self_path) == n && !memcmp(p, self_path, n))
        return true;
    while (added && *added) {
        size_t m = strcspn(added, " :");
        if (m == n && !memcmp(added, p, n))
            return true;
        added += m;
        added += strspn(added, " :");
    }
    return false;
}

/* Bytes needed for the stripped environment (pointers and the new
 * LD_PRELOAD entry); 0 if there is nothing to strip. */
size_t recs__env_strip_size(char *const envp[])
{
    size_t n = 0, extra = 0;
    bool any = false;

    if (!envp)
        return 0;
    for (; envp[n]; n++) {
        if (is_rec_var(envp[n]))
            any = true;
        else if (!strncmp(envp[n], "LD_PRELOAD=", 11))
            extra = strlen(envp[n]) + 1, any = true;
    }
    return any ? (n + 1) * sizeof(char *) + extra : 0;
}

/* Fill mem (recs__env_strip_size bytes) with envp minus rec's; returns
 * the new environment. */
char **recs__env_strip(char *const envp[], void *mem)
{
    const char *added = rec_preload(envp);
    size_t n = 0, k = 0;
    char **out = mem, *buf;

    while (envp[n])
        n++;
    buf = (char *)(out + n + 1);
    for (size_t i = 0; i < n; i++) {
        const char *e = envp[i], *p;
        char *w;

        if (is_rec_var(e))
            continue;
        if (strncmp(e, "LD_PRELOAD=", 11)) {
            out[k++] = (char *)e;
            continue;
        }
        /* Rebuild LD_PRELOAD from the entries that are not rec's. */
        w = buf;
        memcpy(w, "LD_PRELOAD=", 11);
        w += 11;
        for (p = e + 11; *p;) {
            size_t m;
            p += strspn(p, " :");
            m = strcspn(p, " :");
            if (m && !ours(p, m, added)) {
                if (w > buf + 11)
                    *w++ = ' ';
                memcpy(w, p, m);
                w += m;
            }
            p += m;
        }
        *w = '\0';
        if (w > buf + 11)
            out[k++] = buf;
    }
    out[k] = NULL;
    return out;
}
