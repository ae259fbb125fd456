#!/bin/sh
# Where CPU time without stacks went is said in one line, by rec-start and
# rec-summary alike; workers that block every signal are sampled and the
# program's output and status are its own.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
[ -x "$REC_START" ] || skip_all "rec-start not built"
cd "$TMP" || exit 99

# Workers blocking every signal with pthread_sigmask: sampled, nothing
# lost for that reason, output and status unchanged.
"$WORKLOADS/sigblock" mask 2 150 >"$TMP/plain.out" 2>/dev/null
pst=$?
"$REC_START" -o "$TMP/mask.rec" -- "$WORKLOADS/sigblock" mask 2 150 >"$TMP/rec.out" 2>"$TMP/err"
st=$?
expect_status $pst "signal-blocking workers: status unchanged"
cmp -s "$TMP/plain.out" "$TMP/rec.out"
ok $? "signal-blocking workers: stdout unchanged"
! grep -q "(blocked" "$TMP/err"
ok $? "signal-blocking workers: no CPU reported lost to a blocked signal"
[ $? -eq 0 ] || diag_file "$TMP/err"
"$REC_SUMMARY" "$TMP/mask.rec" >"$TMP/sum" 2>&1
! grep -q "(blocked" "$TMP/sum"
ok $? "rec-summary agrees"

# One worker blocks with a raw system call: its CPU time (a third of the
# program's) has no stack, and both tools say why, naming one thread.
"$REC_START" -o "$TMP/raw.rec" -- "$WORKLOADS/sigblock" raw 2 150 >"$TMP/rec.out" 2>"$TMP/err"
st=$?
expect_status 0 "raw mask: runs"
line=$(grep "of CPU without stacks:" "$TMP/err")
echo "$line" | grep -Eq '^rec-start: [0-9]+% of CPU without stacks: [0-9]+% threads blocking the sampling signal \(blocked, 1 thread\)'
ok $? "rec-start's closing line names the reason first, with its share and thread count"
[ $? -eq 0 ] || diag_file "$TMP/err"
"$REC_SUMMARY" "$TMP/raw.rec" >"$TMP/sum" 2>&1
grep -q "^ ${line#rec-start: }\$" "$TMP/sum"
ok $? "rec-summary prints the same line"
[ $? -eq 0 ] || diag_file "$TMP/sum"
"$REC_SUMMARY" --json "$TMP/raw.rec" >"$TMP/sum.json" 2>&1
grep -q '"withoutStacks": ".*(blocked, 1 thread)' "$TMP/sum.json"
ok $? "rec-summary --json carries it"

done_testing
