#!/bin/sh
# rec-start --engine: the perf_event engine where the kernel allows it,
# CPU-time timers otherwise; the choice is recorded (RecordingSettings
# engine, engineNote; ThreadStart engine) and shown on the closing line.
# Denial is simulated with a seccomp filter (tests/noperf).
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
[ -x "$REC_START" ] || skip_all "rec-start not built"
NOPERF=$top_builddir/tests/noperf
BUDGET=$WORKLOADS/budget
cd "$TMP" || exit 99
# Short under the sanitizers (the library runs 2-5x slower there).
SCALE=0.05
[ -n "$(ldd "$top_builddir/libsampler/.libs/libsampler.so" 2>/dev/null | grep libasan)" ] && SCALE=0.02

# settings FILE FIELD: the field of the file's RecordingSettings events.
settings() { "$REC_DUMP" --ndjson "$1" 2>/dev/null | grep '"RecordingSettings"' | sed -n "s/.*\"$2\":\\(\"[^\"]*\"\\|null\\).*/\\1/p"; }

# 1: --engine timer: always available, says so.
"$REC_START" -o t.rec -t 1ms --engine timer -- "$BUDGET" -s $SCALE >out 2>err
st=$?
expect_status 0 "--engine timer"
grep -q 'engine cpu-timer$' err
ok $? "--engine timer: closing line names the engine"
[ "$(settings t.rec engine)" = '"cpu-timer"' ] && [ "$(settings t.rec engineNote)" = null ]
ok $? "--engine timer: RecordingSettings engine cpu-timer, no note"
"$REC_DUMP" --ndjson t.rec 2>/dev/null | grep '"ThreadStart"' | grep -vq '"engine":"cpu-timer"'
ok $((! $?)) "--engine timer: every ThreadStart says cpu-timer"

# Is perf_event_open allowed to us at all?
if "$REC_START" -o probe.rec --engine perf -- true >out 2>err; then
    perf_ok=1
else
    perf_ok=0
    diag "perf_event_open not allowed here: $(cat err)"
fi

# 2: --engine perf / auto where allowed.
if [ $perf_ok = 1 ]; then
    "$REC_START" -o p.rec -t 1ms --engine perf -- "$BUDGET" -s $SCALE >out 2>err
    st=$?
    expect_status 0 "--engine perf"
    grep -q 'engine perf-task-clock' err
    ok $? "--engine perf: closing line names the engine"
    [ "$(settings p.rec engine)" = '"perf-task-clock"' ]
    ok $? "--engine perf: RecordingSettings engine perf-task-clock"
    "$REC_SUMMARY" p.rec | grep -qx ' Engine: perf-task-clock'
    ok $? "--engine perf: rec-summary shows the engine"
    "$REC_DUMP" --ndjson p.rec 2>/dev/null | grep '"ThreadStart"' | grep -vq '"engine":"perf-task-clock"'
    ok $((! $?)) "--engine perf: every ThreadStart says perf-task-clock"
    "$REC_START" -o a.rec -t 1ms -- "$BUDGET" -s $SCALE >out 2>err
    st=$?
    [ $st = 0 ] && [ "$(settings a.rec engine)" = '"perf-task-clock"' ]
    ok $? "default (auto): perf where allowed"
else
    for _ in 1 2 3 4 5 6; do skip "perf_event_open not allowed"; done
fi

# 3: denied by seccomp (EACCES).
"$NOPERF" true 2>err
if [ $? = 77 ]; then
    for _ in 1 2 3 4 5 6 7; do skip "no seccomp: $(cat err)"; done
else
    "$NOPERF" "$REC_START" -o d.rec --engine perf -- "$BUDGET" -s $SCALE >out 2>err
    st=$?
    expect_status 1 "--engine perf, denied"
    grep -q -- '--engine perf: perf_event_open is not allowed for this process (Permission denied' err
    ok $? "--engine perf, denied: says why and what to use instead"
    [ ! -e d.rec ] && [ ! -s out ]
    ok $? "--engine perf, denied: nothing ran"

    "$NOPERF" "$REC_START" -o f.rec -t 1ms -- "$BUDGET" -s $SCALE >out 2>err
    st=$?
    expect_status 0 "auto, denied: falls back"
    grep -q 'engine cpu-timer (perf_event denied: EACCES' err
    ok $? "auto, denied: closing line says timers and why"
    [ $? = 0 ] || diag_file err
    settings f.rec engineNote | grep -q '^"perf_event denied: EACCES, Permission denied; seccomp filter active'
    ok $? "auto, denied: RecordingSettings engineNote says why"
    "$REC_SUMMARY" f.rec | grep -q '^ Engine: cpu-timer (perf_event denied: EACCES'
    ok $? "auto, denied: rec-summary shows the engine and why"

fi
"$REC_START" --engine fast -- true >out 2>err
st=$?
expect_status 2 "--engine fast: usage error"

done_testing
