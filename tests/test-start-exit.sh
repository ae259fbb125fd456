#!/bin/sh
# rec-start is transparent: stdin, stdout and the exit status pass through,
# a death by signal is reproduced, ^C is for the program, SIGTERM is
# forwarded; the summary goes to stderr only.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
[ -x "$REC_START" ] || skip_all "rec-start not built"
cd "$TMP" || exit 99

# stdout byte for byte (the demo's output is deterministic).
"$WORKLOADS/demo" 0.2 >"$TMP/plain.out" 2>/dev/null
"$REC_START" -o "$TMP/demo.rec" -- "$WORKLOADS/demo" 0.2 >"$TMP/rec.out" 2>"$TMP/err"
st=$?
expect_status 0 "demo runs"
cmp -s "$TMP/plain.out" "$TMP/rec.out"
ok $? "stdout is the program's, byte for byte"
grep -Eq "^rec-start: $TMP/demo.rec: [0-9]+ samples, [0-9]+ lost" "$TMP/err"
ok $? "one summary line on stderr"
[ $? -eq 0 ] || diag_file "$TMP/err"
n=$(sed -n 's/.*: \([0-9][0-9]*\) samples.*/\1/p' "$TMP/err")
[ "${n:-0}" -gt 0 ]
ok $? "the demo recording has samples (${n:-none})"

# stdin.
printf 'line one\nline two\n\001\377 bytes\n' >"$TMP/in"
"$REC_START" -q -o "$TMP/cat.rec" cat <"$TMP/in" >"$TMP/cat.out" 2>"$TMP/err"
st=$?
expect_status 0 "cat runs"
cmp -s "$TMP/in" "$TMP/cat.out"
ok $? "stdin reaches the program"
[ ! -s "$TMP/err" ]
ok $? "-q: nothing on stderr"
[ $? -eq 0 ] || diag_file "$TMP/err"

# Exit statuses.
for code in 0 1 3 42 125 255; do
    "$REC_START" -q --force -o "$TMP/x.rec" sh -c "exit $code" >"$TMP/out" 2>"$TMP/err"
    st=$?
    expect_status $code "exit status $code passes through"
done

# Death by signal: we die of the same signal, so a shell sees 128+N, and
# nothing extra is printed on stdout.
for sig in TERM SEGV KILL ABRT; do
    case $sig in TERM) num=15 ;; SEGV) num=11 ;; KILL) num=9 ;; ABRT) num=6 ;; esac
    sh -c "'$REC_START' -q --force -o '$TMP/sig.rec' sh -c 'echo before; kill -$sig \$\$; echo after'" \
        >"$TMP/out" 2>"$TMP/err"
    st=$?
    expect_status $((128 + num)) "killed by SIG$sig: status 128+$num"
    [ "$(cat "$TMP/out")" = before ]
    ok $? "killed by SIG$sig: stdout has only the program's output"
done
sh -c "ulimit -c 0; '$REC_START' --force -o '$TMP/sig.rec' sh -c 'kill -SEGV \$\$'" \
    >"$TMP/out" 2>"$TMP/err"
grep -q "samples" "$TMP/err"
ok $? "killed: the summary still comes"
[ $? -eq 0 ] || diag_file "$TMP/err"

# A program that cannot finish its recording: rec-start seals it. One that
# leaves by the exit_group system call itself (as Go does), one killed by
# SIGKILL. The status is the program's; the data up to the last flush is
# kept; the closing chunk holds the process's usage from wait4 and the CPU
# time the file misses, lost with reason "sealed", so that the samples and
# losses add up to getrusage. A program that finishes is not sealed.
sealed_checks() {
    _name=$1
    grep -q "sealed by rec-start" "$TMP/err"
    ok $? "$_name: rec-start says it sealed the recording"
    [ $? -eq 0 ] || diag_file "$TMP/err"
    if command -v jq >/dev/null 2>&1; then
        "$REC_SUMMARY" --json "$TMP/seal.rec" 2>"$TMP/serr" |
            jq -e '.complete and .sealed' >/dev/null
        ok $? "$_name: rec-summary: complete, sealed"
        "$REC_DUMP" --ndjson --events ProcessUsage,CPUTimeSampleLost \
            "$TMP/seal.rec" >"$TMP/seal.ndjson" 2>"$TMP/serr"
        jq -s -e '(map(select(.type == "ProcessUsage" and .userTime > 0)) | length) >= 1 and
                  (map(select(.type == "CPUTimeSampleLost" and .reason == "sealed")) | length) == 1' \
            "$TMP/seal.ndjson" >/dev/null
        ok $? "$_name: ProcessUsage and the CPU time lost as sealed"
        [ $? -eq 0 ] || diag_file "$TMP/seal.ndjson"
    else
        ok 0 "$_name: rec-summary # SKIP jq not installed"
        ok 0 "$_name: events # SKIP jq not installed"
    fi
    "$REC_CPU" "$TMP/seal.rec" >"$TMP/cpu" 2>&1
    grep -Eq "getrusage .* sampled\+lost - getrusage = -?0\.[0-9]+ ms" "$TMP/cpu"
    ok $? "$_name: rec-cpu compares the process with getrusage"
    [ $? -eq 0 ] || diag_file "$TMP/cpu"
}
if [ -x "$WORKLOADS/rawexit" ] && [ "$(uname -m)" = x86_64 ]; then
    "$REC_START" --force -o "$TMP/seal.rec" "$WORKLOADS/rawexit" 200 >"$TMP/out" 2>"$TMP/err"
    st=$?
    expect_status 7 "raw exit_group: the program's status"
    sealed_checks "raw exit_group"
else
    for _ in 1 2 3 4 5; do ok 0 "raw exit_group # SKIP x86-64 only"; done
fi
sh -c "'$REC_START' --force -o '$TMP/seal.rec' sh -c 'i=0; while [ \$i -lt 200000 ]; do i=\$((i + 1)); done; kill -KILL \$\$'" \
    >"$TMP/out" 2>"$TMP/err"
st=$?
expect_status 137 "SIGKILL: status 128+9"
sealed_checks "SIGKILL"
"$REC_START" --force -o "$TMP/seal.rec" sh -c 'exit 0' >"$TMP/out" 2>"$TMP/err"
! grep -q "sealed" "$TMP/err" && "$REC_SUMMARY" --json "$TMP/seal.rec" 2>/dev/null | grep -q '"sealed": false'
ok $? "a program that finishes: not sealed"

# ^C goes to the program, not to us: with job control the shell sends
# SIGINT to rec-start alone here; it must keep waiting for the program.
(
    set -m
    "$REC_START" -q --force -o "$TMP/int.rec" sh -c 'sleep 1; exit 5' >/dev/null 2>&1 &
    p=$!
    sleep 0.3
    kill -INT $p
    kill -QUIT $p
    wait $p
    echo $? >"$TMP/int.status"
) 2>/dev/null
st=$(cat "$TMP/int.status")
expect_status 5 "SIGINT and SIGQUIT to rec-start alone: ignored, the program finishes"

# SIGTERM to rec-start reaches the program (timeout, a closing terminal).
(
    set -m
    "$REC_START" -q --force -o "$TMP/term.rec" sleep 5 >/dev/null 2>&1 &
    p=$!
    sleep 0.5
    kill -TERM $p
    wait $p
    echo $? >"$TMP/term.status"
) 2>/dev/null
st=$(cat "$TMP/term.status")
expect_status 143 "SIGTERM is forwarded: the program dies of it, so do we"

# A signal sent to the whole process group reaches the program once: the
# copy rec-start forwards is not a second SIGTERM (a program that shuts
# down gracefully on the first would be forced by a second). Sent to
# rec-start alone, it reaches the program once, from rec-start.
if command -v setsid >/dev/null 2>&1; then
    for how in group alone; do
        rm -f "$TMP/cnt.out"
        setsid "$REC_START" -q --force -o "$TMP/cnt.rec" -- "$WORKLOADS/sigcount" \
            >"$TMP/cnt.out" 2>"$TMP/err" &
        i=0
        while ! grep -q ready "$TMP/cnt.out" 2>/dev/null && [ $i -lt 300 ]; do
            sleep 0.05; i=$((i + 1))
        done
        sleep 0.2
        # setsid runs rec-start itself (the job is no group leader): its
        # pid leads the new group.
        p=$!
        if [ "$how" = group ]; then kill -TERM "-$p"; else kill -TERM "$p"; fi
        i=0
        while kill -0 "$p" 2>/dev/null && [ $i -lt 600 ]; do
            sleep 0.05; i=$((i + 1))
        done
        kill -KILL "-$p" 2>/dev/null
        wait "$p"
        got=$(sed -n 's/^term \([0-9]*\) .*/\1/p' "$TMP/cnt.out")
        [ "$got" = 1 ] && grep -q "code 0 from" "$TMP/cnt.out"
        ok $? "SIGTERM to $how: the program gets it once, as a plain kill ($(tail -n 1 "$TMP/cnt.out"))"
        "$REC_DUMP" --ndjson "$TMP/cnt.rec" >/dev/null 2>"$TMP/derr"
        [ $? -eq 0 ] && [ ! -s "$TMP/derr" ]
        ok $? "SIGTERM to $how: the recording is finished by the program"
        [ $? -eq 0 ] || diag_file "$TMP/derr"
    done
else
    for _ in 1 2 3 4; do skip "setsid not found"; done
fi

# The program sees the settings and the root pid in its environment; other
# variables pass through.
FOO=bar "$REC_START" -q --force -o "$TMP/env.rec" --throttle 500/s --stack-depth 12 \
    sh -c 'echo "$FOO $REC_THROTTLE $REC_STACK_DEPTH $REC_ROOT_PID $$"' >"$TMP/out" 2>"$TMP/err"
# shellcheck disable=SC2046  # fields, split on purpose
set -- $(cat "$TMP/out")
[ "$1 $2 $3" = "bar 500/s 12" ] && [ "$4" = "$5" ]
ok $? "environment: settings, REC_ROOT_PID = the program's pid ($(cat "$TMP/out"))"

done_testing
