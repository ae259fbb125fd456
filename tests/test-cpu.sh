#!/bin/sh
# rec-cpu on recordings with known figures (tests/mkcpu.c describes them):
# exact numbers via jq, golden text/JSON/CSV/interval outputs, filters,
# several recordings at once, an unfinished recording.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
. "$top_srcdir/tests/cpu-lib.sh"
B=$DATA/basic.rec
C=$DATA/child.rec

# ---- exact figures --------------------------------------------------
"$REC_CPU" --json "$B" > "$T/basic.json"
ok $? "rec-cpu --json exits 0"
th() { echo ".threads[] | select(.osThreadId == $1 and (.generation // 0) == ${2:-0})"; }
exact_checks() {   # on $1 (a --json report of basic.rec); $2 names it
    f=$1
    jqt "$2: main sampledCpuTime = 240 ms (20 x 10 + one 40 ms overrun, failed included)" \
        "$f" "[$(th 1000) | .sampledCpuTime == 240000000, .samples == 21, .failedSamples == 2, .biasedSamples == 3] | all"
    jqt "$2: main lost 3 samples, 30 ms" "$f" \
        "[$(th 1000) | .lostSamples == 3, .lostCpuTime == 30000000] | all"
    jqt "$2: main measured = end 282 - start 5 ms, difference -7 ms, alive" "$f" \
        "[$(th 1000) | .measuredCpuTime == 277000000, .difference == -7000000, .alive == true] | all"
    jqt "$2: worker-1 150 vs 153 ms" "$f" \
        "[$(th 1001) | .sampledCpuTime == 150000000, .measuredCpuTime == 153000000, .difference == -3000000, .alive == false] | all"
    jqt "$2: worker-2 without ThreadStart: measured from birth (25 ms)" "$f" \
        "[$(th 1002) | .sampledCpuTime == 20000000, .measuredCpuTime == 25000000] | all"
    jqt "$2: unnamed thread without ThreadEnd: measured null" "$f" \
        "[$(th 1003) | .name == null, .measuredCpuTime == null, .difference == null, .sampledCpuTime == 30000000] | all"
    jqt "$2: thread shorter than a period: 0 sampled, 3 ms measured" "$f" \
        "[$(th 1004) | .samples == 0, .sampledCpuTime == 0, .measuredCpuTime == 3000000] | all"
    jqt "$2: reused tid gives two rows" "$f" \
        "[$(th 1005 0) | .name == \"gen\", .measuredCpuTime == 20000000] + [$(th 1005 1) | .name == \"gen2\", .measuredCpuTime == 12000000, .sampledCpuTime == 10000000] | length == 5 and all"
    jqt "$2: process totals and getrusage" "$f" \
        "[.process | .sampledCpuTime == 470000000, .lostCpuTime == 30000000, .measuredCpuTime == 490000000, .usageCpuTime == 840000000, .userTime == 800000000, .systemTime == 40000000, .threads == 7] | all"
    jqt "$2: shares sum to 100%" "$f" \
        "([.threads[].share] | add) > 99.99 and ([.threads[].share] | add) < 100.01"
    jqt "$2: threads sorted by (pid, tid)" "$f" \
        "[.threads[] | [.processId, .osThreadId]] as \$a | \$a == (\$a | sort)"
}
exact_checks "$T/basic.json" committed

# The same figures from a recording written now (writer, reader and tool
# agree today, not only on the committed bytes).
"$MKCPU" basic "$T/fresh.rec"
ok $? "mkcpu writes a recording"
"$REC_CPU" --json "$T/fresh.rec" > "$T/fresh.json"
exact_checks "$T/fresh.json" fresh
"$REC_CPU" "$T/fresh.rec" > "$T/fresh.txt"
cmp -s "$T/fresh.txt" "$DATA/basic.txt"
ok $? "fresh recording gives the golden text table"

# ---- golden outputs ----------------------------------------------------
"$REC_CPU" "$B" > "$T/out.txt"; golden basic.txt "$T/out.txt"
golden basic.json "$T/basic.json"
"$REC_CPU" --csv "$B" > "$T/out.csv"; golden basic.csv "$T/out.csv"
"$REC_CPU" --interval 50ms "$B" > "$T/iv.txt"; golden basic-interval.txt "$T/iv.txt"
"$REC_CPU" --csv --interval 50ms "$B" > "$T/iv.csv"; golden basic-interval.csv "$T/iv.csv"
"$REC_CPU" --json --interval 100ms --hot 2 --threads main,worker-1 "$B" > "$T/full.json"
golden basic-full.json "$T/full.json"
"$REC_CPU" --hot 3 "$B" > "$T/hot.txt"; golden basic-hot.txt "$T/hot.txt"
"$REC_CPU" "$B" "$C" > "$T/multi.txt"; golden multi.txt "$T/multi.txt"

"$REC_CPU" -o "$T/o.txt" "$B" && cmp -s "$T/o.txt" "$T/out.txt"
ok $? "-o FILE writes the same report"

# ---- timeline ---------------------------------------------------------
"$REC_CPU" --json --interval 7ms "$T/fresh.rec" > "$T/iv7.json"
jqt "intervals of each thread sum to its sampledCpuTime exactly" "$T/iv7.json" \
    "[range(.threads | length) as \$i | (.timeline.threads[\$i].cpuTime | add // 0) == .threads[\$i].sampledCpuTime] | all"
jqt "a sample's period is spread over the time before it" "$T/full.json" \
    "[$(echo "$(th 1001)" | sed 's/\.threads/.timeline.threads/') | .cpuTime[0:2] == [94500000, 55500000]] | all"

# ---- hot functions -------------------------------------------------------
"$REC_CPU" --json --hot 0 "$B" > "$T/hot.json"
jqt "hot: leaf is the top self function overall (130 + 20 + 10 ms)" "$T/hot.json" \
    '.hot.overall[0] | .function == "leaf" and .selfCpuTime == 160000000'
jqt "hot: recursive fib counts once per stack in total (150 ms, not 450)" "$T/hot.json" \
    '[.hot.overall[] | select(.function == "fib") | .totalCpuTime == 150000000 and .selfCpuTime == 150000000] == [true]'
jqt "hot: weighted by samplingPeriod (main: leaf 130 ms incl. the 40 ms overrun)" "$T/hot.json" \
    '[.hot.threads[] | select(.osThreadId == 1000) | .functions[] | select(.function == "leaf") | .selfCpuTime] == [130000000]'
jqt "hot: failed samples and unsymbolized frames are accounted" "$T/hot.json" \
    '[.hot.threads[] | select(.osThreadId == 1000) | .functions[] | select(.function == "[stack walk failed]" or .function == "[libfoo.so]") | .selfCpuTime] | sort == [20000000, 90000000]'
jqt "hot: self times sum to the sampled CPU time" "$T/hot.json" \
    '([.hot.overall[].selfCpuTime] | add) == .process.sampledCpuTime'

# ---- filters -----------------------------------------------------------
"$REC_CPU" --json --threads 'worker-*' "$B" > "$T/f.json"
jqt "--threads glob selects worker-1 and worker-2" "$T/f.json" \
    '[.threads[].osThreadId] == [1001, 1002]'
jqt "--threads keeps whole-process totals" "$T/f.json" \
    '.process.sampledCpuTime == 470000000'
"$REC_CPU" --json --threads 1000,short "$B" > "$T/f2.json"
jqt "--threads by tid and name" "$T/f2.json" '[.threads[].osThreadId] == [1000, 1004]'
"$REC_CPU" --json --since +100ms --until +200ms "$B" > "$T/w.json"
jqt "--since/--until: samples in [100 ms, 200 ms) only" "$T/w.json" \
    "[$(th 1000) | .samples == 10, .sampledCpuTime == 100000000, .lostCpuTime == 0] + [$(th 1001) | .samples == 6] | all"
jqt "--since/--until: a cut thread has no measured figure, no getrusage" "$T/w.json" \
    "[$(th 1000) | .measuredCpuTime == null] + [.process.usageCpuTime == null] | all"
jqt "--since/--until: no ThreadStart in the window, no measured figure" "$T/w.json" \
    "[$(th 1002) | .measuredCpuTime == null] | all"
"$REC_CPU" --json --since +5ms --until +100ms "$B" > "$T/w2.json"
jqt "--since/--until: threads inside the window keep their kernel figure" "$T/w2.json" \
    "[$(th 1005 0) | .measuredCpuTime == 20000000] + [$(th 1005 1) | .measuredCpuTime == 12000000] + [$(th 1001) | .measuredCpuTime == null] | all"

# ---- several recordings --------------------------------------------------
"$REC_CPU" --json "$B" "$C" > "$T/m.json"
jqt "two recordings: threads keyed by (pid, tid)" "$T/m.json" \
    '[.threads[] | [.processId, .osThreadId]] | any(. == [2000, 2000]) and length == 8'
jqt "two recordings: per-process getrusage" "$T/m.json" \
    '[.processes[] | [.processId, .usageCpuTime]] == [[1000, 840000000], [2000, 62000000]]'
jqt "two recordings: child measured 51 ms" "$T/m.json" \
    '[.threads[] | select(.processId == 2000) | .measuredCpuTime] == [51000000]'

# ---- corner cases of the accounting (tests/mkcpu.c, edge()) -------------
"$MKCPU" edge "$T/edge.rec"
"$REC_CPU" --json --hot 0 "$T/edge.rec" > "$T/edge.json"
ok $? "corner cases: exit 0"
jqt "an exec'd image starting over keeps one row: 15 + 30 ms" "$T/edge.json" \
    "[.threads[] | select(.osThreadId == 6001) | .measuredCpuTime == 45000000 and .sampledCpuTime == 20000000] == [true]"
jqt "a snapshot then an exit: the clock's whole advance (35 ms), not alive" "$T/edge.json" \
    "[.threads[] | select(.osThreadId == 6002) | .measuredCpuTime == 35000000 and .alive == false] == [true]"
jqt "a clock going back counts nothing" "$T/edge.json" \
    "[.threads[] | select(.osThreadId == 6003) | .measuredCpuTime] == [0]"
jqt "empty stack, missing stack, zero period" "$T/edge.json" \
    "[.threads[] | select(.osThreadId == 6004) | .samples == 3 and .sampledCpuTime == 20000000 and .measuredCpuTime == null] == [true]"
jqt "hot: empty and missing stacks are accounted" "$T/edge.json" \
    '[.hot.threads[] | select(.osThreadId == 6004) | .functions[] | select(.function == "[empty stack]" or .function == "[no stack]") | .selfCpuTime] == [10000000, 10000000]'

# ---- unfinished recording ----------------------------------------------
"$REC_CPU" --json "$DATA/live.rec" > "$T/live.json" 2> "$T/live.err"
ok $? "unfinished recording: exit 0"
grep -q 'warning' "$T/live.err"
ok $? "unfinished recording: warning on stderr"
jqt "unfinished recording: samples up to the last flush" "$T/live.json" \
    '[.threads[] | .osThreadId == 3000 and .sampledCpuTime == 40000000 and .measuredCpuTime == null] == [true]'

done_testing
