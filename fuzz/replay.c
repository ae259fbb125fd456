/*
 * fuzz/replay.c - run a fuzz target's entry point over files and
 * directories of inputs without libFuzzer, so that make check replays the
 * seeds and every finding (tests/data/fuzz/<target>/) in any build, the
 * sanitizer build included. Exit 0 when every input was run; a crash or a
 * sanitizer report is the failure.
 */
#include "config.h"

/* The tool built alongside has its main() renamed; this one stays. */
#undef main

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 1 << 16, n = 0, got;
    uint8_t *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "%s: out of memory\n", path);
        return -1;
    }
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Files of a directory in name order, so that a failure is reproducible. */
static int replay_dir(const char *dir, unsigned *count)
{
    DIR *d = opendir(dir);
    if (!d) {
        perror(dir);
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof *names);
            if (!nn)
                break;
            names = nn;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        if (!(names[n] = malloc(len)))
            break;
        snprintf(names[n++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
            if (replay_file(names[i]) < 0)
                rc = -1;
            (*count)++;
        }
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    unsigned count = 0;
    int rc = 0;
    LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) < 0) {
            perror(argv[i]);
            rc = 1;
        } else if (S_ISDIR(st.st_mode)) {
            if (replay_dir(argv[i], &count) < 0)
                rc = 1;
        } else {
            if (replay_file(argv[i]) < 0)
                rc = 1;
            count++;
        }
    }
    fprintf(stderr, "replayed %u inputs\n", count);
    return rc;
}
