#!/bin/sh
# rec-cpu's error handling: usage errors exit 2; unreadable, damaged or
# truncated input prints the report of every valid event, then one error
# line on stderr, and exits 1.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
. "$top_srcdir/tests/cpu-lib.sh"
B=$DATA/basic.rec

"$REC_CPU" > "$T/o" 2> "$T/e"; ok $(( $? != 2 )) "no recording: exit 2"
grep -q 'no recording' "$T/e"; ok $? "no recording: says so"
"$REC_CPU" --interval 0 "$B" > /dev/null 2>&1; ok $(( $? != 2 )) "--interval 0: exit 2"
"$REC_CPU" --interval 10 "$B" > /dev/null 2>&1; ok $(( $? != 2 )) "--interval without unit: exit 2"
"$REC_CPU" --since yesterday "$B" > /dev/null 2>&1; ok $(( $? != 2 )) "bad --since: exit 2"
"$REC_CPU" --hot x "$B" > /dev/null 2>&1
ok $(( $? != 1 )) "--hot x: x is a missing recording (exit 1)"
"$REC_CPU" --csv --hot "$B" > /dev/null 2>&1; ok $(( $? != 2 )) "--csv --hot: exit 2"
"$REC_CPU" --bogus "$B" > /dev/null 2>&1; ok $(( $? != 2 )) "unknown option: exit 2"
"$REC_CPU" --help | grep -q -- '--interval'; ok $? "--help documents --interval"

"$REC_CPU" "$T/missing.rec" > "$T/o" 2> "$T/e"; ok $(( $? != 1 )) "missing file: exit 1"
grep -q 'missing.rec' "$T/e"; ok $? "missing file: named on stderr"
printf 'not a recording at all, just some text\n' > "$T/text.rec"
"$REC_CPU" "$T/text.rec" > "$T/o" 2> "$T/e"; ok $(( $? != 1 )) "not a recording: exit 1"
test "$(wc -l < "$T/e")" -eq 1; ok $? "not a recording: one error line"

# Damage the last block (in the second chunk): the first chunk's events
# still count.
cp "$B" "$T/bad.rec"
size=$(wc -c < "$T/bad.rec")
printf '\377\377\377\377' | dd of="$T/bad.rec" bs=1 seek=$((size - 40)) conv=notrunc 2>/dev/null
"$REC_CPU" --json "$T/bad.rec" > "$T/bad.json" 2> "$T/bad.err"
ok $(( $? != 1 )) "damaged block: exit 1"
test "$(wc -l < "$T/bad.err")" -eq 1; ok $? "damaged block: one error line"
grep -q 'bad.rec' "$T/bad.err"; ok $? "damaged block: the error names the file"
jqt "damaged block: valid events are reported (worker-1 complete)" "$T/bad.json" \
    '[.threads[] | select(.osThreadId == 1001) | .sampledCpuTime == 150000000 and .measuredCpuTime == 153000000] == [true]'

# Truncated in the middle of the second chunk's first events block.
head -c 5000 "$B" > "$T/trunc.rec"
"$REC_CPU" "$T/trunc.rec" > "$T/trunc.txt" 2> "$T/trunc.err"
ok $(( $? != 1 )) "truncated file: exit 1"
grep -q 'worker-1' "$T/trunc.txt"; ok $? "truncated file: table of the valid part printed"
test "$(wc -l < "$T/trunc.err")" -eq 1; ok $? "truncated file: one error line"

# A bad file among good ones: the good ones are still reported.
"$REC_CPU" --json "$T/text.rec" "$DATA/child.rec" > "$T/mix.json" 2> /dev/null
ok $(( $? != 1 )) "bad and good file: exit 1"
jqt "bad and good file: the good one is reported" "$T/mix.json" \
    '[.threads[].osThreadId] == [2000]'

# Output errors.
"$REC_CPU" --svg "$T/no/such/dir/x.svg" "$B" > /dev/null 2> "$T/e"
ok $(( $? != 1 )) "unwritable --svg: exit 1"
if [ -w /dev/full ]; then
    "$REC_CPU" "$B" > /dev/full 2> /dev/null; ok $(( $? != 1 )) "write error on stdout: exit 1"
else
    skip "no /dev/full"
fi
"$REC_CPU" --interval 1ns "$B" > /dev/null 2> "$T/e"
ok $(( $? != 1 )) "absurd --interval: exit 1, no huge allocation"
grep -q 'interval' "$T/e"; ok $? "absurd --interval: says why"

done_testing
