/*
 * libsampler/sym-dwload.c - loading elfutils and liblzma on first use (see
 * sym-dwload.h).
 */
#include <config.h>

#define RECS_DWLOAD_SELF
#include "sym-dwload.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <pthread.h>
#include <string.h>

struct recs__dwfns recs__dw;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded;
static _Atomic bool tried;
/* Kept loaded for good, as the sampler itself (-z nodelete). */
static void *dw, *xz;

static void load(void)
{
    struct recs__dwfns f;
    bool ok;

    /* RTLD_LOCAL: nothing of theirs joins the program's symbol scope. */
    dw = dlopen(RECS_LIBDW_SONAME, RTLD_NOW | RTLD_LOCAL);
    xz = dlopen(RECS_LIBLZMA_SONAME, RTLD_NOW | RTLD_LOCAL);
    ok = dw && xz;

    memset(&f, 0, sizeof f);
    /* libelf's functions through libdw's handle: it depends on libelf. */
#define RECS_DW_SYM(name) \
    if (ok && !(f.name = (__typeof__(name) *)dlsym(dw, #name))) ok = false;
    RECS_DW_FUNCS(RECS_DW_SYM)
#undef RECS_DW_SYM
#define RECS_XZ_SYM(name) \
    if (ok && !(f.name = (__typeof__(name) *)dlsym(xz, #name))) ok = false;
    RECS_LZMA_FUNCS(RECS_XZ_SYM)
#undef RECS_XZ_SYM
    if (ok && f.elf_version(EV_CURRENT) == EV_NONE)
        ok = false;
    if (ok) {
        recs__dw = f;
        loaded = true;
    }
    atomic_store(&tried, true);
}

bool recs__dw_tried(void)
{
    return atomic_load(&tried);
}

bool recs__dw_load(void)
{
    pthread_once(&once, load);
    return loaded;
}
