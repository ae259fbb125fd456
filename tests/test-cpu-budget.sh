#!/bin/sh
# End to end: a workload whose threads burn known CPU budgets runs under
# rec-start; rec-cpu's reconstruction must match the kernel's figure per
# thread: |sampled + lost - measured| <= max(period + 4 ms, 1%) (the last
# partial period never fires; expiries the kernel never signalled, which
# CPU timers checked at 250 Hz ticks leave behind, are counted lost as
# "undelivered"), no sample is lost to a full or busy queue at 10 ms, and
# the kernel figure must match what each thread read from its own clock.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
. "$top_srcdir/tests/cpu-lib.sh"
REC_START=$top_builddir/tools/rec-start
BUDGET=$top_builddir/tests/workloads/budget
PERIOD_MS=10

test -x "$REC_START"; ok $? "rec-start is built"
test -x "$BUDGET"; ok $? "tests/workloads/budget is built"

# Budgets 0.4, 0.2, 0.1, 0.05 s: long enough for 5..40 samples per thread.
"$REC_START" -q -t ${PERIOD_MS}ms -o "$T/budget.rec" -- "$BUDGET" -v -s 0.2 \
    > "$T/own.txt" 2> "$T/start.err"
ok $? "budget runs under rec-start"
sed 's/^/# rec-start: /' "$T/start.err" | head -n 5

"$REC_CPU" --json "$T/budget.rec" > "$T/cpu.json" 2> "$T/cpu.err"
ok $? "rec-cpu reads the recording"
sed 's/^/# rec-cpu: /' "$T/cpu.err" | head -n 5
"$REC_CPU" "$T/budget.rec" 2>/dev/null | sed 's/^/# /'

for name in budget-2000 budget-1000 budget-500 budget-250 bursty; do
    jqt "$name: recorded with samples and a kernel figure" "$T/cpu.json" \
        "[.threads[] | select(.name == \"$name\") | .samples > 0 and .measuredCpuTime != null] == [true]"
done

# The bound, per thread with a kernel figure (main and the bursty thread,
# 0.2 ms bursts between 5 ms sleeps, included).
jqt "every thread: |sampled + lost - measured| <= max(period + 4 ms, 1%)" "$T/cpu.json" \
    "[.threads[] | select(.measuredCpuTime != null)
      | (.difference | fabs) <= ([($PERIOD_MS + 4) * 1000000, .measuredCpuTime / 100] | max)]
     | length >= 6 and all"
jq -r '.threads[] | "# \(.osThreadId) \(.name): sampled \(.sampledCpuTime) lost \(.lostCpuTime) measured \(.measuredCpuTime) diff \(.difference)"' "$T/cpu.json"

# Lost samples by reason: only expiries the kernel never signalled
# ("undelivered") may be lost at 10 ms; a full or busy queue loses none.
"$top_builddir/tools/rec-dump" --ndjson --events CPUTimeSampleLost "$T/budget.rec" \
    > "$T/lost.ndjson" 2> "$T/dump.err"
ok $? "rec-dump lists the lost-sample events"
jq -r '"# lost: \(.eventThread.name) \(.lostSamples) \(.reason)"' "$T/lost.ndjson"
test "$(jq -s '[.[] | select(.reason == "queue-full" or .reason == "queue-busy")
                | .lostSamples] | add // 0' "$T/lost.ndjson")" = 0
ok $? "no sample lost to a full or busy queue"

# The kernel figure in ThreadEnd against each thread's own reading of its
# clock just before it returned (budget -v: "name tid cpu_ns").
while read -r name tid own; do
    jqt "$name: measured within 5 ms of the thread's own CPU clock ($own ns)" "$T/cpu.json" \
        "[.threads[] | select(.osThreadId == $tid) | (.measuredCpuTime - $own | fabs) <= 5000000] == [true]"
done < "$T/own.txt"
test "$(wc -l < "$T/own.txt")" -eq 5; ok $? "budget reported its 5 threads"

# Threads ran their budgets: budget-2000 got about 0.4 s.
jqt "budget-2000 reconstructed at 0.4 s +- 15 ms" "$T/cpu.json" \
    '[.threads[] | select(.name == "budget-2000") | (.sampledCpuTime + .lostCpuTime - 400000000 | fabs) <= 15000000] == [true]'

# getrusage counts the sampler's own thread, which is never sampled: the
# recording says how much it was, and the comparison leaves it out.
jqt "the sampler thread's CPU is recorded, a part of getrusage's" "$T/cpu.json" \
    '.process | .samplerCpuTime > 0 and .samplerCpuTime < .usageCpuTime'
jqt "usageDifference = sampled + lost - (getrusage - sampler thread)" "$T/cpu.json" \
    '.process | .usageDifference == .sampledCpuTime + .lostCpuTime - (.usageCpuTime - .samplerCpuTime)'
"$REC_CPU" "$T/budget.rec" > "$T/cpu.txt"
grep -q "of which the sampler thread [0-9.]* ms, sampled+lost - the rest = " "$T/cpu.txt"
ok $? "the text report names the sampler thread's share"

done_testing
