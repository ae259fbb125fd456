#!/usr/bin/env bash
# bench/sampler-stacks.sh - how often a sample carries its exact call chain.
#
#   bench/sampler-stacks.sh [--runs N] [--seconds S] [--throttle T] [--tsv FILE]
#
# Workload: tests/workloads/stacks S (default 1 s of CPU per thread). Its
# three threads spend almost all their time in one busy function each, with
# a known chain of callers (tests/test-stacks.sh has the same expectations):
#   stk-main  stk_c stk_b stk_a main
#   stk-leaf  stk_leaf stk_leaf_parent stk_leaf_thread   (stk_leaf has no
#             frame pointer: a plain frame-pointer walk loses its caller)
#   stk-rec   stk_rec_bottom stk_rec x8 stk_rec_thread
# For every sample of a thread whose top frame is its busy function, the
# chain must start with the expected one. Reported per thread: the median
# over N runs of the fraction of such samples with the exact chain, and the
# failed-walk fraction. Profilers:
#   rec         rec-start --throttle T (default 1ms)
#   perf fp     perf record -e cpu-clock -c 1000000 -g (frame pointers)
#   perf dwarf  perf record -e cpu-clock -c 1000000 --call-graph dwarf
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

secs=1 throttle=1ms
while [ $# -gt 0 ]; do
    case $1 in
    --runs) BENCH_RUNS=$2; shift 2 ;;
    --seconds) secs=$2; shift 2 ;;
    --throttle) throttle=$2; shift 2 ;;
    --tsv) BENCH_TSV=$2; shift 2 ;;
    *) echo "usage: $0 [--runs N] [--seconds S] [--throttle T] [--tsv FILE]" >&2; exit 2 ;;
    esac
done
[ "$BENCH_RUNS" -ge 5 ] || { echo "--runs must be >= 5" >&2; exit 2; }

rec_start=$(rec_prog rec-start)
rec_dump=$(rec_prog rec-dump)
stacks=$REC_BUILD/tests/workloads/stacks
[ -x "$stacks" ] || { echo "bench: $stacks not built" >&2; exit 1; }
command -v jq >/dev/null || { echo "bench: needs jq" >&2; exit 1; }
have_perf=0
if command -v perf >/dev/null && perf stat -e task-clock true >/dev/null 2>&1; then have_perf=1; fi

bench_info
echo "# load: $(uptime | sed 's/.*load average/load average/')"
echo "# workload: stacks $secs; rec --throttle $throttle; perf: $([ $have_perf = 1 ] && echo yes || echo 'not available')"

rec_chain="" ; for ((i = 0; i <= 7; i++)); do rec_chain="$rec_chain stk_rec"; done
expect="stk-main stk_c stk_c stk_b stk_a main
stk-leaf stk_leaf stk_leaf stk_leaf_parent stk_leaf_thread
stk-rec stk_rec_bottom stk_rec_bottom$rec_chain stk_rec_thread"

# score PROFILER RUN < chains.tsv  (thread TAB failed TAB frames...)
# appends "profiler run thread samples_in_top exact failed total" to raw
raw=$BENCH_TMP/stk.raw
: > "$raw"
score() {
    local tsv=$BENCH_TMP/chains.tsv
    cat > "$tsv"
    echo "$expect" | while read -r thread top want; do
        awk -F '\t' -v t="$thread" -v top="$top" -v want="$want" -v p="$1" -v r="$2" '
            $1 == t { total++; if ($2 == "true") { failed++; next }
                      split($3, f, " "); if (f[1] != top) next
                      n++; if (index($3 " ", want " ") == 1) good++ }
            END { printf "%s %s %s %d %d %d %d\n", p, r, t, n, good, failed, total }' "$tsv" >> "$raw"
    done
}

perf_chains() {  # perf script blocks -> thread TAB false TAB syms
    perf script -i "$BENCH_TMP/s.perf" -F comm,tid,ip,sym 2>/dev/null | awk '
        function out() { if (have) printf "%s\tfalse\t%s\n", comm, chain; have = 0 }
        NF == 0 { out(); next }
        /^\t/ { if (have) chain = chain (chain == "" ? "" : " ") $2; next }
        { out(); comm = $1; chain = ""; have = 1 }
        END { out() }'
}

for ((r = 1; r <= BENCH_RUNS; r++)); do
    "$rec_start" -q -f -t "$throttle" -o "$BENCH_TMP/s.rec" -- "$stacks" "$secs"
    "$rec_dump" --ndjson --stack-depth 0 --events CPUTimeSample "$BENCH_TMP/s.rec" |
        jq -r '[.eventThread.name // "?", (.failed | tostring),
                ((.stackTrace.frames // []) | map(.function // "?") | join(" "))] | @tsv' |
        score rec "$r"
    if [ $have_perf = 1 ]; then
        perf record -q -e cpu-clock -c 1000000 -g -o "$BENCH_TMP/s.perf" -- "$stacks" "$secs" 2>/dev/null
        perf_chains | score "perf-fp" "$r"
        perf record -q -e cpu-clock -c 1000000 --call-graph dwarf -o "$BENCH_TMP/s.perf" -- "$stacks" "$secs" 2>/dev/null
        perf_chains | score "perf-dwarf" "$r"
    fi
    echo "# run $r/$BENCH_RUNS done" >&2
done

table_head "profiler / thread|samples in top|exact chain %|range %|failed %"
for p in rec perf-fp perf-dwarf; do
    grep -q "^$p " "$raw" || continue
    for t in stk-main stk-leaf stk-rec; do
        rows=$(awk -v p="$p" -v t="$t" '$1 == p && $3 == t' "$raw")
        n=$(echo "$rows" | awk '{ print $4 }' | median)
        pc=$(echo "$rows" | awk '$4 > 0 { print $5 / $4 * 100 }' | median)
        rng=$(echo "$rows" | awk '$4 > 0 { e = $5 / $4 * 100; if (!k++ || e < lo) lo = e; if (k == 1 || e > hi) hi = e }
                                 END { printf "%.1f..%.1f", lo, hi }')
        fl=$(echo "$rows" | awk '$7 > 0 { print $6 / $7 * 100 }' | median)
        table_row "$p $t|$n|$(calc "${pc:-0}" 2)|$rng|$(calc "${fl:-0}" 2)"
        echo "$rows" | awk '$4 > 0 { print $5 / $4 * 100 }' |
            bench_fig "exact call chain, $t" "$p" % "target=99%"
    done
done
echo
echo "# raw: profiler run thread samples_in_top exact_chain failed all_samples"
sort -k1,1 -k3,3 -k2,2n "$raw" | sed 's/^/  /'
