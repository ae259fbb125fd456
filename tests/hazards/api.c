/* api OUTPUT: drive the sampler through <rec/sampler.h> (linked, not
 * preloaded): start, burn, change the throttle, drain, stop, and start a
 * second recording appended to the same file. Exit 0 if every call
 * succeeded and samples were taken. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <rec/record.h>
#include <rec/sampler.h>
#include "hazard.h"

static void *worker(void *arg)
{
    (void)arg;
    hz_burn_ms(100);
    return NULL;
}

int main(int argc, char **argv)
{
    recs_options o;
    recs_stats st;
    pthread_t t;
    int rc;

    if (argc < 2)
        return 2;
    recs_options_init(&o);
    o.output = argv[1];
    o.engine = getenv("HZ_ENGINE");   /* the suite's engine */
    o.throttle = "5ms";
    o.overwrite = true;
    if ((rc = recs_start(&o)) < 0) {
        fprintf(stderr, "recs_start: %s\n", rec_strerror(rc));
        return 1;
    }
    if (recs_start(&o) != REC_EINVAL)
        return 10;
    pthread_create(&t, NULL, worker, NULL);
    hz_burn_ms(100);
    if (recs_set_throttle("1ms") < 0 || recs_set_throttle("bogus") != REC_EINVAL)
        return 11;
    hz_burn_ms(50);
    /* A longer period: the partial 1 ms period is carried into it. */
    if (recs_set_throttle("7ms") < 0)
        return 11;
    hz_burn_ms(30);
    pthread_join(t, NULL);
    if (recs_drain() < 0)
        return 12;
    if (recs_stop() < 0)
        return 13;
    recs_get_stats(&st);
    if (st.samples == 0 || st.period_ns != 7000000)
        return 14;
    o.append = true;
    o.overwrite = false;
    o.throttle = "200/s";
    if (recs_start(&o) < 0)
        return 15;
    hz_burn_ms(50);
    if (recs_stop() < 0 || recs_stop() != 0)
        return 16;
    return 0;
}
