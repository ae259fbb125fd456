# shellcheck shell=sh disable=SC2034
# tests/cpu-lib.sh - sourced by tests/test-cpu*.sh: locations of rec-cpu and
# its data, TAP output (tests/tap-lib.sh), a scratch directory $T, golden
# and jq checks.
: "${top_srcdir:?}" "${top_builddir:?}"
REC_CPU=$top_builddir/tools/rec-cpu
MKCPU=$top_builddir/tests/mkcpu
DATA=$top_srcdir/tests/data/cpu
. "$top_srcdir/tests/tap-lib.sh"
tap_scratch test-cpu
T=$TMP

# golden NAME FILE: FILE equals tests/data/cpu/NAME (REGEN=1 rewrites it).
golden() {
    if [ "${REGEN:-0}" = 1 ]; then
        cp "$2" "$DATA/$1"
    fi
    if diff -u "$DATA/$1" "$2" > "$T/diff" 2>&1; then
        ok 0 "golden $1"
    else
        ok 1 "golden $1"
        head -n 40 "$T/diff" | sed 's/^/# /'
    fi
}

# jqt DESCRIPTION FILE FILTER: the jq FILTER is true on FILE.
jqt() {
    if [ "$(jq -e "$3" "$2" 2>&1)" = true ]; then
        ok 0 "$1"
    else
        ok 1 "$1"
        echo "jq: $3" | sed 's/^/# /'
    fi
}
