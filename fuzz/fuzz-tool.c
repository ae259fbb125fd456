/*
 * fuzz/fuzz-tool.c - the libFuzzer entry point of every fuzz target: the
 * reader alone (FUZZ_READER) or a tool's whole main path in each of its
 * modes (FUZZ_DUMP, FUZZ_SUMMARY, FUZZ_CPU, FUZZ_FLAME; the tool's main()
 * is compiled as fuzz_tool_main()). The input is a recording: its chunk and block
 * checksums are recomputed first, so that mutations reach the structure,
 * lz4 and CBOR behind them instead of stopping at a CRC.
 *
 * Linked with -fsanitize=fuzzer by --enable-fuzzing (fuzz/fuzz-*), and
 * with fuzz/replay.c into the replay programs that make check runs over
 * the committed seeds and findings (tests/data/fuzz/).
 */
#include "config.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rec/record.h>

#include "recbuild.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The recording lives in a memfd named by its /proc path: no file system
 * traffic per input. */
static int rec_fd = -1;
static char rec_path[64];

#ifdef FUZZ_READER
/* Walk every value reachable from the event, references included (pool
 * entries are acyclic by the reader's contract: depth bounds it anyway). */
static void touch_value(const rec_value *v, int depth)
{
    if (depth > 8)
        return;
    if (v->kind == REC_ARRAY) {
        for (size_t i = 0; i < v->v.array.n; i++)
            touch_value(&v->v.array.items[i], depth + 1);
    } else if (v->kind == REC_REF && v->v.ref.entry) {
        const rec_type *t = rec_entry_type(v->v.ref.entry);
        size_t n = t ? rec_type_nfields(t) : 0;
        for (size_t i = 0; i < n; i++) {
            rec_value f;
            if (rec_entry_get(v->v.ref.entry, i, &f) == 0)
                touch_value(&f, depth + 1);
        }
    }
}

static void run(void)
{
    rec_reader *r;
    const rec_event *ev;
    if (rec_reader_open(&r, rec_path, 0) < 0)
        return;
    while (rec_reader_next(r, &ev) > 0) {
        const rec_type *t = rec_event_type(ev);
        (void)rec_event_time_ns(ev);
        size_t n = t ? rec_type_nfields(t) : 0;
        for (size_t i = 0; i < n; i++) {
            rec_value v;
            if (rec_event_get(ev, i, &v) == 0)
                touch_value(&v, 0);
        }
    }
    (void)rec_reader_message(r);
    (void)rec_reader_warning(r);
    rec_reader_close(r);
}
#else
#undef main
int fuzz_tool_main(int argc, char **argv);

/* Each mode is one command line; the recording is appended. */
static const char *const modes[][12] = {
#if defined(FUZZ_DUMP)
    { "rec-dump" },
    { "rec-dump", "--ndjson", "--stack-depth", "0" },
    { "rec-dump", "--metadata" },
    { "rec-dump", "--ndjson", "--events", "CPU*,Thread*", "--threads",
      "main,1*", "--since", "+1ms", "--until", "+10s" },
    { "rec-dump", "--format", "collapsed", "--group", "thread" },
    { "rec-dump", "--format", "pprof", "--weight", "samples" },
    { "rec-dump", "--format", "jfr" },
#elif defined(FUZZ_SUMMARY)
    { "rec-summary" },
    { "rec-summary", "--json" },
#elif defined(FUZZ_CPU)
    { "rec-cpu" },
    { "rec-cpu", "--json", "--hot", "3" },
    { "rec-cpu", "--csv" },
    { "rec-cpu", "--csv", "--interval", "10ms" },
    { "rec-cpu", "--json", "--interval", "1ms" },
    { "rec-cpu", "--interval", "100ms", "--hot", "0" },
    { "rec-cpu", "--svg", "/dev/null", "--html", "/dev/null" },
    { "rec-cpu", "--threads", "main,2", "--since", "+1ms", "--until",
      "+1s" },
#elif defined(FUZZ_FLAME)
    { "rec-flame", "-o", "/dev/null" },
    { "rec-flame", "-o", "/dev/null", "--threads", "main,1*", "--since",
      "+1ms" },
    /* The recording against itself: "@" is its path too. */
    { "rec-flame", "-o", "/dev/null", "--diff", "@" },
#else
#error "define one of FUZZ_READER, FUZZ_DUMP, FUZZ_SUMMARY, FUZZ_CPU, FUZZ_FLAME"
#endif
};

static void run(void)
{
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        char *argv[16];
        int argc = 0;
        while (argc < 12 && modes[m][argc]) {
            argv[argc] = strcmp(modes[m][argc], "@") ? (char *)modes[m][argc]
                                                     : rec_path;
            argc++;
        }
        argv[argc++] = rec_path;
        argv[argc] = NULL;
        optind = 0;         /* glibc: start over, as for a new program */
        (void)fuzz_tool_main(argc, argv);
        fflush(stdout);
    }
}
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    rec_fd = memfd_create("rec-fuzz", 0);
    if (rec_fd < 0) {
        perror("memfd_create");
        exit(1);
    }
    snprintf(rec_path, sizeof rec_path, "/proc/self/fd/%d", rec_fd);
    /* The tools' reports are not what is tested: keep them off the
     * terminal (stderr stays, for the sanitizers' reports). */
    if (!freopen("/dev/null", "w", stdout)) {
        perror("/dev/null");
        exit(1);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    rb_fix_crcs(copy, size);
    if (ftruncate(rec_fd, 0) < 0 || pwrite(rec_fd, copy, size, 0)
        != (ssize_t)size) {
        perror("memfd");
        exit(1);
    }
    free(copy);
    run();
    return 0;
}
