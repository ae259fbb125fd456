# tests/tools-tap.sh - sourced by the shell tests of the tools: TAP output,
# locations of the binaries, a scratch directory.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
REC_DUMP=$top_builddir/tools/rec-dump
REC_SUMMARY=$top_builddir/tools/rec-summary
MKGOLDEN=$top_builddir/tests/mkgolden
GOLDEN=$top_srcdir/tests/data/golden
# Sanitizer reports must not look like the tools' own exit status 1.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=86:print_stacktrace=1"
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
check() {   # check DESCRIPTION COMMAND...: passes if the command succeeds
    _d=$1
    shift
    if "$@" >"$TMP/check.out" 2>&1; then
        ok 0 "$_d"
    else
        ok 1 "$_d"
        sed 's/^/# /' "$TMP/check.out" | head -20
    fi
}
diag() { echo "# $*"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
done_testing() {
    echo "1..$tap_n"
    [ "$tap_failed" -eq 0 ]
}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/rec-tools-test.XXXXXX") || exit 99
trap 'rm -rf "$TMP"' EXIT
