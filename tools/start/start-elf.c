/*
 * tools/start/start-elf.c - a symbol's value in a shared object's dynamic
 * symbol table, read from its file: where rec-start -p finds dlopen() in
 * the process's C library and recs_attach() in the sampler, without
 * loading either into rec-start.
 */
#include <config.h>
#include "start.h"

#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every offset and size read from the file is checked against its size:
 * the file is the target's, not ours. */
static bool in_file(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

int start_elf_symbol(const char *path, const char *name, uint64_t *value)
{
    struct stat st;
    const unsigned char *m;
    const Elf64_Ehdr *eh;
    const Elf64_Shdr *sh;
    uint64_t size, best = 0;
    bool found = false;
    int fd, rc = -1;

    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
        close(fd);
        return -1;
    }
    size = (uint64_t)st.st_size;
    m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return -1;
    eh = (const Elf64_Ehdr *)m;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shentsize != sizeof(Elf64_Shdr) ||
        !in_file(eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), size))
        goto out;
    sh = (const Elf64_Shdr *)(m + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        const Elf64_Shdr *sym = &sh[i], *str, *ver = NULL;
        if (sym->sh_type != SHT_DYNSYM || sym->sh_link >= eh->e_shnum ||
            sym->sh_entsize != sizeof(Elf64_Sym) ||
            !in_file(sym->sh_offset, sym->sh_size, size))
            continue;
        str = &sh[sym->sh_link];
        if (!in_file(str->sh_offset, str->sh_size, size))
            continue;
        for (unsigned j = 0; j < eh->e_shnum; j++)
            if (sh[j].sh_type == SHT_GNU_versym &&
                in_file(sh[j].sh_offset, sh[j].sh_size, size))
                ver = &sh[j];
        uint64_t n = sym->sh_size / sizeof(Elf64_Sym);
        const Elf64_Sym *s = (const Elf64_Sym *)(m + sym->sh_offset);
        for (uint64_t k = 0; k < n; k++) {
            const char *nm;
            if (s[k].st_shndx == SHN_UNDEF || s[k].st_name >= str->sh_size)
                continue;
            nm = (const char *)m + str->sh_offset + s[k].st_name;
            if (strnlen(nm, str->sh_size - s[k].st_name) == str->sh_size - s[k].st_name ||
                strcmp(nm, name))
                continue;
            /* The default version (dlopen@@GLIBC_2.34 over the older
             * dlopen@GLIBC_2.2.5): its version index is not hidden. */
            bool hidden = false;
            if (ver && (k + 1) * 2 <= ver->sh_size)
                hidden = (((const uint16_t *)(m + ver->sh_offset))[k] & 0x8000) != 0;
            if (!found || !hidden) {
                best = s[k].st_value;
                found = true;
                if (!hidden)
                    break;
            }
        }
        break;
    }
    if (found) {
        *value = best;
        rc = 0;
    }
out:
    munmap((void *)m, size);
    return rc;
}
