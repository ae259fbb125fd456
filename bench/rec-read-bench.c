/*
 * bench/rec-read-bench.c - measure the librecord reader.
 *
 *   rec-read-bench [-r repeats] [--touch] FILE.rec
 *
 * Reads every event (best of `repeats` passes) and prints events, wall and
 * CPU ns per event (CPU time is what a loaded machine does not distort) and
 * the peak RSS. With --touch it also does what rec-summary does
 * per sample: the thread, the period and the top frame's function.
 */
#include <config.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <rec/record.h>

static double now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int repeats = 3;
    bool touch = false;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            repeats = atoi(argv[++i]);
        else if (strcmp(argv[i], "--touch") == 0)
            touch = true;
        else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: rec-read-bench [-r repeats] [--touch] FILE.rec\n");
        return 2;
    }
    double best = 1e30, best_cpu = 1e30;
    unsigned long long n = 0, sum = 0;
    for (int k = 0; k < repeats; k++) {
        rec_reader *r;
        const rec_event *ev;
        int rc = rec_reader_open(&r, path, 0);
        if (rc < 0) {
            fprintf(stderr, "%s: %s\n", path, rec_strerror(rc));
            return 1;
        }
        const rec_type *sample = NULL;
        long f_thread = -1, f_period = -1, f_stack = -1;
        n = 0;
        double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
        while ((rc = rec_reader_next(r, &ev)) == 1) {
            n++;
            if (!touch)
                continue;
            const rec_type *t = rec_event_type(ev);
            if (t != sample) {
                if (strcmp(rec_type_name(t), "CPUTimeSample") != 0)
                    continue;
                sample = t;
                f_thread = rec_type_field_index(t, "eventThread");
                f_period = rec_type_field_index(t, "samplingPeriod");
                f_stack = rec_type_field_index(t, "stackTrace");
            }
            rec_value th, p, st, fr, fn;
            rec_event_get(ev, (size_t)f_thread, &th);
            rec_event_get(ev, (size_t)f_period, &p);
            rec_event_get(ev, (size_t)f_stack, &st);
            sum += p.v.u + th.v.ref.id;
            if (st.kind == REC_REF && st.v.ref.entry &&
                rec_entry_get(st.v.ref.entry, 1, &fr) == 0 && fr.kind == REC_ARRAY &&
                fr.v.array.n && fr.v.array.items[0].v.ref.entry &&
                rec_entry_get(fr.v.array.items[0].v.ref.entry, 0, &fn) == 0)
                sum += fn.kind;
        }
        double dt = now(CLOCK_MONOTONIC) - t0, dc = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
        if (rc < 0)
            fprintf(stderr, "%s\n", rec_reader_message(r));
        rec_reader_close(r);
        if (dt < best)
            best = dt;
        if (dc < best_cpu)
            best_cpu = dc;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("%llu events, %.3f s wall (%.1f ns/event), %.3f s CPU (%.1f ns/event), "
           "max RSS %ld KiB%s (%llu)\n", n, best, n ? best * 1e9 / (double)n : 0.0,
           best_cpu, n ? best_cpu * 1e9 / (double)n : 0.0, ru.ru_maxrss,
           touch ? ", touched" : "", sum & 1);
    return 0;
}
