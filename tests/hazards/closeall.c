/* closeall: a daemon that closes every inherited fd above stderr, then
 * opens its log, which it also dup2()s onto every number it closed (any
 * of them could have been handed out again by open()). rec must never
 * write into the program's file. Exit 0 if the log holds exactly what the
 * program wrote. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "hazard.h"

int main(int argc, char **argv)
{
    static const char line[] = "program log line\n";
    int fds[4096], n = 0, fd, i;
    char buf[8192];
    DIR *d;
    struct dirent *e;

    if (argc < 2)
        return 9;
    if (!(d = opendir("/proc/self/fd")))
        return 9;
    while ((e = readdir(d)) && n < 4096) {
        int f = atoi(e->d_name);
        if (f > 2 && f != dirfd(d))
            fds[n++] = f;
    }
    closedir(d);
    for (i = 0; i < n; i++)
        close(fds[i]);
    fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return 9;
    for (i = 0; i < n; i++)
        if (fds[i] != fd)
            dup2(fd, fds[i]);
    for (i = 0; i < 20; i++) {
        if (write(fd, line, sizeof line - 1) != (ssize_t)(sizeof line - 1))
            return 8;
        hz_burn_ms(20);       /* rec flushes meanwhile */
    }
    ssize_t got = pread(fd, buf, sizeof buf, 0);
    if (got != 20 * (ssize_t)(sizeof line - 1))
        return 1;
    for (i = 0; i < 20; i++)
        if (memcmp(buf + i * (sizeof line - 1), line, sizeof line - 1))
            return 2;
    return 0;
}
