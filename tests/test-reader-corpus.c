/*
 * tests/test-reader-corpus.c - replay the damaged-recording corpus
 * (tests/data/corpus/MANIFEST, made by tests/corpus-gen.c) through the
 * reader API: each file must deliver exactly the listed number of events
 * and stop the listed way, with a message naming the file, chunk and offset.
 * Usage: test-reader-corpus [DIR] (default $top_srcdir/tests/data/corpus).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/record.h"
#include "tap.h"

static const struct { const char *name; int code; } codes[] = {
    { "OK", 0 }, { "REC_ENOMEM", REC_ENOMEM }, { "REC_EIO", REC_EIO },
    { "REC_EINVAL", REC_EINVAL }, { "REC_ECORRUPT", REC_ECORRUPT },
    { "REC_ETRUNCATED", REC_ETRUNCATED }, { "REC_EVERSION", REC_EVERSION },
    { "REC_ETOOBIG", REC_ETOOBIG }, { "REC_EMAGIC", REC_EMAGIC },
};

static const char *code_name(int c)
{
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (codes[i].code == c)
            return codes[i].name;
    return "?";
}

int main(int argc, char **argv)
{
    char dir[1024], mp[1100], line[512];
    const char *top = getenv("top_srcdir");
    if (argc > 1)
        snprintf(dir, sizeof dir, "%s", argv[1]);
    else
        snprintf(dir, sizeof dir, "%s/tests/data/corpus", top ? top : ".");
    snprintf(mp, sizeof mp, "%s/MANIFEST", dir);
    FILE *m = fopen(mp, "r");
    if (!m)
        TAP_BAIL("cannot open %s", mp);
    while (fgets(line, sizeof line, m)) {
        char name[256], outcome[64], path[1400];
        long want;
        if (line[0] == '#' || sscanf(line, "%255s %ld %63s", name, &want, outcome) != 3)
            continue;
        int want_code = 1;
        for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
            if (strcmp(codes[i].name, outcome) == 0)
                want_code = codes[i].code;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        rec_reader *r;
        const rec_event *ev;
        long n = 0;
        int rc = rec_reader_open(&r, path, 0);
        const char *msg = NULL;
        if (rc == 0) {
            rec_value v;
            while ((rc = rec_reader_next(r, &ev)) == 1) {
                /* touch every field and referenced entry */
                for (size_t i = 0; i < rec_type_nfields(rec_event_type(ev)); i++)
                    if (rec_event_get(ev, i, &v) == 0 && v.kind == REC_REF && v.v.ref.entry)
                        rec_entry_get(v.v.ref.entry, 0, &v);
                n++;
            }
            msg = rec_reader_message(r);
        }
        bool msg_ok = rc == 0 ? msg == NULL
                              : msg && strncmp(msg, path, strlen(path)) == 0 &&
                                strstr(msg, ": chunk ") && strstr(msg, ", offset ");
        tap_ok(n == want && rc == want_code && msg_ok, "%s: %ld events, %s (want %ld, %s): %s",
               name, n, code_name(rc), want, outcome,
               msg ? msg : rc == 0 && r && rec_reader_warning(r) ? rec_reader_warning(r) : "");
        if (rc == 0 || r)
            rec_reader_close(r);
    }
    fclose(m);
    return tap_done();
}
