/*
 * tools/dump/dump-render.h - renders events as JSON objects, driven only by the
 * schema embedded in the recording (see rec-dump(1), OUTPUT).
 *
 * Rendered pool entries (threads, stacks, frames, strings) are cached per
 * entry for the current chunk: stacks repeat, so most events cost a few
 * memcpy()s. Call dump_render_reset() whenever the reader changes chunk.
 */
#ifndef REC_TOOLS_DUMP_RENDER_H
#define REC_TOOLS_DUMP_RENDER_H

#include "cli.h"

typedef struct dump_render dump_render;

/* stack_depth: frames printed per stack trace, 0 for all. */
dump_render *dump_render_new(unsigned stack_depth);
void dump_render_free(dump_render *d);

/* Name frames from the debug files of s (NULL: off). s outlives d's use. */
void dump_render_set_debug(dump_render *d, cli_debug *s);

/* With debug files: learn the build-id of a module's path from an event
 * that refers to a Module (ModuleLoad), whether it is printed or not. */
void dump_render_note_modules(dump_render *d, const rec_event *ev);

/* The reader entered another chunk (info describes it). */
void dump_render_reset(dump_render *d, const rec_chunk_info *info);

/* Append ev as one JSON object (no newline) to out. */
void dump_render_event(dump_render *d, const rec_event *ev, cli_buf *out);

#endif
