# bench/lib.sh - helpers sourced by the bench/*.sh scripts (not run alone).
# shellcheck shell=bash
#
# Environment:
#   REC_BUILD    build directory with the rec tools (default: <top>/_build)
#   BENCH_RUNS   repetitions per measurement, the median is reported (>= 5)
#   BENCH_TMP    scratch directory (default: a fresh mktemp -d, removed at exit)
#   BENCH_TSV    if set, a file the scripts append their figures to in a
#                machine-readable form (bench_fig); bench/run-all.sh reads it

set -euo pipefail

bench_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REC_BUILD=${REC_BUILD:-$bench_top/_build}
BENCH_RUNS=${BENCH_RUNS:-5}
[ "$BENCH_RUNS" -ge 5 ] || { echo "BENCH_RUNS must be >= 5" >&2; exit 2; }

if [ -z "${BENCH_TMP:-}" ]; then
    BENCH_TMP=$(mktemp -d /tmp/rec-bench.XXXXXX)
    trap 'rm -rf "$BENCH_TMP"' EXIT
fi
mkdir -p "$BENCH_TMP"

GNU_TIME=/usr/bin/time
[ -x $GNU_TIME ] || { echo "bench: needs GNU time (apt-get install time)" >&2; exit 1; }

# Path of a built program of the tree (tools/rec-dump, bench/rec-synth...),
# or fail with a hint.
rec_prog() {
    local p
    for p in "$REC_BUILD/$1" "$REC_BUILD/tools/$1" "$REC_BUILD/bench/$1"; do
        if [ -x "$p" ] && [ -f "$p" ]; then echo "$p"; return 0; fi
    done
    echo "bench: $1 not built in $REC_BUILD (run scripts/test.sh --quick or make)" >&2
    return 1
}

# Median of the numbers on stdin (one per line).
median() {
    sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "nan"; exit }
        if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# measure OUT CMD...: run CMD once under GNU time; append one line
# "wall_s user_s sys_s maxrss_kb" to OUT. CMD's stdout goes to
# $BENCH_TMP/last.out, stderr to $BENCH_TMP/last.err.
measure() {
    local out=$1; shift
    $GNU_TIME -f '%e %U %S %M' -o "$BENCH_TMP/time.txt" "$@" \
        >"$BENCH_TMP/last.out" 2>"$BENCH_TMP/last.err" || {
        echo "bench: command failed: $*" >&2
        tail -5 "$BENCH_TMP/last.err" >&2
        return 1
    }
    tail -1 "$BENCH_TMP/time.txt" >> "$out"
}

# column N of a measure file, median
col_median() { awk -v c="$2" '{ print $c }' "$1" | median; }
# user+sys, median
cpu_median() { awk '{ print $2 + $3 }' "$1" | median; }

# Table output: table_head "col|col|..."; table_row "v|v|..."
table_head() {
    echo
    echo "$1" | awk -F'|' '{ s = ""; for (i = 1; i <= NF; i++) s = s sprintf("%-*s", i == 1 ? 34 : 16, $i); print s }'
    echo "$1" | awk -F'|' '{ s = ""; for (i = 1; i <= NF; i++) { w = i == 1 ? 34 : 16; d = ""; for (j = 1; j < w - 1; j++) d = d "-"; s = s d "  " } print s }'
}
table_row() {
    echo "$1" | awk -F'|' '{ s = ""; for (i = 1; i <= NF; i++) s = s sprintf("%-*s", i == 1 ? 34 : 16, $i); print s }'
}

# Floating-point arithmetic: calc EXPR
calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }

# bench_fig: bench/fig.sh.
# shellcheck source=bench/fig.sh
. "$bench_top/bench/fig.sh"

bench_info() {
    echo "# $(date -u +%FT%TZ)  $(uname -r)  $(nproc) cpus  runs=$BENCH_RUNS"
    echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
}
