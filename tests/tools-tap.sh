# shellcheck shell=sh disable=SC2034
# tests/tools-tap.sh - sourced by the shell tests of rec-dump, rec-summary
# and rec-start: locations of the binaries and data, the environment the
# tools run in, TAP output (tests/tap-lib.sh), a scratch directory $TMP.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
REC_DUMP=$top_builddir/tools/rec-dump
REC_SUMMARY=$top_builddir/tools/rec-summary
REC_START=$top_builddir/tools/rec-start
REC_CPU=$top_builddir/tools/rec-cpu
MKGOLDEN=$top_builddir/tests/mkgolden
GOLDEN=$top_srcdir/tests/data/golden
WORKLOADS=$top_builddir/tests/workloads
# Sanitizer reports must not look like the tools' own exit status (1, or
# the profiled program's status passed through by rec-start).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=86:print_stacktrace=1"
export LC_ALL=C

. "$top_srcdir/tests/tap-lib.sh"

# expect_status WANT DESCRIPTION: compares with $st (the caller's)
# shellcheck disable=SC2154
expect_status() {
    [ "$st" -eq "$1" ]
    _r=$?
    ok $_r "$2 (exit $st, want $1)"
    [ $_r -eq 0 ] || diag_file "$TMP/err"
}

tap_scratch rec-tools-test

# early_stacks REC: the samples REC counts as early stacks (taken before
# the unwind table of a module on their stack was built: they end there),
# which a check of exact chains does not judge.
early_stacks() {
    "$REC_DUMP" --ndjson --events ProcessUsage "$1" 2>/dev/null |
        jq -s '[.[].earlyStacks // 0] | add // 0'
}
