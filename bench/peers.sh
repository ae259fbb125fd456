#!/usr/bin/env bash
# bench/peers.sh - rec against other CPU profilers on the same workload.
#
#   bench/peers.sh [--tsv FILE] [THREADS [WORK]]
#
# Workload: bench/peer-burn.c (THREADS threads, default 2, of fixed CPU work),
# profiled at 1 kHz by every profiler that can run here:
#   rec          rec-start --throttle 1ms (per-thread CPU timers, this tree)
#   perf         perf record -F 1000 -g (needs perf_event access)
#   gperftools   LD_PRELOAD=libprofiler.so CPUPROFILE_FREQUENCY=1000
#   jfr          JDK 25 jdk.CPUTimeSample at 1 ms, on a Java port of the
#                workload (only its file size and the jfr tool's speed are
#                comparable)
# Each figure is the median of BENCH_RUNS (>= 5) runs. Columns:
#   samples      samples written
#   error        CPU time the samples account for (periods, lost time
#                included) against the kernel's CPU time of the workers
#   cost/sample  extra CPU in the workload process per sample, then extra
#                CPU in the profiler's own process (perf) per sample
#   B/sample     whole output file / samples
# A profiler that cannot run here is reported as such and skipped.
# BENCH_PEERS selects profilers (default "rec perf gperftools jfr").
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

if [ "${1:-}" = --tsv ]; then BENCH_TSV=$2; shift 2; fi
threads=${1:-2} work=${2:-1500}
peers=" ${BENCH_PEERS:-rec perf gperftools jfr} "
want() { [[ $peers == *" $1 "* ]]; }
cc -O2 -g -fno-omit-frame-pointer -pthread "$bench_top/bench/peer-burn.c" \
   -o "$BENCH_TMP/peer-burn"
burn=$BENCH_TMP/peer-burn

# kv FILE KEY: value of KEY=value in the workload's output
kv() { sed -n "s/^$2=//p" "$1" | tail -1; }

# run_profiled NAME SAMPLES_FN CMD...: BENCH_RUNS runs of CMD, each followed
# by SAMPLES_FN printing "samples accounted_ns" for the run's output file
# ($BENCH_TMP/out.*). Appends per-run figures to $BENCH_TMP/NAME.runs:
#   wall total_cpu_s proc_cpu_ns workers_cpu_ns samples accounted_ns bytes
run_profiled() {
    local name=$1 fn=$2; shift 2
    local runs=$BENCH_TMP/$name.runs i
    : > "$runs"
    for ((i = 0; i < BENCH_RUNS; i++)); do
        rm -rf "$BENCH_TMP"/out.*
        : > "$BENCH_TMP/m"
        measure "$BENCH_TMP/m" "$@" || return 1
        local w c
        read -r w u s _ < "$BENCH_TMP/m"
        c=$(calc "$u + $s")
        local sa
        sa=$($fn) || return 1
        local bytes
        bytes=$(du -cb "$BENCH_TMP"/out.* 2>/dev/null | tail -1 | cut -f1)
        echo "$w $c $(kv "$BENCH_TMP/last.out" process_cpu_ns) $(kv "$BENCH_TMP/last.out" workers_cpu_ns) $sa ${bytes:-0}" >> "$runs"
    done
}

# report NAME LABEL [tool]: one table row from NAME.runs against the
# baseline; "tool" when the profiler has a process of its own whose CPU time
# is counted apart (perf)
report() {
    local r=$BENCH_TMP/$1.runs
    local wall samples err inproc tool bps
    wall=$(awk '{print $1}' "$r" | median)
    samples=$(awk '{print $5}' "$r" | median)
    err=$(awk '$4 > 0 {print ($6 / $4 - 1) * 100}' "$r" | median)
    # µs of extra CPU per sample: in the workload process, in the tool
    inproc=$(awk -v b="$base_proc" '$5 > 0 {print ($3 - b) / $5 / 1000}' "$r" | median)
    tool=-
    [ "${3:-}" = tool ] &&
        tool=$(calc "$(awk '$5 > 0 {print ($2 * 1e9 - $3) / $5 / 1000}' "$r" | median)" 1)
    bps=$(awk '$5 > 0 {print $7 / $5}' "$r" | median)
    table_row "$2|$(calc "$wall" 2)|$(calc "$samples" 0)|$(calc "$err" 2)%|$(calc "$inproc" 1) + $tool|$(calc "$bps" 1)"
    local t=$4
    awk '{ print $5 }' "$r" | bench_fig "samples at 1 kHz, peer-burn" "$t" samples
    awk '$4 > 0 { print ($6 / $4 - 1) * 100 }' "$r" | bench_fig "CPU-time accounting error at 1 kHz, peer-burn" "$t" %
    awk -v b="$base_proc" '$5 > 0 { print ($3 - b) / $5 / 1000 }' "$r" |
        bench_fig "extra CPU in the workload per sample at 1 kHz, peer-burn" "$t" µs
    [ "${3:-}" != tool ] || awk '$5 > 0 { print ($2 * 1e9 - $3) / $5 / 1000 }' "$r" |
        bench_fig "CPU of the profiler's own process per sample at 1 kHz, peer-burn" "$t" µs
    awk '$5 > 0 { print $7 / $5 }' "$r" | bench_fig "file bytes per sample at 1 kHz, peer-burn" "$t" B
}

bench_info
echo "# workload: peer-burn $threads threads, work $work"

# Baseline: the workload alone.
: > "$BENCH_TMP/base.m"
base_procs=()
for ((i = 0; i < BENCH_RUNS; i++)); do
    measure "$BENCH_TMP/base.m" "$burn" "$threads" "$work"
    base_procs+=("$(kv "$BENCH_TMP/last.out" process_cpu_ns)")
done
base_proc=$(printf '%s\n' "${base_procs[@]}" | median)
base_wall=$(col_median "$BENCH_TMP/base.m" 1)

table_head "profiler (1 kHz)|wall s|samples|error|cost/sample µs|B/sample"
table_row "none|$(calc "$base_wall" 2)|-|-|-|-"

# ---- rec ------------------------------------------------------------
rec_samples() {
    # samples and accounted CPU (periods + lost time) from the NDJSON dump
    "$rec_dump" --ndjson "$BENCH_TMP/out.rec" | jq -rn '
        reduce inputs as $e ([0, 0];
          if $e.type == "CPUTimeSample" then [.[0] + 1, .[1] + $e.samplingPeriod]
          elif $e.type == "CPUTimeSampleLost" then [.[0], .[1] + $e.lostTime]
          else . end) | "\(.[0]) \(.[1])"'
}
if ! want rec; then
    :
elif rec_start=$(rec_prog rec-start 2>/dev/null) && rec_dump=$(rec_prog rec-dump 2>/dev/null); then
    if run_profiled rec rec_samples "$rec_start" --throttle 1ms -o "$BENCH_TMP/out.rec" -- "$burn" "$threads" "$work"; then
        report rec "rec (rec-start)" - rec
    else
        table_row "rec|failed (see above)"
    fi
else
    table_row "rec|not built in $REC_BUILD"
fi

# ---- perf -----------------------------------------------------------
perf_samples() {
    perf script -i "$BENCH_TMP/out.perf" -F period 2>/dev/null |
        awk '{ n++; s += $1 } END { printf "%.0f %.0f\n", n, s }'
}
if ! want perf; then
    :
elif ! command -v perf >/dev/null; then
    table_row "perf|not installed (apt-get install linux-perf)"
elif ! perf stat -e task-clock true >/dev/null 2>&1; then
    table_row "perf|no perf_event access here"
elif run_profiled perf perf_samples perf record -q -F 1000 -g -o "$BENCH_TMP/out.perf" -- "$burn" "$threads" "$work"; then
    report perf "perf record -F 1000 -g" tool "perf -F 1000 -g"
else
    table_row "perf|failed (see above)"
fi

# ---- gperftools -----------------------------------------------------
libprofiler=$(ls /usr/lib/*/libprofiler.so.0 2>/dev/null | head -1 || true)
gperf_samples() {
    local n
    n=$(google-pprof --text "$burn" "$BENCH_TMP/out.prof" 2>/dev/null |
        sed -n 's/^Total: \([0-9]*\) samples.*/\1/p')
    echo "${n:-0} $(( ${n:-0} * 1000000 ))"
}
if ! want gperftools; then
    :
elif [ -z "$libprofiler" ] || ! command -v google-pprof >/dev/null; then
    table_row "gperftools|not installed (apt-get install google-perftools libgoogle-perftools-dev)"
elif run_profiled gperf gperf_samples env LD_PRELOAD="$libprofiler" CPUPROFILE="$BENCH_TMP/out.prof" CPUPROFILE_FREQUENCY=1000 "$burn" "$threads" "$work"; then
    report gperf "gperftools (ITIMER_PROF)" - gperftools
else
    table_row "gperftools|failed (see above)"
fi

# ---- JFR (JDK 25) ---------------------------------------------------
jdk=
for d in /usr/lib/jvm/*; do
    if [ -x "$d/bin/jfr" ] && "$d/bin/java" -version 2>&1 | grep -Eq 'version "(2[5-9]|[3-9][0-9])'; then
        jdk=$d; break
    fi
done
echo
if ! want jfr; then
    :
elif [ -z "$jdk" ]; then
    echo "jfr: no JDK >= 25 in /usr/lib/jvm; skipped"
else
    mkdir -p "$BENCH_TMP/java"
    cat > "$BENCH_TMP/java/Burn.java" <<'JAVA'
public class Burn {
    static long leaf(long x) { x ^= x << 13; x ^= x >>> 7; x ^= x << 17; return x; }
    static long mid(long x, int n) { for (int i = 0; i < n; i++) x = leaf(x); return x; }
    static long top(long x, long iters) {
        for (long i = 0; i < iters; i++) x = mid(x, (i & 1) != 0 ? 1000 : 3000) + i;
        return x;
    }
    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[0]);
        long work = Long.parseLong(a[1]);
        Thread[] t = new Thread[n];
        long[] sink = new long[n];
        for (int i = 0; i < n; i++) {
            final int k = i;
            t[i] = new Thread(() -> sink[k] = top(k + 1, work * 500));
            t[i].start();
        }
        for (Thread x : t) x.join();
        System.out.println("sink=" + (sink[0] & 1));
    }
}
JAVA
    "$jdk/bin/javac" -d "$BENCH_TMP/java" "$BENCH_TMP/java/Burn.java"
    # settings=none with event options on the command line enables nothing:
    # a settings file of its own enables only the CPU-time events.
    cat > "$BENCH_TMP/java/cpu.jfc" <<'JFC'
<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0" label="CPU-time samples only">
  <event name="jdk.CPUTimeSample">
    <setting name="enabled">true</setting>
    <setting name="throttle">1ms</setting>
    <setting name="stackTrace">true</setting>
  </event>
  <event name="jdk.CPUTimeSamplesLost">
    <setting name="enabled">true</setting>
  </event>
</configuration>
JFC
    : > "$BENCH_TMP/jfr.runs"
    for ((i = 0; i < BENCH_RUNS; i++)); do
        rm -f "$BENCH_TMP/out.jfr"
        "$jdk/bin/java" -Xlog:disable \
            "-XX:StartFlightRecording:settings=$BENCH_TMP/java/cpu.jfc,filename=$BENCH_TMP/out.jfr" \
            -cp "$BENCH_TMP/java" Burn "$threads" "$work" >/dev/null
        "$jdk/bin/jfr" summary "$BENCH_TMP/out.jfr" |
            awk -v sz="$(stat -c %s "$BENCH_TMP/out.jfr")" \
                '$1 == "jdk.CPUTimeSample" { print $2, $3, sz }' >> "$BENCH_TMP/jfr.runs"
    done
    r=$BENCH_TMP/jfr.runs
    # Tool speed on >= 1M events. A JVM yields ~500 samples/s on 2 cores, so
    # one long recording (10x the work) is laid end to end with itself: JFR
    # chunks are self-contained, the copies are one valid recording, and each
    # chunk's metadata (~110 KB) is amortised over many events as in a real
    # long recording.
    rm -f "$BENCH_TMP/out.jfr"
    "$jdk/bin/java" -Xlog:disable \
        "-XX:StartFlightRecording:settings=$BENCH_TMP/java/cpu.jfc,filename=$BENCH_TMP/out.jfr" \
        -cp "$BENCH_TMP/java" Burn "$threads" $((work * 10)) >/dev/null
    n1=$("$jdk/bin/jfr" summary "$BENCH_TMP/out.jfr" | awk '$1 == "jdk.CPUTimeSample" { print $2 }')
    [ "${n1:-0}" -gt 0 ] || { echo "jfr: no samples recorded"; exit 1; }
    copies=$(( (${BENCH_JFR_EVENTS:-1000000} + n1 - 1) / n1 ))
    for ((i = 0; i < copies; i++)); do cat "$BENCH_TMP/out.jfr"; done > "$BENCH_TMP/big.jfr"
    nbig=$((n1 * copies))
    : > "$BENCH_TMP/js.m"; : > "$BENCH_TMP/jp.m"
    for ((i = 0; i < BENCH_RUNS; i++)); do
        measure "$BENCH_TMP/js.m" "$jdk/bin/jfr" summary "$BENCH_TMP/big.jfr"
        measure "$BENCH_TMP/jp.m" sh -c "'$jdk/bin/jfr' print --json --events jdk.CPUTimeSample '$BENCH_TMP/big.jfr' >/dev/null"
    done
    rm -f "$BENCH_TMP/big.jfr"
    table_head "JFR (JDK 25, Java port)|samples|B/event|B/sample file|summary s/M ev|print --json s/M"
    table_row "jdk.CPUTimeSample 1 ms|$(awk '{print $1}' "$r" | median)|$(calc "$(awk '$1 > 0 {print $2 / $1}' "$r" | median)" 1)|$(calc "$(awk '$1 > 0 {print $3 / $1}' "$r" | median)" 1)|$(calc "$(col_median "$BENCH_TMP/js.m" 1) * 1000000 / $nbig" 2)|$(calc "$(col_median "$BENCH_TMP/jp.m" 1) * 1000000 / $nbig" 2)"
    echo "(jfr tool speed on $nbig events: $copies chunks; B/sample file: a ${work}-work recording, JFR's ~110 KB metadata included)"
    awk '$1 > 0 { print $3 / $1 }' "$r" | bench_fig "file bytes per sample at 1 kHz, peer-burn" jfr B \
        "Java port of the workload; ~110 KB metadata per file"
    awk '{ print $1 }' "$r" | bench_fig "samples at 1 kHz, peer-burn" jfr samples "Java port of the workload"
    awk -v n="$nbig" '{ print ($2 + $3) * 1e6 / n }' "$BENCH_TMP/js.m" |
        bench_fig "summary tool, CPU s per million events" "jfr summary" s "$nbig events"
    awk -v n="$nbig" '{ print ($2 + $3) * 1e6 / n }' "$BENCH_TMP/jp.m" |
        bench_fig "JSON dump, CPU s per million events" "jfr print --json" s "$nbig events"
fi
