# tests/cpu-lib.sh - TAP helpers shared by tests/test-cpu*.sh (sourced).
: "${top_srcdir:?}" "${top_builddir:?}"
REC_CPU=$top_builddir/tools/rec-cpu
MKCPU=$top_builddir/tests/mkcpu
DATA=$top_srcdir/tests/data/cpu
T=$(mktemp -d "${TMPDIR:-/tmp}/test-cpu.XXXXXX")
trap 'rm -rf "$T"' EXIT
tap_n=0
tap_failed=0

ok() {      # ok STATUS DESCRIPTION
    tap_n=$((tap_n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $tap_n - $2"
    else
        echo "not ok $tap_n - $2"
        tap_failed=$((tap_failed + 1))
    fi
}

check() {   # check DESCRIPTION COMMAND...
    local d=$1
    shift
    if "$@"; then ok 0 "$d"; else ok 1 "$d"; fi
}

skip() {
    tap_n=$((tap_n + 1))
    echo "ok $tap_n # SKIP $1"
}

diag() {
    sed 's/^/# /'
}

# golden NAME FILE: FILE equals tests/data/cpu/NAME (REGEN=1 rewrites it).
golden() {
    if [ "${REGEN:-0}" = 1 ]; then
        cp "$2" "$DATA/$1"
    fi
    if diff -u "$DATA/$1" "$2" > "$T/diff" 2>&1; then
        ok 0 "golden $1"
    else
        ok 1 "golden $1"
        head -n 40 "$T/diff" | diag
    fi
}

# jqt DESCRIPTION FILE FILTER: the jq FILTER is true on FILE.
jqt() {
    if [ "$(jq -e "$3" "$2" 2>&1)" = true ]; then
        ok 0 "$1"
    else
        ok 1 "$1"
        echo "jq: $3" | diag
    fi
}

done_testing() {
    echo "1..$tap_n"
    [ "$tap_failed" -eq 0 ]
}
