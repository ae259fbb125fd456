/*
 * tools/export/dump-export.c - the export formats of rec-dump (collapsed
 * stacks, pprof, JFR): read every input into one export profile, then
 * write it.
 */
#include <config.h>

#include <string.h>

#include "export.h"

enum xp_format xp_format_parse(const char *s)
{
    if (strcmp(s, "collapsed") == 0)
        return XP_COLLAPSED;
    if (strcmp(s, "pprof") == 0)
        return XP_PPROF;
    if (strcmp(s, "jfr") == 0)
        return XP_JFR;
    return 0;
}

int xp_dump(const char *prog, enum xp_format fmt, const xp_options *opt,
            const xp_out *o, char **files, size_t n)
{
    xp_options xo = *opt;
    xp_jfr *jfr = NULL;
    xp_profile p;
    if (fmt == XP_JFR) {
        /* JFR keeps events with their times, not only the weights. */
        jfr = xp_jfr_new(&p);
        xo.on_event = xp_jfr_event;
        xo.arg = jfr;
    }
    xp_init(&p, &xo);
    int status = CLI_EXIT_OK;
    for (size_t i = 0; i < n; i++) {
        int rc = xp_read(&p, prog, files[i]);
        if (rc < 0) {
            status = CLI_EXIT_DATA;
            goto done;
        }
        if (rc > 0)
            status = CLI_EXIT_DATA;
    }
    /* What was valid is written even when an input was damaged, as the
     * JSON output prints every valid event before the error. */
    int rc = fmt == XP_COLLAPSED ? xp_write_collapsed(&p, o)
           : fmt == XP_PPROF ? xp_write_pprof(&p, o)
           : xp_write_jfr(&p, jfr, o);
    if (rc < 0)
        status = CLI_EXIT_DATA;
done:
    xp_jfr_free(jfr);
    xp_free(&p);
    return status;
}
