#!/bin/sh
# rec-cpu --svg: the picture has a legend and a y-scale per lane, its time
# axis runs to the end of the recording (not the last sample), and 2,000
# threads become a bounded number of lanes (thread pools grouped by
# process and name, the smallest groups merged) that still account for
# every thread.
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
. "$top_srcdir/tests/cpu-lib.sh"
SYNTH=$top_builddir/bench/rec-synth
B=$DATA/basic.rec

"$REC_CPU" --svg "$T/b.svg" --interval 10ms "$B" >/dev/null
ok $? "basic: --svg exit 0"
grep -q '<g class="legend">' "$T/b.svg"; ok $? "basic: legend"
test "$(grep -c '<g class="yscale"' "$T/b.svg")" -eq 7; ok $? "basic: a y-scale per lane"
# The last sample is at 0.21 s; the recording ends at 0.35 s (ThreadEnd
# snapshot, ProcessUsage).
grep -q '>0.34<' "$T/b.svg"; ok $? "basic: time axis reaches the recording's end"

[ -x "$SYNTH" ] || { skip "bench/rec-synth not built"; done_testing; exit $?; }
"$SYNTH" -n 20000 -t 2000 "$T/many.rec" >/dev/null 2>&1
ok $? "a recording of 2000 threads"
"$REC_CPU" --svg "$T/many.svg" --interval 50ms "$T/many.rec" >/dev/null
ok $? "2000 threads: --svg exit 0"
lanes=$(grep -c '<g class="lane' "$T/many.svg")
test "$lanes" -ge 2 && test "$lanes" -le 100; ok $? "2000 threads: $lanes lanes (<= 100)"
single=$(grep -c '<g class="lane" ' "$T/many.svg")
grouped=$(grep -o 'data-threads="[0-9]*"' "$T/many.svg" | tr -dc '0-9\n' \
          | awk '{ s += $1 } END { print s + 0 }')
test $((single + grouped)) -eq 2000
ok $? "2000 threads: lanes account for every thread ($single single, $grouped grouped)"
h=$(sed -n 's/.*<svg [^>]* height="\([0-9]*\)".*/\1/p' "$T/many.svg" | head -1)
test "${h:-99999}" -le 3200; ok $? "2000 threads: picture height $h px"
grep -q 'CPUs</text>' "$T/many.svg"; ok $? "2000 threads: group lanes scaled in CPUs"
done_testing
