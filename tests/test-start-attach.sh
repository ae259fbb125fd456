#!/bin/sh
# rec-start -p PID: a running process is recorded for a while and left as
# it was. Its output and exit status do not change, every reader reads the
# recording, each thread's figure matches the kernel's for the window,
# nothing of ours stays behind, a second attach reuses the dormant sampler,
# and each refusal says why.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
[ -x "$REC_START" ] || skip_all "rec-start not built"
[ "$(uname -m)" = x86_64 ] || skip_all "rec-start -p is implemented for x86-64 only"
[ -z "${REC_ASAN_RUNTIME:-}" ] ||
    skip_all "a sanitizer build's sampler cannot be loaded into a running process"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
cd "$TMP" || exit 99

REC_FLAME=$top_builddir/tools/rec-flame

# wait_for FILE: until the program says it runs (bounded, 10 s).
wait_for() {
    _i=0
    while [ ! -s "$1" ] && [ $_i -lt 200 ]; do sleep 0.05; _i=$((_i + 1)); done
}

# attach_for PID DURATION REC WHAT: rec-start -p for DURATION succeeds.
attach_for() {
    "$REC_START" -q -p "$1" --duration "$2" -o "$3" 2>"$TMP/err"
    st=$?
    expect_status 0 "$4"
}

# ends_ok PID WHAT: the program ends with status 0, as without us.
ends_ok() {
    wait "$1"
    st=$?
    expect_status 0 "$2"
}

# sampler_threads PID: threads of ours in PID (none once detached).
sampler_threads() {
    cat /proc/"$1"/task/*/comm 2>/dev/null | grep -c '^rec-' || true
}

# May this user trace a process that is not its child? Tried for real.
sleep 30 &
probe=$!
"$REC_START" -q -p $probe --duration 100ms -o "$TMP/probe.rec" >"$TMP/out" 2>"$TMP/err"
st=$?
kill $probe 2>/dev/null
wait $probe 2>/dev/null
if grep -q "not allowed to trace" "$TMP/err"; then
    skip_all "ptrace is not allowed here: $(cat "$TMP/err")"
fi

# 1. A multi-threaded program, its output compared with a run alone.
"$WORKLOADS/demo" 3 >"$TMP/demo-plain.out" 2>/dev/null
"$WORKLOADS/demo" 3 >"$TMP/demo.out" 2>"$TMP/demo.err" &
pid=$!
sleep 0.3
"$REC_START" -p $pid --duration 1s -o "$TMP/demo.rec" >"$TMP/out" 2>"$TMP/err"
st=$?
expect_status 0 "attached to a running multi-threaded program"
[ ! -s "$TMP/out" ]
ok $? "rec-start -p writes nothing on stdout"
grep -q "attached to process $pid" "$TMP/err" &&
    grep -q "detached from process $pid" "$TMP/err" &&
    grep -Eq "^rec-start: $TMP/demo.rec: [0-9]+ samples" "$TMP/err"
r=$?
ok $r "it says when it attached and detached, and what it recorded"
[ $r -eq 0 ] || diag_file "$TMP/err"
sleep 0.3
n=$(sampler_threads $pid)
[ "$n" -eq 0 ]
ok $? "no thread of the sampler left in the process after the detach ($n)"
ends_ok $pid "the program's exit status is unchanged"
cmp -s "$TMP/demo-plain.out" "$TMP/demo.out" && [ ! -s "$TMP/demo.err" ]
ok $? "the program's output is unchanged, nothing on its stderr"
s=$("$REC_DUMP" --ndjson --events CPUTimeSample "$TMP/demo.rec" 2>/dev/null | wc -l)
[ "$s" -gt 10 ]
ok $? "the recording has samples ($s)"
"$REC_DUMP" --ndjson "$TMP/demo.rec" >/dev/null 2>"$TMP/err" &&
    "$REC_SUMMARY" "$TMP/demo.rec" >/dev/null 2>>"$TMP/err" &&
    "$REC_FLAME" -o "$TMP/demo.html" "$TMP/demo.rec" 2>>"$TMP/err"
r=$?
ok $r "rec-dump, rec-summary and rec-flame read it"
[ $r -eq 0 ] || diag_file "$TMP/err"
"$REC_DUMP" --ndjson --events CPUTimeSample "$TMP/demo.rec" 2>/dev/null |
    jq -r '.stackTrace.frames[].function' | sort -u >"$TMP/funcs"
grep -qx hash_buffer "$TMP/funcs" && grep -qx matrix_multiply "$TMP/funcs"
r=$?
ok $r "stacks name the threads' functions"
[ $r -eq 0 ] || diag_file "$TMP/funcs"
"$REC_CPU" --json "$TMP/demo.rec" >"$TMP/cpu.json" 2>"$TMP/err"
ok $? "rec-cpu reads it"
bad=$(jq '[.threads[] | select(.differenceWithinBound | not)] | length' "$TMP/cpu.json")
[ "$bad" = 0 ]
r=$?
ok $r "every thread's sampled CPU matches the kernel's for the window"
if [ $r -ne 0 ]; then
    jq -c '.threads[] | [.osThreadId, .sampledCpuTime, .measuredCpuTime]' "$TMP/cpu.json" >"$TMP/diag"
    diag_file "$TMP/diag"
fi
# The workers ran before the attach: their ThreadStart holds that CPU time,
# the baseline the comparison above started from.
busy=$("$REC_DUMP" --ndjson --events ThreadStart "$TMP/demo.rec" 2>/dev/null |
       jq -s '[.[] | select(.cpuTime > 0 and .eventThread.name != "demo")] | length')
[ "$busy" -ge 3 ]
ok $? "the workers' CPU clocks were read at the attach, as the window's start ($busy)"

# 1b. Threads that end while recorded, then the whole process: each one's
#     end is known within a period though /proc no longer lists it.
"$WORKLOADS/demo" 2 >"$TMP/end.out" 2>&1 &
pid=$!
sleep 0.3
attach_for $pid 20s "$TMP/end.rec" "a process that ends while recorded"
ends_ok $pid "it ends as without us"
"$REC_DUMP" --ndjson "$TMP/end.rec" >/dev/null 2>"$TMP/err"
ok $? "its recording is complete (finished at its exit)"
"$REC_CPU" --json "$TMP/end.rec" >"$TMP/cpu.json" 2>"$TMP/err"
bad=$(jq '[.threads[] | select(.differenceWithinBound == false)] | length' "$TMP/cpu.json")
[ "$bad" = 0 ]
r=$?
ok $r "every thread that ended has its figure within a period of the kernel's"
if [ $r -ne 0 ]; then
    jq -c '.threads[] | [.osThreadId, .sampledCpuTime, .measuredCpuTime]' "$TMP/cpu.json" >"$TMP/diag"
    diag_file "$TMP/diag"
fi

# 1c. Threads stopped in the middle of a loop that keeps its sum in a
#     vector register: every register comes back (the calls clobber them).
"$WORKLOADS/fpspin" 2 2.5 >"$TMP/fp.out" 2>&1 &
pid=$!
wait_for "$TMP/fp.out"
for i in 1 2 3; do
    "$REC_START" -q -p $pid --duration 200ms -o "$TMP/fp$i.rec" 2>"$TMP/err" || break
done
ends_ok $pid "a program stopped three times in its vector loop"
[ "$(cat "$TMP/fp.out")" = "ready
ok" ]
r=$?
ok $r "its sums are exact: its registers came back whole"
[ $r -eq 0 ] || diag_file "$TMP/fp.out"

# 2. A process asleep in read(): the read goes on, and reads the line once.
mkfifo "$TMP/in.fifo"
sh -c 'exec cat' <"$TMP/in.fifo" >"$TMP/cat.out" 2>&1 &
cpid=$!
exec 8>"$TMP/in.fifo"
sleep 0.2
"$REC_START" -q -p $cpid --duration 300ms -o "$TMP/cat.rec" 2>"$TMP/err"
st=$?
expect_status 0 "attached to a process blocked in read()"
echo "one line" >&8
exec 8>&-
wait $cpid
st=$?
expect_status 0 "cat ends normally"
[ "$(cat "$TMP/cat.out")" = "one line" ]
r=$?
ok $r "the interrupted read() was restarted: the line arrives once"
[ $r -eq 0 ] || diag_file "$TMP/cat.out"

# 3. Masked workers: their CPU time is accounted as lost "blocked", and the
#    process's total matches the kernel's.
"$WORKLOADS/sigblock" mask 2 2500 >"$TMP/sb.out" 2>&1 &
pid=$!
sleep 0.3
attach_for $pid 700ms "$TMP/sb.rec" "attached to a program whose workers block every signal"
ends_ok $pid "it ends normally"
grep -q "2 of 2 workers done" "$TMP/sb.out"
ok $? "its output is unchanged"
"$REC_CPU" --json "$TMP/sb.rec" >"$TMP/cpu.json" 2>"$TMP/err"
lost=$(jq '[.threads[].lostCpuTime] | add' "$TMP/cpu.json")
# No sample at all: rec-cpu judges by the period the settings state.
bad=$(jq '[.threads[] | select(.differenceWithinBound != true)] | length' "$TMP/cpu.json")
[ "$lost" -gt 0 ] && [ "$bad" = 0 ]
ok $? "their CPU time is counted lost, and every thread adds up ($lost ns lost)"

# 3b. A program with its own SIGPROF timer and handler: its signals still
#     reach it while it is recorded, and after.
if [ -x /usr/bin/python3 ]; then
    cat >"$TMP/ownprof.py" <<'EOF'
import signal, time
hits = 0
def on_prof(sig, frame):
    global hits
    hits += 1
signal.signal(signal.SIGPROF, on_prof)
signal.setitimer(signal.ITIMER_PROF, 0.01, 0.01)
print("ready", flush=True)
t = time.process_time()
x = 0
while time.process_time() - t < 2.5:
    x += 1
signal.setitimer(signal.ITIMER_PROF, 0, 0)
print("hits", hits)
EOF
    /usr/bin/python3 "$TMP/ownprof.py" >"$TMP/own.out" 2>&1 &
    pid=$!
    wait_for "$TMP/own.out"
    attach_for $pid 1500ms "$TMP/own.rec" "attached to a program that uses SIGPROF itself"
    ends_ok $pid "it ends normally"
    hits=$(sed -n 's/^hits //p' "$TMP/own.out")
    # 250 expiries of its 10 ms timer in 2.5 s of CPU; taken from it during
    # the 1.5 s recorded, it would count about 100.
    [ "${hits:-0}" -ge 170 ]
    r=$?
    ok $r "its own SIGPROF handler kept getting its signals (${hits:-none} of ~250)"
    [ $r -eq 0 ] || diag_file "$TMP/own.out"
else
    skip "python3 not installed"
fi

# 4. Twice in a row, into one process: the dormant sampler serves again.
"$WORKLOADS/demo" 30 >"$TMP/demo2.out" 2>&1 &
pid=$!
sleep 0.3
"$REC_START" -q -p $pid --duration 300ms -o "$TMP/a1.rec" 2>"$TMP/err"
r1=$?
maps1=$(grep -c libsampler /proc/$pid/maps)
"$REC_START" -q -p $pid --duration 300ms -o "$TMP/a2.rec" 2>>"$TMP/err"
r2=$?
maps2=$(grep -c libsampler /proc/$pid/maps)
[ $r1 -eq 0 ] && [ $r2 -eq 0 ]
r=$?
ok $r "two attaches in a row succeed"
[ $r -eq 0 ] || diag_file "$TMP/err"
[ "$maps1" -gt 0 ] && [ "$maps1" = "$maps2" ]
ok $? "the second reuses the loaded sampler ($maps1 = $maps2 mappings)"
n1=$("$REC_DUMP" --ndjson --events CPUTimeSample "$TMP/a1.rec" 2>/dev/null | wc -l)
n2=$("$REC_DUMP" --ndjson --events CPUTimeSample "$TMP/a2.rec" 2>/dev/null | wc -l)
[ "$n1" -gt 0 ] && [ "$n2" -gt 0 ]
ok $? "both recordings have samples ($n1, $n2)"

# 5. Ended by a signal to rec-start (Ctrl-C); then the program is stopped
#    by SIGTERM as a daemon is: it dies of it, as without us.
"$REC_START" -q -p $pid -o "$TMP/int.rec" 2>"$TMP/err" &
rs=$!
sleep 0.5
kill -INT $rs
wait $rs
st=$?
expect_status 0 "Ctrl-C ends the recording, not the program"
kill -0 $pid 2>/dev/null
ok $? "the program runs on"
"$REC_DUMP" --ndjson "$TMP/int.rec" >/dev/null 2>"$TMP/err"
ok $? "the recording is complete and readable"
kill -TERM $pid
wait $pid
st=$?
expect_status 143 "the program then dies of SIGTERM as without us"

# 6. rec-start killed: the process detaches by itself and runs on.
"$WORKLOADS/demo" 4 >"$TMP/demo3.out" 2>&1 &
pid=$!
sleep 0.3
"$REC_START" -q -p $pid -o "$TMP/kill.rec" 2>"$TMP/err" &
rs=$!
sleep 0.5
kill -KILL $rs
wait $rs 2>/dev/null
i=0
while [ "$(sampler_threads $pid)" -gt 0 ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(sampler_threads $pid)" -eq 0 ]
ok $? "rec-start killed: the sampler finishes and leaves by itself"
"$REC_DUMP" --ndjson "$TMP/kill.rec" >/dev/null 2>"$TMP/err"
r=$?
ok $r "its recording is complete"
[ $r -eq 0 ] || diag_file "$TMP/err"
ends_ok $pid "the program ends normally"

# 7. python3: Python functions in the stacks.
if [ -x /usr/bin/python3 ]; then
    cat >"$TMP/hot.py" <<'EOF'
import sys, time
def hot_loop(n):
    x = 0
    for i in range(n):
        x += i * i
    return x
print("ready", flush=True)
t = time.time()
while time.time() - t < 3:
    hot_loop(100000)
print("done")
EOF
    /usr/bin/python3 "$TMP/hot.py" >"$TMP/py.out" 2>&1 &
    pid=$!
    wait_for "$TMP/py.out"
    attach_for $pid 700ms "$TMP/py.rec" "attached to python3"
    ends_ok $pid "python3 ends normally"
    [ "$(cat "$TMP/py.out")" = "ready
done" ]
    ok $? "its output is unchanged"
    "$REC_DUMP" --ndjson --events CPUTimeSample "$TMP/py.rec" 2>/dev/null |
        jq -r '[.stackTrace.frames[] | select(.kind == "python") | .function] | join(";")' >"$TMP/py.stacks"
    all=$(wc -l <"$TMP/py.stacks")
    named=$(grep -c 'hot_loop' "$TMP/py.stacks")
    [ "$all" -gt 0 ] && [ $((named * 10)) -ge $((all * 8)) ]
    ok $? "samples name the Python function ($named of $all)"
else
    skip "python3 not installed"
fi

# 8. A JVM.
if command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 &&
   javac -d "$TMP" "$top_srcdir/tests/runtimes/Hot.java" 2>"$TMP/err"; then
    java -XX:+PreserveFramePointer -cp "$TMP" Hot 4000 >"$TMP/java.out" 2>&1 &
    pid=$!
    sleep 1.5
    attach_for $pid 1s "$TMP/java.rec" "attached to a JVM"
    ends_ok $pid "the JVM ends normally"
    [ "$(cat "$TMP/java.out")" = ok ]
    r=$?
    ok $r "its output is unchanged"
    [ $r -eq 0 ] || diag_file "$TMP/java.out"
    n=$("$REC_DUMP" --ndjson --events CPUTimeSample "$TMP/java.rec" 2>/dev/null | wc -l)
    [ "$n" -gt 10 ]
    ok $? "its recording has samples ($n)"
else
    skip "java and javac not installed"
fi

# 9. Refusals, each with its reason.
"$REC_START" -p 999999999 -o "$TMP/none.rec" 2>"$TMP/err"
st=$?
[ $st -eq 1 ] && grep -q "no process" "$TMP/err"
ok $? "no such process: said"
"$REC_START" -p $$ -- true 2>"$TMP/err"
st=$?
expect_status 2 "-p with a PROGRAM is a usage error"
"$REC_START" -q -o "$TMP/exec.rec" -- "$WORKLOADS/demo" 2 >/dev/null 2>&1 &
rs=$!
sleep 0.4
pid=$(pgrep -P $rs -x demo)
"$REC_START" -p "$pid" --duration 200ms -o "$TMP/twice.rec" 2>"$TMP/err"
st=$?
[ $st -eq 1 ] && grep -q "being recorded already" "$TMP/err"
r=$?
ok $r "a process recorded by rec-start already: refused"
[ $r -eq 0 ] || diag_file "$TMP/err"
wait $rs
if command -v strace >/dev/null 2>&1; then
    strace -o /dev/null sleep 5 &
    tr=$!
    sleep 0.3
    pid=$(pgrep -P $tr -x sleep)
    "$REC_START" -p "$pid" -o "$TMP/traced.rec" 2>"$TMP/err"
    st=$?
    [ $st -eq 1 ] && grep -q "already traced" "$TMP/err"
    r=$?
    ok $r "a traced process: refused"
    [ $r -eq 0 ] || diag_file "$TMP/err"
    kill $tr 2>/dev/null
    wait $tr 2>/dev/null
else
    skip "strace not installed"
fi
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 &&
   setpriv --reuid=65534 --regid=65534 --clear-groups "$REC_START" --version >/dev/null 2>&1; then
    sleep 5 &
    pid=$!
    setpriv --reuid=65534 --regid=65534 --clear-groups \
        "$REC_START" -p $pid -o /tmp/rec-attach-nobody.$$.rec 2>"$TMP/err"
    st=$?
    [ $st -eq 1 ] && grep -q "another user" "$TMP/err"
    r=$?
    ok $r "another user's process: refused, with what to do"
    [ $r -eq 0 ] || diag_file "$TMP/err"
    kill $pid
    wait $pid 2>/dev/null
else
    skip "not root, or setpriv cannot run rec-start as another user here"
fi
# A load that fails (a library the loader refuses) leaves the process as
# it was, and says why.
printf 'extern int rec_no_such_symbol(void);\nint recs_attach(const char *s) { (void)s; return rec_no_such_symbol(); }\n' >"$TMP/bad.c"
if ${CC:-cc} -shared -fPIC -o "$TMP/libbad.so" "$TMP/bad.c" 2>/dev/null; then
    "$WORKLOADS/demo" 2 >"$TMP/bad.out" 2>&1 &
    pid=$!
    sleep 0.3
    REC_SAMPLER_LIB="$TMP/libbad.so" "$REC_START" -p $pid -o "$TMP/bad.rec" 2>"$TMP/err"
    st=$?
    [ $st -eq 1 ] && grep -q "could not load.*rec_no_such_symbol" "$TMP/err"
    r=$?
    ok $r "a sampler the loader refuses: said, with the loader's words"
    [ $r -eq 0 ] || diag_file "$TMP/err"
    ends_ok $pid "the process goes on and ends normally"
    "$WORKLOADS/demo" 2 >"$TMP/bad-plain.out" 2>&1
    cmp -s "$TMP/bad.out" "$TMP/bad-plain.out"
    ok $? "its output is unchanged"
else
    skip "no C compiler for a shared library"
fi
printf 'int main(void){for(;;);}\n' >"$TMP/spin.c"
if ${CC:-cc} -static -o "$TMP/spin" "$TMP/spin.c" 2>/dev/null; then
    "$TMP/spin" &
    pid=$!
    "$REC_START" -p $pid -o "$TMP/static.rec" 2>"$TMP/err"
    st=$?
    [ $st -eq 1 ] && grep -q "statically linked" "$TMP/err"
    r=$?
    ok $r "a statically linked process: refused"
    [ $r -eq 0 ] || diag_file "$TMP/err"
    kill $pid
    wait $pid 2>/dev/null
else
    skip "no static C library to build a static program"
fi

done_testing
