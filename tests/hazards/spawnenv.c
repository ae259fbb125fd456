/* spawnenv: start "env" with posix_spawnp() (its output on our stdout)
 * and wait for it; exit with its status. What a descendant that is not
 * recorded inherits. */
#include <spawn.h>
#include <sys/wait.h>
#include "hazard.h"

extern char **environ;

int main(void)
{
    char *argv[] = { "env", NULL };
    pid_t pid;
    int st;

    hz_burn_ms(20);
    if (posix_spawnp(&pid, "env", NULL, NULL, argv, environ) != 0 ||
        waitpid(pid, &st, 0) != pid)
        return 9;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 8;
}
