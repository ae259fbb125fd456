# shellcheck shell=sh disable=SC2034
# tests/tap-lib.sh - TAP output for the shell tests, sourced through the
# preludes of each area (tests/tools-tap.sh, tests/cpu-lib.sh): the
# counters, ok/check/check_eval/skip/diag, the final plan, a scratch
# directory.

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
# check_eval DESCRIPTION EXPRESSION: passes if the shell expression (eval'd
# in the caller's variables) is true; returns its status. A failure shows
# what was judged: the expression's commands traced with their values.
check_eval() {
    if eval "$2"; then ok 0 "$1"; return 0; fi
    ok 1 "$1"
    (set -x; eval "$2") 2>&1 >/dev/null | sed 's/^/#   /' | head -40
    return 1
}
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP $*"; }
diag() { echo "# $*"; }
# diag_file FILE [LINES]: the first LINES (15) of FILE as indented comments
diag_file() { sed 's/^/#   /' "$1" | head -${2:-15}; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
done_testing() {
    echo "1..$tap_n"
    [ "$tap_failed" -eq 0 ]
}

# tap_scratch NAME: $TMP is a fresh directory NAME.XXXXXX, removed on exit.
tap_scratch() {
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || exit 99
    trap 'rm -rf "$TMP"' EXIT
}
