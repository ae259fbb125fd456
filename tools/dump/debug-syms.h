/*
 * tools/dump/debug-syms.h - function names for module+offset frames from
 * separate debug files found by build-id under a directory (the readers'
 * --debug-dir): a recording taken where no debug files were installed is
 * symbolized later, elsewhere.
 */
#ifndef REC_TOOLS_DEBUG_SYMS_H
#define REC_TOOLS_DEBUG_SYMS_H

#include <stddef.h>
#include <stdint.h>

typedef struct debug_syms debug_syms;

/* dir holds .build-id/xx/yyyy.debug (as /usr/lib/debug does), or the
 * xx/yyyy.debug tree itself. NULL on allocation failure. */
debug_syms *debug_syms_new(const char *dir);
void debug_syms_free(debug_syms *s);

/* Frames name their module by path: remember which build-id the path had
 * (from the ModuleLoad events). Returns 1 if this is new, 0 if known, < 0
 * on failure. */
int debug_syms_add_module(debug_syms *s, const char *path, size_t len,
                          const char *build_id, size_t bid_len);
/* The build-id recorded for path, or NULL. */
const char *debug_syms_module_id(debug_syms *s, const char *path, size_t len);

/* Name of the function that contains vaddr (an ELF virtual address of the
 * module) in the debug file of build-id (hex, len characters), or NULL. A
 * debug file is opened once; one whose own build-id differs is ignored. */
const char *debug_syms_lookup(debug_syms *s, const char *build_id, size_t len,
                              uint64_t vaddr);

#endif
