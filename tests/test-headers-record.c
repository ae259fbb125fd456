/* tests/test-headers-record.c - <rec/record.h> compiles on its own. */
#include <rec/record.h>

int headers_record_version(void);
int headers_record_version(void)
{
    return (int)rec_version();
}
