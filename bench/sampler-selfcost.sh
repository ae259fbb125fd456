#!/bin/bash
# bench/sampler-selfcost.sh - what the sampler costs, by component.
#
#   sampler-selfcost.sh [BUILD [RUNS [SCALES]]]
#                       (BUILD: a build tree, default .; SCALES: "0.25 1")
#
# 1. Sampler thread: runs tests/workloads/budget under rec-start at several
#    throttles and scales (durations), reads the CPU time of the
#    "rec-sampler" thread from /proc/PID/task/TID/schedstat (polled every
#    10 ms until it exits: at most one drain is missed), and fits
#        sampler_ns = a + b * duration_s + d * (samples > 0) + c * samples
#    (least squares on the per-configuration medians): a = start/stop, b = the drain wake-ups
#    (per second, whatever the rate), d = opening the modules' symbol
#    tables the first time, c = per sample (drain, stacks, encode, write).
#    Throttle 10s gives runs without samples. Medians per configuration
#    are printed too.
# 2. Handler: a microbenchmark (compiled here against BUILD) times a
#    CPU-bound loop on its thread's CPU clock while a CLOCK_MONOTONIC timer
#    sends 20000 signals/s: to an empty handler, then to rec's handler
#    (with rec's timer cookie, so that it samples), and with an unread
#    timerfd (the timer interrupt alone). Gives the signal's all-in cost
#    on the sampled thread and rec's part of it, plus the drain per sample
#    for one cached stack.
# 3. Overhead at 10 ms: (sampler thread + handler estimate) / workload CPU.
# 4. Debian programs at the default 10 ms: the sampler thread's share of
#    the process CPU and its CPU per sample, start included.
#
# BENCH_TSV=FILE: also append the figures to FILE, machine-readable (the
# format of bench_fig in bench/lib.sh; bench/run-all.sh sets it).
#
# Needs jq, bc, a C compiler. Run by hand on an otherwise idle machine
# (takes about 3 minutes with RUNS=5); never in CI.
set -u
B=$(cd "${1:-.}" && pwd)
RUNS=${2:-5}
SCALES=${3:-0.25 1}
nconf=$((4 * $(echo "$SCALES" | wc -w)))
W=$B/tests/workloads/budget
START=$B/tools/rec-start
DUMP=$B/tools/rec-dump
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# one_run THROTTLE SCALE -> "sampler_ns samples workload_cpu_ns wall_ns"
one_run() {
    local out=$tmp/r.rec t0 t1 pid tid='' last=0 v rest
    rm -f "$out"
    t0=$(date +%s%N)
    "$START" -q -f -t "$1" -o "$out" -- "$W" -s "$2" &
    pid=$!
    while kill -0 $pid 2>/dev/null; do
        if [ -z "$tid" ]; then
            # only this run's processes: the machine may run other
            # recordings at the same time
            for d in /proc/$pid/task/* $(pgrep -P $pid | sed 's|.*|/proc/&/task/*|'); do
                [ "$(cat "$d/comm" 2>/dev/null)" = rec-sampler ] || continue
                tid=$d
            done
        fi
        if [ -n "$tid" ] && read -r v rest 2>/dev/null < "$tid/schedstat"; then
            last=$v
        fi
        sleep 0.01
    done
    wait $pid
    t1=$(date +%s%N)
    "$DUMP" --ndjson --events 'CPUTimeSample,ProcessUsage' "$out" | jq -rs '
        [.[] | select(.type=="CPUTimeSample")] as $s
        | ([.[] | select(.type=="ProcessUsage")][0]) as $u
        | "\($s|length) \(($u.userTime // 0) + ($u.systemTime // 0))"' |
    { read -r n cpu; echo "$last $n $cpu $((t1 - t0))"; }
}

median() { sort -n | awk '{v[NR]=$1} END{print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
# fig FIGURE TOOL UNIT [EXTRA] < values (bench/fig.sh)
# shellcheck source=bench/fig.sh
. "$(dirname "$0")/fig.sh"
fig() { bench_fig "$@"; }

echo "# 1. sampler thread CPU (median of $RUNS runs per configuration)"
printf '%-6s %-5s %10s %8s %10s %9s\n' throttle scale sampler_us samples wall_ms us/sample
: > "$tmp/all"
: > "$tmp/med"
for thr in 10s 10ms 1ms 200us; do
    for sc in $SCALES; do
        : > "$tmp/cfg"
        for _ in $(seq "$RUNS"); do
            r=$(one_run $thr $sc)
            echo "$r" >> "$tmp/cfg"
            echo "$thr $sc $r" >> "$tmp/all"
        done
        ns=$(cut -d' ' -f1 "$tmp/cfg" | median)
        n=$(cut -d' ' -f2 "$tmp/cfg" | median)
        wall=$(cut -d' ' -f4 "$tmp/cfg" | median)
        cpu=$(cut -d' ' -f3 "$tmp/cfg" | median)
        echo "$thr $sc $ns $n $cpu $wall" >> "$tmp/med"
        printf '%-6s %-5s %10.0f %8.0f %10.0f %9s\n' $thr $sc "$(echo "$ns/1000" | bc -l)" \
            "$n" "$(echo "$wall/1000000" | bc -l)" \
            "$( [ "${n%.*}" -gt 0 ] && echo "scale=2; $ns/1000/$n" | bc || echo -)"
    done
done
echo
echo "# fit: sampler_ns = a + b*wall_s + d*(samples>0) + c*samples (on the medians)"
awk '{ x[1]=1; x[2]=$6/1e9; x[3]=($4>0); x[4]=$4; y=$3;
       for (i=1;i<=4;i++) { for (j=1;j<=4;j++) A[i,j]+=x[i]*x[j]; A[i,5]+=x[i]*y } }
     END {
       for (i=1;i<=4;i++) { p=A[i,i]; for (j=i;j<=5;j++) A[i,j]/=p;
         for (k=1;k<=4;k++) if (k!=i) { f=A[k,i]; for (j=i;j<=5;j++) A[k,j]-=f*A[i,j] } }
       printf "a (start/stop, fixed)        = %7.0f us\n", A[1,5]/1000
       printf "b (drain wake-ups, per sec)  = %7.0f us/s\n", A[2,5]/1000
       printf "d (first symbolization)      = %7.0f us\n", A[3,5]/1000
       printf "c (per sample)               = %7.2f us\n", A[4,5]/1000 }' "$tmp/med" | tee "$tmp/fit"
sed -n 's/^c (per sample) *= *\([0-9.-]*\) us/\1/p' "$tmp/fit" |
    fig "sampler thread CPU per sample (fit)" rec µs "n=$((RUNS * nconf)) fit of the medians of $RUNS runs x $nconf configurations (scales $SCALES)"
sed -n 's/^b (drain wake-ups, per sec) *= *\([0-9.-]*\) us.s/\1/p' "$tmp/fit" |
    fig "sampler thread wake-ups, CPU µs per second (fit)" rec µs/s "n=$((RUNS * nconf)) fit of the medians of $RUNS runs x $nconf configurations (scales $SCALES)"
echo
echo "# 2. handler: microbenchmark (per signal, on the sampled thread)"
S=$(sed -n 's/^abs_top_srcdir = //p' "$B/Makefile")
cat > "$tmp/selfcost-handler.c" <<'EOF'
/* Per-signal cost on the sampled thread, all-in (timer interrupt,
 * delivery, handler, sigreturn): a CPU-bound loop timed on the thread's
 * CPU clock, without signals, with an empty handler (SIGUSR2) and with
 * rec's handler (the sampling signal, rec's timer cookie), each driven by
 * a CLOCK_MONOTONIC timer at RATE signals/s. Also the sampler thread's CPU
 * for draining them. Usage: selfcost-handler OUT RATE ROUNDS */
#define _GNU_SOURCE
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "hazard.h"           /* hz_sampler_tid */
#include <sys/timerfd.h>
#include <rec/sampler.h>

extern char recs__timer_cookie;
static volatile uint64_t sink;
static volatile long nusr;

static uint64_t cpu(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void work(uint64_t n)
{
    uint64_t x = sink;
    for (uint64_t i = 0; i < n; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    sink = x;
}

static void on_usr2(int s) { (void)s; nusr++; }

static clockid_t sampler_clock(void)
{
    pid_t tid = hz_sampler_tid();
    return tid ? (clockid_t)((~(unsigned)tid << 3) | 6) : 0;
}

/* CPU ns of work(n) with a timer sending sig (0: none) at rate/s. */
static uint64_t timed(uint64_t n, int sig, void *cookie, long rate)
{
    timer_t tm;
    struct sigevent sev;
    struct itimerspec its;
    uint64_t t0, t1;

    if (sig) {
        memset(&sev, 0, sizeof sev);
        sev.sigev_notify = SIGEV_THREAD_ID;
        sev.sigev_signo = sig;
        sev.sigev_value.sival_ptr = cookie;
        sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
        if (timer_create(CLOCK_MONOTONIC, &sev, &tm) != 0)
            exit(1);
        memset(&its, 0, sizeof its);
        its.it_interval.tv_nsec = its.it_value.tv_nsec = 1000000000L / rate;
        timer_settime(tm, 0, &its, NULL);
    }
    t0 = cpu(CLOCK_THREAD_CPUTIME_ID);
    work(n);
    t1 = cpu(CLOCK_THREAD_CPUTIME_ID);
    if (sig)
        timer_delete(tm);
    return t1 - t0;
}

/* CPU ns of work(n) while an unread timerfd expires rate/s: the timer
 * interrupt alone (on a VM, a VM exit), which the per-thread CPU timers
 * of rec do not add (they are checked at the scheduler tick). */
static uint64_t timed_irq(uint64_t n, long rate, long *expiries)
{
    struct itimerspec its;
    uint64_t t0, t1, x = 0;
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);

    memset(&its, 0, sizeof its);
    its.it_interval.tv_nsec = its.it_value.tv_nsec = 1000000000L / rate;
    timerfd_settime(fd, 0, &its, NULL);
    t0 = cpu(CLOCK_THREAD_CPUTIME_ID);
    work(n);
    t1 = cpu(CLOCK_THREAD_CPUTIME_ID);
    if (read(fd, &x, sizeof x) != sizeof x)
        x = 0;
    close(fd);
    *expiries = (long)x;
    return t1 - t0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    recs_options o;
    recs_stats st0, st1;
    long rate = argc > 2 ? atol(argv[2]) : 20000;
    int rounds = argc > 3 ? atoi(argv[3]) : 7;
    double empty[64], rec[64], drain[64], irq[64], diff[64];
    uint64_t n = 100000000;
    clockid_t sc;

    if (argc < 2 || rounds < 1 || rounds > 64)
        return 2;
    signal(SIGUSR2, on_usr2);
    recs_options_init(&o);
    o.output = argv[1];
    o.overwrite = true;
    o.throttle = "10s";          /* the thread's own timer stays silent */
    o.queue_capacity = 30000;    /* every signal of a round is queued */
    if (recs_start(&o) != 0)
        return 1;
    sc = sampler_clock();
    /* calibrate: ~0.3 s per round */
    {
        uint64_t t = timed(n, 0, NULL, 0);
        n = (uint64_t)((double)n * 3e8 / (double)t);
    }
    for (int r = 0; r < rounds; r++) {
        uint64_t base, e, w, s0, s1, d0, d1;
        long u0 = nusr, sigs;

        long nirq;
        base = timed(n, 0, NULL, 0);
        irq[r] = ((double)timed_irq(n, rate, &nirq) - (double)base) / (double)(nirq ? nirq : 1);
        e = timed(n, SIGUSR2, NULL, rate);
        empty[r] = ((double)e - (double)base) / (double)(nusr - u0 ? nusr - u0 : 1);
        recs_drain();
        recs_get_stats(&st0);
        s0 = sc ? cpu(sc) : 0;
        w = timed(n, SIGPROF, &recs__timer_cookie, rate);
        /* What the sampler thread has not drained yet, drained here. */
        d0 = cpu(CLOCK_THREAD_CPUTIME_ID);
        recs_drain();
        d1 = cpu(CLOCK_THREAD_CPUTIME_ID);
        recs_get_stats(&st1);
        s1 = (sc ? cpu(sc) : 0) + (d1 - d0);
        sigs = (long)(st1.samples - st0.samples + st1.lost - st0.lost);
        rec[r] = ((double)w - (double)base) / (double)(sigs ? sigs : 1);
        drain[r] = (double)(s1 - s0) / (double)(sigs ? sigs : 1);
        diff[r] = rec[r] - empty[r];   /* same round: drift cancels */
        fprintf(stderr, "round %d: base %.0f ms, %ld signals, empty handler "
                "%.2f us, timer interrupt alone %.2f us, rec handler %.2f us, sampler thread %.2f us/signal\n",
                r, base / 1e6, sigs, empty[r] / 1e3, irq[r] / 1e3, rec[r] / 1e3, drain[r] / 1e3);
    }
    recs_stop();
    qsort(empty, (size_t)rounds, sizeof *empty, cmp);
    qsort(rec, (size_t)rounds, sizeof *rec, cmp);
    qsort(irq, (size_t)rounds, sizeof *irq, cmp);
    qsort(diff, (size_t)rounds, sizeof *diff, cmp);
    qsort(drain, (size_t)rounds, sizeof *drain, cmp);
    printf("per signal (median of %d rounds at %ld/s): empty handler %.2f us, "
           "rec handler %.2f us (rec's handler itself, median of the rounds' differences: %.2f us)\n", rounds, rate,
           empty[rounds / 2] / 1e3, rec[rounds / 2] / 1e3,
           diff[rounds / 2] / 1e3);
    printf("timer interrupt alone %.2f us: signal delivery + empty handler + "
           "sigreturn %.2f us; with rec's handler %.2f us\n", irq[rounds / 2] / 1e3,
           (empty[rounds / 2] - irq[rounds / 2]) / 1e3,
           (rec[rounds / 2] - irq[rounds / 2]) / 1e3);
    printf("drain, same stacks (cached): %.2f us per sample\n", drain[rounds / 2] / 1e3);
    return 0;
}
EOF
# The microbenchmark needs recs__timer_cookie, which the shared library
# does not export (only the API is): it links the static archives, with
# the libraries libtool recorded for them.
sla=$(ls "$B"/libsampler/libsampler.la "$B"/libsampler/librecsampler.la 2>/dev/null | head -1)
libs=$(sed -n "s/^dependency_libs='\(.*\)'/\1/p" "$sla" "$B/librecord/librecord.la" |
       tr ' ' '\n' | sed -n 's|^\(.*\)/\([^/]*\)\.la$|\1/.libs/\2.a|p; /^-l/p' | awk '!seen[$0]++')
# shellcheck disable=SC2086 # $libs: one word per library
if [ -n "$sla" ] && ${CC:-cc} -O2 -g -pthread -I"$S/libsampler" -I"$B/librecord" -I"$S/librecord" -I"$S/tests/hazards" \
        -o "$tmp/selfcost-handler" "$tmp/selfcost-handler.c" \
        "$(dirname "$sla")/.libs/$(basename "$sla" .la).a" "$B/librecord/.libs/librecord.a" $libs; then
    "$tmp/selfcost-handler" "$tmp/h.rec" 20000 15 2>"$tmp/h.err" | tee "$tmp/h"
    sed -n 's/.*empty handler \([0-9.-]*\) us.*rec handler \([0-9.-]*\) us.*/\1 \2/p' "$tmp/h.err" |
        awk '{ print $2 - $1 }' | fig "rec's signal handler itself, per signal (microbenchmark)" rec µs \
            "rounds at 20000 signals/s; rec handler minus an empty handler"
    sed -n 's/.*empty handler \([0-9.-]*\) us.*/\1/p' "$tmp/h.err" |
        fig "signal delivery + empty handler + sigreturn, per signal" "kernel (no profiler)" µs \
            "rounds at 20000 signals/s; the floor under any signal-based profiler"
else
    echo "cannot build the microbenchmark"
fi

echo
big=${SCALES##* }
echo "# 3. overhead at 10ms on budget -s $big (median of the runs)"
h=$(sed -n 's/.*with rec.s handler \([0-9.-]*\) us.*/\1/p' "$tmp/h")
awk -v h="${h:-0}" -v big="$big" '$1 == "10ms" && $2 == big {
        printf "%.4f %.3f %d %.3f\n", 100 * ($3 + $4 * h * 1000) / $5, $3 / 1e6, $4, $5 / 1e9 }' \
    "$tmp/all" | sort -n | tee "$tmp/ovh" | awk -v h="${h:-0}" '{ l[NR] = $0 } END { if (!NR) exit;
        split(l[int((NR + 1) / 2)], m, " ");
        printf "sampler thread %.1f ms + %d signals x %.2f us (delivery + handler), workload %.2f s CPU: overhead %.3f%%\n",
               m[2], m[3], h, m[4], m[1] }'
awk '{ print $1 }' "$tmp/ovh" | fig "overhead at 10 ms, all in (sampler thread + signals x delivery and handler)" rec % \
    "budget -s $big; per run: (sampler thread CPU + samples x rec handler) / workload CPU"

echo
echo "# 4. sampler thread on Debian's xz and gzip at 10ms (median of $RUNS runs)"
head -c 24000000 /dev/urandom | base64 > "$tmp/in.txt"
for prog in "xz -1" "xz -T2 -1" "gzip -6"; do
    command -v "${prog%% *}" >/dev/null 2>&1 || { echo "$prog: not installed"; continue; }
    : > "$tmp/prog"
    for _ in $(seq "$RUNS"); do
        # shellcheck disable=SC2086 # $prog: the command and its options
        "$START" -q -f -o "$tmp/p.rec" -- $prog -c "$tmp/in.txt" > /dev/null || continue
        u=$("$DUMP" --ndjson --events ProcessUsage "$tmp/p.rec" |
            jq -r '"\(.samplerCpuTime) \(.userTime + .systemTime)"' | tail -1)
        n=$("$DUMP" --ndjson --events CPUTimeSample "$tmp/p.rec" | wc -l)
        echo "$u $n" >> "$tmp/prog"
    done
    awk '$2 > 0 && $3 > 0 { print 100 * $1 / $2, $1 / 1000 / $3, $2 / 1e9, $3 }' "$tmp/prog" |
        sort -n > "$tmp/progv"
    awk -v p="$prog" '{ l[NR] = $0 } END { if (!NR) exit; split(l[int((NR + 1) / 2)], m, " ");
        printf "%-10s sampler thread %.3f%% of the process CPU (%.2f s), %.1f us per sample (%d samples)\n",
               p, m[1], m[3], m[2], m[4] }' "$tmp/progv"
    awk '{ print $1 }' "$tmp/progv" | fig "sampler thread share of the process CPU, $prog at 10 ms" rec % \
        "Debian's $prog on 32 MB of base64; start included"
    awk '{ print $2 }' "$tmp/progv" | fig "sampler thread CPU per sample, $prog at 10 ms" rec µs \
        "Debian's $prog on 32 MB of base64; start included"
done
