/*
 * libsampler/cache.h - derived data shared across processes: one file per
 * module build-id and kind in a per-user directory, mapped read-only by
 * every process that needs it (cache.c). Kinds: unwind tables
 * (unwind-cache.c, ".uwt"), symbol tables (sym-cache.c, ".sym").
 *
 * What a file holds is a pure function of the module's bytes (its
 * build-id) and of the code that derived it (libsampler's own build-id,
 * the builder): a C build under rec-start -c runs cc1 hundreds of times,
 * and each process would otherwise redo the same work.
 *
 * Trust: a file is used only if it is the owner's own, not accessible to
 * others, in a directory only the owner can enter, exactly as large as
 * its header says, of this module and this builder, and if its checksum
 * matches; each kind then checks what its readers rely on. Files are
 * written whole under a temporary name and renamed into place, never
 * rewritten in place: a mapping never sees a file shrink. Only the
 * sampler thread (or a stop) reads and writes here.
 */
#ifndef RECS_CACHE_H
#define RECS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every file starts so (host byte order: the cache never leaves the
 * machine). count[] is the kind's own. */
typedef struct recs_cache_header {
    char magic[8];                   /* the kind's */
    uint32_t header_size;
    uint32_t unit;                   /* the kind's record size */
    uint64_t count[3];
    uint64_t checksum;               /* of the body (what follows) */
    char module[136];                /* the module's build-id, hex */
    char builder[136];               /* libsampler's build-id, hex */
} recs_cache_header;
_Static_assert(sizeof(recs_cache_header) % 8 == 0, "bodies start aligned");

/* Where: setting is REC_CACHE_DIR ("" or "off": nowhere; NULL:
 * $XDG_CACHE_HOME/rec or ~/.cache/rec); builder is libsampler's own
 * build-id (none: no cache). */
void recs__cache_configure(const char *setting, const char *builder);
bool recs__cache_enabled(void);

/* "dev:ino:size:mtime" of a file: that it is still the same file, as
 * far as stat can tell (what was checked of it still holds). */
struct stat;
#define RECS_FILE_IDENT_MAX 96
void recs__cache_file_ident(const struct stat *st, char *out, size_t size);

/* Checks of a kind's body that only need running when the checksum is
 * (once per file, see recs__cache_map): true if it is good. The checks
 * that keep reads in bounds are the caller's, on every map. */
typedef bool (*recs_cache_deep_check)(const recs_cache_header *h,
                                      const void *body, size_t body_len);

/* The file of build_id and ext mapped read-only, its header checked
 * against magic, and the body against its checksum and deep (may be NULL)
 * unless a process did so already on this very file (an extended
 * attribute records it); NULL if absent or refused. *body, *body_len:
 * what follows the header. Unmap with munmap(map, *len). */
const recs_cache_header *recs__cache_map(const char *build_id,
                                         const char *ext, const char *magic,
                                         recs_cache_deep_check deep,
                                         size_t *len, const void **body,
                                         size_t *body_len);

/* Write header h (magic, unit and count[] filled in by the caller) and
 * the body parts as the file of build_id and ext. 0 or a negative REC_E*
 * code. */
int recs__cache_store(const char *build_id, const char *ext,
                      recs_cache_header *h, const void *const *parts,
                      const size_t *sizes, int nparts);

#endif
