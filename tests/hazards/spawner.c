/* spawner: while burning CPU, start children with vfork+exec, posix_spawn
 * and system(); exit 0 if all of them ran /bin/true successfully. */
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include "hazard.h"

extern char **environ;

/* In its own function: vfork returns twice into this frame only. */
__attribute__((noinline)) static int run_vfork(void)
{
    int st;
    pid_t pid = vfork();
    if (pid == 0) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(127);
    }
    return pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
           WEXITSTATUS(st);
}

int main(void)
{
    int bad = 0;
    for (int i = 0; i < 5; i++) {
        int st;
        pid_t pid;
        hz_burn_ms(10);
        if (run_vfork())
            bad |= 1;
        char *args[] = { (char *)"true", NULL };
        if (posix_spawn(&pid, "/bin/true", NULL, NULL, args, environ) != 0 ||
            waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
            bad |= 2;
        if (system("/bin/true") != 0)
            bad |= 4;
    }
    hz_burn_ms(10);
    return bad;
}
