/*
 * tools/start/start.h - rec-start's checks before launching (start-check.c).
 */
#ifndef REC_TOOLS_START_H
#define REC_TOOLS_START_H

#include <stdbool.h>
#include <stddef.h>

/* Results; each maps to rec-start's exit status. */
#define START_ERROR       (-1)   /* exit 1 */
#define START_UNSUPPORTED (-2)   /* exit 1: static, setuid, foreign ELF */
#define START_NOEXEC      (-3)   /* exit 126 */
#define START_NOTFOUND    (-4)   /* exit 127 */

/* Locate name like execvp (PATH search unless it has a '/'). *path is
 * malloc'ed. On failure msg holds "<name>: <reason>". */
int start_find_program(const char *name, char **path, char *msg, size_t msize);

/* The program (or a script's interpreter, /bin/sh for a script without
 * "#!" as execvp() runs it) must be a dynamically linked ELF of our
 * architecture that the loader runs without secure-execution mode. */
int start_check_program(const char *path, char *msg, size_t msize);

/* Check that nothing is in path's way; with force an existing regular
 * file is removed (anything else refused). */
int start_check_output(const char *path, bool force, char *msg, size_t msize);

/* Create path exclusively, mode 0600, not close-on-exec; -1 and errno. */
int start_create_output(const char *path, int *fd);

/* Absolute form of path (malloc'ed), NULL on failure. */
char *start_absolute(const char *path);

/* With --engine perf: can this process (whose credentials, seccomp filter
 * and limits the program inherits) open a task-clock perf_event? On
 * failure msg says why. */
int start_check_perf(char *msg, size_t msize);

/* start-summary.c: the closing line of a recording (why: the sampler's
 * reason for stopping early, or ""), and the descendants' recordings of
 * this run (run_id) next to it. */
void start_summarize(const char *path, bool signaled, const char *why);
void start_summarize_children(const char *path, const char *run_id);

#endif
