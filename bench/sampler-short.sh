#!/bin/bash
# bench/sampler-short.sh - short, time-sliced threads: where their CPU
# time goes. bench/short-threads starts 2,000 threads of 20 ms of CPU
# each, 50 alive at a time (on this 2-core machine each runs in slices).
#
#   sampler-short.sh [BUILD [RUNS [PERIOD]]]   (default _build, 5, 10ms)
#   REC_START=OTHER/tools/rec-start sampler-short.sh ...   (rec of another
#   tree on the same workload, for before/after; perf as usual)
#   SHORT_THREADS=N: N threads instead of 2000 (a loaded machine)
#   NO_PERF=1: rec only
#   ENGINES="perf timer": rec's engines measured (rec-start --engine)
#
# rec: share of the recorded CPU time (all periods + lost) in samples with
# a stack, the lost time by reason, and the recorded total against the
# process's user+sys (GNU time). perf record -e cpu-clock at the same
# period on the same workload: samples x period against the workers' CPU
# time, 2000 x 20 ms, as for rec's stacked time (perf's
# cpu-clock uses a high-resolution timer per task, rec a CPU-clock POSIX
# timer, which the kernel checks at scheduler ticks). Medians over RUNS.
set -u
B=$(cd "${1:-_build}" && pwd)
RUNS=${2:-5}
PERIOD=${3:-10ms}
# REC_START: another tree's rec-start (a before/after comparison).
START=${REC_START:-$B/tools/rec-start}
CHECK=$B/tests/sampler-check
W=$B/bench/short-threads
ENGINES=${ENGINES:-perf timer}
N=${SHORT_THREADS:-2000}     # threads in all (the CPU time scales with it)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s -C "$B" tests/sampler-check bench/short-threads >/dev/null || exit 1
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { sed -n "s/^total .*\\<$1=\\([0-9]*\\).*/\\1/p" "$2"; }
period_ns=$(awk -v p=$PERIOD 'BEGIN { n = p + 0; if (p ~ /us$/) n *= 1000; else if (p ~ /ms$/) n *= 1000000; else n *= 1000000000; print n }')

echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) cpus runs=$RUNS period=$PERIOD HZ=$(grep -m1 '^CONFIG_HZ=' "/boot/config-$(uname -r)" 2>/dev/null | cut -d= -f2) load: $(cut -d' ' -f1-3 /proc/loadavg)"
for engine in $ENGINES; do
    : >"$tmp/rec"
    for _ in $(seq "$RUNS"); do
        rm -f "$tmp/r.rec"
        /usr/bin/time -f '%U %S' -o "$tmp/time" "$START" -q --engine $engine -t $PERIOD -o "$tmp/r.rec" -- "$W" $N 50 20
        "$CHECK" "$tmp/r.rec" >"$tmp/chk" 2>&1
        "$B/tools/rec-summary" "$tmp/r.rec" | grep "without stacks" >"$tmp/line"
        echo "$(field stacked_ns "$tmp/chk") $(field period_ns "$tmp/chk") $(field lost_ns "$tmp/chk") $(awk '{ print ($1 + $2) * 1e9 }' "$tmp/time") $(field undelivered "$tmp/chk") $(field unsafe "$tmp/chk")" >>"$tmp/rec"
    done
    printf 'rec %s engine, %s: share with stacks %s of recorded CPU (runs: %s); stacked / workers'"'"' CPU ('"$N"' x 20 ms) %s; recorded/process CPU %s; lost undelivered %s, unsafe %s samples (medians)\n' \
        $engine $PERIOD "$(awk '{ print $1 / ($2 + $3) }' "$tmp/rec" | median)" \
        "$(awk '{ printf "%.3f ", $1 / ($2 + $3) }' "$tmp/rec")" \
        "$(awk -v n=$N '{ print $1 / (n * 0.02e9) }' "$tmp/rec" | median)" \
        "$(awk '{ print ($2 + $3) / $4 }' "$tmp/rec" | median)" \
        "$(awk '{ print $5 }' "$tmp/rec" | median)" "$(awk '{ print $6 }' "$tmp/rec" | median)"
    echo "rec-summary says (last run): $(cat "$tmp/line")"
done
if [ -z "${NO_PERF:-}" ] && command -v perf >/dev/null 2>&1 && perf record -q -e cpu-clock -c 1000000 -o "$tmp/p.data" true 2>/dev/null; then
    : >"$tmp/perf"
    for _ in $(seq "$RUNS"); do
        /usr/bin/time -f '%U %S' -o "$tmp/time" perf record -q -e cpu-clock -c $period_ns -o "$tmp/p.data" -- "$W" $N 50 20 2>/dev/null
        n=$(perf script -i "$tmp/p.data" -F comm 2>/dev/null | grep -c short-threads)
        echo "$n" >>"$tmp/perf"
    done
    printf 'perf cpu-clock %s: samples x period / workers'"'"' CPU ('"$N"' x 20 ms) %s (runs: %s)\n' $PERIOD \
        "$(awk -v p=$period_ns -v n=$N '{ print $1 * p / (n * 0.02e9) }' "$tmp/perf" | median)" \
        "$(awk -v p=$period_ns -v n=$N '{ printf "%.3f ", $1 * p / (n * 0.02e9) }' "$tmp/perf")"
else
    echo "perf: not usable here (perf_event_paranoid?), skipped"
fi
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
