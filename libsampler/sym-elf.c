/*
 * libsampler/sym-elf.c - opening one module's files: its ELF, its debug
 * file (looked for where gdb and elfutils look), their DWARF and CFI
 * handles; or nothing, when the shared cache's symbols are all a load would
 * give. Symbol tables: sym-table.c; DWARF lines and inlined scopes:
 * sym-dwarf.c.
 *
 * Everything is read lazily, the first time a pc of the module needs it, and
 * stays mapped (ELF_C_READ_MMAP) so that names can point into the string
 * tables. The caller holds the recs__symbols mutex: libdw handles are not
 * shared between threads otherwise.
 */
#include <config.h>
#include "sym-internal.h"

#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#define DEBUG_ROOT "/usr/lib/debug"

/* DWARF whose compressed sections would inflate beyond this is not opened
 * inside the profiled process (Debian's libc debug file inflates to 10 MB;
 * with libdw's tables the demo's RSS grew by 18 MB): the module keeps its
 * symbol table names, and its build-id allows offline symbolization. */
#define RECS_MAX_INFLATED_DWARF (4u << 20)

static bool has_debug_info(Elf *elf)
{
    GElf_Shdr sh;
    Elf_Scn *scn = recs__elf_section(elf, ".debug_info", &sh);
    return scn && sh.sh_type != SHT_NOBITS && sh.sh_size > 0;
}

/* Bytes libdw would allocate to decompress elf's compressed debug sections
 * (it inflates them all when the Dwarf is opened). Uncompressed sections
 * are mapped and cost only the pages touched. */
static uint64_t inflated_debug_bytes(Elf *elf)
{
    size_t shstrndx;
    Elf_Scn *scn = NULL;
    uint64_t total = 0;

    if (elf_getshdrstrndx(elf, &shstrndx) < 0)
        return 0;
    while ((scn = elf_nextscn(elf, scn)) != NULL) {
        GElf_Shdr sh;
        GElf_Chdr ch;
        const char *n;
        if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED))
            continue;
        n = elf_strptr(elf, shstrndx, sh.sh_name);
        if (n && !strncmp(n, ".debug_", 7) && gelf_getchdr(scn, &ch))
            total += ch.ch_size;
    }
    return total;
}

static Dwarf *open_dwarf(Elf *elf)
{
    if (inflated_debug_bytes(elf) > RECS_MAX_INFLATED_DWARF)
        return NULL;
    return dwarf_begin_elf(elf, DWARF_C_READ, NULL);
}

static void hex_build_id(Elf *elf, char *hex, size_t size)
{
    const void *id;
    ssize_t n = dwelf_elf_gnu_build_id(elf, &id);

    hex[0] = '\0';
    if (n <= 0 || (size_t)n * 2 + 1 > size)
        return;
    for (ssize_t i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", ((const unsigned char *)id)[i]);
}

/* A symbol table with entries (a debug file may hold only that). */
static bool has_symtab(Elf *elf)
{
    GElf_Shdr sh;
    Elf_Scn *scn = recs__elf_section(elf, ".symtab", &sh);
    return scn && sh.sh_type == SHT_SYMTAB && sh.sh_size > sh.sh_entsize;
}

/* Open path as a debug file for m: an ELF with DWARF or a symbol table
 * and, when both carry one, the same build-id (a stale debug file gives
 * wrong names). */
static bool try_debug_file(recs__module *m, const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    Elf *elf;
    char id[sizeof m->build_id];

    if (fd < 0)
        return false;
    elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (elf && elf_kind(elf) == ELF_K_ELF &&
        (has_debug_info(elf) || has_symtab(elf))) {
        hex_build_id(elf, id, sizeof id);
        if (!m->build_id[0] || !id[0] || !strcmp(id, m->build_id)) {
            m->dbg_fd = fd;
            m->dbg_elf = elf;
            m->dbg_path = strdup(path);
            return true;
        }
    }
    if (elf)
        elf_end(elf);
    close(fd);
    return false;
}

/* The .gnu_debuglink name of m's file (no directory part), or NULL. */
const char *recs__module_debuglink(recs__module *m)
{
    GElf_Shdr sh;
    Elf_Scn *scn = m->elf ? recs__elf_section(m->elf, ".gnu_debuglink", &sh) : NULL;
    Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
    const char *link = d && d->d_buf ? d->d_buf : NULL;

    if (!link || !memchr(link, '\0', d->d_size) || !link[0] || strchr(link, '/'))
        return NULL;
    return link;
}

/* The standard places (gdb's and elfutils' order): the .build-id tree, then
 * the .gnu_debuglink name next to the file, in .debug/, and under the debug
 * root. No debuginfod: the sampler runs inside the profiled program.
 * Candidate i of m (LINK: its debuglink name, or NULL) in path; false past
 * the last, or for a place that does not apply. */
static bool debug_candidate(const recs__module *m, const char *link, int i,
                            char *path, size_t size)
{
    const char *slash = strrchr(m->path, '/');
    int dirlen = slash ? (int)(slash - m->path) : 0;

    if (i == 0)
        return m->build_id[0] && m->build_id[1] && m->build_id[2] &&
               snprintf(path, size, DEBUG_ROOT "/.build-id/%.2s/%s.debug",
                        m->build_id, m->build_id + 2) < (int)size;
    if (!link || m->path[0] != '/')
        return false;
    switch (i) {
    case 1:
        return snprintf(path, size, "%.*s/%s", dirlen, m->path, link) < (int)size &&
               strcmp(path, m->path);
    case 2:
        return snprintf(path, size, "%.*s/.debug/%s", dirlen, m->path, link) < (int)size;
    case 3:
        return snprintf(path, size, DEBUG_ROOT "%.*s/%s", dirlen, m->path, link) < (int)size;
    }
    return false;
}

#define DEBUG_CANDIDATES 4

static void find_debug_file(recs__module *m)
{
    const char *link = recs__module_debuglink(m);
    char path[4096];

    for (int i = 0; i < DEBUG_CANDIDATES; i++)
        if (debug_candidate(m, link, i, path, sizeof path) &&
            try_debug_file(m, path))
            return;
}

const char *recs__module_debug_file_first(const recs__module *m,
                                          const char *link, char *path,
                                          size_t size)
{
    for (int i = 0; i < DEBUG_CANDIDATES; i++)
        if (debug_candidate(m, link, i, path, size) &&
            access(path, F_OK) == 0)
            return path;
    return NULL;
}

int recs__module_load(recs__module *m)
{
    if (m->load_state)
        return m->load_state > 0 ? 0 : REC_ENOTFOUND;
    m->load_state = -1;
    /* What the shared cache says of the file spares opening it, and
     * loading libdw at all in a process whose modules all have tables. */
    if (!m->want_elf && recs__module_load_cached(m)) {
        m->load_state = 1;
        return 0;
    }
    if (!recs__dw_load())
        return REC_ENOTFOUND;    /* named by offsets */
    m->fd = m->dbg_fd = -1;
    if (m->image) {
        m->elf = elf_memory((char *)m->image, m->image_size);
    } else {
        m->fd = open(m->path, O_RDONLY | O_CLOEXEC);
        if (m->fd < 0)
            return REC_EIO;
        m->elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
    }
    if (!m->elf || elf_kind(m->elf) != ELF_K_ELF)
        goto fail;
    if (m->build_id[0]) {
        /* The file on disk must be the one mapped (not replaced since). */
        char id[sizeof m->build_id];
        hex_build_id(m->elf, id, sizeof id);
        if (id[0] && strcmp(id, m->build_id))
            goto fail;
    }

    if (has_debug_info(m->elf))
        m->dwarf = open_dwarf(m->elf);
    else if (!m->image)
        find_debug_file(m);
    if (!m->dwarf && m->dbg_elf)
        m->dwarf = open_dwarf(m->dbg_elf);
#if !defined(__x86_64__)
    /* The leaf rule's, where the unwinder has no tables (sym-cfi.c). */
    m->eh_cfi = dwarf_getcfi_elf(m->elf);
    if (m->dwarf)
        m->dbg_cfi = dwarf_getcfi(m->dwarf);
#endif

    if (recs__module_load_syms(m) < 0)
        goto fail;
    m->load_state = 1;
    return 0;

fail:
    recs__module_unload(m);
    m->load_state = -1;
    return REC_ENOTFOUND;
}

int recs__module_load_elf(recs__module *m)
{
    if (!m->want_elf) {
        m->want_elf = true;
        /* Loaded from the cache alone: open the file now. */
        if (m->load_state > 0 && !m->elf && !m->image)
            recs__module_unload(m);
    }
    return recs__module_load(m);
}

void recs__module_unload(recs__module *m)
{
    /* dwarf_end also frees the dbg_cfi it owns; eh_cfi belongs to elf. */
    if (m->dwarf)
        dwarf_end(m->dwarf);
    if (m->eh_cfi)
        dwarf_cfi_end(m->eh_cfi);
    if (m->dbg_elf)
        elf_end(m->dbg_elf);
    if (m->mini_elf)
        elf_end(m->mini_elf);
    free(m->mini_image);
    m->mini_elf = NULL;
    m->mini_image = NULL;
    if (m->elf)
        elf_end(m->elf);
    if (m->dbg_fd >= 0)
        close(m->dbg_fd);
    if (m->fd >= 0)
        close(m->fd);
    free(m->dbg_path);
    m->dbg_path = NULL;
    recs__module_free_syms(m);
    free(m->cus);
    free(m->fns);
    free(m->fn_cus);
    m->fns = NULL;
    m->fn_cus = NULL;
    m->nfns = m->nfn_cus = 0;
    m->cus = NULL;
    m->ncus = 0;
    m->cus_built = false;
    m->dwarf = NULL;
    m->eh_cfi = m->dbg_cfi = NULL;
    m->elf = m->dbg_elf = NULL;
    m->fd = m->dbg_fd = -1;
    m->load_state = 0;
}
