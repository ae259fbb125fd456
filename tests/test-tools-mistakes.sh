#!/bin/sh
# What a careful user trips on with the readers: conflicting output modes,
# event type names and thread filters that match nothing, getopt messages
# naming the build tree's binary, raw control characters in CSV, and an
# unfinished recording called the same whether it is still being written
# or abandoned.
. "$top_srcdir/tests/tools-tap.sh"
REC_CPU=$top_builddir/tools/rec-cpu
MKCPU=$top_builddir/tests/mkcpu
REC=$GOLDEN/basic.rec

# Conflicting output modes are refused, not silently overridden.
for pair in "--json --ndjson" "--ndjson --metadata" "--metadata --json"; do
    # shellcheck disable=SC2086
    "$REC_DUMP" $pair "$REC" > /dev/null 2> "$TMP/err"; st=$?
    expect_status 2 "rec-dump $pair: refused"
    grep -q 'exclude each other' "$TMP/err"; ok $? "rec-dump $pair: says why"
done
"$REC_DUMP" --ndjson --ndjson "$REC" > /dev/null 2>&1; st=$?
expect_status 0 "rec-dump --ndjson twice: fine"
"$REC_CPU" --json --csv "$REC" > /dev/null 2> "$TMP/err"; st=$?
expect_status 2 "rec-cpu --json --csv: refused"

# --events: a name that is no event type of the recording is an error.
"$REC_DUMP" --events Nope "$REC" > "$TMP/out" 2> "$TMP/err"; st=$?
expect_status 2 "rec-dump --events Nope"
grep -q "'Nope' is no event type" "$TMP/err" && grep -q 'CPUTimeSample' "$TMP/err"
ok $? "rec-dump --events Nope: says so, with the types there are"
"$REC_DUMP" --events 'CPU*,Nope*' "$REC" > "$TMP/out" 2> "$TMP/err"; st=$?
expect_status 2 "rec-dump --events with one glob matching nothing"
"$REC_DUMP" --ndjson --events 'CPUTimeSample' "$REC" > "$TMP/out" 2> "$TMP/err"; st=$?
expect_status 0 "rec-dump --events CPUTimeSample"
# --threads matching nothing: output as asked, and a note on stderr.
"$REC_DUMP" --ndjson --threads nomatch "$REC" > "$TMP/out" 2> "$TMP/err"; st=$?
expect_status 0 "rec-dump --threads nomatch"
test ! -s "$TMP/out" && grep -q 'matched no thread' "$TMP/err"
ok $? "rec-dump --threads nomatch: a note on stderr"
"$REC_DUMP" --ndjson --threads main "$REC" > "$TMP/out" 2> "$TMP/err"
test -s "$TMP/out" && ! grep -q 'matched no thread' "$TMP/err"
ok $? "rec-dump --threads main: no note"
"$REC_CPU" --threads nomatch "$REC" > /dev/null 2> "$TMP/err"
grep -q 'matched no thread' "$TMP/err"; ok $? "rec-cpu --threads nomatch: a note"

# getopt's own messages name the tool, not .libs/lt-rec-dump.
for t in "$REC_DUMP" "$REC_SUMMARY" "$REC_CPU" "$REC_START"; do
    name=$(basename "$t")
    "$t" --bogus-option x > /dev/null 2> "$TMP/err"
    head -n 1 "$TMP/err" | grep -q "^$name: unrecognized option"
    ok $? "$name: getopt errors start with '$name:'"
    [ $? -eq 0 ] || diag_file "$TMP/err"
done

# CSV: thread names with control characters are escaped.
"$MKCPU" names "$TMP/names.rec" || exit 99
"$REC_CPU" --csv "$TMP/names.rec" > "$TMP/n.csv"
if LC_ALL=C grep -q "$(printf '\t')" "$TMP/n.csv"; then r=1; else r=0; fi
ok $r "rec-cpu --csv: no raw tab"
test "$(wc -l < "$TMP/n.csv")" -eq 6; ok $? "rec-cpu --csv: one line per thread (no raw newline)"
grep -q 'tab\\x09new\\x0aline' "$TMP/n.csv"; ok $? "rec-cpu --csv: control characters as \\xHH"
"$REC_CPU" --csv --interval 1s "$TMP/names.rec" > "$TMP/i.csv"
test "$(wc -l < "$TMP/i.csv")" -eq 6; ok $? "rec-cpu --csv --interval: one line per thread"

# rec-summary: unfinished because the writer is at it, or abandoned.
"$REC_SUMMARY" "$GOLDEN/unfinished.rec" > "$TMP/s.txt" 2> /dev/null
grep -q 'unfinished: its writer stopped' "$TMP/s.txt"; ok $? "abandoned: unfinished"
"$REC_SUMMARY" --json "$GOLDEN/unfinished.rec" > "$TMP/s.json" 2> /dev/null
grep -q '"beingWritten": false' "$TMP/s.json"; ok $? "abandoned: beingWritten false in JSON"
# A writer that holds the file open: the copy is flushed, never closed.
cp "$GOLDEN/unfinished.rec" "$TMP/live.rec"
sh -c 'exec 3>>"$1"; exec sleep 600' sh "$TMP/live.rec" &
writer=$!
# wait until the writer has the file open (bounded)
i=0
holds() {
    for fd in /proc/$writer/fd/*; do
        [ "$(readlink "$fd" 2>/dev/null)" = "$TMP/live.rec" ] && return 0
    done
    return 1
}
while [ $i -lt 100 ] && ! holds; do
    sleep 0.05; i=$((i + 1))
done
"$REC_SUMMARY" "$TMP/live.rec" > "$TMP/s2.txt" 2> /dev/null
grep -q 'still being written' "$TMP/s2.txt"; ok $? "a writer has it open: still being written"
kill $writer 2>/dev/null
wait $writer 2>/dev/null
# The tools' manual pages lead to where the limitations are.
for m in rec-start rec-dump rec-summary; do
    sed -n '/^\.SH SEE ALSO/,$p' "$top_builddir/man/$m.1" > "$TMP/see"
    grep -q 'rec\\\{0,1\}-cpu (1)' "$TMP/see" && grep -q 'libsampler (3)' "$TMP/see"
    ok $? "$m(1): SEE ALSO rec-cpu(1) and libsampler(3)"
done
sed -n '/^\.SH SEE ALSO/,$p' "$top_builddir/man/rec-cpu.1" | grep -q 'libsampler (3)'
ok $? "rec-cpu(1): SEE ALSO libsampler(3)"
done_testing
