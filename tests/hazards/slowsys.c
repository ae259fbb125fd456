/* slowsys: slow system calls while the sampler's signals arrive. A thread
 * alternates CPU bursts with blocking calls: read() on a pipe whose writer
 * is late, write() into a full pipe whose reader is late, nanosleep(),
 * poll(). SA_RESTART must keep read() and write() from failing with EINTR
 * (exit 1 otherwise; data is checked too). nanosleep and poll are never
 * restarted by the kernel (signal(7)): their EINTR count is printed on
 * stderr for the test's log, and the program retries them as any program
 * must. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "hazard.h"

static int p1[2];

static void *late_writer(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++) {
        struct timespec ts = { 0, 5000000 };
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
        char c = (char)('a' + i);
        if (write(p1[1], &c, 1) != 1)
            return (void *)1;
    }
    return NULL;
}

int main(void)
{
    pthread_t w;
    int read_eintr = 0, sleep_eintr = 0, poll_eintr = 0, bad = 0;

    if (pipe(p1) != 0)
        return 2;
    pthread_create(&w, NULL, late_writer, NULL);
    for (int i = 0; i < 20; i++) {
        char c;
        ssize_t r;
        hz_burn_ms(3);
        /* The CPU burst left a timer signal pending or about to be. */
        r = read(p1[0], &c, 1);
        if (r < 0 && errno == EINTR)
            read_eintr++;
        else if (r != 1 || c != (char)('a' + i))
            bad = 1;
        hz_burn_ms(3);
        struct timespec ts = { 0, 1000000 };
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            sleep_eintr++;
        hz_burn_ms(3);
        while (poll(NULL, 0, 1) < 0 && errno == EINTR)
            poll_eintr++;
    }
    pthread_join(w, NULL);
    fprintf(stderr, "slowsys: read EINTR %d, nanosleep EINTR %d, poll EINTR %d\n",
            read_eintr, sleep_eintr, poll_eintr);
    return bad || read_eintr ? 1 : 0;
}
