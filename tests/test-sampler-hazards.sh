#!/bin/sh
# shellcheck disable=SC2034  # variables read by check_eval's expressions
# tests/test-sampler-hazards.sh - run the hazard programs of tests/hazards/
# under the preloaded sampler (the environment rec-start sets) and check
# their behaviour (exit status, stdout untouched, bounded wall time through
# timeout) and their recordings (tests/sampler-check).
set -u
: "${top_builddir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$top_srcdir/tests/tap-lib.sh"
B=$top_builddir
H=$B/tests/hazards
CHECK=$B/tests/sampler-check
# The file rec-start preloads: the one the soname names.
LIB=$B/libsampler/.libs/${LIBSAMPLER_SONAME:-libsampler.so}
T=$(mktemp -d "${TMPDIR:-/tmp}/rec-sampler.XXXXXX")
[ -n "${REC_KEEP_TEST_DIR:-}" ] || trap 'rm -rf "$T"' EXIT


if [ ! -f "$LIB" ]; then
    skip_all "$LIB not built"
fi
PRELOAD=$LIB
# A sanitized library needs the sanitizer runtime first in the list.
ASAN=$(ldd "$LIB" 2>/dev/null | awk '/libasan/ { print $3 }')
if [ -n "$ASAN" ]; then
    PRELOAD="$ASAN $LIB"
    ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0
    export ASAN_OPTIONS
fi
LD_LIBRARY_PATH=$B/librecord/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH

# The engine under test: timer (CPU-time timers) unless REC_TEST_ENGINE
# says perf (tests/test-sampler-hazards-perf.sh). Every run below names it.
ENGINE=${REC_TEST_ENGINE:-timer}
HZ_ENGINE=$ENGINE
export HZ_ENGINE
echo "# engine: $ENGINE"

# run NAME [VAR=VALUE...] -- PROGRAM ARGS: record into $T/NAME.rec; sets
# rc, leaves stdout in $T/NAME.out and stderr in $T/NAME.err.
run() {
    name=$1; shift
    envs=""
    while [ "$1" != "--" ]; do envs="$envs $1"; shift; done
    shift
    rm -f "$T/$name.rec"
    # rec-start's environment: the root pid is the program's own (exec).
    timeout -s KILL 120 env REC_OUTPUT="$T/$name.rec" REC_ENGINE=$ENGINE $envs \
        sh -c 'REC_ROOT_PID=$$ LD_PRELOAD="$0" exec "$@"' \
        "$PRELOAD" "$@" >"$T/$name.out" 2>"$T/$name.err"
    rc=$?
    # Per thread: within the period in force + 1 ms of clock reads; no
    # load-dependent slack (undelivered expiries are counted lost).
    "$CHECK" --accounting 1000000 "$T/$name.rec" >"$T/$name.chk" 2>&1
    chk=$?
}
# Field of the "total" line.
tot() { sed -n "s/^total .*\\<$1=\\([0-9]*\\).*/\\1/p" "$T/$name.chk"; }
quiet() { [ ! -s "$T/$name.out" ]; }
# More than 5 periods of CPU time sampled with stacks. Counted in CPU time,
# not in samples: a host that stops the VM for a while makes the kernel
# see several expiries at once, one signal that stands for all of them.
sampled() { [ "$(tot stacked_ns)" -gt $((5 * $(tot setperiod))) ]; }

if [ "$ENGINE" = perf ]; then
    run probe -- "$H/burn" 1 10
    if [ ! -s "$T/probe.rec" ]; then
        skip_all "the perf engine is not available here: $(head -1 "$T/probe.err")"
    fi
fi

# 1: basic recording, accounting, stacks.
run burn -- "$H/burn" 3 200
check_eval "burn: exit status 0" '[ $rc = 0 ]'
check_eval "burn: nothing on stdout" quiet
check_eval "burn: recording readable, per-thread accounting within a period" '[ $chk = 0 ]'
check_eval "burn: 4 threads started and ended" '[ "$(tot starts)" = 4 ] && [ "$(tot ends)" = 4 ]'
check_eval "burn: settings, process info, usage written once" \
    '[ "$(tot settings)" = 1 ] && [ "$(tot processinfo)" = 1 ] && [ "$(tot usage)" = 1 ]'
check_eval "burn: samples with stacks, none failed" '[ "$(tot samples)" -gt 20 ] && [ "$(tot failed)" = 0 ]'
check_eval "burn: leaf, its caller (frameless-leaf correction) and main in stacks" \
    'grep -qx "func hz_leaf" "$T/burn.chk" && grep -qx "func hz_work" "$T/burn.chk" && grep -qx "func hz_burn_ms" "$T/burn.chk" && grep -qx "func main" "$T/burn.chk"'
[ $chk = 0 ] || diag_file "$T/burn.chk" 200

# 2: 1 ms period: every signal carries overruns (4 ms tick); the periods
# must still add up.
run burn1ms REC_THROTTLE=1ms -- "$H/burn" 1 200
check_eval "1ms: accounting with overrun-corrected periods" '[ $rc = 0 ] && [ $chk = 0 ]'
[ $chk = 0 ] || diag_file "$T/burn1ms.chk" 200

# 2b: a rate: period = online CPUs * 1e9 / rate.
ncpu=$(getconf _NPROCESSORS_ONLN)
run rate REC_THROTTLE=200/s -- "$H/burn" 1 100
check_eval "rate 200/s: period $ncpu * 5 ms, accounting" \
    '[ $rc = 0 ] && [ $chk = 0 ] && [ "$(tot setperiod)" = $((ncpu * 5000000)) ]'

# 3: a one-slot queue: most samples are lost, their CPU time is not.
run tiny REC_THROTTLE=1ms REC_QUEUE_CAPACITY=1 -- "$H/burn" 1 300
check_eval "tiny queue: samples lost (queue-full)" '[ "$(tot lost)" -gt 0 ]'
check_eval "tiny queue: samples + lost CPU time add up per thread" '[ $rc = 0 ] && [ $chk = 0 ]'
[ $chk = 0 ] || diag_file "$T/tiny.chk" 200

# 4: fork under a 100 us period (restart-loop hazard), children exit().
run forker REC_THROTTLE=100us -- "$H/forker" 20
check_eval "fork at 100us: finishes, children ok" '[ $rc = 0 ]'
check_eval "fork: parent recording intact (one process, finished)" \
    '[ $chk = 0 ] && [ "$(tot processinfo)" = 1 ] && [ "$(tot usage)" = 1 ]'
check_eval "fork: children stay dormant (no other file)" '[ "$(ls "$T" | grep -c "^forker.rec")" = 1 ]'
[ $chk = 0 ] || diag_file "$T/forker.chk" 200

# 5: fork with REC_FOLLOW_CHILDREN=1: one recording per child.
run follow REC_FOLLOW_CHILDREN=1 -- "$H/forker" 3
nchild=$(find "$T" -maxdepth 1 -name 'follow.rec.[0-9]*' | grep -c '\.rec\.[0-9]*$')
check_eval "follow children: 3 child recordings" '[ $rc = 0 ] && [ "$nchild" = 3 ]' ||
    { diag "follow: rc=$rc nchild=$nchild"; ls -l "$T"/follow.* | diag_file /dev/stdin 20; diag_file "$T/follow.err" 40; }
okc=1
for f in "$T"/follow.rec.*; do
    "$CHECK" "$f" >"$T/child.chk" 2>&1 || okc=0
    grep -q " usage=1 " "$T/child.chk" || okc=0
done
check_eval "follow children: each child recording finished and readable" '[ $okc = 1 ]'

# 5b: a followed child whose sampler thread starts on a stack recycled
# from a thread of the parent: under the sanitizers its shadow held the
# parent's poisoned frames (the thread must be one the runtime knows).
run forkstack REC_FOLLOW_CHILDREN=1 -- "$H/forkstack"
chk_child=1
for f in "$T"/forkstack.rec.*; do
    [ -f "$f" ] && "$CHECK" --accounting 1000000 "$f" >"$T/forkstack-child.chk" 2>&1 && chk_child=0
done
check_eval "fork from a threaded process, followed: the child's sampler thread runs clean, status kept (status $rc)" \
    '[ $rc = 0 ] && ! grep -q "ERROR: AddressSanitizer" "$T/forkstack.err" && [ $chk = 0 ] && [ $chk_child = 0 ]' ||
    diag_file "$T/forkstack.err" 20

# 6: exec: a failed exec goes on recording, the new image appends.
run execer -- "$H/execer"
check_eval "exec: exit status of the new image" '[ $rc = 5 ]'
check_eval "exec: three recordings in one file (start, after failed exec, new image)" \
    '[ "$(tot processinfo)" = 3 ] && [ "$(tot usage)" = 3 ]'
check_eval "exec: readable, accounting per session" '[ $chk = 0 ]'
[ $chk = 0 ] || diag_file "$T/execer.chk" 200

# 6b: exec while the sampler thread is stuck (stopped for good, as one
# starved of CPU): the stop before the exec gives up, and nothing of ours
# is left to fire in the new image (a perf overflow killed it with
# SIGPROF at 10 ms and 1 ms). The new image keeps its status.
for p in 10ms 1ms; do
    run stuck-exec-$p REC_THROTTLE=$p -- "$H/stuck" exec
    if [ $rc = 77 ]; then
        skip "exec with the sampler thread stuck: it could not be stopped (ptrace)"
        continue
    fi
    check_eval "exec with the sampler thread stuck, $p: the new image keeps its status (5, got $rc), the stop says it gave up" \
        '[ $rc = 5 ] && grep -q "could not finish the recording (the sampler thread is stuck)" "$T/$name.err"' ||
        diag_file "$T/$name.err"
done

# 7: vfork+exec, posix_spawn, system(): children share memory until exec.
run spawner REC_THROTTLE=1ms -- "$H/spawner"
check_eval "vfork/posix_spawn/system: children ran" '[ $rc = 0 ]'
check_eval "vfork/posix_spawn/system: parent recording intact" \
    '[ $chk = 0 ] && [ "$(tot processinfo)" = 1 ] && [ "$(tot usage)" = 1 ]'

# 8: the program's own SIGPROF handler and setitimer.
run ownprof -- "$H/ownprof"
check_eval "own SIGPROF handler: still called, sigaction reports it" '[ $rc = 0 ]'
check_eval "own SIGPROF handler: warning on stderr, once" \
    '[ "$(grep -c "own handler for the sampling signal got its first signal" "$T/ownprof.err")" = 1 ]'
check_eval "own SIGPROF handler: samples recorded" '[ $chk = 0 ] && sampled'
# GNU sort installs a cleanup handler for SIGPROF among others and never
# gets one: nothing to say.
seq 200000 | sed 's/^\(.\)\(.*\)/\2\1/' >"$T/sort.in"
run sortprof -- sort "$T/sort.in"
check_eval "GNU sort (a SIGPROF handler it never needs): same output, no warning" \
    '[ $rc = 0 ] && sort "$T/sort.in" | cmp -s - "$T/sortprof.out" && [ ! -s "$T/sortprof.err" ]'

# Per-thread field of the "thread" lines: "TID VALUE" for each thread.
thr() { sed -n "s/^thread .* tid=\\([0-9]*\\) .*\\<$1=\\([0-9]*\\).*/\\1 \\2/p" "$T/$name.chk"; }
# Every thread of the recording has FIELD > 0.
all_thr() { [ -n "$(thr "$1")" ] && ! thr "$1" | awk '$2 == 0 { bad = 1 } END { exit !bad }'; }
# Every thread's CPU time in the recording, as samples or counted losses.
all_accounted() {
    sed -n 's/^thread .*\<lost_ns=\([0-9]*\) .*\<stacked_ns=\([0-9]*\).*/\1 \2/p' "$T/$name.chk" |
        awk '{ n++ } $1 + $2 == 0 { bad = 1 } END { exit bad || !n }'
}

# 9: threads blocking the signal: it stays deliverable (the program sees
# the mask it set), so every thread has samples with stacks.
run blocker -- "$H/blocker"
check_eval "blocked signal: program finishes" '[ $rc = 0 ]'
check_eval "blocked signal: every thread sampled with stacks, none lost 'blocked', totals add up" \
    '[ $chk = 0 ] && all_thr stacked_ns && [ "$(tot blocked)" = 0 ]'
[ $chk = 0 ] || diag_file "$T/blocker.chk" 200

# 9b: workers block every signal with pthread_sigmask (xz): sampled with
# stacks; the old sets returned and sigpending are what the program set.
run maskview -- "$H/maskview" workers 200
check_eval "workers blocking every signal: program's view of its mask unchanged (status $rc), nothing on stdout" \
    '[ $rc = 0 ] && quiet'
check_eval "workers blocking every signal: every thread sampled with stacks, totals add up" \
    '[ $chk = 0 ] && [ "$(tot starts)" = 4 ] && all_thr stacked_ns && [ "$(tot blocked)" = 0 ]'
[ $chk = 0 ] || diag_file "$T/maskview.chk" 200

# 9c: the program's own SIGPROF, raised while it blocks it: held until it
# unblocks it, pending meanwhile, delivered once.
run maskown -- "$H/maskview" own 100
check_eval "program's own signal while blocked: held, pending, delivered once on unblock, sigsuspend or epoll_pwait2 (status $rc)" \
    '[ $rc = 0 ] && [ $chk = 0 ]'

# 9c2: a posix_spawn child that inherits the caller's mask gets the one
# the program set (SIGPROF blocked), with the sampler and without it.
run maskspawn -- "$H/maskview" spawn 100
check_eval "posix_spawn child inherits the program's mask, not the sampler's (status $rc)" \
    '[ $rc = 0 ] && [ $chk = 0 ]'

# 9c3: handlers whose sa_mask is a full set (the sampling signal in it):
# the CPU time inside them is sampled with stacks, not lost as blocked;
# sigaction and sigprocmask there report what the kernel reports without
# the sampler (checked by the program, run bare first), also after a
# siglongjmp out of such a handler.
"$H/maskview" samask 20 >/dev/null 2>&1
bare=$?
run samask -- "$H/maskview" samask 200
check_eval "full sa_mask handlers: the program's view as without the sampler (bare $bare, sampled $rc)" \
    '[ $bare = 0 ] && [ $rc = 0 ]'
check_eval "full sa_mask handlers: their CPU time sampled with stacks in the handler, none lost 'blocked', totals add up" \
    '[ $chk = 0 ] && [ "$(tot blocked)" = 0 ] && [ "$("$B/tools/rec-dump" --ndjson "$T/samask.rec" | grep -c in_full_mask_handler)" -ge 1 ]'
[ $chk = 0 ] || diag_file "$T/samask.chk" 200

# 9c4: glibc's own mask changes (system, popen, posix_spawn, and a
# siglongjmp to a mask saved while SIGPROF was blocked by a raw system
# call, which the kernel alone would restore) leave the sampling signal
# open: the program reads its real mask from /proc.
run glibcmask -- "$H/maskview" glibc 100
check_eval "system, popen, posix_spawn, siglongjmp to a saved raw block: the sampling signal not left blocked (status $rc), totals add up" \
    '[ $rc = 0 ] && [ $chk = 0 ]'
[ $chk = 0 ] || diag_file "$T/glibcmask.chk" 200

# 9d: a raw rt_sigprocmask is out of reach: that thread's CPU time is lost
# with reason "blocked" (and only that thread's).
run maskraw -- "$H/maskview" raw 200
# The blocking thread may take one sample before its system call: its
# first expiry comes after a random part of a period (up to all of it
# when the thread's start is slow, as under the sanitizers).
blocker=$(thr blocked | awk '$2 > 0 { print $1 }')
check_eval "raw rt_sigprocmask: that thread's CPU time lost as 'blocked' (at most its first period sampled), the others sampled, totals add up" \
    '[ $rc = 0 ] && [ $chk = 0 ] && [ "$(echo "$blocker" | wc -w)" = 1 ] && [ "$(thr samples | awk -v b="$blocker" "\$1 == b { print \$2 }")" -le 1 ] && [ "$(thr stacked_ns | awk -v b="$blocker" "\$1 != b && \$2 == 0" | wc -l)" = 0 ] && [ "$(tot blocked)" -gt 0 ]'
[ $chk = 0 ] || diag_file "$T/maskraw.chk" 200

# 9e: exits that skip exit() and fatal signals finish the recording: every
# thread ended (the running worker by a snapshot), totals exact, status
# unchanged. Every thread's CPU time is in the file, but not always as
# samples: now and then the kernel signals none of the worker's first
# expiries (counted undelivered; about 1 run in 40 on a VM, with the
# library of before and after the cadence change alike).
for how in _exit _Exit exit_group abort segv; do
    case $how in abort) want=134 ;; segv) want=139 ;; *) want=3 ;; esac
    if [ -n "$ASAN" ] && [ $how = segv ]; then
        ok 0 "$how: # SKIP the sanitizer runtime owns SIGSEGV"
        continue
    fi
    run "exit$how" -- "$H/exiter" $how 100
    check_eval "$how: status $want (got $rc), recording finished, both threads ended, totals add up" \
        '[ $rc = $want ] && [ $chk = 0 ] && [ "$(tot ends)" = 2 ] && [ "$(tot usage)" = 1 ] && all_accounted' ||
        { diag "exit$how: rc=$rc chk=$chk"; diag_file "$T/exit$how.err"; grep -v "^func" "$T/exit$how.chk" | diag_file /dev/stdin 40; }
done
# _exit() from a SIGTERM handler that interrupted its thread inside the
# allocator (holding its arena's lock): the recording is finished all the
# same, both threads ended, nothing given up.
run sigexit -- "$H/sigexit" 200
check_eval "_exit from a handler inside malloc: status 3 (got $rc), recording finished, both threads ended" \
    '[ $rc = 3 ] && [ $chk = 0 ] && [ "$(tot ends)" = 2 ] && [ "$(tot usage)" = 1 ] && ! grep -q "could not finish" "$T/sigexit.err"' ||
    diag_file "$T/sigexit.err"
# The same handler re-executing the program (a daemon's re-exec on
# SIGHUP): the first image's recording finished, the new image appends.
run sigexec -- "$H/sigexit" 200 exec
check_eval "exec from a handler inside malloc: status 5 (got $rc), both recordings finished" \
    '[ $rc = 5 ] && [ $chk = 0 ] && [ "$(tot processinfo)" = 2 ] && [ "$(tot usage)" = 2 ] && ! grep -q "could not finish" "$T/sigexec.err"' ||
    diag_file "$T/sigexec.err"
# The same through a shell that ends with _exit (dash).
run exitsh -- sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 3'
check_eval "sh -c: status 3, recording finished, totals add up" \
    '[ $rc = 3 ] && [ $chk = 0 ] && [ "$(tot ends)" = 1 ] && [ "$(tot usage)" = 1 ]'

# 10: 10,000 short threads (exit, pthread_exit, cancel) racing signals.
# (The second engine's run keeps the suite's added time small: fewer.)
many=10000
[ "$ENGINE" = timer ] || many=2000
run many REC_THROTTLE=100us -- "$H/manythreads" $many 20
check_eval "$many threads at 100us: finishes" '[ $rc = 0 ]'
check_eval "$many threads: every thread started and ended" \
    '[ $chk = 0 ] && [ "$(tot starts)" = $((many + 1)) ] && [ "$(tot ends)" = $((many + 1)) ]'

# 10b: threads shorter than the 4 ms timer tick, each 2 ms of CPU at a
# 100 us period: most of their expiries are never signalled (no tick found
# them running); counted lost as "undelivered", the totals still add up.
run short REC_THROTTLE=100us -- "$H/manythreads" 200 2000
if [ "$ENGINE" = timer ]; then
    check_eval "short threads: unsignalled expiries counted (undelivered), exact per thread" \
        '[ $rc = 0 ] && [ $chk = 0 ] && [ "$(tot undelivered)" -gt 0 ] && [ "$(tot ends)" = 201 ]'
else
    # No tick to wait for: the periods are signalled.
    check_eval "short threads: sampled, exact per thread" \
        '[ $rc = 0 ] && [ $chk = 0 ] && [ "$(tot samples)" -gt 0 ] && [ "$(tot ends)" = 201 ]'
fi
[ $chk = 0 ] || diag_file "$T/short.chk" 200

# 11: slow system calls keep working (SA_RESTART).
run slowsys REC_THROTTLE=100us -- "$H/slowsys"
check_eval "slow syscalls: read never EINTR, data intact" '[ $rc = 0 ]'
grep slowsys: "$T/slowsys.err" | sed 's/^/# /'

# 12: exit() from a non-main thread.
run exitthread -- "$H/exitthread"
check_eval "exit() from a thread: status kept" '[ $rc = 3 ]'
check_eval "exit() from a thread: recording finished, its 3 threads end with it" \
    '[ $chk = 0 ] && [ "$(tot usage)" = 1 ] && [ "$(tot ends)" = 3 ] && [ "$(tot snapshots)" = 0 ]'

# 13: SIGKILL: readable up to the last flush.
run killed REC_FLUSH_INTERVAL=100ms -- "$H/killed" 9 600
check_eval "SIGKILL: killed" '[ $rc = 137 ]'
check_eval "SIGKILL: unfinished recording readable with samples" \
    '[ $chk = 0 ] && [ "$(tot samples)" -gt 0 ] && [ "$(tot usage)" = 0 ]' ||
    { diag "killed: chk=$chk"; diag_file "$T/killed.err"; grep -v "^func" "$T/killed.chk" | diag_file /dev/stdin 40; }

# 14: SIGTERM with the default action: finished, then the same death.
run termed -- "$H/killed" 15 300
check_eval "SIGTERM: status of the signal kept" '[ $rc = 143 ]'
check_eval "SIGTERM: recording finished first" '[ $chk = 0 ] && [ "$(tot usage)" = 1 ]'
# A second SIGTERM (a group signal and a launcher's forwarded copy) lands
# on another thread while the first one's handler finishes the recording:
# it waits for that finish instead of killing the process at once.
run termed2 -- "$H/killed" 15 300 1
check_eval "SIGTERM twice: status of the signal kept" '[ $rc = 143 ]'
check_eval "SIGTERM twice: recording finished first" '[ $chk = 0 ] && [ "$(tot usage)" = 1 ]'

# 15: the in-process API (linked, no preload).
rm -f "$T/api.rec"
"$H/api" "$T/api.rec" >"$T/api.out" 2>"$T/api.err"
rc=$?
name=api
"$CHECK" --accounting 1000000 "$T/api.rec" >"$T/api.chk" 2>&1
chk=$?
check_eval "API: start, set_throttle, drain, stop, restart (append)" '[ $rc = 0 ]'
check_eval "API: two recordings, four settings" \
    '[ "$(tot processinfo)" = 2 ] && [ "$(tot settings)" = 4 ]'
check_eval "API: per-thread accounting across re-armed periods (5ms, 1ms, 7ms)" '[ $chk = 0 ]'
[ $chk = 0 ] || diag_file "$T/api.chk" 200

# 16: a process that is not the root stays dormant.
rm -f "$T/dormant.rec"
env REC_OUTPUT="$T/dormant.rec" REC_ENGINE=$ENGINE REC_ROOT_PID=1 LD_PRELOAD="$PRELOAD" "$H/burn" 1 20 >"$T/d.out" 2>&1
rc=$?
check_eval "dormant (not the root pid): runs, writes nothing" '[ $rc = 0 ] && [ ! -e "$T/dormant.rec" ] && [ ! -s "$T/d.out" ]'

# 16b: a followed child whose file name was planted as a symbolic link:
# not followed, the target untouched, the child records nothing (no empty
# file) and says so.
echo precious >"$T/victim"
rm -f "$T/plant.rec"*
timeout -s KILL 60 sh -c 'ln -s "$1" "$2.$$" && exec env REC_OUTPUT="$2" \
    REC_ROOT_PID=1 REC_FOLLOW_CHILDREN=1 LD_PRELOAD="$3" "$4" 1 20' \
    sh "$T/victim" "$T/plant.rec" "$PRELOAD" "$H/burn" >"$T/plant.out" 2>"$T/plant.err"
rc=$?
check_eval "followed child, symbolic link planted at its name: target untouched, nothing recorded, warned" \
    '[ $rc = 0 ] && [ "$(cat "$T/victim")" = precious ] && [ "$(ls "$T" | grep -c "^plant\.rec")" = 1 ] && grep -q "cannot create" "$T/plant.err"'

# 16c: REC_OUTPUT_FD must name the file rec-start created: anything else
# (the program's stdout here) is never written.
rm -f "$T/ofd.rec"
env REC_OUTPUT="$T/ofd.rec" REC_OUTPUT_FD="1:0:0" LD_PRELOAD="$PRELOAD" \
    "$H/burn" 1 20 >"$T/ofd.out" 2>"$T/ofd.err"
rc=$?
check_eval "REC_OUTPUT_FD not naming rec-start's file: nothing written to that fd, not recording" \
    '[ $rc = 0 ] && [ ! -s "$T/ofd.out" ] && [ ! -e "$T/ofd.rec" ] && grep -q "REC_OUTPUT_FD" "$T/ofd.err"'

# 17: invalid settings: a warning, the program runs unrecorded.
rm -f "$T/bad.rec"
env REC_OUTPUT="$T/bad.rec" REC_ENGINE=$ENGINE REC_THROTTLE=fast LD_PRELOAD="$PRELOAD" "$H/burn" 1 20 >"$T/b.out" 2>"$T/b.err"
rc=$?
check_eval "invalid REC_THROTTLE: warning, program unaffected" \
    '[ $rc = 0 ] && grep -q "REC_THROTTLE" "$T/b.err" && [ ! -e "$T/bad.rec" ] && [ ! -s "$T/b.out" ]'

# 18: REC_STATUS_FD summary line.
# The descriptor is named with the identity of what it must be open on.
rm -f "$T/st.rec"
: >"$T/status"
env REC_OUTPUT="$T/st.rec" REC_ENGINE=$ENGINE REC_STATUS_FD="9:$(stat -c %d:%i "$T/status")" \
    LD_PRELOAD="$PRELOAD" "$H/burn" 1 100 9>>"$T/status" >/dev/null 2>&1
check_eval "REC_STATUS_FD: one summary line" 'grep -Eq "^samples=[1-9][0-9]* lost=[0-9]+$" "$T/status"'
# 18a: rec-start gone (its end of the status pipe closed): the summary
# line finds no reader, and the program still ends as it would (no
# SIGPIPE of ours); the same for a warning on a closed stderr pipe.
rm -f "$T/st.rec" "$T/st.rc"
{
    exec 9>&1
    id=$(stat -L -c %d:%i /proc/self/fd/9)
    sleep 0.2          # until the reader below is gone
    env REC_OUTPUT="$T/st.rec" REC_ENGINE=$ENGINE REC_STATUS_FD="9:$id" \
        LD_PRELOAD="$PRELOAD" "$H/burn" 1 50 >/dev/null 2>&1
    echo $? >"$T/st.rc"
} | true
check_eval "REC_STATUS_FD with no reader left: the program's status kept ($(cat "$T/st.rc"))" \
    '[ "$(cat "$T/st.rc")" = 0 ] && [ -s "$T/st.rec" ]'
rm -f "$T/st.rec" "$T/st.rc"
{
    sleep 0.2
    env REC_OUTPUT="$T/st.rec" REC_ENGINE=$ENGINE REC_THROTTLE=bogus \
        LD_PRELOAD="$PRELOAD" "$H/burn" 1 50 2>&1 >/dev/null
    echo $? >"$T/st.rc"
} | true
check_eval "a warning on a stderr pipe with no reader: the program's status kept ($(cat "$T/st.rc"))" \
    '[ "$(cat "$T/st.rc")" = 0 ]'
# 18b: a REC_STATUS_FD inherited from elsewhere never makes rec write
# into the program's stdout: a bare number is refused with a warning; an
# identity that is not what the fd is open on (the program closed or
# reused it) is ignored without a word on the program's stderr.
for v in 1 "1:0:0" "9:0:0"; do
    rm -f "$T/st2.rec"
    env REC_OUTPUT="$T/st2.rec" REC_ENGINE=$ENGINE REC_STATUS_FD="$v" LD_PRELOAD="$PRELOAD" \
        "$H/burn" 1 50 >"$T/st2.out" 2>"$T/st2.err"
    rc=$?
    if [ "$v" = 1 ]; then
        check_eval "REC_STATUS_FD=$v from the environment: nothing on stdout, refused with a warning" \
            '[ $rc = 0 ] && [ ! -s "$T/st2.out" ] && grep -q "ignoring REC_STATUS_FD=1: not FD:DEV:INO" "$T/st2.err"'
    else
        check_eval "REC_STATUS_FD=$v from the environment: nothing on stdout or stderr" \
            '[ $rc = 0 ] && [ ! -s "$T/st2.out" ] && [ ! -s "$T/st2.err" ]'
    fi
done

# 19: chunk rotation while sampling: pools re-emitted per chunk. The
# metadata and module list alone fill more than 4 KiB, so every flush with
# samples closes its chunk: how many there are depends on how many flushes
# the run saw, not on a size. What rotation by size promises is checked:
# more than one chunk, each closed one at least as large as the limit.
run rotate REC_THROTTLE=1ms REC_MAX_CHUNK_SIZE=4096 REC_FLUSH_INTERVAL=50ms -- "$H/burn" 2 150
check_eval "4 KiB chunks: every sample resolvable, totals add up" \
    '[ $rc = 0 ] && [ $chk = 0 ] && [ "$(tot samples)" = "$(tot stacks)" ] && [ "$(tot samples)" -gt 20 ]'
check_eval "4 KiB chunks: rotated by size, every chunk has its ModuleLoad events ($(tot chunks) chunks)" \
    '[ "$(tot chunks)" -ge 2 ] && [ "$(tot minchunk)" -ge 4096 ] && [ "$(tot nomodchunks)" = 0 ]'
[ "$(tot nomodchunks)" = 0 ] || diag_file "$T/rotate.chk" 200

# 20: code running on an alternate signal stack.
run altstack -- "$H/altstack"
check_eval "sigaltstack: samples there keep their leaf (no walk, none failed) and their CPU time" \
    '[ $rc = 0 ] && [ $chk = 0 ] && [ "$(tot failed)" = 0 ] && [ "$(tot stacks)" = "$(tot samples)" ] && grep -qx "func hz_leaf" "$T/altstack.chk"'

# 20b: a module loaded after the start (dlopen).
run dlopen -- "$H/dlopener" "$H/.libs/libhzplugin.so"
check_eval "dlopen: frames of the new module resolved" \
    '[ $rc = 0 ] && [ $chk = 0 ] && grep -qx "func hz_plugin_burn" "$T/dlopen.chk"'

# 21: another signal for the sampler: the program's SIGPROF is its own.
run ownsig REC_SIGNAL=SIGRTMIN+2 -- "$H/ownprof"
check_eval "REC_SIGNAL=SIGRTMIN+2: program's SIGPROF untouched, no warning, samples" \
    '[ $rc = 0 ] && [ ! -s "$T/ownsig.err" ] && [ $chk = 0 ] && sampled'

if [ "$ENGINE" = timer ]; then
# 22: (timer engine) timer_create fails (EAGAIN: pending-signal limit): warn, never crash,
# the CPU time is reported lost (timer-failed).
name=nolimit
rm -f "$T/$name.rec"
if command -v prlimit >/dev/null 2>&1; then
    prlimit --sigpending=0 env REC_OUTPUT="$T/$name.rec" REC_ENGINE=timer REC_ROOT_PID= \
        LD_PRELOAD="$PRELOAD" "$H/burn" 1 50 >"$T/$name.out" 2>"$T/$name.err"
    rc=$?
else
    rc=77
fi
"$CHECK" --accounting 1000000 "$T/$name.rec" >"$T/$name.chk" 2>&1
chk=$?
if [ $rc = 77 ]; then
    ok 0 "timer_create EAGAIN # SKIP no prlimit"
else
    check_eval "timer_create EAGAIN: program runs, one warning" \
        '[ $rc = 0 ] && [ "$(grep -c "cannot create a CPU-time timer" "$T/$name.err")" = 1 ]'
    check_eval "timer_create EAGAIN: CPU time reported lost, totals add up" \
        '[ $chk = 0 ] && [ "$(tot samples)" = 0 ] && [ "$(tot lost)" -gt 0 ]'
fi

else
# 22: (perf engine) a thread whose event cannot be created (no fd left)
# gets a timer of its own, and the recording says so.
name=nofile
rm -f "$T/$name.rec"
if command -v prlimit >/dev/null 2>&1; then
    prlimit --nofile=6 env REC_OUTPUT="$T/$name.rec" REC_ENGINE=perf REC_ROOT_PID= \
        LD_PRELOAD="$PRELOAD" "$H/burn" 3 50 >"$T/$name.out" 2>"$T/$name.err"
    rc=$?
    "$CHECK" --accounting 1000000 "$T/$name.rec" >"$T/$name.chk" 2>&1
    chk=$?
    check_eval "perf event not created (EMFILE): warned once, thread falls back to a timer" \
        '[ $rc = 0 ] && [ "$(grep -c "sampled with a CPU-time timer" "$T/$name.err")" = 1 ] && [ "$("$B/tools/rec-dump" --ndjson "$T/$name.rec" | grep -c "\"ThreadStart\".*\"engine\":\"cpu-timer\"")" -ge 1 ]'
    check_eval "perf event not created: totals add up" '[ $chk = 0 ] && [ "$(tot samples)" -gt 0 ]'
    [ $chk = 0 ] || diag_file "$T/$name.chk" 200
else
    ok 0 "perf fallback # SKIP no prlimit"
fi
fi

# 23: every other way to set a disposition (glibc implements them past
# the PLT): rec's handler stays, the program's is what it reads back and
# gets only its own signals.
for m in sigset bsd sysv ssignal __sigaction siginterrupt sigignore mask nodefer; do
    run "disp-$m" -- "$H/sigdisp" $m
    check_eval "$m(SIGPROF): program unaffected (status $rc), samples recorded" \
        '[ $rc = 0 ] && [ $chk = 0 ] && sampled' ||
        { echo "# disp-$m: rc=$rc chk=$chk"; sed 's/^/# /' "$T/$name.err" "$T/$name.chk" | tail -8; }
done
# 23a1: the program raises its own SIGPROF 100000 times while rec samples
# on it every 100 us: each reaches its handler once (a standard signal is
# pending at most once: one of rec's pending at that instant took the
# program's place, 1 in about 20000 with the perf engine).
run disp-many REC_THROTTLE=100us -- "$H/sigdisp" many 100000
check_eval "raise(SIGPROF) 100000 times while sampled on it: every one delivered (status $rc), totals add up" \
    '[ $rc = 0 ] && [ $chk = 0 ]' || diag_file "$T/disp-many.err"
# 23a: the program's own sigaltstack (rec's handler runs there too, also
# on a SIGSTKSZ one with a guard page) and handlers with SA_ONSTACK,
# SA_RESETHAND, SA_NODEFER: delivered as the flags say.
for m in onstack small resethand nodefer; do
    run "stack-$m" -- "$H/sigstack" $m
    check_eval "sigaltstack + $m handler: program unaffected (status $rc), samples recorded" \
        '[ $rc = 0 ] && [ $chk = 0 ] && sampled' ||
        { echo "# stack-$m: rc=$rc chk=$chk"; sed 's/^/# /' "$T/$name.err" | tail -5; }
done
# 23a2: sigaction() and signal() from a handler that interrupted its
# thread inside sigaction() (async-signal-safe in POSIX): no deadlock.
run reenter -- "$H/sigreenter" 1000
check_eval "sigaction from a handler, its thread inside sigaction: no hang (status $rc), totals add up" \
    '[ $rc = 0 ] && [ $chk = 0 ] && sampled' ||
    diag_file "$T/reenter.err"
# 23b: -std=c11: signal() is the one-shot __sysv_signal.
run c11sig -- "$H/c11sig"
check_eval "-std=c11 signal(SIGPROF): not killed, handler never called" \
    '[ $rc = 0 ] && [ $chk = 0 ] && sampled'

# 23c: a raw rt_sigaction replaces rec's handler: noticed, timers stopped,
# CPU time still accounted (lost).
run hijack -- "$H/sighijack"
if [ $rc = 77 ]; then
    ok 0 "raw rt_sigaction # SKIP not on this architecture"
else
    check_eval "raw rt_sigaction: warned once, program unaffected, totals add up" \
        '[ $rc = 0 ] && [ "$(grep -c "was replaced" "$T/hijack.err")" = 1 ] && [ $chk = 0 ] && [ "$(tot lost)" -gt 0 ]'
    [ $chk = 0 ] || diag_file "$T/hijack.chk" 200
fi

# 24: sigwait and friends on a full set (the daemon pattern): rec's timer
# signals are not what they return; the blocked main thread is sampled.
for m in sigwait sigwaitinfo sigtimedwait signalfd; do
    run "wait-$m" -- "$H/sigwaiter" $m
    check_eval "$m on every signal: returns the program's SIGTERM (status $rc), sampled with stacks, totals add up" \
        '[ $rc = 0 ] && [ $chk = 0 ] && [ "$(tot stacked_ns)" -gt 0 ] && [ "$(tot blocked)" = 0 ]'
    [ $chk = 0 ] || diag_file "$T/wait-$m.chk" 200
done
check_eval "signalfd: warned that the sampling signal is left out" \
    'grep -q "through a signalfd" "$T/wait-signalfd.err"'

# 24b: the program's handler leaves by siglongjmp, as often as it can:
# it never interrupts rec's handler (which would abandon the queue lock).
run jumper REC_THROTTLE=1ms REC_STACK_DEPTH=1024 -- "$H/jumper" 1
check_eval "siglongjmp out of the program's handler: no queue left locked, totals add up" \
    '[ $rc = 0 ] && [ $chk = 0 ] && [ "$(tot samples)" -gt 100 ] && [ "$(tot busy)" -lt 20 ]'
[ $chk = 0 ] || diag_file "$T/jumper.chk" 200

# 24c: exit() from a handler that interrupted recs_drain() (drain lock
# held): the destructor finishes the recording instead of hanging. Three
# runs (the old code hung in about two runs out of three).
okx=1
for i in 1 2 3; do
    rm -f "$T/exitdrain.rec"
    timeout -s KILL 60 env REC_ENGINE=$ENGINE "$H/exitdrain" "$T/exitdrain.rec" >"$T/exitdrain.out" 2>"$T/exitdrain.err"
    rc=$?
    name=exitdrain
    "$CHECK" --accounting 1000000 "$T/exitdrain.rec" >"$T/exitdrain.chk" 2>&1
    chk=$?
    { [ $rc = 7 ] && [ $chk = 0 ] && [ "$(tot usage)" = 1 ]; } || { okx=0; echo "# run $i: rc=$rc chk=$chk"; }
done
check_eval "exit() in a handler that interrupted recs_drain: no hang, recording finished" '[ $okx = 1 ]'

# 24d: a thread started by a library constructor before the sampler's:
# not sampled, but said so and its CPU time reported lost (untracked).
run early LD_LIBRARY_PATH="$H/.libs:$LD_LIBRARY_PATH" -- "$H/.libs/earlymain"
check_eval "thread started before the sampler: warned, its CPU time reported lost (untracked)" \
    '[ $rc = 0 ] && [ $chk = 0 ] && grep -q "started before rec could follow" "$T/early.err" && [ "$(tot untracked_ns)" -gt 200000000 ]' ||
    { diag "early: rc=$rc chk=$chk untracked_ns=$(tot untracked_ns)"; diag_file "$T/early.err"; diag_file "$T/early.chk" 200; }

# 25: a program that closes every fd and reuses the numbers: rec never
# writes into its files (recording fd and REC_STATUS_FD).
name=closeall
rm -f "$T/$name.rec" "$T/$name.log"
: >"$T/$name.status"
timeout -s KILL 120 env REC_OUTPUT="$T/$name.rec" REC_ENGINE=$ENGINE REC_FLUSH_INTERVAL=10ms \
    REC_STATUS_FD="9:$(stat -c %d:%i "$T/$name.status")" sh -c 'REC_ROOT_PID=$$ LD_PRELOAD="$0" exec "$@"' \
    "$PRELOAD" "$H/closeall" "$T/$name.log" 9>>"$T/$name.status" \
    >"$T/$name.out" 2>"$T/$name.err"
rc=$?
check_eval "close every fd, reuse the numbers: program's log intact (status $rc)" \
    '[ $rc = 0 ] && [ "$(wc -c <"$T/$name.log")" = 340 ] && [ "$(grep -vc "^program log line\$" "$T/$name.log")" = 0 ]'
check_eval "close every fd: warned that the recording's fd was lost" \
    'grep -q "closed or replaced" "$T/$name.err"'
[ $rc = 0 ] || diag_file "$T/$name.err" 200

# 25b: closefrom(), close_range() and the raw system call: the range is
# closed around rec's descriptors, the recording goes on to the end.
for m in closefrom close_range syscall; do
    run "closer-$m" REC_FLUSH_INTERVAL=10ms -- "$H/closer" $m
    if [ $rc = 77 ]; then
        ok 0 "$m(3, ~0) # SKIP not available here"
        continue
    fi
    check_eval "$m(3, ~0): program unaffected (status $rc), recording finished after it" \
        '[ $rc = 0 ] && [ $chk = 0 ] && [ "$(tot usage)" = 1 ] && [ "$(tot samples)" -gt 20 ] && ! grep -q "closed or replaced" "$T/$name.err"' ||
        sed 's/^/# /' "$T/$name.err" | tail -3
done

# 26: a Go program that calls C (cgo), also as a position-independent
# executable, with the default signal and with another one: goroutine
# stacks are not the thread's, and the runtime requires SA_ONSTACK. Built
# from the standard library only, offline, into the build directory.
GO_SRC=$(cd "$(dirname "$0")" && pwd)/hazards/go
if ! command -v go >/dev/null 2>&1; then
    for c in cgo cgo-pie cgo-rtsig own stacks; do ok "Go $c # SKIP go not installed"; done
else
    mkdir -p "$T/gosrc" "$B/tests/go-cache"
    cp "$GO_SRC/main.go" "$GO_SRC/go.mod" "$T/gosrc/"
    gobuild() {
        (cd "$T/gosrc" && GOCACHE="$B/tests/go-cache" GOFLAGS=-mod=mod \
            GOPATH="$T/gopath" GOPROXY=off GO111MODULE=on CGO_ENABLED=1 \
            go build "$@" >"$T/gobuild.log" 2>&1)
    }
    if gobuild -o "$T/goburn" . && gobuild -buildmode=pie -o "$T/goburn-pie" .; then
        # The runtime leaves by the exit_group system call, past every
        # exit hook: what was flushed is what the recording holds.
        goenv=REC_FLUSH_INTERVAL=20ms
        for c in cgo cgo-pie cgo-rtsig; do
            case $c in
            cgo) run go-$c $goenv -- "$T/goburn" ;;
            cgo-pie) run go-$c $goenv -- "$T/goburn-pie" ;;
            cgo-rtsig) run go-$c $goenv REC_SIGNAL=SIGRTMIN+3 -- "$T/goburn" ;;
            esac
            check_eval "Go $c: runs unchanged (status $rc, its output), sampled" \
                '[ $rc = 0 ] && [ "$(cat "$T/go-$c.out")" = "go-burn done" ] && [ "$(tot samples)" -gt 10 ]' ||
                { echo "# go-$c: rc=$rc chk=$chk"; head -5 "$T/go-$c.err" | sed 's/^/# /'; }
        done
        # The runtime's preemption signal (SIGURG, every 10 ms of a
        # goroutine) runs behind rec's wrapper: a sampling signal pending
        # at its delivery stands for the goroutine's CPU time, not the
        # wrapper's. At most 1% of the samples may have one of rec's own
        # functions as their leaf.
        if command -v jq >/dev/null 2>&1; then
            run go-own $goenv -- "$T/goburn" 400000000
            "$B/tools/rec-dump" --ndjson --events CPUTimeSample --stack-depth 1 \
                "$T/go-own.rec" 2>/dev/null |
                jq -r '.stackTrace.frames[0].function // "-"' >"$T/go-own.leaves"
            nleaf=$(wc -l <"$T/go-own.leaves")
            nown=$(grep -cE '^(wrap_handler|on_signal|recs__.*|recs_.*)$' "$T/go-own.leaves")
            check_eval "Go: samples charged to rec's own code $nown of $nleaf (at most 1%)" \
                '[ $rc = 0 ] && [ "$nleaf" -ge 100 ] && [ $((nown * 100)) -le "$nleaf" ]' ||
                sort "$T/go-own.leaves" | uniq -c | sort -rn | diag_file /dev/stdin 10
            # Goroutines run on stacks of their own: walked by their frame
            # pointers, down to the goroutine's root.
            "$B/tools/rec-dump" --ndjson --events CPUTimeSample --stack-depth 0 \
                "$T/go-own.rec" 2>/dev/null |
                jq -r 'select(.stackTrace.frames[0].function == "main.goBurn") |
                       [.stackTrace.frames[].function] | join(" ")' >"$T/go-own.stacks"
            nburn=$(wc -l <"$T/go-own.stacks")
            nfull=$(grep -c '^main[.]goBurn main[.]main[.]func1 .*runtime[.]goexit$' "$T/go-own.stacks")
            check_eval "Go: goroutine stacks walked to runtime.goexit in $nfull of $nburn samples in main.goBurn (at least 95%)" \
                '[ "$nburn" -ge 50 ] && [ $((nfull * 100)) -ge $((nburn * 95)) ]' ||
                sort "$T/go-own.stacks" | uniq -c | sort -rn | diag_file /dev/stdin 10
        else
            ok 0 "Go: samples charged to rec's own code # SKIP jq not installed"
            ok 0 "Go: goroutine stacks # SKIP jq not installed"
        fi
    else
        for c in cgo cgo-pie cgo-rtsig own stacks; do ok "Go $c # SKIP go build failed"; done
        diag_file "$T/gobuild.log" 40
    fi
fi

done_testing
