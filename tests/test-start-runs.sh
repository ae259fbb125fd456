#!/bin/sh
# One run id per rec-start run, in every recording of the run (children,
# grandchildren, exec'd images); the --follow-children summary counts the
# descendants of this run at every depth and not the files of an earlier
# run; readers warn when inputs come from different runs; and
# --no-command-line keeps the arguments out of the recording.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
[ -x "$REC_START" ] || skip_all "rec-start not built"
REC_CPU=$top_builddir/tools/rec-cpu
cd "$TMP" || exit 99

# run_id FILE: the runId of its ProcessInfo
run_id() {
    "$REC_DUMP" --ndjson --events ProcessInfo "$1" 2>/dev/null |
        sed -n 's/.*"runId":"\([0-9a-f]*\)".*/\1/p' | head -n 1
}

# A child that starts a grandchild, then a second child that execs.
tree='sh -c "\"\$0\" -s 0.05 & wait" "$0"; sh -c "exec \"\$0\" -s 0.05" "$0" & wait'
"$REC_START" -c -o f.rec sh -c "$tree" "$WORKLOADS/budget" > out 2> err1
st=$?
expect_status 0 "a run with children and a grandchild"
id=$(run_id f.rec)
test -n "$id"; ok $? "the recording has a run id ($id)"
n=0 same=0 nested=0
for f in f.rec.*; do
    n=$((n + 1))
    [ "$(run_id "$f")" = "$id" ] && same=$((same + 1))
    case $f in f.rec.*.*) nested=$((nested + 1)) ;; esac
done
test "$n" -ge 3 && test "$same" -eq "$n"
ok $? "every descendant recording has the same run id ($same of $n)"
test "$nested" -ge 1; ok $? "a grandchild's recording is named f.rec.PID.PID ($nested)"
grep -q "^rec-start: $n descendant recordings: $TMP/f.rec.<pid>" err1
r=$?
ok $r "the summary counts all $n descendant recordings"
[ $r -eq 0 ] || diag_file err1
# ... and closes with the run's total: the root (a shell) has no sample.
all=0
for f in f.rec f.rec.*; do
    all=$((all + $("$REC_DUMP" --ndjson --events CPUTimeSample "$f" 2>/dev/null | wc -l)))
done
grep -q "^rec-start: all $((n + 1)) recordings of this run: $all samples, " err1
r=$?
ok $r "the closing line totals the $((n + 1)) recordings of the run ($all samples)"
[ $r -eq 0 ] || diag_file err1

# A second run to the same name: the first run's descendants stay.
"$REC_START" -f -c -o f.rec sh -c "$tree" "$WORKLOADS/budget" > out 2> err2
st=$?
expect_status 0 "a second run to the same name"
id2=$(run_id f.rec)
test -n "$id2" && test "$id2" != "$id"; ok $? "a new run id ($id2)"
n2=0
for f in f.rec.*; do [ "$(run_id "$f")" = "$id2" ] && n2=$((n2 + 1)); done
grep -q "^rec-start: $n2 descendant recordings: " err2 &&
    grep -q "^rec-start: $n other files named $TMP/f.rec.<pid> are not of this run" err2
ok $? "the summary counts this run's $n2, and says $n are of another run"
[ $? -eq 0 ] || diag_file err2
"$REC_CPU" f.rec* > /dev/null 2> err3
grep -q 'come from different rec-start runs' err3
ok $? "rec-cpu warns that the inputs come from different runs"
"$REC_CPU" f.rec > /dev/null 2> err4
if grep -q 'different rec-start runs' err4; then r=1; else r=0; fi
ok $r "no such warning for one run"

# Privacy: the arguments stay out with --no-command-line.
"$REC_START" -q -o a.rec "$WORKLOADS/budget" -s 0.02 > /dev/null 2>&1
"$REC_DUMP" --ndjson --events ProcessInfo a.rec | grep -q '"commandLine":"[^"]*budget -s 0.02"'
ok $? "by default the command line is recorded"
"$REC_START" -q --no-command-line -o b.rec "$WORKLOADS/budget" -s 0.02 > /dev/null 2>&1
st=$?
expect_status 0 "--no-command-line"
"$REC_DUMP" --ndjson --events ProcessInfo b.rec > b.nd
grep -q "\"commandLine\":\"$WORKLOADS/budget\"" b.nd && ! grep -q -- '-s 0.02' b.nd
ok $? "--no-command-line: the program's name only"
[ $? -eq 0 ] || diag_file b.nd
"$REC_START" --help | grep -q -- '--no-command-line'; ok $? "--help lists --no-command-line"

# Threads that end with the process are not "still running".
"$REC_START" -q -o demo.rec "$WORKLOADS/demo" 0.1 > /dev/null 2>&1
"$REC_CPU" demo.rec > demo.txt 2> /dev/null
if grep -q 'still running' demo.txt; then r=1; else r=0; fi
ok $r "rec-cpu: no thread of an exited program is 'still running'"
[ $r -eq 0 ] || diag_file demo.txt

# A thread name with a newline is the same in every event of the thread,
# so --threads finds all its samples.
"$REC_START" -q -o nl.rec "$WORKLOADS/budget" -s 0.05 -n "$(printf 'two\nlines')" \
    > /dev/null 2>&1
tid=$("$REC_DUMP" --ndjson --events ThreadEnd nl.rec |
      sed -n 's/.*"osThreadId":\([0-9]*\),"name":"two\\nlines".*/\1/p' | head -n 1)
by_tid=$("$REC_DUMP" --ndjson --events CPUTimeSample --threads "${tid:-0}" nl.rec | wc -l)
by_name=$("$REC_DUMP" --ndjson --events CPUTimeSample --threads 'two?lines' nl.rec | wc -l)
test -n "$tid" && test "$by_tid" -gt 0 && test "$by_name" -eq "$by_tid"
ok $? "a name with a newline: --threads by name finds all $by_tid samples ($by_name)"

# Small mistakes: an output that is a directory, an out-of-range rate, a
# script without "#!", the sampler's own messages.
"$REC_START" -o "$TMP" true > /dev/null 2> err; st=$?
expect_status 1 "-o DIR: refused"
grep -q 'is a directory' err && ! grep -q 'exists' err; ok $? "-o DIR: says it is a directory"
"$REC_START" -t 1000000000/s true > /dev/null 2> err; st=$?
expect_status 2 "-t 1000000000/s: refused like -t 5us"
grep -q 'periods range from 10us to 10s' err; ok $? "-t 1000000000/s: says why"
"$REC_START" -t 5us true > /dev/null 2> err; st=$?
expect_status 2 "-t 5us: refused"
printf 'echo "plain script: $1"\n' > plain.sh
chmod +x plain.sh
"$REC_START" -q -o plain.rec ./plain.sh arg > out 2> err; st=$?
expect_status 0 "a script without #!: run by /bin/sh"
grep -qx 'plain script: arg' out; ok $? "a script without #!: its output"
REC_QUEUE_CAPACITY="$(printf '1\nx')" "$REC_START" -q -o q.rec true > /dev/null 2> err
grep -q '^rec-start: sampler (pid [0-9]*): invalid REC_QUEUE_CAPACITY=1?x; not recording$' err
ok $? "the sampler's warning: named, one line"
[ $? -eq 0 ] || diag_file err
done_testing
