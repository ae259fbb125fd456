#!/bin/sh
# scripts/fuzz.sh - run the libFuzzer targets of a build configured with
# --enable-fuzzing (CC=clang ../configure --enable-fuzzing) for N minutes
# each, seeded from the committed recordings and findings.
#
#   scripts/fuzz.sh [-b BUILDDIR] [-j JOBS] MINUTES [TARGET...]
#
# TARGET: reader, dump, summary, cpu, flame (default: all, one after the other;
# JOBS libFuzzer worker processes each, default 1). The growing corpus is kept in
# BUILDDIR/fuzz-corpus/TARGET, crashes go to BUILDDIR/fuzz-findings/TARGET:
# copy each one, reduced, to tests/data/fuzz/TARGET/ so that make check
# replays it. Prints the executions of each target at the end.
set -eu

srcdir=$(cd "$(dirname "$0")/.." && pwd)
build=$srcdir/_build-fuzz
jobs=1
while getopts b:j: opt; do
    case $opt in
    b) build=$(cd "$OPTARG" && pwd) ;;
    j) jobs=$OPTARG ;;
    *) echo "usage: $0 [-b BUILDDIR] [-j JOBS] MINUTES [TARGET...]" >&2
       exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-b BUILDDIR] [-j JOBS] MINUTES [TARGET...]" >&2; exit 2; }
minutes=$1
shift
targets=${*:-reader dump summary cpu flame}

(cd "$build" && make -s fuzz/fuzz-reader fuzz/fuzz-dump fuzz/fuzz-summary \
    fuzz/fuzz-cpu fuzz/fuzz-flame) || {
    echo "$0: $build is not configured with --enable-fuzzing" >&2
    exit 1
}

total=0
for t in $targets; do
    bin=$build/fuzz/fuzz-$t
    corpus=$build/fuzz-corpus/$t
    findings=$build/fuzz-findings/$t
    log=$build/fuzz-findings/$t.log
    mkdir -p "$corpus" "$findings"
    seeds="$srcdir/tests/data/golden $srcdir/tests/data/cpu $srcdir/tests/data/corpus"
    [ -d "$srcdir/tests/data/fuzz/$t" ] && seeds="$seeds $srcdir/tests/data/fuzz/$t"
    # -fork: workers in child processes, so that a finding (saved in
    # $findings) does not end the run; -close_fd_mask=2: the tools' error
    # lines are expected, not findings.
    # shellcheck disable=SC2086
    (cd "$findings" && ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
    "$bin" -fork="$jobs" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        -max_total_time=$((minutes * 60)) -timeout=60 -rss_limit_mb=2048 \
        -max_len=65536 -close_fd_mask=2 \
        -artifact_prefix="$findings/" "$corpus" $seeds) > "$log" 2>&1 || true
    # The fork driver's status lines: "#EXECS: cov: ... time: ...".
    execs=$(sed -n 's/^#\([0-9][0-9]*\): cov:.*/\1/p' "$log" | tail -n 1)
    execs=${execs:-0}
    crashes=$(find "$findings" -maxdepth 1 -type f \
              \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
                 -o -name 'oom-*' \) | wc -l)
    echo "fuzz-$t: $execs executions in $minutes min, $crashes findings ($findings)"
    total=$((total + execs))
done
echo "total: $total executions"
