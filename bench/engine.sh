#!/usr/bin/env bash
# bench/engine.sh - the sampler's two engines (rec-start --engine timer,
# --engine perf) against perf record on the same runs.
#
#   bench/engine.sh [SCALE [THREADS WORK]]
#
# 1. The known-budget workload (tests/workloads/budget -s SCALE, default
#    0.5: 1 s, 0.5 s, 0.25 s, 0.125 s of CPU in four busy threads and a
#    bursty one), at 1 ms and 10 ms, run bare, under rec with each engine,
#    and under `perf record -e task-clock -c PERIOD` (no call graphs: the
#    cheapest perf can do). Per configuration, medians of BENCH_RUNS:
#      samples     samples written (perf: PERF_RECORD_SAMPLE records)
#      vs-perf     samples / perf's samples
#      worst-err   max over threads of |samples x period - kernel CPU| /
#                  max(2 periods, 1% of the kernel CPU): <= 1 meets the
#                  target (rec: from rec-cpu; perf: its samples per tid
#                  against the workload's own per-thread figures)
#      acct-err    max over threads of |sampled + lost - kernel CPU| in ms
#                  (rec only: the accounting)
#      lost        lost samples (rec)
#      cpu-s       user+sys CPU of the whole run (profiler included)
#      overhead    cpu-s minus the bare run's, in % of it
#      us/sample   that extra CPU per sample
# 2. THREADS (64) busy threads of WORK (40) units each (bench/peer-burn.c)
#    at 1 ms with each engine: samples, lost, worst per-thread error.
#
# Environment as in bench/lib.sh (BENCH_RUNS >= 5). Report `uptime` with
# the figures: the machine is shared.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

scale=${1:-0.5} threads=${2:-64} work=${3:-40}
budget=$(rec_prog tests/workloads/budget)
recstart=$(rec_prog rec-start)
reccpu=$(rec_prog rec-cpu)
have_perf=1
command -v perf >/dev/null 2>&1 || have_perf=0
command -v jq >/dev/null 2>&1 || { echo "bench: needs jq" >&2; exit 1; }
cc -O2 -g -fno-omit-frame-pointer -pthread "$bench_top/bench/peer-burn.c" \
   -o "$BENCH_TMP/peer-burn"

bench_info
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)  perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)"

# rec_figures FILE PERIOD_NS: "samples lost worst_err acct_err_ms"
rec_figures() {
    "$reccpu" --json "$1" 2>/dev/null | jq -r --argjson p "$2" '
        [.threads[] | select(.measuredCpuTime > 0)] as $t |
        [ ($t | map(.samples) | add),
          ($t | map(.lostSamples) | add),
          ($t | map(((.sampledCpuTime - .measuredCpuTime) | fabs) /
                    ([2 * $p, .measuredCpuTime / 100] | max)) | max),
          ($t | map(.difference | fabs) | max / 1e6) ] | @tsv'
}

# perf_figures DATA PERIOD_NS BUDGET_OUT: "samples worst_err"
perf_figures() {
    perf script -i "$1" -F tid 2>/dev/null | awk '{ n[$1]++; t++ }
        END { for (k in n) print "S", k, n[k]; print "T", t }' >"$BENCH_TMP/ps"
    awk -v p="$2" '
        FNR == NR { if ($1 == "S") s[$2] = $3; if ($1 == "T") tot = $2; next }
        { c = $3; e = s[$2] * p - c; if (e < 0) e = -e
          m = 2 * p; if (c / 100 > m) m = c / 100
          if (e / m > w) w = e / m }
        END { printf "%d\t%.3f\n", tot, w }' "$BENCH_TMP/ps" "$3"
}

# one CONFIG PERIOD_MS: BENCH_RUNS runs; appends to $BENCH_TMP/CONFIG.PERIOD
#   cpu_s samples lost worst_err acct_err_ms
one() {
    local cfg=$1 pms=$2 p=$(( $2 * 1000000 )) f=$BENCH_TMP/$1.$2 i
    : >"$f"
    for ((i = 0; i < BENCH_RUNS; i++)); do
        rm -f "$BENCH_TMP"/o.rec "$BENCH_TMP"/perf.data
        : >"$BENCH_TMP/m"
        case $cfg in
        bare) measure "$BENCH_TMP/m" "$budget" -v -s "$scale" ;;
        timer|perf)
            measure "$BENCH_TMP/m" "$recstart" -q -o "$BENCH_TMP/o.rec" \
                -t "${pms}ms" --engine "$cfg" -- "$budget" -s "$scale" ;;
        perfrec)
            measure "$BENCH_TMP/m" perf record -q -e task-clock -c "$p" \
                -o "$BENCH_TMP/perf.data" -- "$budget" -v -s "$scale" ;;
        esac
        read -r _ u s _ <"$BENCH_TMP/m"
        local cpu
        cpu=$(calc "$u + $s")
        case $cfg in
        bare) echo "$cpu 0 0 0 0" >>"$f" ;;
        timer|perf) echo "$cpu $(rec_figures "$BENCH_TMP/o.rec" "$p")" >>"$f" ;;
        perfrec)
            cp "$BENCH_TMP/last.out" "$BENCH_TMP/budget.out"
            echo "$cpu $(perf_figures "$BENCH_TMP/perf.data" "$p" "$BENCH_TMP/budget.out" | awk '{ print $1, 0, $2, 0 }')" >>"$f" ;;
        esac
    done
}

med() { awk -v c="$2" '{ print $c }' "$1" | median; }

for pms in 1 10; do
    configs="bare timer perf"
    [ $have_perf = 1 ] && configs="$configs perfrec"
    for c in $configs; do one "$c" "$pms"; done
    base=$(med "$BENCH_TMP/bare.$pms" 1)
    ps=0
    [ $have_perf = 1 ] && ps=$(med "$BENCH_TMP/perfrec.$pms" 2)
    echo
    echo "## budget -s $scale at ${pms} ms (bare run: $base s CPU)"
    table_head "config|samples|vs-perf|worst-err|acct-err-ms|lost|cpu-s|overhead|us/sample"
    for c in $configs; do
        [ "$c" = bare ] && continue
        f=$BENCH_TMP/$c.$pms
        sm=$(med "$f" 2) cpu=$(med "$f" 1)
        vs=-; [ "$ps" != 0 ] && vs=$(calc "$sm / $ps" 2)
        acct=$(med "$f" 5); lost=$(med "$f" 3)
        [ "$c" = perfrec ] && { acct=-; lost=-; }
        table_row "$c|$sm|$vs|$(med "$f" 4)|$acct|$lost|$cpu|$(calc "($cpu - $base) / $base * 100" 1)%|$(calc "($cpu - $base) / $sm * 1e6" 1)"
    done
done

# 2: many busy threads on two cores.
echo
echo "## $threads busy threads (peer-burn $threads $work) at 1 ms"
table_head "engine|samples|lost|lost-ms|worst-err|acct-err-ms|cpu-s"
for e in timer perf; do
    f=$BENCH_TMP/many.$e
    : >"$f"
    for ((i = 0; i < BENCH_RUNS; i++)); do
        rm -f "$BENCH_TMP"/o.rec
        : >"$BENCH_TMP/m"
        measure "$BENCH_TMP/m" "$recstart" -q -o "$BENCH_TMP/o.rec" -t 1ms \
            --engine "$e" -- "$BENCH_TMP/peer-burn" "$threads" "$work"
        read -r _ u s _ <"$BENCH_TMP/m"
        lms=$("$reccpu" --json "$BENCH_TMP/o.rec" 2>/dev/null |
              jq '[.threads[].lostCpuTime] | add / 1e6')
        echo "$(calc "$u + $s") $(rec_figures "$BENCH_TMP/o.rec" 1000000) $lms" >>"$f"
    done
    table_row "$e|$(med "$f" 2)|$(med "$f" 3)|$(med "$f" 6)|$(med "$f" 4)|$(med "$f" 5)|$(med "$f" 1)"
done
echo
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
