#!/usr/bin/env bash
# bench/sampler-cost.sh - CPU cost per sample of the sampler, all in.
#
#   bench/sampler-cost.sh [--runs N] [--work W] [--rates "10ms 5ms ..."]
#                         [--perf-periods "10000000 ..."] [--no-perf] [--tsv FILE]
#
# Workload: bench/peer-burn (2 threads of fixed work W, default 600: about
# 1 s of CPU per thread here; it prints the workers' and the process's CPU
# time from CLOCK_THREAD/PROCESS_CPUTIME_ID, ns resolution). For each rate
# (and without profiling), N runs interleaved:
#   x = signals handled = CPUTimeSample count + lost samples (rec-cpu --json);
#       with CONFIG_HZ=250 a thread gets at most one signal per 4 ms tick,
#       so below 4 ms x stops growing and the samples carry overruns
#   y = process CPU time (handler + drain + encode + write: the sampler
#       thread is part of the process)
# The least-squares slope of y against x over all runs is the cost per
# sample in µs (with its standard error); the same split into the worker
# threads (signal handler and its cache effects) and the rest of the process
# (sampler thread: drain, stack dedup, encoding, writing).
# perf (if it works here): perf record -e cpu-clock -c PERIOD -g at a few
# periods (ns, --perf-periods): slope of the workload's CPU, and of perf's own CPU (GNU time of
# perf and its child minus the workload), against perf's sample count.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

work=600 rates="10ms 5ms 2ms 1ms 500us 200us" perf_periods="10000000 2000000 1000000 200000 100000"
while [ $# -gt 0 ]; do
    case $1 in
    --runs) BENCH_RUNS=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --perf-periods) perf_periods=$2; shift 2 ;;
    --no-perf) perf_periods=""; shift ;;
    --tsv) BENCH_TSV=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--work W] [--rates LIST] [--perf-periods LIST] [--no-perf] [--tsv FILE]" >&2
       exit 2 ;;
    esac
done
[ "$BENCH_RUNS" -ge 5 ] || { echo "--runs must be >= 5" >&2; exit 2; }

rec_start=$(rec_prog rec-start)
rec_cpu=$(rec_prog rec-cpu)
command -v jq >/dev/null || { echo "bench: needs jq" >&2; exit 1; }
burn=$BENCH_TMP/peer-burn
cc -O2 -g -fno-omit-frame-pointer -pthread "$bench_top/bench/peer-burn.c" -o "$burn"
have_perf=0
if [ -n "$perf_periods" ] && command -v perf >/dev/null && perf stat -e task-clock true >/dev/null 2>&1; then
    have_perf=1
fi

bench_info
echo "# load: $(uptime | sed 's/.*load average/load average/')"
echo "# workload: peer-burn 2 $work; rates: none $rates; perf: $([ $have_perf = 1 ] && echo "periods $perf_periods ns" || echo 'not available')"

kv() { sed -n "s/^$2=//p" "$1" | tail -1; }

# raw rows: tool rate run x proc_ns workers_ns total_cpu_s(GNU time) bytes
raw=$BENCH_TMP/cost.raw
: > "$raw"
run_one() {  # run_one TOOL RATE RUN CMD...
    local tool=$1 rate=$2 r=$3 x=0 bytes=0; shift 3
    rm -f "$BENCH_TMP/c.rec" "$BENCH_TMP/c.perf"
    : > "$BENCH_TMP/m"
    measure "$BENCH_TMP/m" "$@" || return 1
    case $tool in
    rec)  x=$("$rec_cpu" --json "$BENCH_TMP/c.rec" 2>/dev/null | jq '.process.samples + .process.lostSamples')
          bytes=$(stat -c %s "$BENCH_TMP/c.rec") ;;
    perf) x=$(perf script -i "$BENCH_TMP/c.perf" -F tid 2>/dev/null | wc -l)
          bytes=$(stat -c %s "$BENCH_TMP/c.perf") ;;
    esac
    echo "$tool $rate $r $x $(kv "$BENCH_TMP/last.out" process_cpu_ns) $(kv "$BENCH_TMP/last.out" workers_cpu_ns)" \
         "$(awk '{ print $2 + $3 }' "$BENCH_TMP/m") $bytes" >> "$raw"
}

for ((r = 1; r <= BENCH_RUNS; r++)); do
    run_one none none "$r" "$burn" 2 "$work"
    for t in $rates; do
        run_one rec "$t" "$r" "$rec_start" -q -f -t "$t" -o "$BENCH_TMP/c.rec" -- "$burn" 2 "$work"
    done
    if [ $have_perf = 1 ]; then
        for p in $perf_periods; do
            run_one perf "$p" "$r" perf record -q -e cpu-clock -c "$p" -g -o "$BENCH_TMP/c.perf" -- "$burn" 2 "$work"
        done
    fi
    echo "# run $r/$BENCH_RUNS done" >&2
done

# fit COLUMN-EXPR: least squares of y (awk expression over a raw row) on x
# ($4) for the rows on stdin; prints "slope_us stderr_us intercept_ms"
fit() {
    awk "{ x = \$4; y = $1; print x, y }" | awk '
        { n++; X[n] = $1; Y[n] = $2; sx += $1; sy += $2 }
        END { mx = sx / n; my = sy / n
              for (i = 1; i <= n; i++) { sxx += (X[i] - mx) ^ 2; sxy += (X[i] - mx) * (Y[i] - my) }
              b = sxy / sxx; a = my - b * mx
              for (i = 1; i <= n; i++) sse += (Y[i] - a - b * X[i]) ^ 2
              se = n > 2 ? sqrt(sse / (n - 2) / sxx) : 0
              printf "%.2f %.2f %.1f\n", b / 1000, se / 1000, a / 1e6 }'
}

med_col() { awk -v t="$1" -v r="$2" -v c="$3" '$1 == t && $2 == r { print $c }' "$raw" | median; }
base=$(med_col none none 5)
base_w=$(med_col none none 6)

# A rate (rec: "10ms", "500us"; perf: ns) as "PERIOD_US HZ LABEL" for the
# machine-readable figures: one figure per period holds rec and perf.
period_of() {
    awk -v r="$1" 'BEGIN { v = r + 0; u = r; sub(/^[0-9.]+/, "", u)
        if (u == "ms") us = v * 1000; else if (u == "us") us = v
        else if (u == "s") us = v * 1e6; else us = v / 1000
        if (us >= 1000) lab = (us / 1000) " ms"; else lab = us " µs"
        printf "%g %g %s\n", us, 1e6 / us, lab }'
}
# fig_rate TOOL RATE LABEL: per-run overhead, signals and bytes per sample
fig_rate() {
    local hz lab
    read -r _ hz lab < <(period_of "$2")
    awk -v t="$1" -v r="$2" -v b="$base" '$1 == t && $2 == r { print ($5 / b - 1) * 100 }' "$raw" |
        bench_fig "overhead, period $lab" "$3" % "hz=$hz"
    awk -v t="$1" -v r="$2" '$1 == t && $2 == r { print $4 }' "$raw" |
        bench_fig "signals handled, period $lab" "$3" samples "hz=$hz"
    awk -v t="$1" -v r="$2" '$1 == t && $2 == r && $4 > 0 { print $8 / $4 }' "$raw" |
        bench_fig "file bytes per sample, period $lab" "$3" B "hz=$hz"
    # perf's own process too (GNU time of perf and the workload: 10 ms
    # resolution, enough for perf's ~0.2 s of its own)
    [ "$1" != perf ] ||
        awk -v r="$2" -v b="$base" '$1 == "perf" && $2 == r { print ($7 * 1e9 / b - 1) * 100 }' "$raw" |
        bench_fig "overhead with the profiler's own process, period $lab" "$3" % "hz=$hz"
}
awk '$1 == "none" { print $5 / 1e9 }' "$raw" | bench_fig "process CPU without profiler" none s "work=$work"

table_head "rate|signals (x)|process CPU s|overhead|workers CPU s|rest CPU ms|B/sample"
table_row "none|0|$(calc "$base / 1e9" 3)|-|$(calc "$base_w / 1e9" 3)|$(calc "($base - $base_w) / 1e6" 1)|-"
for t in $rates; do
    p=$(med_col rec "$t" 5) w=$(med_col rec "$t" 6) x=$(med_col rec "$t" 4)
    bps=$(awk -v t="$t" '$1 == "rec" && $2 == t && $4 > 0 { print $8 / $4 }' "$raw" | median)
    table_row "rec $t|$x|$(calc "$p / 1e9" 3)|$(calc "($p / $base - 1) * 100" 2)%|$(calc "$w / 1e9" 3)|$(calc "($p - $w) / 1e6" 1)|$(calc "$bps" 1)"
    fig_rate rec "$t" rec
done
if [ $have_perf = 1 ]; then
    for t in $perf_periods; do
        p=$(med_col perf "$t" 5) x=$(med_col perf "$t" 4) w=$(med_col perf "$t" 6)
        tool=$(awk -v t="$t" '$1 == "perf" && $2 == t { print $7 - $5 / 1e9 }' "$raw" | median)
        bps=$(awk -v t="$t" '$1 == "perf" && $2 == t && $4 > 0 { print $8 / $4 }' "$raw" | median)
        table_row "perf -c $((t / 1000))us -g|$x|$(calc "$p / 1e9" 3)|$(calc "($p / $base - 1) * 100" 2)%|$(calc "$w / 1e9" 3)|perf: $(calc "$tool * 1000" 0)|$(calc "$bps" 1)"
        fig_rate perf "$t" "perf -g"
    done
fi

# Profiled runs only: the intercept is the fixed cost (start-up, symbols,
# the last write), the slope the cost of each signal.
table_head "cost per sample (fit, all runs)|µs/sample|± std err|fixed ms|runs"
sel() { awk -v t="$1" '$1 == t' "$raw"; }
row() { set -- "$1" $2; table_row "$1|$2|$3|$(calc "$4 - ${5:-0}" 1)|${6:-}"; }
# fig_fit FIGURE TOOL "slope se ..." RAW-TOOL: a fit over all runs is one value; its
# range in the figures is slope ± one standard error.
fig_fit() {
    local slope se n
    read -r slope se _ <<< "$3"
    n=$(sel "$4" | wc -l)
    printf '%s\n%s\n%s\n' "$slope" "$(calc "$slope - $se" 2)" "$(calc "$slope + $se" 2)" |
        bench_fig "$1" "$2" µs "n=$n fit over all runs; range: ± 1 std err"
}
f=$(sel rec | fit '$5'); row "rec: process CPU" "$f $(calc "$base / 1e6" 3) $(sel rec | wc -l)"
fig_fit "CPU per sample, all in (fit)" rec "$f" rec
f=$(sel rec | fit '$6'); row "rec: worker threads (handler)" "$f $(calc "$base_w / 1e6" 3)"
fig_fit "CPU per sample, in the workload's threads (fit)" rec "$f" rec
f=$(sel rec | fit '$5 - $6'); row "rec: rest (sampler thread)" "$f $(calc "($base - $base_w) / 1e6" 3)"
if [ $have_perf = 1 ]; then
    f=$(sel perf | fit '$5'); row "perf -g: in the workload" "$f $(calc "$base / 1e6" 3) $(sel perf | wc -l)"
    fig_fit "CPU per sample, in the workload's threads (fit)" "perf -g" "$f" perf
    f=$(sel perf | fit '($7 * 1e9 - $5)'); row "perf -g: perf's own process" "$f"
fi
echo "(fixed ms: intercept minus the same CPU without profiling)"

echo
echo "# raw: tool rate run signals proc_cpu_ns workers_cpu_ns time_cpu_s bytes"
sort -k1,1 -k2,2 -k3,3n "$raw" | sed 's/^/  /'
