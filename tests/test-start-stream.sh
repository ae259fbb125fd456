#!/bin/sh
# rec-start -o - and to a FIFO: the recording streamed to a consumer, the
# same events as a file; a consumer that lags gets whole chunks dropped and
# their CPU time as lost (stream-dropped), the program unharmed; a
# consumer that goes away (EPIPE); the program killed mid-stream; chunks
# sent as they are written (a chunk's metadata once per chunk, nothing
# sent for an idle flush, mappings not repeated to readers); a consumer
# that stops reading does not hold rec-start after the program.
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
for t in ThreadStart ThreadEnd ProcessInfo RecordingSettings CPUInfo ProcessUsage ModuleLoad; do
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
# the backlog (64k) fill (the recording is some 200 KB: 4 s at 1 ms),
# whole chunks are dropped, their CPU time is sent as lost; the program's
# output and status are its own.
"$WORKLOADS/demo" 4 >"$TMP/plain2.out" 2>/dev/null
{ "$REC_START" -t 1ms --stream-backlog 64k -o - -- "$WORKLOADS/demo" 4 \
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

# Chunks go out as they are written, not one per flush: an idle program's
# stream is one chunk, the size of its file; a chunk's metadata is sent
# once per chunk, and an idle chunk is not repeated at its age.
"$REC_START" -q -o "$TMP/idle.rec" -- sleep 1.5 2>"$TMP/err"
"$REC_START" -q -o - -- sleep 1.5 >"$TMP/idle-s.rec" 2>"$TMP/err"
fsz=$(wc -c <"$TMP/idle.rec"); ssz=$(wc -c <"$TMP/idle-s.rec")
"$REC_SUMMARY" "$TMP/idle-s.rec" >"$TMP/sum" 2>&1
grep -q '^ *Chunks: 1$' "$TMP/sum" && [ "$ssz" -le $((fsz + 512)) ]
ok $? "an idle program streamed for 1.5 s: one chunk, $ssz bytes ($fsz in a file)"
[ $? -eq 0 ] || diag_file "$TMP/sum"
# With chunks of 200 ms, idle flushes a second apart: the chunk with the
# program's start is finished once, and the idle one after it is not
# repeated at each flush.
"$REC_START" -q --chunk-age 200ms -o - -- sleep 3.5 >"$TMP/idle-a.rec" 2>"$TMP/err"
"$REC_SUMMARY" "$TMP/idle-a.rec" >"$TMP/sum" 2>&1
n=$(sed -n 's/^ *Chunks: //p' "$TMP/sum")
[ "${n:-9}" -le 2 ]
ok $? "an idle program streamed for 3.5 s, chunks of 200 ms: $n chunks"
[ $? -eq 0 ] || diag_file "$TMP/sum"

# Chunks by age: every chunk readable on its own, and the mappings each
# one restates are shown once to a reader of them all, as from a file.
{ "$REC_START" -q --chunk-age 200ms -o - -- "$WORKLOADS/demo" 1 2>/dev/null; } |
    "$REC_DUMP" --ndjson - >"$TMP/aged.nd" 2>"$TMP/derr"
dst=$?
"$REC_START" -q --chunk-age 200ms -o - -- "$WORKLOADS/demo" 1 2>/dev/null \
    >"$TMP/aged.rec"
"$REC_SUMMARY" "$TMP/aged.rec" >"$TMP/sum" 2>&1
nch=$(sed -n 's/^ *Chunks: //p' "$TMP/sum")
a=$(count ModuleLoad "$TMP/file.nd"); b=$(count ModuleLoad "$TMP/aged.nd")
[ "$dst" -eq 0 ] && [ "${nch:-0}" -ge 3 ] && [ "$a" -eq "$b" ]
ok $? "--chunk-age 200ms: $nch chunks; $b mappings shown, $a from a file"
[ $? -eq 0 ] || diag_file "$TMP/derr"
# The last chunk alone (as after retention): its mappings are there.
last=$(/usr/bin/env python3 - "$TMP/aged.rec" <<'PY' 2>/dev/null
import struct, sys
d = open(sys.argv[1], 'rb').read()
off = last = 0
while off + 80 <= len(d):
    last = off
    size = struct.unpack_from('<Q', d, off + 24)[0]
    if d[off + 21] & 4:          # streamed: blocks up to the END block
        p = off + 80
        while d[p] != 4:
            p += 16 + struct.unpack_from('<I', d, p + 4)[0]
        size = p + 96 - off
    off += size
print(last)
PY
)
if [ -n "$last" ] && [ "$last" -gt 0 ]; then
    tail -c +$((last + 1)) "$TMP/aged.rec" >"$TMP/lastchunk.rec"
    "$REC_DUMP" --ndjson "$TMP/lastchunk.rec" >"$TMP/last.nd" 2>/dev/null
    [ "$(count ModuleLoad "$TMP/last.nd")" -eq "$a" ]
    ok $? "a chunk read alone shows the mappings it restates ($(count ModuleLoad "$TMP/last.nd"))"
else
    skip "python3 not found or no second chunk"
fi

# A consumer that stops reading (without closing) after the program
# ended: rec-start gives up after --stream-timeout, says so, and passes
# the program's status on.
if mkfifo "$TMP/stall"; then
    # A reader that opens the FIFO and never reads it.
    sh -c 'sleep 30' <"$TMP/stall" &
    hold=$!
    "$REC_START" -t 100us --stream-timeout 1s -o "$TMP/stall" -- \
        "$WORKLOADS/demo" 1 >/dev/null 2>"$TMP/err"
    st=$?
    kill $hold 2>/dev/null
    wait $hold 2>/dev/null
    expect_status 0 "a consumer that stops reading: the program's status"
    grep -q 'the consumer took nothing for .* after the program ended' "$TMP/err"
    ok $? "rec-start stops waiting for it, and says so"
    [ $? -eq 0 ] || diag_file "$TMP/err"
else
    skip "mkfifo failed"; skip "mkfifo failed"
fi

done_testing
