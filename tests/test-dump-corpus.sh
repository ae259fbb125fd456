#!/bin/sh
# Replay the corpus of damaged recordings (tests/data/corpus/, made by
# tests/corpus-gen, described by its MANIFEST: file, events before the end,
# OK or the error) through rec-dump and rec-summary: no signal, exit 0 for
# OK and 1 for an error, exactly one located error line, and the events
# printed before the damage as many as the manifest says.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
[ -x "$REC_DUMP" ] || skip_all "rec-dump not built"
CORPUS=$top_srcdir/tests/data/corpus
[ -f "$CORPUS/MANIFEST" ] || skip_all "no corpus manifest"
ERRLINE='^rec-(dump|summary): [^:]+: chunk [0-9]+, offset [0-9]+: .+$'
cd "$CORPUS" || exit 99

while read -r file events result; do
    case $file in ''|'#'*) continue ;; esac
    [ "$result" = OK ] && want=0 || want=1
    "$REC_DUMP" --ndjson "$file" >"$TMP/out" 2>"$TMP/err"
    s=$?
    ok $(( s != want )) "$file: rec-dump exit $s (want $want for $result)"
    n=$(wc -l <"$TMP/out")
    ok $(( n != events )) "$file: $n events printed (manifest: $events)"
    if [ $want -eq 1 ]; then
        if [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -Eq "$ERRLINE" "$TMP/err"; then
            ok 0 "$file: one located error line"
        else
            ok 1 "$file: one located error line"
            sed 's/^/# /' "$TMP/err" | head -3
        fi
    else
        # at most a warning (unfinished chunk, dangling references)
        if ! grep -qv '^rec-dump: warning: ' "$TMP/err"; then
            ok 0 "$file: no error, at most warnings"
        else
            ok 1 "$file: no error, at most warnings"
            sed 's/^/# /' "$TMP/err" | head -3
        fi
    fi
    check "$file: NDJSON lines parse" sh -c "jq -c . '$TMP/out' >/dev/null"
    "$REC_DUMP" --json "$file" 2>/dev/null >"$TMP/json"
    check "$file: --json output is one array of $events" \
        jq -e "type == \"array\" and length == $events" "$TMP/json"
    "$REC_SUMMARY" --json "$file" >"$TMP/sum" 2>"$TMP/serr"
    s=$?
    ok $(( s != want )) "$file: rec-summary exit $s (want $want)"
    check "$file: rec-summary counts $events events" \
        jq -e ".events == $events" "$TMP/sum"
done <MANIFEST
done_testing
