/*
 * tests/mkhostile.c - recordings whose pool entries reference each other
 * in ways no writer produces: a self reference, a cycle of two (both
 * forward references, which a reader may treat as dangling), and a wide
 * deep DAG (4096 references per level, defined in order). rec-dump must render them in time
 * and memory linear in the file (tests/test-dump-hostile.sh).
 *
 *   mkhostile DIR      writes DIR/self.rec, DIR/cycle.rec, DIR/dag.rec
 */
#include <config.h>

#include <stdio.h>

#include "recbuild.h"

enum { NODE = 6, EV = 32 };

static void metadata(rb_buf *b)
{
    rb_map(b, 2);
    rb_text(b, "version");
    rb_uint(b, 1);
    rb_text(b, "types");
    rb_array(b, 2);
    rb_type(b, NODE, "Node", false, 3);
    rb_field(b, "value", "uint", false, false);
    rb_field(b, "next", "Node", false, true);
    rb_field(b, "kids", "Node", true, false);
    rb_type(b, EV, "Ev", true, 2);
    rb_field(b, "node", "Node", false, false);
    rb_field(b, "startTime", "ticks", false, false);
}

/* Node id with next (0: null) and nkids references to kid. */
static void node(rb_buf *b, unsigned id, unsigned next, unsigned nkids, unsigned kid)
{
    rb_array(b, 5);
    rb_uint(b, NODE);
    rb_uint(b, id);
    rb_uint(b, id * 10);
    if (next)
        rb_uint(b, next);
    else
        rb_null(b);
    rb_array(b, nkids);
    for (unsigned i = 0; i < nkids; i++)
        rb_uint(b, kid);
}

static int write_rec(const char *dir, const char *name, const rb_buf *pools,
                     unsigned nevents, unsigned root)
{
    rb_file f = { 0 };
    rb_buf m = { 0 }, e = { 0 };
    char path[4096];
    rb_chunk_begin(&f);
    metadata(&m);
    rb_block(&f, REC_BLOCK_METADATA, true, &m);
    rb_block(&f, REC_BLOCK_POOL, true, pools);
    rb_uint(&e, RB_START_TICKS);
    for (unsigned i = 0; i < nevents; i++) {
        rb_array(&e, 3);
        rb_uint(&e, EV);
        rb_uint(&e, root);
        rb_int(&e, 1);
    }
    rb_block(&f, REC_BLOCK_EVENTS, true, &e);
    rb_chunk_end(&f, REC_STATE_FINISHED, REC_CHUNK_LAST);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int rc = rb_write(&f.out, path);
    if (rc < 0)
        perror(path);
    rb_free(&f.out);
    rb_free(&m);
    rb_free(&e);
    return rc;
}

int main(int argc, char **argv)
{
    rb_buf p = { 0 };
    int rc = 0;
    if (argc != 2) {
        fprintf(stderr, "usage: mkhostile DIR\n");
        return 2;
    }
    node(&p, 1, 1, 4096, 1);                 /* itself, 4097 times */
    rc |= write_rec(argv[1], "self.rec", &p, 3, 1);
    rb_free(&p);
    node(&p, 1, 2, 4096, 2);                 /* 1 <-> 2 */
    node(&p, 2, 1, 4096, 1);
    rc |= write_rec(argv[1], "cycle.rec", &p, 3, 1);
    rb_free(&p);
    /* Entries defined before use, as the format requires: 12 levels of
     * 4096 references each to the level below, 4096^11 paths to the leaf. */
    for (unsigned id = 1; id <= 12; id++)
        node(&p, id, id - 1, id > 1 ? 4096 : 0, id - 1);
    rc |= write_rec(argv[1], "dag.rec", &p, 3, 12);
    rb_free(&p);
    return rc ? 1 : 0;
}
