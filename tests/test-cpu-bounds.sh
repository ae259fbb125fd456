#!/bin/sh
# rec-cpu's outputs stay in proportion to what the recordings hold: a
# small valid recording whose two threads ran 10^6 s apart must not make
# the timeline (every mode) write a dense grid of 10^7 intervals.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
. "$top_srcdir/tests/cpu-lib.sh"

"$MKCPU" spread "$T/spread.rec" || exit 99
diag "spread.rec: $(wc -c < "$T/spread.rec") bytes"
for mode in "" --csv --json; do
    # head bounds what an unbounded writer could put in the test's way.
    { "$REC_CPU" $mode --interval 100ms "$T/spread.rec" 2> "$T/e"; \
      echo $? > "$T/st"; } | head -c 2000000 > "$T/o"
    ok $(( $(cat "$T/st") != 1 )) "--interval 100ms ${mode:-(text)}: exit 1"
    size=$(wc -c < "$T/o")
    ok $(( size > 100000 )) "--interval 100ms ${mode:-(text)}: bounded output ($size bytes)"
    grep -q 'use a longer --interval' "$T/e"
    ok $? "--interval 100ms ${mode:-(text)}: says to use a longer --interval"
done
# Pictures merge intervals to at most one column per pixel: bounded.
for pic in svg html; do
    "$REC_CPU" --$pic "$T/p.$pic" "$T/spread.rec" > /dev/null 2> "$T/e"
    ok $? "--$pic (100 ms intervals): exit 0"
    size=$(wc -c < "$T/p.$pic")
    ok $(( size > 100000 )) "--$pic: bounded ($size bytes)"
done
# One thread whose samples are far apart is the same case.
"$MKCPU" idle "$T/idle.rec" || exit 99
{ "$REC_CPU" --csv --interval 10ms "$T/idle.rec" 2> "$T/e"; \
  echo $? > "$T/st"; } | head -c 2000000 > "$T/o"
ok $(( $(cat "$T/st") != 1 )) "one thread, samples 1000 s apart, 10 ms: exit 1"
grep -q 'use a longer --interval' "$T/e"; ok $? "one thread: says why"
"$REC_CPU" --csv --interval 1s "$T/idle.rec" > /dev/null 2> "$T/e"
ok $? "one thread, 1 s intervals: exit 0"
# A long enough interval shows both threads.
"$REC_CPU" --csv --interval 1000s "$T/spread.rec" > "$T/ok.csv" 2> "$T/e"
ok $? "--interval 1000s: exit 0"
# intervals 0 (at 1 ms) to 1000 (10^6 s later), two threads, a header
lines=$(wc -l < "$T/ok.csv")
test "$lines" -eq $((1001 * 2 + 1)); ok $? "--interval 1000s: every interval ($lines lines)"
grep -q ',7002,late,1000000,' "$T/ok.csv"; ok $? "--interval 1000s: the late thread's CPU time"
# Ordinary recordings keep their timeline (a gap within proportion).
"$REC_CPU" --interval 10ms "$DATA/basic.rec" "$DATA/child.rec" > "$T/b.txt" 2> "$T/e"
ok $? "basic + child at 10 ms: exit 0"
done_testing
