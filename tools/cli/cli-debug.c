/*
 * tools/cli/cli-debug.c - function symbols of separate debug files found by
 * build-id, for every reader's --debug-dir (see cli.h). Symbol tables only:
 * DWARF lines and inlines stay with the sampler, which reads them in the
 * profiled process when the files are there.
 */
#include <config.h>

#include "cli.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <errno.h>

#define MAX_FILES 4096          /* distinct build-ids looked up */

struct sym {
    uint64_t addr, size;
    char *name;
};

struct dfile {
    char *build_id;
    struct sym *syms;          /* sorted by addr; NULL: no usable file */
    size_t nsyms;
};

struct pathid {
    char *path, *build_id;
};

struct cli_debug {
    char *dir;
    struct dfile *files;
    size_t nfiles, cap;
    struct pathid *mods;
    size_t nmods, capmods;
};

cli_debug *cli_debug_new(const char *dir)
{
    cli_debug *s = calloc(1, sizeof *s);

    if (!s || !(s->dir = strdup(dir))) {
        free(s);
        return NULL;
    }
    elf_version(EV_CURRENT);
    return s;
}

void cli_debug_free(cli_debug *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nfiles; i++) {
        for (size_t k = 0; k < s->files[i].nsyms; k++)
            free(s->files[i].syms[k].name);
        free(s->files[i].syms);
        free(s->files[i].build_id);
    }
    for (size_t i = 0; i < s->nmods; i++) {
        free(s->mods[i].path);
        free(s->mods[i].build_id);
    }
    free(s->mods);
    free(s->files);
    free(s->dir);
    free(s);
}

static int cmp_sym(const void *a, const void *b)
{
    const struct sym *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static bool same_build_id(Elf *elf, const char *hex)
{
    const unsigned char *id;
    ssize_t n = dwelf_elf_gnu_build_id(elf, (const void **)&id);
    char buf[3];

    if (n <= 0)
        return true;               /* nothing to compare with */
    if ((size_t)n * 2 != strlen(hex))
        return false;
    for (ssize_t i = 0; i < n; i++) {
        snprintf(buf, sizeof buf, "%02x", id[i]);
        if (memcmp(buf, hex + 2 * i, 2))
            return false;
    }
    return true;
}

/* The function symbols of the ELF file at path (.symtab, else .dynsym). */
static void load_syms(struct dfile *f, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    Elf *elf;
    Elf_Scn *scn = NULL, *best = NULL;
    GElf_Shdr sh, best_sh = { 0 };
    size_t cap = 0;

    if (fd < 0)
        return;
    elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!elf || elf_kind(elf) != ELF_K_ELF || !same_build_id(elf, f->build_id))
        goto out;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        if (!gelf_getshdr(scn, &sh))
            continue;
        if (sh.sh_type == SHT_SYMTAB ||
            (sh.sh_type == SHT_DYNSYM && !best)) {
            best = scn;
            best_sh = sh;
        }
    }
    if (!best || best_sh.sh_entsize == 0)
        goto out;
    Elf_Data *data = elf_getdata(best, NULL);
    size_t n = data ? best_sh.sh_size / best_sh.sh_entsize : 0;
    for (size_t i = 0; i < n; i++) {
        GElf_Sym sym;
        const char *name;
        if (!gelf_getsym(data, (int)i, &sym) ||
            GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0 ||
            sym.st_shndx == SHN_UNDEF)
            continue;
        name = elf_strptr(elf, best_sh.sh_link, sym.st_name);
        if (!name || !*name)
            continue;
        if (f->nsyms == cap) {
            cap = cap ? 2 * cap : 256;
            struct sym *v = realloc(f->syms, cap * sizeof *v);
            if (!v)
                break;
            f->syms = v;
        }
        f->syms[f->nsyms].addr = sym.st_value;
        f->syms[f->nsyms].size = sym.st_size;
        f->syms[f->nsyms].name = strdup(name);
        if (f->syms[f->nsyms].name)
            f->nsyms++;
    }
    if (f->nsyms)
        qsort(f->syms, f->nsyms, sizeof *f->syms, cmp_sym);
out:
    if (elf)
        elf_end(elf);
    close(fd);
}

static struct dfile *file_for(cli_debug *s, const char *id, size_t len)
{
    char path[4096];
    struct dfile *f;

    for (size_t i = 0; i < s->nfiles; i++)
        if (strlen(s->files[i].build_id) == len &&
            !memcmp(s->files[i].build_id, id, len))
            return &s->files[i];
    if (s->nfiles >= MAX_FILES || len < 3 || len > 128)
        return NULL;
    for (size_t i = 0; i < len; i++)
        if (!strchr("0123456789abcdef", id[i]))
            return NULL;
    if (s->nfiles == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        struct dfile *v = realloc(s->files, cap * sizeof *v);
        if (!v)
            return NULL;
        s->files = v;
        s->cap = cap;
    }
    f = &s->files[s->nfiles];
    memset(f, 0, sizeof *f);
    if (!(f->build_id = strndup(id, len)))
        return NULL;
    s->nfiles++;
    snprintf(path, sizeof path, "%s/.build-id/%.2s/%s.debug", s->dir,
             f->build_id, f->build_id + 2);
    load_syms(f, path);
    if (!f->nsyms) {
        snprintf(path, sizeof path, "%s/%.2s/%s.debug", s->dir, f->build_id,
                 f->build_id + 2);
        load_syms(f, path);
    }
    return f;
}

const char *cli_debug_lookup(cli_debug *s, const char *build_id, size_t len,
                              uint64_t vaddr)
{
    struct dfile *f = s ? file_for(s, build_id, len) : NULL;
    size_t lo = 0, hi;

    if (!f || !f->nsyms)
        return NULL;
    hi = f->nsyms;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (f->syms[mid].addr <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct sym *y = &f->syms[lo - 1];
    if (vaddr - y->addr >= (y->size ? y->size : 1))
        return NULL;
    return y->name;
}

static struct pathid *find_path(cli_debug *s, const char *path, size_t len)
{
    for (size_t i = 0; i < s->nmods; i++)
        if (strlen(s->mods[i].path) == len &&
            !memcmp(s->mods[i].path, path, len))
            return &s->mods[i];
    return NULL;
}

int cli_debug_add_module(cli_debug *s, const char *path, size_t len,
                          const char *build_id, size_t bid_len)
{
    struct pathid *m = find_path(s, path, len);
    char *id;

    if (m && strlen(m->build_id) == bid_len &&
        !memcmp(m->build_id, build_id, bid_len))
        return 0;
    if (!(id = strndup(build_id, bid_len)))
        return -1;
    if (m) {                        /* the path now holds another build */
        free(m->build_id);
        m->build_id = id;
        return 1;
    }
    if (s->nmods >= MAX_FILES) {
        free(id);
        return 0;
    }
    if (s->nmods == s->capmods) {
        size_t cap = s->capmods ? 2 * s->capmods : 64;
        struct pathid *v = realloc(s->mods, cap * sizeof *v);
        if (!v) {
            free(id);
            return -1;
        }
        s->mods = v;
        s->capmods = cap;
    }
    if (!(s->mods[s->nmods].path = strndup(path, len))) {
        free(id);
        return -1;
    }
    s->mods[s->nmods++].build_id = id;
    return 1;
}

const char *cli_debug_module_id(cli_debug *s, const char *path, size_t len)
{
    struct pathid *m = find_path(s, path, len);
    return m ? m->build_id : NULL;
}

/* True if func is the sampler's name of a function without a symbol:
 * the module's file name, "+0x" and the function's start in hex. */
static bool start_name(const char *func, size_t flen, const char *module,
                       size_t mlen)
{
    const char *base = module;
    size_t blen;

    for (size_t i = 0; i < mlen; i++)
        if (module[i] == '/')
            base = module + i + 1;
    blen = mlen - (size_t)(base - module);
    if (flen <= blen + 3 || memcmp(func, base, blen) ||
        memcmp(func + blen, "+0x", 3))
        return false;
    for (size_t i = blen + 3; i < flen; i++)
        if (!strchr("0123456789abcdef", func[i]))
            return false;
    return true;
}

const char *cli_debug_frame_name(cli_debug *s, const char *func, size_t flen,
                                 const char *module, size_t mlen,
                                 uint64_t offset)
{
    const char *bid;

    if (!s || !module || !mlen ||
        (func && flen && !start_name(func, flen, module, mlen)) ||
        !(bid = cli_debug_module_id(s, module, mlen)))
        return NULL;
    return cli_debug_lookup(s, bid, strlen(bid), offset);
}

int cli_opt_debug_dir(const char *prog, const char *arg, const char **dir)
{
    struct stat st;

    if (!*arg) {
        cli_error(prog, "--debug-dir: empty directory name");
        return -1;
    }
    if (stat(arg, &st) < 0) {
        cli_error(prog, "--debug-dir: %s: %s", arg, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        cli_error(prog, "--debug-dir: %s: not a directory", arg);
        return -1;
    }
    *dir = arg;
    return 0;
}
