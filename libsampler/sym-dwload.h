/*
 * libsampler/sym-dwload.h - elfutils (libelf, libdw) and liblzma, loaded with
 * dlopen() the first time a module is read (sym-dwload.c), not at every
 * process start: most processes a build runs end before their first
 * sample, and loading and relocating these libraries was a fifth of what
 * the sampler cost each of them.
 *
 * Include it after the libraries' headers: their functions then name the
 * pointers of recs__dw, filled from the libraries' own handles (so a
 * program's function of the same name is never called instead). Call
 * recs__dw_load() first; where it fails, nothing here may be called.
 */
#ifndef RECS_DWLOAD_H
#define RECS_DWLOAD_H

#include <stdbool.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <libelf.h>
#include <lzma.h>

#define RECS_DW_FUNCS(X) \
    X(dwarf_addrdie) \
    X(dwarf_attr) \
    X(dwarf_attr_integrate) \
    X(dwarf_begin_elf) \
    X(dwarf_cfi_addrframe) \
    X(dwarf_cfi_end) \
    X(dwarf_child) \
    X(dwarf_dieoffset) \
    X(dwarf_end) \
    X(dwarf_filesrc) \
    X(dwarf_formstring) \
    X(dwarf_formudata) \
    X(dwarf_frame_cfa) \
    X(dwarf_frame_info) \
    X(dwarf_frame_register) \
    X(dwarf_getcfi) \
    X(dwarf_getcfi_elf) \
    X(dwarf_getsrc_die) \
    X(dwarf_getsrcfiles) \
    X(dwarf_haspc) \
    X(dwarf_lineno) \
    X(dwarf_linesrc) \
    X(dwarf_nextcu) \
    X(dwarf_offdie) \
    X(dwarf_ranges) \
    X(dwarf_siblingof) \
    X(dwarf_tag) \
    X(dwelf_elf_gnu_build_id) \
    X(elf_begin) \
    X(elf_end) \
    X(elf_getdata) \
    X(elf_getscn) \
    X(elf_getshdrstrndx) \
    X(elf_kind) \
    X(elf_memory) \
    X(elf_nextscn) \
    X(elf_rawdata) \
    X(elf_strptr) \
    X(elf_version) \
    X(gelf_getchdr) \
    X(gelf_getrela) \
    X(gelf_getshdr) \
    X(gelf_getsym)
#define RECS_LZMA_FUNCS(X) \
    X(lzma_code) \
    X(lzma_end) \
    X(lzma_stream_decoder)

struct recs__dwfns {
#define RECS_DW_PTR(name) __typeof__(name) *name;
    RECS_DW_FUNCS(RECS_DW_PTR)
    RECS_LZMA_FUNCS(RECS_DW_PTR)
#undef RECS_DW_PTR
};
extern struct recs__dwfns recs__dw;

/* Load the libraries once (thread-safe). True when every function is
 * there; false for good otherwise (the modules are then named by
 * offsets, their tables built from .eh_frame alone). */
bool recs__dw_load(void);
/* Whether recs__dw_load() ran already (it then loads nothing): code that
 * must not call dlopen (inside dl_iterate_phdr) asks first. */
bool recs__dw_tried(void);

#ifndef RECS_DWLOAD_SELF
#define dwarf_addrdie (*recs__dw.dwarf_addrdie)
#define dwarf_attr (*recs__dw.dwarf_attr)
#define dwarf_attr_integrate (*recs__dw.dwarf_attr_integrate)
#define dwarf_begin_elf (*recs__dw.dwarf_begin_elf)
#define dwarf_cfi_addrframe (*recs__dw.dwarf_cfi_addrframe)
#define dwarf_cfi_end (*recs__dw.dwarf_cfi_end)
#define dwarf_child (*recs__dw.dwarf_child)
#define dwarf_dieoffset (*recs__dw.dwarf_dieoffset)
#define dwarf_end (*recs__dw.dwarf_end)
#define dwarf_filesrc (*recs__dw.dwarf_filesrc)
#define dwarf_formstring (*recs__dw.dwarf_formstring)
#define dwarf_formudata (*recs__dw.dwarf_formudata)
#define dwarf_frame_cfa (*recs__dw.dwarf_frame_cfa)
#define dwarf_frame_info (*recs__dw.dwarf_frame_info)
#define dwarf_frame_register (*recs__dw.dwarf_frame_register)
#define dwarf_getcfi (*recs__dw.dwarf_getcfi)
#define dwarf_getcfi_elf (*recs__dw.dwarf_getcfi_elf)
#define dwarf_getsrc_die (*recs__dw.dwarf_getsrc_die)
#define dwarf_getsrcfiles (*recs__dw.dwarf_getsrcfiles)
#define dwarf_haspc (*recs__dw.dwarf_haspc)
#define dwarf_lineno (*recs__dw.dwarf_lineno)
#define dwarf_linesrc (*recs__dw.dwarf_linesrc)
#define dwarf_nextcu (*recs__dw.dwarf_nextcu)
#define dwarf_offdie (*recs__dw.dwarf_offdie)
#define dwarf_ranges (*recs__dw.dwarf_ranges)
#define dwarf_siblingof (*recs__dw.dwarf_siblingof)
#define dwarf_tag (*recs__dw.dwarf_tag)
#define dwelf_elf_gnu_build_id (*recs__dw.dwelf_elf_gnu_build_id)
#define elf_begin (*recs__dw.elf_begin)
#define elf_end (*recs__dw.elf_end)
#define elf_getdata (*recs__dw.elf_getdata)
#define elf_getscn (*recs__dw.elf_getscn)
#define elf_getshdrstrndx (*recs__dw.elf_getshdrstrndx)
#define elf_kind (*recs__dw.elf_kind)
#define elf_memory (*recs__dw.elf_memory)
#define elf_nextscn (*recs__dw.elf_nextscn)
#define elf_rawdata (*recs__dw.elf_rawdata)
#define elf_strptr (*recs__dw.elf_strptr)
#define elf_version (*recs__dw.elf_version)
#define gelf_getchdr (*recs__dw.gelf_getchdr)
#define gelf_getrela (*recs__dw.gelf_getrela)
#define gelf_getshdr (*recs__dw.gelf_getshdr)
#define gelf_getsym (*recs__dw.gelf_getsym)
#define lzma_code (*recs__dw.lzma_code)
#define lzma_end (*recs__dw.lzma_end)
#define lzma_stream_decoder (*recs__dw.lzma_stream_decoder)
#endif

#endif
