/* closer: a daemon that closes every fd above stderr in one call -
 * closefrom(), close_range() or the raw close_range system call - then
 * burns CPU. rec must keep recording through it. Exit 0 when done, 77 if
 * the call is not available here. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "hazard.h"

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "closefrom";

    hz_burn_ms(50);
    if (!strcmp(mode, "closefrom")) {
        closefrom(3);
    } else if (!strcmp(mode, "close_range")) {
        if (close_range(3, ~0u, 0) != 0)
            return errno == ENOSYS ? 77 : 2;
    } else if (!strcmp(mode, "syscall")) {
#ifdef SYS_close_range
        if (syscall(SYS_close_range, 3, ~0u, 0) != 0)
            return errno == ENOSYS ? 77 : 2;
#else
        return 77;
#endif
    } else {
        return 9;
    }
    hz_burn_ms(250);
    return 0;
}
