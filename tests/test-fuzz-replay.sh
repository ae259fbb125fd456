#!/bin/sh
# tests/test-fuzz-replay.sh - replay every fuzz target (fuzz/fuzz-tool.c)
# over the committed recordings and the fuzzers' findings of
# tests/data/fuzz/<target>/, in every mode of each tool: no crash, no hang,
# no sanitizer report (scripts/fuzz.sh finds new ones).
. "$top_srcdir/tests/tools-tap.sh"

D=$top_srcdir/tests/data
for t in reader dump summary cpu flame; do
    set -- "$D/golden" "$D/cpu" "$D/corpus"
    [ -d "$D/fuzz/$t" ] && set -- "$@" "$D/fuzz/$t"
    "$top_builddir/fuzz/replay-$t" "$@" > "$TMP/out" 2> "$TMP/err"
    st=$?
    n=$(sed -n 's/^replayed \([0-9]*\) inputs$/\1/p' "$TMP/err")
    expect_status 0 "$t: replays ${n:-no} seeds and findings"
    [ "${n:-0}" -gt 30 ]
    ok $? "$t: the committed recordings are all there (${n:-0})"
done
done_testing
