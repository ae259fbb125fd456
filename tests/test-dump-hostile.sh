#!/bin/sh
# rec-dump on pool entries that reference themselves, each other, or fan
# out 4096-fold over many levels (tests/mkhostile): it must finish, with
# bounded output, valid JSON, and exit 0 or 1. `timeout` only guards
# against a hang; no duration is asserted.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
[ -x "$REC_DUMP" ] || skip_all "rec-dump not built"
[ -x "$top_builddir/tests/mkhostile" ] || skip_all "mkhostile not built"
command -v jq >/dev/null || skip_all "jq not installed"
"$top_builddir/tests/mkhostile" "$TMP"
ok $? "mkhostile writes the recordings"
for r in self cycle dag; do
    for depth in 5 0; do
        timeout 300 "$REC_DUMP" --ndjson --stack-depth $depth "$TMP/$r.rec" >"$TMP/out" 2>"$TMP/err"
        s=$?
        ok $(( s != 0 && s != 1 )) "$r.rec --stack-depth $depth: exit $s (0 or 1)"
        [ $s -le 1 ] || sed 's/^/# /' "$TMP/err" | head -3
        check "$r.rec --stack-depth $depth: every line parses" \
            sh -c "jq -e 'type == \"object\"' '$TMP/out' >/dev/null"
        size=$(wc -c <"$TMP/out")
        ok $(( size > 3 * 9 * 1024 * 1024 )) "$r.rec: output bounded ($size bytes for 3 events)"
    done
done
done_testing
