#!/usr/bin/env bash
# bench/sampler-accuracy.sh - per-thread CPU-time reconstruction error of
# the sampler against the kernel's figure, and of peers in the same run.
#
#   bench/sampler-accuracy.sh [--runs N] [--scale S] [--only LIST] [--tsv FILE]
#
# --tsv: also append the figures to FILE, machine-readable (lib.sh bench_fig).
#
# --only: a comma-separated subset of rec,floor,perf,gperftools,jfr.
#
# Workload: tests/workloads/budget (threads burning 2, 1, 0.5, 0.25 s of
# their own CPU clock times S, default 1, and a bursty thread of 0.2 ms
# bursts between 5 ms sleeps). Each run, one after the other:
#   rec 10ms, rec 1ms   rec-start --throttle T; rec-cpu --json: per thread
#                       sampledCpuTime + lostCpuTime vs measuredCpuTime
#                       (ThreadEnd.cpuTime - ThreadStart.cpuTime)
#   perf-F1000          perf record -e cpu-clock -F 1000 (inherited to the
#                       threads; sum of sample periods per tid) vs the
#                       thread's own CPU clock at its end (budget -v).
#                       (--per-thread records no sample of the threads a
#                       command creates, so it is not used.)
#   perf-c1ms           the same with a fixed period, -c 1000000 (1 ms)
#   gperftools          CPUPROFILE_FREQUENCY=1000: one process-wide
#                       ITIMER_PROF, samples carry no thread: process total
#                       only (samples x 1 ms vs the threads' CPU sum)
#   floor-10ms/-1ms     bench/timer-floor: the same threads with a bare
#                       timer_create(CLOCK_THREAD_CPUTIME_ID) + SIGPROF
#                       counter and no profiler: the kernel's own floor
#   jfr 10ms, jfr 1ms   JDK >= 25 under /usr/lib/jvm: jdk.CPUTimeSample on
#                       a Java port of budget (same threads and budgets);
#                       per thread sum of samplingPeriod + lostSamples x
#                       throttle (JFR's lost event carries a count only)
#                       vs ThreadMXBean CPU time at the thread's end
# Prints, per profiler and thread, the median error (ms and %), the range
# over the runs, the bound max(period + 4 ms, 1%) and how many runs were
# within it; the process total error (target: 0.5%); lost samples.
# Raw per-run values follow the tables.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

scale=1 only=rec,floor,perf,gperftools,jfr
while [ $# -gt 0 ]; do
    case $1 in
    --runs) BENCH_RUNS=$2; shift 2 ;;
    --scale) scale=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --tsv) BENCH_TSV=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--scale S] [--only LIST] [--tsv FILE]" >&2; exit 2 ;;
    esac
done
[ "$BENCH_RUNS" -ge 5 ] || { echo "--runs must be >= 5" >&2; exit 2; }

rec_start=$(rec_prog rec-start)
rec_cpu=$(rec_prog rec-cpu)
budget=$REC_BUILD/tests/workloads/budget
[ -x "$budget" ] || { echo "bench: $budget not built" >&2; exit 1; }
command -v jq >/dev/null || { echo "bench: needs jq" >&2; exit 1; }

# The built timer-floor if there is one, else compiled here.
if ! floor=$(rec_prog timer-floor 2>/dev/null); then
    floor=$BENCH_TMP/timer-floor
    cc -O2 -pthread "$bench_top/bench/timer-floor.c" -o "$floor"
fi
have_perf=0
if command -v perf >/dev/null && perf stat -e task-clock true >/dev/null 2>&1; then have_perf=1; fi
libprofiler=$(ls /usr/lib/*/libprofiler.so.0 2>/dev/null | head -1 || true)
have_gperf=0
[ -n "$libprofiler" ] && command -v google-pprof >/dev/null && have_gperf=1

want() { case ",$only," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }
want perf || have_perf=0
want gperftools || have_gperf=0

bench_info
echo "# load: $(uptime | sed 's/.*load average/load average/')"
echo "# workload: budget -s $scale; perf: $([ $have_perf = 1 ] && echo yes || echo 'not available or not selected');" \
     "gperftools: $([ $have_gperf = 1 ] && echo yes || echo 'not installed or not selected')"

# raw rows: profiler run thread accounted_ns measured_ns lost_samples
raw=$BENCH_TMP/acc.raw
: > "$raw"

run_rec() {   # run_rec LABEL THROTTLE RUN
    "$rec_start" -q -f -t "$2" -o "$BENCH_TMP/a.rec" -- "$budget" -v -s "$scale" \
        > /dev/null 2> "$BENCH_TMP/a.err" || { cat "$BENCH_TMP/a.err" >&2; return 1; }
    "$rec_cpu" --json "$BENCH_TMP/a.rec" 2>/dev/null |
        jq -r --arg p "$1" --arg r "$3" '.threads[] | select(.measuredCpuTime != null)
            | "\($p) \($r) \(.name) \(.sampledCpuTime + .lostCpuTime) \(.measuredCpuTime) \(.lostSamples)"' >> "$raw"
}

run_floor() {  # run_floor LABEL PERIOD_US RUN
    "$floor" "$2" "$scale" 2> "$BENCH_TMP/a.err" |
        awk -v p="$1" -v r="$3" '{ printf "%s %s %s %s %s 0\n", p, r, $1, $3, $4 }' >> "$raw"
}

run_perf() {  # run_perf LABEL RUN PERF-RECORD-OPTIONS...
    local label=$1 run=$2; shift 2
    perf record -q -e cpu-clock "$@" -o "$BENCH_TMP/a.perf" -- "$budget" -v -s "$scale" \
        > "$BENCH_TMP/own.txt" 2> "$BENCH_TMP/a.err" || { cat "$BENCH_TMP/a.err" >&2; return 1; }
    perf script -i "$BENCH_TMP/a.perf" -F tid,period 2>/dev/null |
        awk -v p="$label" -v r="$run" 'NR == FNR { s[$1] += $2; n[$1]++; next }
             { printf "%s %s %s %.0f %.0f 0\n", p, r, $1, s[$2], $3 }' - "$BENCH_TMP/own.txt" >> "$raw"
}

run_gperf() { # run_gperf RUN
    rm -f "$BENCH_TMP/a.prof"
    env LD_PRELOAD="$libprofiler" CPUPROFILE="$BENCH_TMP/a.prof" CPUPROFILE_FREQUENCY=1000 \
        "$budget" -v -s "$scale" > "$BENCH_TMP/own.txt" 2> "$BENCH_TMP/a.err" ||
        { cat "$BENCH_TMP/a.err" >&2; return 1; }
    local n
    n=$(google-pprof --text "$budget" "$BENCH_TMP/a.prof" 2>/dev/null |
        sed -n 's/^Total: \([0-9]*\) samples.*/\1/p')
    awk -v r="$1" -v n="${n:-0}" '{ m += $3 } END { printf "gperftools %s (process) %.0f %.0f 0\n", r, n * 1000000, m }' \
        "$BENCH_TMP/own.txt" >> "$raw"
}

jdk=
want jfr && for d in /usr/lib/jvm/*; do
    if [ -x "$d/bin/jfr" ] && "$d/bin/java" -version 2>&1 | grep -Eq 'version "(2[5-9]|[3-9][0-9])'; then
        jdk=$d; break
    fi
done
if [ -n "$jdk" ]; then
    mkdir -p "$BENCH_TMP/java"
    cat > "$BENCH_TMP/java/Budget.java" <<'JAVA'
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.atomic.AtomicInteger;
public class Budget {
    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static final AtomicInteger busyLeft = new AtomicInteger(4);
    static volatile long sink;
    static long spin(long x, int n) {
        for (int i = 0; i < n; i++) x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }
    public static void main(String[] a) throws Exception {
        double scale = a.length > 0 ? Double.parseDouble(a[0]) : 1;
        String[] names = { "budget-2000", "budget-1000", "budget-500", "budget-250", "bursty" };
        long[] budgets = { 2000, 1000, 500, 250, 0 };
        long[] cpu = new long[5];
        Thread[] t = new Thread[5];
        for (int i = 0; i < 5; i++) {
            final int k = i;
            final long b = (long) (budgets[i] * 1e6 * scale);
            Runnable r = k < 4 ? () -> {
                long x = b;
                while (MX.getCurrentThreadCpuTime() < b) x = spin(x, 20000);
                sink = x; cpu[k] = MX.getCurrentThreadCpuTime(); busyLeft.decrementAndGet();
            } : () -> {
                long x = 1;
                while (busyLeft.get() > 0) {
                    long end = System.nanoTime() + 200000;
                    while (System.nanoTime() < end) x = spin(x, 2000);
                    try { Thread.sleep(5); } catch (InterruptedException e) { }
                }
                sink = x; cpu[k] = MX.getCurrentThreadCpuTime();
            };
            t[i] = new Thread(r, names[i]);
            t[i].start();
        }
        for (Thread x : t) x.join();
        for (int i = 0; i < 5; i++) System.out.println(names[i] + " 0 " + cpu[i]);
    }
}
JAVA
    "$jdk/bin/javac" -d "$BENCH_TMP/java" "$BENCH_TMP/java/Budget.java"
fi
want jfr && echo "# jfr: $([ -n "$jdk" ] && echo "$jdk" || echo 'no JDK >= 25 in /usr/lib/jvm')"

run_jfr() {   # run_jfr LABEL THROTTLE_MS RUN
    cat > "$BENCH_TMP/java/cpu.jfc" <<JFC
<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0" label="CPU-time samples only">
  <event name="jdk.CPUTimeSample">
    <setting name="enabled">true</setting>
    <setting name="throttle">${2}ms</setting>
    <setting name="stackTrace">true</setting>
  </event>
  <event name="jdk.CPUTimeSamplesLost">
    <setting name="enabled">true</setting>
  </event>
</configuration>
JFC
    rm -f "$BENCH_TMP/a.jfr"
    "$jdk/bin/java" -Xlog:disable \
        "-XX:StartFlightRecording:settings=$BENCH_TMP/java/cpu.jfc,filename=$BENCH_TMP/a.jfr" \
        -cp "$BENCH_TMP/java" Budget "$scale" > "$BENCH_TMP/own.txt" 2> "$BENCH_TMP/a.err" ||
        { cat "$BENCH_TMP/a.err" >&2; return 1; }
    # samplingPeriod is an ISO-8601 duration ("PT0.004S")
    "$jdk/bin/jfr" print --json --events jdk.CPUTimeSample,jdk.CPUTimeSamplesLost "$BENCH_TMP/a.jfr" |
        jq -r --arg pm "$2" '.recording.events[] | .values as $v | $v.eventThread.javaName + " " +
            (if .type == "jdk.CPUTimeSample" then ($v.samplingPeriod | ltrimstr("PT") | rtrimstr("S") | tonumber * 1e9)
             else ($v.lostSamples * ($pm | tonumber) * 1e6) end | round | tostring) + " " +
            (if .type == "jdk.CPUTimeSample" then "0" else ($v.lostSamples | tostring) end)' |
        awk -v p="$1" -v r="$3" 'NR == FNR { s[$1] += $2; l[$1] += $3; next }
             { printf "%s %s %s %.0f %.0f %d\n", p, r, $1, s[$1], $3, l[$1] }' - "$BENCH_TMP/own.txt" >> "$raw"
}

for ((i = 1; i <= BENCH_RUNS; i++)); do
    if want rec; then
        run_rec "rec-10ms" 10ms "$i"
        run_rec "rec-1ms" 1ms "$i"
    fi
    if want floor; then
        run_floor floor-10ms 10000 "$i"
        run_floor floor-1ms 1000 "$i"
    fi
    if [ $have_perf = 1 ]; then
        run_perf perf-F1000 "$i" -F 1000
        run_perf perf-c1ms "$i" -c 1000000
    fi
    [ $have_gperf = 0 ] || run_gperf "$i"
    if [ -n "$jdk" ]; then
        run_jfr jfr-10ms 10 "$i"
        run_jfr jfr-1ms 1 "$i"
    fi
    echo "# run $i/$BENCH_RUNS done" >&2
done

# Per-thread table. Bound: max(period + 4 ms, 1% of the thread's CPU time).
period_ms() { case $1 in *-10ms) echo 10 ;; *) echo 1 ;; esac; }
# Name of a profiler in the machine-readable figures: the period goes into
# the figure's name, so that one figure holds every profiler at that period.
tool_of() {
    case $1 in
    rec-*) echo rec ;; floor-*) echo "bare timers" ;; jfr-*) echo "jfr" ;;
    perf-F1000) echo "perf -F 1000" ;; perf-c1ms) echo "perf -c 1ms" ;; *) echo "$1" ;;
    esac
}
table_head "profiler / thread|median err ms|median err %|range err ms|bound ms|within bound"
for p in rec-10ms rec-1ms floor-10ms floor-1ms perf-F1000 perf-c1ms jfr-10ms jfr-1ms; do
    grep -q "^$p " "$raw" || continue
    pm=$(period_ms "$p")
    for t in budget-2000 budget-1000 budget-500 budget-250 bursty budget; do
        rows=$(awk -v p="$p" -v t="$t" '$1 == p && $3 == t' "$raw")
        [ -n "$rows" ] || continue
        em=$(echo "$rows" | awk '{ print ($4 - $5) / 1e6 }' | median)
        ep=$(echo "$rows" | awk '$5 > 0 { print ($4 / $5 - 1) * 100 }' | median)
        rng=$(echo "$rows" | awk '{ e = ($4 - $5) / 1e6; if (NR == 1 || e < lo) lo = e; if (NR == 1 || e > hi) hi = e }
                                  END { printf "%.1f..%.1f", lo, hi }')
        bnd=$(echo "$rows" | awk -v pm="$pm" '{ b = pm + 4; if ($5 / 1e8 > b) b = $5 / 1e8; print b }' | median)
        ok=$(echo "$rows" | awk -v pm="$pm" '{ b = (pm + 4) * 1e6; if ($5 / 100 > b) b = $5 / 100
                                                  e = $4 - $5; if (e < 0) e = -e; if (e <= b) k++ }
                                             END { printf "%d/%d", k, NR }')
        table_row "$p $t|$(calc "$em" 2)|$(calc "${ep:-0}" 2)|$rng|$(calc "$bnd" 1)|$ok"
        echo "$rows" | awk '{ print ($4 - $5) / 1e6 }' |
            bench_fig "per-thread error, $t, $pm ms" "$(tool_of "$p")" ms "bound=$(calc "$bnd" 1) within=$ok"
    done
done

# Process totals: sum over the threads with a kernel figure (main included
# for rec; the others: the five workers).
table_head "profiler, process total|median err ms|median err %|range err %|target|lost samples (median, max)"
for p in rec-10ms rec-1ms floor-10ms floor-1ms perf-F1000 perf-c1ms gperftools jfr-10ms jfr-1ms; do
    grep -q "^$p " "$raw" || continue
    tot=$(awk -v p="$p" '$1 == p { a[$2] += $4; m[$2] += $5; l[$2] += $6 }
                         END { for (r in a) print r, a[r], m[r], l[r] }' "$raw")
    em=$(echo "$tot" | awk '{ print ($2 - $3) / 1e6 }' | median)
    ep=$(echo "$tot" | awk '{ print ($2 / $3 - 1) * 100 }' | median)
    rng=$(echo "$tot" | awk '{ e = ($2 / $3 - 1) * 100; if (NR == 1 || e < lo) lo = e; if (NR == 1 || e > hi) hi = e }
                             END { printf "%.1f..%.1f", lo, hi }')
    lm=$(echo "$tot" | awk '{ print $4 }' | median)
    lx=$(echo "$tot" | awk '{ if ($4 > x) x = $4 } END { print x + 0 }')
    table_row "$p|$(calc "$em" 2)|$(calc "$ep" 3)|$rng|0.5%|$lm, $lx"
    pm=$(period_ms "$p")
    echo "$tot" | awk '{ print ($2 / $3 - 1) * 100 }' |
        bench_fig "process total error, $pm ms" "$(tool_of "$p")" % "target=0.5%"
    # only rec and JFR count lost samples
    case $p in
    rec-* | jfr-*) echo "$tot" | awk '{ print $4 }' |
        bench_fig "lost samples per run, $pm ms" "$(tool_of "$p")" samples ;;
    esac
done

echo
echo "# raw: profiler run thread accounted_ns kernel_ns lost_samples"
sort -k1,1 -k3,3 -k2,2n "$raw" | sed 's/^/  /'
