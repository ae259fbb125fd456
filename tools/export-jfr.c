/* tools/export-jfr.c - placeholder */
#include "config.h"
#include <stdlib.h>
#include "export.h"
struct xp_jfr { int x; };
xp_jfr *xp_jfr_new(void) { return calloc(1, sizeof(xp_jfr)); }
int xp_jfr_event(void *j, const xp_event *e) { (void)j; (void)e; return 0; }
int xp_write_jfr(xp_profile *p, xp_jfr *j, const xp_out *o) { (void)p; (void)j; cli_error(o->prog, "jfr: not yet"); return -1; }
void xp_jfr_free(xp_jfr *j) { free(j); }
