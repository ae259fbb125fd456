/* forker [FORKS]: a busy thread runs while main forks FORKS children
 * (each burns a little and leaves with exit(), which runs the atexit
 * handlers and destructors in the child) and waits for them. Exit 0 if
 * every child exited with status 7. */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>
#include "hazard.h"

static atomic_int stop;

static void *busy(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop))
        hz_work(20000);
    return NULL;
}

int main(int argc, char **argv)
{
    int forks = (int)hz_arg(argc, argv, 1, 20), bad = 0;
    pthread_t t;
    /* A large address space makes fork's clone() slow, as in the
     * restart-loop reports. */
    size_t big = 256u << 20;
    char *mem = malloc(big);

    if (mem)
        for (size_t i = 0; i < big; i += 4096)
            mem[i] = 1;
    pthread_create(&t, NULL, busy, NULL);
    for (int i = 0; i < forks; i++) {
        hz_burn_ms(5);
        pid_t pid = fork();
        if (pid < 0)
            return 2;
        if (pid == 0) {
            hz_burn_ms(20);
            exit(7);
        }
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 7)
            bad = 1;
    }
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    free(mem);
    return bad;
}
