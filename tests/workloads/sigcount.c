/*
 * tests/workloads/sigcount.c - counts the SIGTERMs it gets: a program that
 * shuts down gracefully on the first and would be forced by a second. It
 * burns CPU in two threads until the first SIGTERM, waits 500 ms more for
 * another, then prints "term N code C from PID" (the last one's si_code
 * and sender) and exits 0.
 *
 * Usage: sigcount
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static _Atomic int terms, last_code, last_pid;

static void on_term(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    atomic_store(&last_code, si->si_code);
    atomic_store(&last_pid, si->si_pid);
    atomic_fetch_add(&terms, 1);
}

static void *burn(void *arg)
{
    volatile unsigned long x = 0;
    (void)arg;
    while (!atomic_load(&terms))
        x++;
    return NULL;
}

int main(void)
{
    struct sigaction sa;
    pthread_t t;
    struct timespec d = { 0, 500000000 };

    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_term;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    printf("ready\n");
    fflush(stdout);
    pthread_create(&t, NULL, burn, NULL);
    burn(NULL);
    pthread_join(t, NULL);
    while (nanosleep(&d, &d) != 0)
        ;
    printf("term %d code %d from %d\n", atomic_load(&terms),
           atomic_load(&last_code), atomic_load(&last_pid));
    return 0;
}
