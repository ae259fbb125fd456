/*
 * libsampler/unwind-modinfo.c - what the loader tells about a mapped module,
 * read from its program headers in memory (no file is opened): shared by
 * the symbolizer's module list (sym-map.c) and the unwind tables' module
 * set (unwind-mods.c), which key the shared table cache by build-id; and
 * whether the program is Go's (session.c).
 */
#include <config.h>

#include "sym.h"

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

static bool memchr_nonzero(const unsigned char *p, size_t n)
{
    while (n--)
        if (*p++)
            return true;
    return false;
}

/* The descriptor of the note NAME (with its NUL) of TYPE in the module's
 * PT_NOTE segments, its size in *len; NULL if there is none. */
static const unsigned char *find_note(const struct dl_phdr_info *info,
                                      const char *name, uint32_t type,
                                      size_t *len)
{
    size_t namesz = strlen(name) + 1;

    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        const unsigned char *p;
        size_t size, align;

        if (ph->p_type != PT_NOTE)
            continue;
        p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        size = ph->p_memsz;
        align = ph->p_align == 8 ? 8 : 4;
        while (size >= sizeof(ElfW(Nhdr))) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            size_t nlen = (nh->n_namesz + align - 1) & ~(align - 1);
            size_t dlen = (nh->n_descsz + align - 1) & ~(align - 1);
            size_t all = sizeof *nh + nlen + dlen;

            if (nlen > size || dlen > size || all > size)
                break;
            /* Go pads its "Go" to four bytes, NULs counted in n_namesz. */
            if (nh->n_type == type && nh->n_namesz >= namesz &&
                nh->n_namesz <= nlen && !memcmp(p + sizeof *nh, name, namesz) &&
                !memchr_nonzero(p + sizeof *nh + namesz, nh->n_namesz - namesz)) {
                *len = nh->n_descsz;
                return p + sizeof *nh + nlen;
            }
            p += all;
            size -= all;
        }
    }
    return NULL;
}

void recs__phdr_build_id(const struct dl_phdr_info *info, char *hex,
                         size_t hexsize)
{
    static const char digits[] = "0123456789abcdef";
    size_t n = 0;
    const unsigned char *d = find_note(info, "GNU", NT_GNU_BUILD_ID, &n);

    hex[0] = '\0';
    if (!d || n * 2 >= hexsize)
        return;
    for (size_t i = 0; i < n; i++) {
        hex[2 * i] = digits[d[i] >> 4];
        hex[2 * i + 1] = digits[d[i] & 15];
    }
    hex[2 * n] = '\0';
}

/* Go's linker writes its build id as a note of owner "Go", type 4. */
bool recs__phdr_is_go(const struct dl_phdr_info *info)
{
    size_t n;

    return find_note(info, "Go", 4, &n) != NULL;
}
