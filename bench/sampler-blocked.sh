#!/bin/bash
# bench/sampler-blocked.sh - threads that block every signal (as xz's
# workers do): the share of their CPU time recorded in samples with stacks,
# at 10 ms and 1 ms, and whether the program's output and exit status are
# unchanged.
#
#   sampler-blocked.sh [BUILD [RUNS]]     (BUILD: a build tree, default _build)
#
# Workloads: tests/workloads/sigblock (2 workers, pthread_sigmask of every
# signal, 1 s of CPU each) and a real program, xz -T2 -1 compressing about
# 20 MB of /dev/urandom and text (its output compared byte for byte; 20 MB
# keeps a run to a few seconds on a shared machine). Share = periods of the samples with a
# stack / (all periods + lost time), from tests/sampler-check (built here).
# Medians over RUNS (>= 5). Prints the load average before and after.
set -u
B=$(cd "${1:-_build}" && pwd)
RUNS=${2:-5}
START=$B/tools/rec-start
CHECK=$B/tests/sampler-check
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s -C "$B" tests/sampler-check tests/workloads/sigblock >/dev/null || exit 1
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { sed -n "s/^total .*\\<$1=\\([0-9]*\\).*/\\1/p" "$2"; }

# share THROTTLE CMD...: one run; prints "share same" (same: output and
# status identical to the plain run saved in $tmp/plain.*)
share() {
    local thr=$1; shift
    rm -f "$tmp/r.rec"
    "$START" -q -t "$thr" -o "$tmp/r.rec" -- "$@" >"$tmp/rec.out" 2>/dev/null
    local st=$?
    "$CHECK" "$tmp/r.rec" >"$tmp/chk" 2>&1
    local s p l same=0
    s=$(field stacked_ns "$tmp/chk"); p=$(field period_ns "$tmp/chk"); l=$(field lost_ns "$tmp/chk")
    [ "$st" = "$(cat "$tmp/plain.st")" ] && cmp -s "$tmp/rec.out" "$tmp/plain.out" && same=1
    awk -v s="$s" -v p="$p" -v l="$l" -v same=$same 'BEGIN { printf "%.4f %d\n", (p + l) ? s / (p + l) : 0, same }'
}

report() {   # NAME THROTTLE CMD...
    local name=$1 thr=$2; shift 2
    "$@" >"$tmp/plain.out" 2>/dev/null; echo $? >"$tmp/plain.st"
    : >"$tmp/runs"
    for _ in $(seq "$RUNS"); do share "$thr" "$@" >>"$tmp/runs"; done
    printf '%-34s %-6s share with stacks %s (runs: %s)  output+status unchanged in %s/%s runs\n' \
        "$name" "$thr" "$(awk '{ print $1 }' "$tmp/runs" | median)" \
        "$(awk '{ printf "%s ", $1 }' "$tmp/runs")" \
        "$(awk '{ s += $2 } END { print s }' "$tmp/runs")" "$RUNS"
}

echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) cpus runs=$RUNS load: $(cut -d' ' -f1-3 /proc/loadavg)"
head -c 8000000 /dev/urandom >"$tmp/in"
seq 1 1800000 >>"$tmp/in"
for thr in 10ms 1ms; do
    report "sigblock (pthread_sigmask, 2x1s)" $thr "$B/tests/workloads/sigblock" mask 2 1000
    report "xz -T2 -1, $(($(stat -c %s "$tmp/in") / 1000000)) MB" $thr xz -T2 -1 -c "$tmp/in"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
