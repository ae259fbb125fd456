#!/usr/bin/env bash
# bench/sampler-memory.sh - memory the sampler adds to the profiled program.
#
#   bench/sampler-memory.sh [--runs N] [--threads "1 100 200 400"] [--spin MS] [--tsv FILE]
#
# Workload: bench/many-threads (the built one, else compiled with cc):
# THREADS threads alive at once, each burning MS (default 12) ms of CPU
# before they all exit.
# Maximum RSS of the workload process (GNU time %M; under rec-start that is
# the larger of rec-start and the workload, and rec-start is the smaller),
# median of N runs, for:
#   none            the workload alone
#   rec 10ms        rec-start (default throttle)
#   rec 1ms         rec-start --throttle 1ms (larger per-thread queues)
#   gperftools      LD_PRELOAD=libprofiler.so CPUPROFILE_FREQUENCY=1000
# Reports RSS added at 1 thread (target <= 4 MB) and the least-squares slope
# of the added RSS against the thread count (target <= 64 KB per thread).
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

counts="1 100 200 400" spin=12
while [ $# -gt 0 ]; do
    case $1 in
    --runs) BENCH_RUNS=$2; shift 2 ;;
    --threads) counts=$2; shift 2 ;;
    --spin) spin=$2; shift 2 ;;
    --tsv) BENCH_TSV=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--threads LIST] [--spin MS] [--tsv FILE]" >&2; exit 2 ;;
    esac
done
[ "$BENCH_RUNS" -ge 5 ] || { echo "--runs must be >= 5" >&2; exit 2; }

rec_start=$(rec_prog rec-start)
# The built one if there is one, else compiled here.
if ! mt=$(rec_prog many-threads 2>/dev/null); then
    mt=$BENCH_TMP/many-threads
    cc -O2 -pthread "$bench_top/bench/many-threads.c" -o "$mt"
fi
libprofiler=$(ls /usr/lib/*/libprofiler.so.0 2>/dev/null | head -1 || true)

bench_info
echo "# load: $(uptime | sed 's/.*load average/load average/')"
echo "# workload: many-threads N $spin (N threads alive at once); max RSS in KiB"

# raw rows: mode threads run maxrss_kb
raw=$BENCH_TMP/mem.raw
: > "$raw"
one() {  # one MODE N RUN CMD...
    local mode=$1 n=$2 r=$3; shift 3
    : > "$BENCH_TMP/m"
    measure "$BENCH_TMP/m" "$@" || return 1
    echo "$mode $n $r $(awk '{ print $4 }' "$BENCH_TMP/m")" >> "$raw"
}
modes="none rec-10ms rec-1ms"
[ -n "$libprofiler" ] && modes="$modes gperftools"
for ((r = 1; r <= BENCH_RUNS; r++)); do
    for n in $counts; do
        one none "$n" "$r" "$mt" "$n" "$spin"
        one rec-10ms "$n" "$r" "$rec_start" -q -f -o "$BENCH_TMP/m.rec" -- "$mt" "$n" "$spin"
        one rec-1ms "$n" "$r" "$rec_start" -q -f -t 1ms -o "$BENCH_TMP/m.rec" -- "$mt" "$n" "$spin"
        [ -z "$libprofiler" ] ||
            one gperftools "$n" "$r" env LD_PRELOAD="$libprofiler" CPUPROFILE="$BENCH_TMP/m.prof" \
                CPUPROFILE_FREQUENCY=1000 "$mt" "$n" "$spin"
    done
    echo "# run $r/$BENCH_RUNS done" >&2
done
[ -n "$libprofiler" ] || echo "# gperftools: not installed (apt-get install google-perftools libgoogle-perftools-dev)"

med() { awk -v m="$1" -v n="$2" '$1 == m && $2 == n { print $4 }' "$raw" | median; }

hdr="threads"
for m in $modes; do hdr="$hdr|$m KiB"; done
table_head "$hdr"
for n in $counts; do
    row="$n"
    for m in $modes; do row="$row|$(med "$m" "$n")"; done
    table_row "$row"
done

# Added RSS: median of the profiled runs minus median of the bare runs, per
# thread count; slope by least squares over the thread counts.
first=${counts%% *}
table_head "profiler|+KiB at $first thr|+KiB per thread|r^2|target"
for m in $modes; do
    [ "$m" = none ] && continue
    fit=$(for n in $counts; do echo "$n $(calc "$(med "$m" "$n") - $(med none "$n")" 1)"; done |
        awk '{ n++; sx += $1; sy += $2; sxx += $1 * $1; sxy += $1 * $2; syy += $2 * $2 }
             END { d = n * sxx - sx * sx; b = (n * sxy - sx * sy) / d
                   r = (n * sxy - sx * sy) / sqrt(d * (n * syy - sy * sy) + 1e-30)
                   printf "%.2f %.3f", b, r * r }')
    table_row "$m|$(calc "$(med "$m" "$first") - $(med none "$first")" 0)|${fit% *}|${fit#* }|4096 KiB + 64 KiB/thread"
    # per run: its max RSS minus the median without profiler; gperftools
    # samples at 1 kHz, so it goes beside rec at 1 ms
    pl="1 ms"; [ "$m" = rec-10ms ] && pl="10 ms"
    awk -v m="$m" -v n="$first" -v b="$(med none "$first")" '$1 == m && $2 == n { print ($4 - b) / 1024 }' "$raw" |
        bench_fig "RSS added at $first thread(s), $pl" "${m%-*}" MiB "target=4 MiB"
    echo "${fit% *}" | bench_fig "RSS added per thread, $pl (fit over $counts threads)" "${m%-*}" KiB \
        "n=$(awk -v m="$m" '$1 == m' "$raw" | wc -l) target=64 KiB; fit of the medians, r^2=${fit#* }"
done

echo
echo "# raw: mode threads run maxrss_kb"
sort -k1,1 -k2,2n -k3,3n "$raw" | awk '{ k = $1 " " $2; v[k] = v[k] " " $4 } END { for (k in v) print "  " k ":" v[k] }' | sort -k1,1 -k2,2n
