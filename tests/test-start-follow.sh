#!/bin/sh
# Descendants: recorded into FILE.PID with --follow-children, not at all
# without; a program that exec()s keeps its one recording.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
[ -x "$REC_START" ] || skip_all "rec-start not built"
cd "$TMP" || exit 99

# samples FILE: its CPUTimeSample count.
samples() {
    "$REC_DUMP" --ndjson --events CPUTimeSample "$1" 2>/dev/null | wc -l
}

child='"$0" -s 0.1 & echo $!; wait'
"$REC_START" -q -o "$TMP/nf.rec" sh -c "$child" "$WORKLOADS/budget" >"$TMP/out" 2>"$TMP/err"
st=$?
expect_status 0 "without --follow-children"
cpid=$(cat "$TMP/out")
[ -f "$TMP/nf.rec" ] && [ ! -e "$TMP/nf.rec.$cpid" ] &&
    ! ls "$TMP"/nf.rec.* >/dev/null 2>&1
ok $? "only the program's own recording ($(ls "$TMP" | tr '\n' ' '))"

"$REC_START" -c -o "$TMP/f.rec" sh -c "$child" "$WORKLOADS/budget" >"$TMP/out" 2>"$TMP/err"
st=$?
expect_status 0 "with --follow-children"
grep -q "^rec-start: 1 descendant recording: $TMP/f.rec.<pid>" "$TMP/err"
ok $? "the summary points at the descendant's recording"
[ $? -eq 0 ] || diag_file "$TMP/err"
cpid=$(cat "$TMP/out")
[ -f "$TMP/f.rec" ] && [ -f "$TMP/f.rec.$cpid" ]
ok $? "the child recorded into f.rec.$cpid"
if [ -x "$REC_DUMP" ]; then
    n=$(samples "$TMP/f.rec.$cpid")
    [ "$n" -gt 10 ]
    ok $? "the child's recording has its samples ($n)"
else
    skip "rec-dump not built"
fi

# exec: the new image appends to the same file.
"$REC_START" -o "$TMP/ex.rec" sh -c 'exec "$0" 0.1' "$WORKLOADS/demo" \
    >"$TMP/out" 2>"$TMP/err"
st=$?
expect_status 0 "a program that execs"
! ls "$TMP"/ex.rec.* >/dev/null 2>&1 && grep -q "^rec-start: $TMP/ex.rec: [1-9][0-9]* samples" "$TMP/err"
ok $? "one file, with the exec'd image's samples"
[ $? -eq 0 ] || diag_file "$TMP/err"

done_testing
