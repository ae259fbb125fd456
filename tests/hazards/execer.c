/* execer: burn, try to exec a missing file (must fail and go on), burn,
 * exec itself with "child" (which burns and exits 5). */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "hazard.h"

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child")) {
        hz_burn_ms(100);
        return 5;
    }
    hz_burn_ms(100);
    char *bad[] = { (char *)"/nonexistent/rec-test", NULL };
    if (execv(bad[0], bad) == 0 || errno != ENOENT)
        return 3;
    hz_burn_ms(50);
    char *args[] = { argv[0], (char *)"child", NULL };
    execv("/proc/self/exe", args);
    return 4;
}
