#!/bin/sh
# rec-start -o - and to a FIFO: the recording streamed to a consumer, the
# same events as a file; a consumer that lags gets whole chunks dropped and
# their CPU time as lost (stream-dropped), the program unharmed; a
# consumer that goes away (EPIPE); the program killed mid-stream.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
[ -x "$REC_START" ] || skip_all "rec-start not built"
[ -x "$REC_DUMP" ] || skip_all "rec-dump not built"
CHECK=$top_builddir/tests/sampler-check
cd "$TMP" || exit 99

# types FILE.ndjson: "COUNT TYPE" lines of the event types.
types() {
    sed -n 's/.*"type":"\([A-Za-z]*\)".*/\1/p' "$1" | sort | uniq -c
}
# count TYPE FILE.ndjson
count() {
    grep -c "\"type\":\"$1\"" "$2"
}
# names FILE.ndjson: the sampled threads' names, sorted, as they ended (a
# thread's start may be seen before it names itself, in one run and not
# the other).
names() {
    grep '"type":"ThreadEnd"' "$1" |
        sed -n 's/.*"eventThread":{[^}]*"name":"\([^"]*\)".*/\1/p' | sort
}

"$WORKLOADS/demo" 0.2 >"$TMP/plain.out" 2>/dev/null
"$WORKLOADS/demo" 0.1 >"$TMP/plain01.out" 2>/dev/null

# The same program into a file and through a pipe.
"$REC_START" -q -o "$TMP/file.rec" -- "$WORKLOADS/demo" 0.2 >"$TMP/file.out" 2>"$TMP/err"
st=$?
expect_status 0 "into a file"
"$REC_DUMP" --ndjson "$TMP/file.rec" >"$TMP/file.nd" 2>"$TMP/err"
{ "$REC_START" -o - -- "$WORKLOADS/demo" 0.2 2>"$TMP/err"; echo $? >"$TMP/st"; } |
    "$REC_DUMP" --follow - >"$TMP/pipe.nd" 2>"$TMP/derr"
dst=$?
st=$(cat "$TMP/st")
expect_status 0 "-o - | rec-dump --follow -: rec-start passes the status on"
[ "$dst" -eq 0 ] && [ ! -s "$TMP/derr" ]
ok $? "rec-dump --follow - reads the stream to its end, no warning"
[ $? -eq 0 ] || diag_file "$TMP/derr"
grep -v '^rec-start: ' "$TMP/err" | cmp -s - "$TMP/plain.out"
ok $? "-o -: the program's output goes to standard error, unchanged"
[ $? -eq 0 ] || diag_file "$TMP/err"
grep -q '^rec-start: - (streamed): [1-9][0-9]* samples' "$TMP/err"
ok $? "rec-start's summary counts what was streamed"
for t in ThreadStart ThreadEnd ProcessInfo RecordingSettings CPUInfo ProcessUsage; do
    a=$(count $t "$TMP/file.nd"); b=$(count $t "$TMP/pipe.nd")
    [ "$a" -eq "$b" ] && [ "$b" -gt 0 ]
    ok $? "$t events: $b streamed, $a in the file"
done
[ "$(names "$TMP/file.nd")" = "$(names "$TMP/pipe.nd")" ] &&
    [ -n "$(names "$TMP/pipe.nd")" ]
ok $? "the same threads ($(names "$TMP/pipe.nd" | tr '\n' ' '))"
n=$(count CPUTimeSample "$TMP/pipe.nd")
[ "$n" -gt 10 ]
ok $? "the stream carries the samples ($n; $(count CPUTimeSample "$TMP/file.nd") in the file)"
! grep -q stream-dropped "$TMP/pipe.nd"
ok $? "a consumer that keeps up loses nothing"

# A stream saved is a recording; its accounting holds.
"$REC_START" -q -o - -- "$WORKLOADS/demo" 0.2 2>/dev/null >"$TMP/saved.rec"
if [ -x "$CHECK" ]; then
    "$CHECK" --accounting 1000000 "$TMP/saved.rec" >"$TMP/saved.chk" 2>&1
    ok $? "a saved stream: samples + lost match each thread's CPU time"
    [ $? -eq 0 ] || diag_file "$TMP/saved.chk"
else
    skip "tests/sampler-check not built"
fi
"$REC_START" -o - -- "$WORKLOADS/demo" 0.05 2>"$TMP/err" </dev/null |
    "$REC_SUMMARY" - >"$TMP/sum" 2>&1
grep -q 'CPUTimeSample' "$TMP/sum"
ok $? "rec-summary - reads the stream"

# A FIFO: the program keeps its standard output.
if mkfifo "$TMP/fifo" 2>/dev/null; then
    "$REC_DUMP" --ndjson - <"$TMP/fifo" >"$TMP/fifo.nd" 2>"$TMP/derr" &
    dpid=$!
    "$REC_START" -q -o "$TMP/fifo" -- "$WORKLOADS/demo" 0.1 >"$TMP/fifo.out" 2>"$TMP/err"
    st=$?
    wait $dpid
    dst=$?
    expect_status 0 "-o FIFO"
    cmp -s "$TMP/fifo.out" "$TMP/plain01.out"
    ok $? "-o FIFO: the program's standard output is its own"
    [ "$dst" -eq 0 ] && [ "$(count ThreadStart "$TMP/fifo.nd")" -ge 4 ] &&
        [ "$(count CPUTimeSample "$TMP/fifo.nd")" -gt 0 ]
    ok $? "-o FIFO: the reader gets the recording"
    [ $? -eq 0 ] || diag_file "$TMP/derr"
    # --force (a script's habit) changes nothing for a FIFO: streamed into.
    "$REC_DUMP" --ndjson - <"$TMP/fifo" >"$TMP/fifo.nd" 2>"$TMP/derr" &
    dpid=$!
    "$REC_START" -q -f -o "$TMP/fifo" -- "$WORKLOADS/demo" 0.1 >"$TMP/fifo.out" 2>"$TMP/err"
    st=$?
    wait $dpid
    dst=$?
    expect_status 0 "-f -o FIFO"
    [ -p "$TMP/fifo" ] && [ "$dst" -eq 0 ] &&
        [ "$(count CPUTimeSample "$TMP/fifo.nd")" -gt 0 ]
    ok $? "-f -o FIFO: the FIFO stays, the reader gets the recording"
    [ $? -eq 0 ] || diag_file "$TMP/err"
else
    for _ in 1 2 3 4 5; do skip "mkfifo failed"; done
fi

# A consumer that reads nothing until the program is done: the pipe and
# the backlog (64k) fill, whole chunks are dropped, their CPU time is sent
# as lost; the program's output and status are its own.
"$WORKLOADS/demo" 2 >"$TMP/plain2.out" 2>/dev/null
{ "$REC_START" -t 1ms --stream-backlog 64k -o - -- "$WORKLOADS/demo" 2 \
      2>"$TMP/slow.err"; echo $? >"$TMP/st"; } |
    { i=0
      while ! grep -q '^matrix:' "$TMP/slow.err" 2>/dev/null && [ $i -lt 3000 ]; do
          sleep 0.1; i=$((i + 1))
      done
      cat >"$TMP/slow.rec"; }
st=$(cat "$TMP/st")
cp "$TMP/slow.err" "$TMP/err"
expect_status 0 "a consumer that does not read: the program's status"
grep -v '^rec-start: ' "$TMP/slow.err" | cmp -s - "$TMP/plain2.out"
ok $? "a consumer that does not read: the program's output unchanged"
grep -q '^rec-start: -: the consumer lagged: [1-9][0-9]* chunks\{0,1\} dropped' "$TMP/slow.err"
ok $? "rec-start says chunks were dropped"
[ $? -eq 0 ] || diag_file "$TMP/slow.err"
"$REC_DUMP" --ndjson "$TMP/slow.rec" >"$TMP/slow.nd" 2>"$TMP/derr"
ok $? "the stream that came is a valid recording"
[ $? -eq 0 ] || diag_file "$TMP/derr"
grep '"type":"CPUTimeSampleLost"' "$TMP/slow.nd" | grep -q '"stream-dropped"'
ok $? "the dropped CPU is lost with reason stream-dropped"
[ "$(count ThreadStart "$TMP/slow.nd")" -eq 4 ] &&
    [ "$(count ThreadEnd "$TMP/slow.nd")" -eq 4 ]
ok $? "thread starts and ends survive the drop"
if [ -x "$CHECK" ]; then
    "$CHECK" --accounting 1000000 "$TMP/slow.rec" >"$TMP/slow.chk" 2>&1
    ok $? "samples + lost still match each thread's CPU time"
    [ $? -eq 0 ] || diag_file "$TMP/slow.chk"
else
    skip "tests/sampler-check not built"
fi
"$REC_SUMMARY" "$TMP/slow.rec" >"$TMP/sum" 2>&1
grep -q 'stream-dropped' "$TMP/sum"
ok $? "rec-summary names the reason"

# The consumer goes away: said once; the program runs on unharmed.
{ "$REC_START" -o - -- "$WORKLOADS/demo" 0.2 2>"$TMP/err"; echo $? >"$TMP/st"; } |
    head -c 100 >/dev/null
st=$(cat "$TMP/st")
expect_status 0 "the consumer exits early: the program's status"
grep -v '^rec-start: ' "$TMP/err" | cmp -s - "$TMP/plain.out"
ok $? "the consumer exits early: the program's output unchanged"
[ "$(grep -c 'the consumer went away (' "$TMP/err")" -eq 1 ]
ok $? "rec-start says once that the consumer went away"
[ $? -eq 0 ] || diag_file "$TMP/err"

# The program killed mid-stream (after it exec'd: the new image appends
# to the same stream): what was flushed reaches the consumer.
{ "$REC_START" -o - -- sh -c 'echo $$ >"$1"; exec "$0" 50' "$WORKLOADS/demo" \
      "$TMP/pid" 2>"$TMP/err"; echo $? >"$TMP/st"; } |
    "$REC_DUMP" --follow - >"$TMP/kill.nd" 2>"$TMP/derr" &
i=0
while ! grep -q '"type":"CPUTimeSample"' "$TMP/kill.nd" 2>/dev/null && [ $i -lt 600 ]; do
    sleep 0.1; i=$((i + 1))
done
[ -s "$TMP/pid" ] && kill -9 "$(cat "$TMP/pid")"
wait
st=$(cat "$TMP/st")
expect_status 137 "SIGKILL mid-stream: rec-start dies of the same signal"
[ "$(count ProcessInfo "$TMP/kill.nd")" -ge 2 ] && [ "$(count CPUTimeSample "$TMP/kill.nd")" -gt 0 ]
ok $? "the consumer got both images' recordings up to the kill"
! grep -q 'error\|chunk [0-9]*, offset' "$TMP/derr"
ok $? "and no error: a writer that died leaves a readable stream"
[ $? -eq 0 ] || diag_file "$TMP/derr"

"$REC_START" -c -o - -- true >/dev/null 2>"$TMP/err"
st=$?
expect_status 2 "--follow-children with -o - is refused"
grep -q 'cannot stream' "$TMP/err"
ok $? "and says why"

done_testing
