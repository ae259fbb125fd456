/*
 * tests/test-reader-damage.c - a real recording (several chunks, many
 * blocks, lz4 and stored) damaged everywhere:
 *  - cut at every byte offset: the reader must deliver exactly the events of
 *    the intact blocks before the cut (counted independently of the reader
 *    by walking the blocks here), then end cleanly (cut between chunks) or
 *    with REC_ETRUNCATED;
 *  - one bit flipped at every third byte: no crash, and the events delivered are
 *    a prefix of the intact recording's events (all of them on a clean end).
 * Then the committed recording tests/data/golden/basic.rec, cut and with a
 * byte xored with 0x5a at 122 offsets (the damage rec-dump was once run on
 * case by case in tests/test-dump-errors.sh, which keeps a few of them): the
 * events delivered are those of the intact blocks before the damage, then
 * the end or an error code, and the error message reads
 * "FILE: chunk I, offset N: WHAT" on one line, as the tools print it.
 */
#include <config.h>

#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <lz4.h>

#include "format.h"
#include "rec/record.h"
#include "tap.h"

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* Skip one definite-length CBOR item; returns the new position or 0. */
static size_t cbor_skip(const uint8_t *p, size_t n, size_t pos, int depth)
{
    if (pos >= n || depth > 16)
        return 0;
    unsigned major = p[pos] >> 5, ai = p[pos] & 31;
    uint64_t arg = ai;
    pos++;
    if (ai >= 24 && ai <= 27) {
        int w = 1 << (ai - 24);
        if (pos + (size_t)w > n)
            return 0;
        arg = 0;
        for (int i = 0; i < w; i++)
            arg = arg << 8 | p[pos + (size_t)i];
        pos += (size_t)w;
    } else if (ai > 27) {
        return 0;
    }
    switch (major) {
    case 2: case 3:
        return arg <= n - pos ? pos + arg : 0;
    case 4: case 5:
        for (uint64_t i = 0; i < (major == 5 ? 2 * arg : arg); i++)
            if (!(pos = cbor_skip(p, n, pos, depth + 1)))
                return 0;
        return pos;
    case 6:
        return cbor_skip(p, n, pos, depth + 1);
    default:
        return pos;
    }
}

/* ---- the layout of the intact file, found without the reader ---- */

#define MAXB 4096
static size_t block_end[MAXB], block_events[MAXB], nblocks;
static size_t chunk_end[64], nchunks;

static bool walk(const uint8_t *f, size_t size)
{
    size_t off = 0;
    while (off < size) {
        size_t csize = le(f + off + REC_CH_SIZE, 8), pos = off + REC_CHUNK_HEADER_SIZE;
        while (pos < off + csize) {
            const uint8_t *h = f + pos;
            size_t stored = le(h + REC_BH_STORED, 4), raw = le(h + REC_BH_RAW, 4);
            size_t events = 0;
            if (h[REC_BH_KIND] == REC_BLOCK_EVENTS) {
                uint8_t *buf = malloc(raw + 1);
                const uint8_t *data = h + REC_BLOCK_HEADER_SIZE;
                if (h[REC_BH_FLAGS] & REC_BLOCK_LZ4) {
                    if (LZ4_decompress_safe((const char *)data, (char *)buf, (int)stored,
                                            (int)raw) != (int)raw)
                        return false;
                } else {
                    memcpy(buf, data, raw);
                }
                size_t q = 0, items = 0;
                while (q < raw && (q = cbor_skip(buf, raw, q, 0)))
                    items++;
                free(buf);
                if (q != raw || items == 0)
                    return false;
                events = items - 1;      /* baseTicks first */
            }
            pos += REC_BLOCK_HEADER_SIZE + stored;
            if (nblocks == MAXB)
                return false;
            block_end[nblocks] = pos;
            block_events[nblocks++] = events;
        }
        off += csize;
        chunk_end[nchunks++] = off;
    }
    return off == size;
}

static size_t intact_events(size_t cut)
{
    size_t n = 0;
    for (size_t i = 0; i < nblocks && block_end[i] <= cut; i++)
        n += block_events[i];
    return n;
}

static bool is_chunk_end(size_t cut)
{
    for (size_t i = 0; i < nchunks; i++)
        if (chunk_end[i] == cut)
            return true;
    return false;
}

/* ---- event fingerprints, to compare what damaged files deliver ---- */

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

static uint64_t fp_value(const rec_value *v, int depth);

static uint64_t fp_entry(const rec_entry *e, int depth)
{
    uint64_t h = mix(rec_type_id(rec_entry_type(e)), rec_entry_id(e));
    rec_value v;
    if (depth > 3)
        return h;
    for (size_t i = 0; i < rec_type_nfields(rec_entry_type(e)); i++)
        if (rec_entry_get(e, i, &v) == 0)
            h = mix(h, fp_value(&v, depth + 1));
    return h;
}

static uint64_t fp_value(const rec_value *v, int depth)
{
    uint64_t h = (uint64_t)v->kind;
    switch (v->kind) {
    case REC_BOOL: return mix(h, v->v.b);
    case REC_UINT: return mix(h, v->v.u);
    case REC_INT: return mix(h, (uint64_t)v->v.i);
    case REC_STRING:
        for (size_t i = 0; i < v->v.str.len; i++)
            h = mix(h, (unsigned char)v->v.str.s[i]);
        return h;
    case REC_REF:
        return mix(mix(h, v->v.ref.id), v->v.ref.entry ? fp_entry(v->v.ref.entry, depth) : 7);
    case REC_ARRAY:
        for (size_t i = 0; i < v->v.array.n; i++)
            h = mix(h, fp_value(&v->v.array.items[i], depth));
        return h;
    default:
        return h;
    }
}

static uint64_t fp_event(const rec_event *ev)
{
    uint64_t h = mix(rec_type_id(rec_event_type(ev)), rec_event_ticks(ev));
    rec_value v;
    for (size_t i = 0; i < rec_type_nfields(rec_event_type(ev)); i++)
        if (rec_event_get(ev, i, &v) == 0)
            h = mix(h, fp_value(&v, 0));
    return h;
}

/* Read path; fps[i] receives fingerprints when want is NULL, else events
 * are compared with want. Returns events read, *rc the final code, *same
 * false at the first event that differs. */
static size_t read_all(const char *path, uint64_t *fps, size_t max, const uint64_t *want,
                       int *rc, bool *same)
{
    rec_reader *r;
    const rec_event *ev;
    size_t n = 0;
    *same = true;
    if ((*rc = rec_reader_open(&r, path, 0)) < 0)
        return 0;
    while ((*rc = rec_reader_next(r, &ev)) == 1) {
        uint64_t f = fp_event(ev);
        if (want)
            *same = *same && n < max && want[n] == f;
        else if (n < max)
            fps[n] = f;
        n++;
    }
    rec_reader_close(r);
    return n;
}

static size_t make_recording(const char *path, bool compress)
{
    rec_writer_options opt;
    rec_writer *w;
    rec_stream *s;
    rec_id str[4], thr[2], frm[6], stk[3];
    size_t n = 0;
    rec_writer_options_init(&opt);
    opt.overwrite = true;
    opt.no_compress = !compress;
    if (rec_writer_open(&w, path, &opt) < 0 || rec_stream_open(w, &s) < 0)
        TAP_BAIL("cannot write %s", path);
    const char *names[] = { "main", "worker", "f\xc3\xbc\x6e\x63", "libx.so" };
    for (int i = 0; i < 4; i++)
        rec_intern_cstr(w, names[i], &str[i]);
    uint64_t t0 = rec_now_ns();
    for (int c = 0; c < 3; c++) {
        for (int b = 0; b < 4; b++) {
            for (int i = 0; i < 4; i++) {
                int k = (c * 4 + b) * 4 + i;
                struct rec_Thread th = { (uint64_t)(100 + k % 2), str[k % 2], 99 };
                rec_intern_Thread(w, &th, &thr[k % 2]);
                struct rec_Frame fr = { str[2 + k % 2], str[3], (uint64_t)k * 16, 0,
                                        (uint64_t)k, k % 3 == 0 };
                rec_intern_Frame(w, &fr, &frm[k % 6]);
                struct rec_StackTrace st = { k % 5 == 0, frm, (size_t)(1 + k % 6) };
                rec_intern_StackTrace(w, &st, &stk[k % 3]);
                struct rec_CPUTimeSample e = { thr[k % 2], 1000000 + (uint64_t)k, k % 7 == 3,
                                               false, k % 7 == 3 ? 0 : stk[k % 3],
                                               t0 + (uint64_t)k * 3000 - (k % 4 ? 0 : 5000) };
                rec_emit_CPUTimeSample(s, &e);
                n++;
            }
            rec_writer_flush(w);
        }
        if (c < 2)
            rec_writer_rotate(w);
    }
    rec_stream_close(s);
    if (rec_writer_close(w) < 0)
        TAP_BAIL("writer close failed");
    return n;
}

static void damage(bool compress)
{
    const char *mode = compress ? "lz4" : "stored";
    char path[256], cut[256];
    snprintf(path, sizeof path, "test-reader-damage.%d.rec", (int)getpid());
    snprintf(cut, sizeof cut, "test-reader-damage.%d.cut.rec", (int)getpid());
    size_t total = make_recording(path, compress);

    FILE *fp = fopen(path, "rb");
    static uint8_t file[1 << 20];
    size_t size = fp ? fread(file, 1, sizeof file, fp) : 0;
    if (fp)
        fclose(fp);
    nblocks = nchunks = 0;
    bool walked = size > 0 && size < sizeof file && walk(file, size);
    if (!tap_ok(walked, "%s: %zu bytes, %zu chunks, %zu blocks walked", mode, size, nchunks,
                nblocks))
        return;
    static uint64_t fps[4096];
    bool same;
    int rc;
    size_t n = read_all(path, fps, 4096, NULL, &rc, &same);
    tap_ok(n == total && rc == 0 && intact_events(size) == total && nchunks == 3,
           "%s: intact: %zu of %zu events", mode, n, total);

    /* every cut, from the longest: shrinking one file costs no rewriting */
    size_t bad_cut = 0;
    int fd = open(cut, O_WRONLY | O_TRUNC | O_CREAT, 0644);
    if (fd < 0 || write(fd, file, size) != (ssize_t)size)
        TAP_BAIL("cannot write %s", cut);
    for (size_t c = size; c-- > 0;) {
        if (ftruncate(fd, (off_t)c) < 0)
            TAP_BAIL("ftruncate");
        size_t want = intact_events(c);
        n = read_all(cut, NULL, 4096, fps, &rc, &same);
        int want_rc = c > 0 && is_chunk_end(c) ? 0 : REC_ETRUNCATED;
        if (n != want || rc != want_rc || !same) {
            if (bad_cut++ < 5)
                tap_diag("%s: cut at %zu: %zu events (want %zu), rc %d (want %d)%s", mode,
                         c, n, want, rc, want_rc, same ? "" : ", events differ");
        }
    }
    tap_ok(bad_cut == 0, "%s: cut at each of %zu offsets: exactly the intact prefix (%zu bad)",
           mode, size, bad_cut);

    /* one bit flipped at every third byte (a different bit each time) */
    size_t bad_flip = 0, errors = 0, clean = 0;
    if (pwrite(fd, file, size, 0) != (ssize_t)size)
        TAP_BAIL("cannot write %s", cut);
    size_t nflips = 0;
    for (size_t p = 0; p < size; p += 3, nflips++) {
        uint8_t b = file[p] ^ (uint8_t)(1u << (p % 8));
        if (pwrite(fd, &b, 1, (off_t)p) != 1)
            TAP_BAIL("pwrite");
        n = read_all(cut, NULL, 4096, fps, &rc, &same);
        if (rc < 0)
            errors++;
        else
            clean++;
        if (!same || rc > 0 || (rc == 0 && n != total) || n > total) {
            if (bad_flip++ < 5)
                tap_diag("%s: flip at %zu: %zu events, rc %d%s", mode, p, n, rc,
                         same ? "" : ", events differ");
        }
        if (pwrite(fd, &file[p], 1, (off_t)p) != 1)
            TAP_BAIL("pwrite");
    }
    close(fd);
    tap_ok(bad_flip == 0, "%s: bit flips at %zu offsets: %zu errors, %zu clean, %zu bad",
           mode, nflips, errors, clean, bad_flip);
    unlink(cut);
    unlink(path);
}

/* ---- tests/data/golden/basic.rec damaged as test-dump-errors.sh did ---- */

static bool known_code(int rc)
{
    static const int codes[] = { REC_ENOMEM, REC_EIO, REC_EINVAL, REC_ECORRUPT,
                                 REC_ETRUNCATED, REC_EVERSION, REC_ETOOBIG, REC_EMAGIC };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (rc == codes[i])
            return true;
    return false;
}

/* One damaged file: the checks rec-dump --ndjson made on it, in process.
 * Returns false (with a diagnostic) if one fails; *err is set on an error,
 * *nread to the events delivered. */
static bool golden_case(const char *kind, size_t at, const char *path, size_t want_min,
                        const uint64_t *fps, size_t total, const regex_t *re, bool *err,
                        size_t *nread)
{
    rec_reader *r;
    const rec_event *ev;
    size_t n = 0;
    bool same = true;
    int rc = rec_reader_open(&r, path, 0);
    if (rc < 0) {
        tap_diag("%s at %zu: open: rc %d", kind, at, rc);
        return false;
    }
    while ((rc = rec_reader_next(r, &ev)) == 1) {
        same = same && n < total && fps[n] == fp_event(ev);
        n++;
    }
    const char *msg = rec_reader_message(r);
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", msg ? msg : "(none)");
    rec_reader_close(r);
    *err = rc < 0;
    *nread = n;
    /* exit 0 or 1: the end, or a known error code */
    if (rc != 0 && !known_code(rc)) {
        tap_diag("%s at %zu: rc %d", kind, at, rc);
        return false;
    }
    /* a prefix of the intact events, at least those before the damage, all
     * of them on a clean end */
    if (!same || n < want_min || (rc == 0 && n != total)) {
        tap_diag("%s at %zu: %zu events (want %s%zu of %zu)%s", kind, at, n,
                 rc == 0 ? "" : "at least ", rc == 0 ? total : want_min, total,
                 same ? "" : ", events differ");
        return false;
    }
    /* one located line: FILE: chunk I, offset N: WHAT */
    if (rc < 0 && (!msg || regexec(re, copy, 0, NULL, 0) != 0 ||
                   strncmp(copy, path, strlen(path)) != 0 || copy[strlen(path)] != ':')) {
        tap_diag("%s at %zu: rc %d, message: %s", kind, at, rc, copy);
        return false;
    }
    return true;
}

static void golden(void)
{
    char src[1024], path[256];
    const char *top = getenv("top_srcdir");
    snprintf(src, sizeof src, "%s/tests/data/golden/basic.rec", top ? top : ".");
    snprintf(path, sizeof path, "test-reader-damage.%d.golden.rec", (int)getpid());

    FILE *fp = fopen(src, "rb");
    static uint8_t file[1 << 20];
    size_t size = fp ? fread(file, 1, sizeof file, fp) : 0;
    if (fp)
        fclose(fp);
    nblocks = nchunks = 0;
    bool walked = size > 0 && size < sizeof file && walk(file, size);
    if (!tap_ok(walked, "golden: %s: %zu bytes, %zu chunks, %zu blocks walked", src, size,
                nchunks, nblocks))
        return;
    static uint64_t fps[4096];
    bool same;
    int rc;
    size_t total = read_all(src, fps, 4096, NULL, &rc, &same);
    tap_ok(rc == 0 && total > 0 && total == intact_events(size),
           "golden: intact: %zu events, rc %d", total, rc);

    regex_t re;
    if (regcomp(&re, "^[^:\n]+: chunk [0-9]+, offset [0-9]+: [^\n]+$",
                REG_EXTENDED | REG_NOSUB) != 0)
        TAP_BAIL("regcomp");
    /* the offsets and the damage of test-dump-errors.sh: a cut (head -c)
     * and one byte xored with 0x5a, every size/61+1 bytes from 0 */
    size_t step = size / 61 + 1, cases = 0, bad = 0, errors = 0;
    for (int flip = 0; flip < 2; flip++) {
        const char *kind = flip ? "flip" : "cut";
        size_t kbad = 0, kcases = 0;
        for (size_t i = 0; i < size; i += step, cases++, kcases++) {
            int fd = open(path, O_WRONLY | O_TRUNC | O_CREAT, 0644);
            size_t len = flip ? size : i;
            if (fd < 0 || write(fd, file, len) != (ssize_t)len)
                TAP_BAIL("cannot write %s", path);
            if (flip) {
                uint8_t b = file[i] ^ 0x5a;
                if (pwrite(fd, &b, 1, (off_t)i) != 1)
                    TAP_BAIL("pwrite");
            }
            close(fd);
            bool err = false;
            size_t n = 0, want = intact_events(i);
            if (!golden_case(kind, i, path, want, fps, total, &re, &err, &n))
                kbad++;
            else if (!flip && (n != want || err == (i > 0 && is_chunk_end(i)))) {
                /* a cut: exactly the intact blocks before it, then the end
                 * between chunks or an error */
                tap_diag("cut at %zu: %zu events (want %zu), %s", i, n, want,
                         err ? "error" : "clean end");
                kbad++;
            }
            errors += err;
        }
        tap_ok(kbad == 0, "golden: %s at %zu offsets (every %zu bytes): prefix, code, "
               "located one-line message (%zu bad)", kind, kcases, step, kbad);
        bad += kbad;
    }
    regfree(&re);
    unlink(path);
    tap_ok(errors >= cases / 2, "golden: most damage is reported as an error (%zu of %zu)",
           errors, cases);
}

int main(void)
{
    damage(true);
    damage(false);
    golden();
    return tap_done();
}
