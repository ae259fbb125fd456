/*
 * libsampler/modules.c - what the loader tells about a mapped module,
 * read from its program headers in memory (no file is opened): shared by
 * the symbolizer's module list (symbols.c) and the unwind tables' module
 * set (unwind-mods.c), which key the shared table cache by build-id.
 */
#include <config.h>

#include "symbols.h"

#include <elf.h>
#include <link.h>
#include <string.h>

static void note_build_id(const unsigned char *p, size_t size, size_t align,
                          char *hex, size_t hexsize)
{
    while (size >= sizeof(ElfW(Nhdr))) {
        const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
        size_t name = (nh->n_namesz + align - 1) & ~(align - 1);
        size_t desc = (nh->n_descsz + align - 1) & ~(align - 1);
        size_t len = sizeof *nh + name + desc;

        if (name > size || desc > size || len > size)
            return;
        if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
            !memcmp(p + sizeof *nh, "GNU", 4) && nh->n_descsz * 2 < hexsize) {
            const unsigned char *d = p + sizeof *nh + name;
            static const char digits[] = "0123456789abcdef";
            for (size_t i = 0; i < nh->n_descsz; i++) {
                hex[2 * i] = digits[d[i] >> 4];
                hex[2 * i + 1] = digits[d[i] & 15];
            }
            hex[2 * nh->n_descsz] = '\0';
            return;
        }
        p += len;
        size -= len;
    }
}

void recs__phdr_build_id(const struct dl_phdr_info *info, char *hex,
                         size_t hexsize)
{
    hex[0] = '\0';
    for (int i = 0; i < info->dlpi_phnum && !hex[0]; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_NOTE)
            note_build_id((const unsigned char *)(info->dlpi_addr + ph->p_vaddr),
                          ph->p_memsz, ph->p_align == 8 ? 8 : 4, hex, hexsize);
    }
}
