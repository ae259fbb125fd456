/*
 * tools/losses.h - where the CPU time without stacks went: the one place
 * rec-start's closing line and rec-summary take their loss line from.
 */
#ifndef REC_TOOLS_LOSSES_H
#define REC_TOOLS_LOSSES_H

#include <stddef.h>
#include <stdint.h>
#include <rec/record.h>

#include "cli.h"

typedef struct cli_losses cli_losses;

cli_losses *cli_losses_new(void);
void cli_losses_free(cli_losses *l);
/* Account one event (samples and lost samples; others are ignored), read
 * through the view of its chunk. */
void cli_losses_event(cli_losses *l, cli_evview *view, const rec_event *ev);
/* The line to print ("35% of CPU without stacks: ..."), without newline,
 * or an empty string when at most 1% of the CPU time has no stack.
 * Returns buf. */
char *cli_losses_line(const cli_losses *l, char *buf, size_t size);
/* The same for the samples whose stack was cut short ("12% of CPU with
 * partial stacks: ..."), by the walk's reason. */
char *cli_losses_partial_line(const cli_losses *l, char *buf, size_t size);
/* The partial stacks' reasons and CPU time (up to max; returns how many). */
size_t cli_losses_partial(const cli_losses *l, const char **names,
                          uint64_t *ns, size_t max);

#endif
