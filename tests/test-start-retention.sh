#!/bin/sh
# rec-start --max-size / --max-age -o DIR: a flight recorder. An
# accelerated day of a busy program (20 times a 100 Hz daemon's samples,
# sizes and ages scaled down) stays within max-size plus one chunk on disk
# at every moment, the oldest chunk files deleted whole; the directory
# reads as one closed recording, and its last second comes out as a flame
# graph in one command; --max-age keeps only recent chunks; a killed
# program's last chunk is sealed; what is in the way is refused.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
[ -x "$REC_START" ] || skip_all "rec-start not built"
[ -x "$REC_DUMP" ] || skip_all "rec-dump not built"
REC_FLAME=$top_builddir/tools/rec-flame
cd "$TMP" || exit 99

# bytes DIR: what the chunk files hold now, and the biggest of them
bytes() {
    total=0 big=0
    for f in "$1"/*.rec; do
        [ -f "$f" ] || continue
        s=$(stat -c %s "$f" 2>/dev/null) || continue
        total=$((total + s))
        [ "$s" -gt "$big" ] && big=$s
    done
    echo "$total $big"
}

# The accelerated day: 128 KiB kept, 16 KiB chunks, a chunk per 200 ms,
# two busy threads sampled every millisecond, for 6 s.
"$REC_START" -t 1ms --max-size 128k --max-chunk-size 16k --chunk-age 200ms \
    -o "$TMP/fr" -- "$WORKLOADS/demo" 6 >/dev/null 2>"$TMP/err" &
pid=$!
peak=0 looks=0 biggest=0
while kill -0 $pid 2>/dev/null; do
    # shellcheck disable=SC2046
    set -- $(bytes "$TMP/fr")
    b=$1
    [ "$b" -gt "$peak" ] && peak=$b
    [ "$2" -gt "$biggest" ] && biggest=$2
    looks=$((looks + 1))
    sleep 0.02
done
wait $pid
st=$?
expect_status 0 "an accelerated day under --max-size"
# One chunk: the biggest chunk file seen, while it ran or at the end (one
# deleted before the end may have been bigger than those kept).
for f in "$TMP"/fr/*.rec; do
    s=$(stat -c %s "$f"); [ "$s" -gt "$biggest" ] && biggest=$s
done
first=$(ls "$TMP/fr" | head -n 1)
[ "$peak" -gt 0 ] && [ "$peak" -le $((131072 + biggest)) ] &&
    [ "$biggest" -le $((2 * 16384)) ]
ok $? "disk use stayed within max-size plus one chunk: at most $peak bytes in $looks looks (128 KiB + $biggest)"
grep -q 'older deleted' "$TMP/err" && [ "$first" != 000000000000.rec ]
ok $? "the oldest chunk files were deleted whole (the first kept: $first)"
[ $? -eq 0 ] || diag_file "$TMP/err"
"$REC_DUMP" --ndjson "$TMP/fr" >"$TMP/fr.nd" 2>"$TMP/derr"
r=$?
[ $r -eq 0 ] && [ ! -s "$TMP/derr" ] && grep -q CPUTimeSample "$TMP/fr.nd"
ok $? "the directory reads as one closed recording, no warning"
[ $? -eq 0 ] || diag_file "$TMP/derr"
# Each kept chunk is readable on its own: its mappings are restated.
one=$(ls "$TMP/fr" | sed -n 2p)
"$REC_DUMP" --ndjson "$TMP/fr/$one" 2>/dev/null | grep -c '"type":"ModuleLoad"' >"$TMP/n1"
grep -c '"type":"ModuleLoad"' "$TMP/fr.nd" >"$TMP/nall"
[ "$(cat "$TMP/n1")" -gt 0 ] && [ "$(cat "$TMP/n1")" -eq "$(cat "$TMP/nall")" ]
ok $? "a chunk file alone names the mappings; the directory shows them once ($(cat "$TMP/nall"))"
# The last second as a flame graph, in one command: the samples it holds
# are those of that window.
"$REC_FLAME" --since 1s -o "$TMP/last.html" "$TMP/fr" 2>"$TMP/ferr"
r=$?
want=$("$REC_DUMP" --ndjson --since 1s --events CPUTimeSample "$TMP/fr" 2>/dev/null | wc -l)
[ $r -eq 0 ] && [ -s "$TMP/last.html" ] && [ "$want" -gt 100 ]
ok $? "rec-flame --since 1s DIR: the last second in one command ($want samples)"
[ $? -eq 0 ] || diag_file "$TMP/ferr"
"$REC_DUMP" --format rec --since 1s -o "$TMP/last.rec" "$TMP/fr" 2>"$TMP/derr"
r=$?
"$REC_DUMP" --ndjson --since 1s --events CPUTimeSample "$TMP/last.rec" 2>/dev/null | wc -l >"$TMP/n2"
[ $r -eq 0 ] && [ "$(cat "$TMP/n2")" -eq "$want" ]
ok $? "rec-dump --format rec --since 1s: one file with that second ($(cat "$TMP/n2") samples)"
[ $? -eq 0 ] || diag_file "$TMP/derr"

# --max-age: only the chunks of the last second or so are kept.
t0=$(date +%s)
"$REC_START" -t 1ms --max-age 1s -o "$TMP/age" -- "$WORKLOADS/demo" 3 \
    >/dev/null 2>"$TMP/err"
st=$?
expect_status 0 "--max-age 1s"
"$REC_SUMMARY" --json "$TMP/age" >"$TMP/age.json" 2>/dev/null
start=$(sed -n 's/.*"start": *"\([^"]*\)".*/\1/p' "$TMP/age.json" | head -n 1)
s=$(date -d "$start" +%s 2>/dev/null || echo 0)
[ "$s" -ge $((t0 + 1)) ]
ok $? "only recent chunks are kept (the recording starts at $start, the run at $(date -d @$t0 -u +%T))"
[ $? -eq 0 ] || diag_file "$TMP/age.json"

# A program killed mid-recording: its last chunk is sealed, with what the
# deleted chunks accounted for.
"$REC_START" -t 1ms --max-size 128k --max-chunk-size 16k -o "$TMP/kill" -- \
    "$WORKLOADS/demo" 30 >/dev/null 2>"$TMP/err" &
pid=$!
sleep 2
pkill -KILL -P $pid demo 2>/dev/null || pkill -KILL -f "$WORKLOADS/demo 30"
wait $pid
st=$?
expect_status 137 "SIGKILL: rec-start dies of the same signal"
"$REC_DUMP" --ndjson "$TMP/kill" >"$TMP/kill.nd" 2>"$TMP/derr"
r=$?
grep -q '"reason":"sealed"' "$TMP/kill.nd" && [ $r -eq 0 ] && ! grep -q unfinished "$TMP/derr"
ok $? "the killed program's last chunk is sealed"
[ $? -eq 0 ] || { diag_file "$TMP/err"; diag_file "$TMP/derr"; }

# What is in the way.
"$REC_START" --max-size 1M -o "$TMP/fr" -- true 2>"$TMP/err"
st=$?
expect_status 1 "a directory that holds a recording is refused"
grep -q 'holds a recording' "$TMP/err"
ok $? "and says so"
"$REC_START" -q -f --max-size 1M -o "$TMP/fr" -- true 2>"$TMP/err"
st=$?
n=$(ls "$TMP/fr" | wc -l)
[ "$st" -eq 0 ] && [ "$n" -eq 1 ]
ok $? "-f replaces it ($n chunk file)"
: >"$TMP/plain"
"$REC_START" --max-size 1M -o "$TMP/plain" -- true 2>"$TMP/err"
st=$?
expect_status 1 "a regular file as DIR is refused"
"$REC_START" --max-size 1M -- true 2>"$TMP/err"
st=$?
expect_status 2 "--max-size without -o"
"$REC_START" --max-age 1h -o - -- true 2>"$TMP/err" >/dev/null
st=$?
expect_status 2 "--max-age with -o -"

done_testing
