#!/usr/bin/env bash
# bench/unwind.sh - the CFI stack walker: how many samples reach the
# thread's root frame, and what the walk and its tables cost.
#
#   bench/unwind.sh [--runs N] [--seconds S]
#
# Root share: of the successful samples, those whose outermost frame is the
# thread's entry (_start, or clone3 below start_thread), median over N runs,
# for rec --stack-walker cfi, rec --stack-walker fp and perf --call-graph
# dwarf (8 KB stack copies, unwound afterwards) on the same workloads:
#   python3   Debian's python3 (no frame pointers) running a CPU loop in
#             three threads (bench/unwind-py.py)
#   qsort     glibc qsort calling back a comparison function, two threads
#   stacks    tests/workloads/stacks-nofp (-O2 -fomit-frame-pointer)
# Costs (bench/unwind-cost): ns per walk of a ~30-frame stack without
# frame pointers (the handler's walk, signal delivery excluded, median of
# 5 x 200000 walks), and of the Python frames' walk beside it (Debian's
# libpython3.11, and pyenv's 3.9 and 3.10 when installed); table rows,
# bytes and build time for libc, libpython (statically in Debian's
# python3.11) and the workload.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

secs=0.5
while [ $# -gt 0 ]; do
    case $1 in
    --runs) BENCH_RUNS=$2; shift 2 ;;
    --seconds) secs=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--seconds S]" >&2; exit 2 ;;
    esac
done
[ "$BENCH_RUNS" -ge 5 ] || { echo "--runs must be >= 5" >&2; exit 2; }

rec_start=$(rec_prog rec-start)
rec_dump=$(rec_prog rec-dump)
cost=$(rec_prog unwind-cost)
qsortw=$(rec_prog unwind-qsort)
stacks=$REC_BUILD/tests/workloads/stacks-nofp
[ -x "$stacks" ] || { echo "bench: $stacks not built" >&2; exit 1; }
command -v jq >/dev/null || { echo "bench: needs jq" >&2; exit 1; }
# Debian's own python3, not one from a version manager in PATH.
py=/usr/bin/python3
[ -x "$py" ] || py=""
have_perf=0
if command -v perf >/dev/null && perf stat -e task-clock true >/dev/null 2>&1; then have_perf=1; fi

bench_info
echo "# load: $(uptime | sed 's/.*load average/load average/')"

# The CPU loop scaled to about $secs of CPU per thread.
iters=$(awk -v s="$secs" 'BEGIN { printf "%d", s * 800000 }')
sed "s/work(400000)/work($iters)/" "$(dirname "$0")/unwind-py.py" >"$BENCH_TMP/py.py"

root_re='^(_start|(__)?clone3?)$'
raw=$BENCH_TMP/root.raw
: > "$raw"
# score PROFILER WORKLOAD RUN < "failed TAB outermost-function" lines
score() {
    awk -F '\t' -v p="$1" -v w="$2" -v r="$3" -v re="$root_re" '
        { total++; if ($1 == "true") { failed++; next } n++; if ($2 ~ re) root++ }
        END { printf "%s %s %s %d %d %d\n", p, w, r, n, root, failed }' >> "$raw"
}
rec_run() {  # rec_run WALKER WORKLOAD RUN CMD...
    local walker=$1 w=$2 r=$3
    shift 3
    "$rec_start" -q -f -t 1ms -d 1024 --stack-walker "$walker" \
        -o "$BENCH_TMP/u.rec" -- "$@" >/dev/null
    "$rec_dump" --ndjson --stack-depth 0 --events CPUTimeSample "$BENCH_TMP/u.rec" |
        jq -r '[(.failed | tostring), ((.stackTrace.frames // [])[-1].function // "?")] | @tsv' |
        score "rec-$walker" "$w" "$r"
}
perf_run() {  # perf_run WORKLOAD RUN CMD...
    local w=$1 r=$2
    shift 2
    perf record -q -e cpu-clock -c 1000000 --call-graph dwarf \
        -o "$BENCH_TMP/u.perf" -- "$@" >/dev/null 2>&1
    perf script -i "$BENCH_TMP/u.perf" -F comm,tid,ip,sym 2>/dev/null | awk '
        function out() { if (have) printf "false\t%s\n", last; have = 0 }
        NF == 0 { out(); next }
        /^\t/ { if (have) last = $2; next }
        { out(); last = "?"; have = 1 }
        END { out() }' | score perf-dwarf "$w" "$r"
}

for ((r = 1; r <= BENCH_RUNS; r++)); do
    for walker in cfi fp; do
        [ -n "$py" ] && rec_run $walker python3 $r "$py" "$BENCH_TMP/py.py"
        rec_run $walker qsort $r "$qsortw" "$secs"
        rec_run $walker stacks $r "$stacks" "$secs"
    done
    if [ $have_perf = 1 ]; then
        [ -n "$py" ] && perf_run python3 $r "$py" "$BENCH_TMP/py.py"
        perf_run qsort $r "$qsortw" "$secs"
        perf_run stacks $r "$stacks" "$secs"
    fi
    echo "# run $r/$BENCH_RUNS done" >&2
done

table_head "profiler / workload|samples|root reached %|range %|failed"
for p in rec-cfi rec-fp perf-dwarf; do
    for w in python3 qsort stacks; do
        rows=$(awk -v p="$p" -v w="$w" '$1 == p && $2 == w' "$raw")
        [ -n "$rows" ] || continue
        n=$(echo "$rows" | awk '{ print $4 }' | median)
        pc=$(echo "$rows" | awk '$4 > 0 { print $5 / $4 * 100 }' | median)
        rng=$(echo "$rows" | awk '$4 > 0 { e = $5 / $4 * 100; if (!k++ || e < lo) lo = e; if (k == 1 || e > hi) hi = e }
                                 END { printf "%.1f..%.1f", lo, hi }')
        fl=$(echo "$rows" | awk '{ print $6 }' | median)
        table_row "$p $w|$n|$(calc "${pc:-0}" 2)|$rng|$fl"
    done
done
echo

echo "# walk cost (no frame pointers, stack of ~30 frames)"
"$cost" walk 26 | sed 's/^/  /'
# The Python frames' walk beside the native walk of the same stack, from
# 20 and 60 Python calls deep in Debian's libpython3.11 (aim: at most 2x),
# and in pyenv's 3.9 and 3.10, whose frames are each read through the
# kernel (a Python call there is a native call too: the native walk stops
# at 128 frames).
if [ -e /usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0 ]; then
    echo "# Python frames' walk (ns, median of 5 x py_walks), libpython3.11"
    for d in 20 60; do
        "$cost" python $d | sed 's/^/  /'
    done
fi
for lib in "$HOME"/.pyenv/versions/3.9.*/lib/libpython3.9.so.1.0 \
           "$HOME"/.pyenv/versions/3.10.*/lib/libpython3.10.so.1.0; do
    [ -e "$lib" ] || continue
    echo "# Python frames' walk (ns, median of 5 x py_walks), $lib"
    for d in 20 60; do
        "$cost" python $d "$lib" | sed 's/^/  /'
    done
done
echo "# tables (median build time of 5)"
files="/lib/x86_64-linux-gnu/libc.so.6 $stacks"
[ -n "$py" ] && files="$files $(readlink -f "$py")"
"$cost" tables $files | sed 's/^/  /'
"$cost" process | sed 's/^/  /'
echo
echo "# raw: profiler workload run samples root_reached failed"
sort -k1,1 -k2,2 -k3,3n "$raw" | sed 's/^/  /'
