/*
 * libsampler/sym-internal.h - per-module ELF/DWARF state shared by
 * sym-map.c (module map, pc cache, interning) and sym-elf.c (reading ELF
 * files lazily with elfutils). Callers hold the recs__symbols mutex.
 */
#ifndef RECS_SYM_INTERNAL_H
#define RECS_SYM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>

#include "sym-dwload.h"

#include "sym.h"

#define RECS_MAX_SEGMENTS 8          /* executable PT_LOADs kept per module */
#define RECS_MAX_INLINE   16         /* inlined frames reported per pc */

struct recs__sym {
    uint64_t addr, size;             /* ELF virtual address */
    uint32_t name;                   /* offset in the module's sym_names */
    uint32_t pad;                    /* 0 */
};

typedef struct recs__module {
    char *path;                      /* as loaded; "[vdso]" for the vdso */
    uint64_t bias;                   /* runtime address - ELF vaddr */
    uint64_t lo, hi;                 /* runtime extent of executable segments */
    recs__range seg[RECS_MAX_SEGMENTS];
    unsigned nseg;
    char build_id[129];              /* lowercase hex, "" if none */
    unsigned char *image;            /* private copy of the vdso image */
    size_t image_size;
    rec_id path_id, module_id;
    bool emitted;                    /* ModuleLoad written */
    bool seen;                       /* found by the scan in progress */

    /* Loaded lazily by recs__module_load(). */
    int load_state;                  /* 0 not yet, 1 loaded, -1 failed */
    bool want_elf;                   /* open the file even if the cache
                                        could do without */
    int fd, dbg_fd;
    Elf *elf, *dbg_elf;
    char *dbg_path;                  /* where dbg_elf was found */
    Elf *mini_elf;                   /* MiniDebugInfo (.gnu_debugdata) */
    unsigned char *mini_image;       /* its decompressed bytes */
    Dwarf *dwarf;                    /* from elf or the separate debug file */
    Dwarf_CFI *eh_cfi;               /* .eh_frame of elf */
    Dwarf_CFI *dbg_cfi;              /* .debug_frame, if no .eh_frame entry */
    const struct recs__sym *syms;    /* sorted (sym-table.c) */
    size_t nsyms;
    const char *sym_names;
    void *sym_own;                   /* syms and names built here, or */
    void *sym_map;                   /* mapped from the shared cache */
    size_t sym_map_len;
    struct die_range *cus;           /* CU address ranges (sym-dwarf.c) */
    size_t ncus;
    bool cus_built;
    struct die_range *fns;           /* subprogram ranges of indexed CUs */
    size_t nfns;
    Dwarf_Off *fn_cus;               /* CUs indexed so far */
    size_t nfn_cus;
} recs__module;

/* One source-level frame for a pc (innermost first). Strings point into
 * libdw/libelf data of the module: copy or intern them before unlocking. */
typedef struct recs__srcframe {
    const char *function;
    const char *file;
    unsigned line;
    bool inlined;
} recs__srcframe;

/* Open the module's ELF (and debug file, CFI, symbol table) once. Returns 0,
 * or < 0 if the file cannot be read (the module then resolves to offsets).
 * When the shared cache holds the module's symbols, and says that the
 * file has no DWARF and that no debug file was found, and no debug file
 * is there now, nothing is opened (m->elf stays NULL): the symbols are
 * all a load would give. recs__module_load_elf() opens the file in any
 * case (its CFI, for the frame-pointer walker's leaf rule). */
int  recs__module_load(recs__module *m);
int  recs__module_load_elf(recs__module *m);
void recs__module_unload(recs__module *m);
/* The .gnu_debuglink name of m's open file, or NULL. */
const char *recs__module_debuglink(recs__module *m);
/* Whether a file is at one of the places m's debug file is looked for
 * (LINK: its debuglink name, or NULL). */
/* The first place of m's debug file (LINK: its debuglink name, or NULL)
 * where a file exists now, into path; NULL if none. */
const char *recs__module_debug_file_first(const recs__module *m,
                                          const char *link, char *path,
                                          size_t size);

/* The section of elf with this name (its header in *shdr), or NULL. */
Elf_Scn *recs__elf_section(Elf *elf, const char *name, GElf_Shdr *shdr);

/* sym-table.c: m's function symbols (m->elf, dbg_elf open), from the
 * shared cache or built. 0 or < 0. */
int  recs__module_load_syms(recs__module *m);
/* m's symbols from the shared cache without opening its file, if the
 * cache allows (see recs__module_load()). */
bool recs__module_load_cached(recs__module *m);
void recs__module_free_syms(recs__module *m);

/* Name of the function containing vaddr from .symtab/.dynsym, or NULL. */
const char *recs__module_symbol(recs__module *m, uint64_t vaddr);

/* Source frames for vaddr from DWARF: the inlined calls then the physical
 * function. Returns how many were written to out (0 without debug info). */
size_t recs__module_srcframes(recs__module *m, uint64_t vaddr,
                              recs__srcframe *out, size_t max);

/* See recs__symbols_leaf_return(): the CFI rule at vaddr. */
int recs__module_leaf_return(recs__module *m, uint64_t vaddr,
                             const uint64_t *window, size_t nwords,
                             uint64_t *ret);

#endif
