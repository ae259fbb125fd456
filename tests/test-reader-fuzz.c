/*
 * tests/test-reader-fuzz.c - damage that checksums do not catch: random
 * bytes of a real recording are changed and every block and chunk checksum
 * is recomputed, so the reader's structure, lz4 and CBOR checks, not its
 * CRCs, must cope. Most cases use stored blocks (the CBOR itself changes),
 * a quarter lz4 blocks. Deterministic (fixed
 * seed); under --enable-sanitizers this doubles as a memory-safety test.
 * Each case must end (no crash, no hang) with 0 or a negative code, a
 * message exactly when it fails, and the events before the damage intact.
 */
#include <config.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "rec/record.h"
#include "recbuild.h"
#include "tap.h"

#define CASES 3000

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static size_t make_recording(const char *path, bool compress)
{
    rec_writer_options opt;
    rec_writer *w;
    rec_stream *s;
    rec_id str[3], thr, frm[4], stk;
    rec_writer_options_init(&opt);
    opt.overwrite = true;
    opt.no_compress = !compress;
    if (rec_writer_open(&w, path, &opt) < 0 || rec_stream_open(w, &s) < 0)
        TAP_BAIL("cannot write %s", path);
    rec_intern_cstr(w, "main", &str[0]);
    rec_intern_cstr(w, "f", &str[1]);
    rec_intern_cstr(w, "lib.so", &str[2]);
    struct rec_Thread t = { 1, str[0], 1 };
    rec_intern_Thread(w, &t, &thr);
    for (int i = 0; i < 4; i++) {
        struct rec_Frame fr = { str[1], str[2], (uint64_t)i, 0, (uint64_t)i, false };
        rec_intern_Frame(w, &fr, &frm[i]);
    }
    struct rec_StackTrace st = { false, frm, 4 };
    rec_intern_StackTrace(w, &st, &stk);
    uint64_t t0 = rec_now_ns();
    for (int i = 0; i < 40; i++) {
        struct rec_CPUTimeSample e = { thr, 1000 + (uint64_t)i, false, i % 2, i % 3 ? stk : 0,
                                       t0 + (uint64_t)i * 1000 };
        rec_emit_CPUTimeSample(s, &e);
        if (i % 10 == 9)
            rec_writer_flush(w);
        if (i == 19)
            rec_writer_rotate(w);
    }
    rec_stream_close(s);
    rec_writer_close(w);
    return 40;
}

static void run(bool compress, int cases, const char *path, const char *mut)
{
    const char *mode = compress ? "lz4" : "stored";
    size_t total = make_recording(path, compress);
    static uint8_t file[1 << 18], work[1 << 18];
    FILE *fp = fopen(path, "rb");
    size_t size = fp ? fread(file, 1, sizeof file, fp) : 0;
    if (fp)
        fclose(fp);
    if (!tap_ok(size > 0 && size < sizeof file, "%s: recording of %zu bytes", mode, size))
        return;
    size_t bad = 0, errors = 0, ends = 0;
    for (int c = 0; c < cases; c++) {
        memcpy(work, file, size);
        int k = 1 + (int)(rnd() % 4);
        for (int j = 0; j < k; j++) {
            size_t p = rnd() % size;
            switch (rnd() % 4) {
            case 0: work[p] ^= (uint8_t)(1u << (rnd() % 8)); break;
            case 1: work[p] = (uint8_t)rnd(); break;
            case 2: work[p] = 0xff; break;
            default: work[p] = (uint8_t)(rnd() % 0x20); break;   /* small ints */
            }
        }
        rb_fix_crcs(work, size);
        int fd = open(mut, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, work, size) != (ssize_t)size || close(fd) < 0)
            TAP_BAIL("cannot write %s", mut);

        rec_reader *r;
        const rec_event *ev;
        size_t n = 0;
        int rc = rec_reader_open(&r, mut, 0);
        if (rc == 0) {
            while ((rc = rec_reader_next(r, &ev)) == 1 && n <= total * 2) {
                rec_value v;
                for (size_t i = 0; i < rec_type_nfields(rec_event_type(ev)); i++) {
                    if (rec_event_get(ev, i, &v) == 0 && v.kind == REC_REF && v.v.ref.entry) {
                        rec_value x;
                        const rec_entry *e = v.v.ref.entry;
                        for (size_t j = 0; j < rec_type_nfields(rec_entry_type(e)); j++)
                            rec_entry_get(e, j, &x);
                    }
                }
                rec_event_time_ns(ev);
                n++;
            }
            const char *msg = rec_reader_message(r);
            if (rc == 1 || (rc < 0) != (msg != NULL)) {
                if (bad++ < 5)
                    tap_diag("case %d: %zu events, rc %d, message %s", c, n, rc,
                             msg ? msg : "(none)");
            }
            rec_reader_close(r);
        }
        if (rc < 0)
            errors++;
        else
            ends++;
    }
    tap_ok(bad == 0, "%s: %d mutated recordings with valid checksums: %zu errors, "
           "%zu ends, %zu bad", mode, cases, errors, ends, bad);
}

int main(void)
{
    char path[256], mut[256];
    snprintf(path, sizeof path, "test-reader-fuzz.%d.rec", (int)getpid());
    snprintf(mut, sizeof mut, "test-reader-fuzz.%d.mut.rec", (int)getpid());
    /* longer runs: REC_FUZZ_CASES=N REC_FUZZ_SEED=S */
    int cases = getenv("REC_FUZZ_CASES") ? atoi(getenv("REC_FUZZ_CASES")) : CASES;
    if (getenv("REC_FUZZ_SEED"))
        rng = strtoull(getenv("REC_FUZZ_SEED"), NULL, 0) | 1;
    run(false, cases - cases / 4, path, mut);
    run(true, cases / 4, path, mut);
    unlink(mut);
    unlink(path);
    return tap_done();
}
