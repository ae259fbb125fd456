/* tests/test-headers.c - each public header compiles on its own (this file
 * and tests/test-headers-record.c include one each, first), and the library
 * reports the version of the headers it was built with. */
#include <rec/sampler.h>

#include <string.h>
#include "tap.h"

int headers_record_version(void);

int main(void)
{
    /* Not linked with the sampler (its constructor would run): the types
     * and codes it declares are enough to show the header stands alone. */
    recs_options opt = { .stack_depth = 1 };
    recs_stats st = { .samples = 0 };

    tap_ok(opt.stack_depth == 1 && st.samples == 0 && REC_EEXIST < 0,
           "<rec/sampler.h> alone declares its types and the REC_E* codes");
    tap_ok(rec_version() == REC_VERSION_NUMBER,
       "rec_version() is the headers' REC_VERSION_NUMBER (0x%06x)",
       rec_version());
    tap_ok(strcmp(rec_version_string(), REC_VERSION_STRING) == 0,
       "rec_version_string() is \"%s\"", REC_VERSION_STRING);
    tap_ok(headers_record_version() == REC_VERSION_NUMBER,
       "<rec/record.h> alone gives the version");
    tap_ok(strcmp(rec_strerror(REC_ETOOBIG), rec_strerror(REC_EINVAL)) != 0,
       "REC_ETOOBIG has its own text");
    return tap_done();
}
