/* killed SIG [MS [TWICE]]: burn in two threads for MS ms of wall time, and
 * on until the recording holds samples (SIGKILL: no chance to finish;
 * SIGTERM: default action, which the sampler intercepts to finish the
 * file first). TWICE: the signal is sent to the process, then again 2 ms
 * later from another thread, as a group signal and a copy forwarded by a
 * launcher arrive: the second lands on another thread while the first
 * one's handler finishes the recording. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <rec/sampler.h>
#include "hazard.h"

static void *spin(void *arg)
{
    (void)arg;
    for (;;)
        hz_work(20000);
    return NULL;
}

static off_t size_of(const char *path)
{
    struct stat st;
    return path && stat(path, &st) == 0 ? st.st_size : -1;
}

/* Under rec: true once samples have been written and a flush has come
 * since. MS of wall time alone is not enough on a busy machine: the
 * threads may not have run a period each, nor the sampler thread flushed,
 * before the signal. Resolved at run time: rec preloads the library. */
static bool flushed_samples(void)
{
    static int (*get_stats)(recs_stats *, size_t);
    static bool looked;
    static off_t at = -1;
    const char *out = getenv("REC_OUTPUT");
    recs_stats st;

    if (!looked) {
        get_stats = (int (*)(recs_stats *, size_t))dlsym(RTLD_DEFAULT,
                                                         "recs_get_stats_sized");
        looked = true;
    }
    if (!get_stats || !out)
        return true;
    if (at < 0) {
        if (get_stats(&st, sizeof st) < 0 || st.samples == 0)
            return false;
        /* Written to the chunk; on disk at the next flush. */
        at = size_of(out);
        return false;
    }
    return size_of(out) > at;
}

static int again_sig;
static long again_us;

static void *again(void *arg)
{
    struct timespec d = { 0, again_us * 1000 };
    (void)arg;
    if (again_us)
        nanosleep(&d, NULL);
    kill(getpid(), again_sig);
    for (;;)
        hz_work(20000);
    return NULL;
}

int main(int argc, char **argv)
{
    int sig = (int)hz_arg(argc, argv, 1, SIGKILL);
    double ms = hz_arg(argc, argv, 2, 600);
    bool twice = hz_arg(argc, argv, 3, 0) != 0;
    again_us = (long)hz_arg(argc, argv, 4, 2000);
    struct timespec t0, t;
    pthread_t a;

    pthread_create(&a, NULL, spin, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        hz_work(20000);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1e3 + (t.tv_nsec - t0.tv_nsec) / 1e6 < ms ||
             !flushed_samples());
    if (twice) {
        pthread_t b;
        again_sig = sig;
        pthread_create(&b, NULL, again, NULL);
        kill(getpid(), sig);    /* to this thread: it does not block it */
        return 9;
    }
    raise(sig);
    return 9;
}
