# tests/start-tap.sh - sourced by the rec-start and stack tests: TAP output,
# the binaries, a scratch directory.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
REC_START=$top_builddir/tools/rec-start
REC_DUMP=$top_builddir/tools/rec-dump
WORKLOADS=$top_builddir/tests/workloads
# rec-start's own sanitizer reports must not pass for a program's status.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=86"
export LC_ALL=C

tap_n=0
tap_failed=0
ok() {   # ok STATUS DESCRIPTION: STATUS 0 passes
    tap_n=$((tap_n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $tap_n - $2"
    else
        echo "not ok $tap_n - $2"
        tap_failed=$((tap_failed + 1))
    fi
}
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP $*"; }
diag() { echo "# $*"; }
diag_file() { sed 's/^/#   /' "$1" | head -${2:-15}; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
done_testing() {
    echo "1..$tap_n"
    [ "$tap_failed" -eq 0 ]
}
# expect_status WANT DESCRIPTION: compares with $st
expect_status() {
    [ "$st" -eq "$1" ]
    _r=$?
    ok $_r "$2 (exit $st, want $1)"
    [ $_r -eq 0 ] || diag_file "$TMP/err"
}

[ -x "$REC_START" ] || skip_all "rec-start not built"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/rec-start-test.XXXXXX") || exit 99
trap 'rm -rf "$TMP"' EXIT
