#!/bin/sh
# rec-dump --follow on the file rec-start writes: started before the file
# exists (across rotations and an exec), started after the program ended,
# a program killed (SIGKILL) at varying moments (the follower ends, having
# printed exactly what a post-mortem rec-dump prints: the chunk rec-start
# seals the recording with included, or with a message if it did not
# come in time), a
# follower stopped with SIGINT and resumed from its --position-file
# (nothing lost, nothing repeated), --from-end and option checks; the
# file removed, or another recording moved onto its name, before its first
# chunk (the follower ends, exit 1), for rec-dump and rec-cpu; rec-cpu's
# stall timeout.
# Every wait is for an observable state, bounded only against a hang.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
if [ ! -x "$REC_START" ] || [ ! -x "$REC_DUMP" ]; then
    skip_all "tools not built"
fi
cd "$TMP" || exit 99
# fewer kill rounds under the sanitizers (2-5x slower)
KILLS=${FOLLOW_KILLS:-10}
if ldd "$REC_DUMP" 2>/dev/null | grep -q libasan ||
   ldd "$top_builddir/tools/.libs/rec-dump" 2>/dev/null | grep -q libasan; then
    KILLS=3
fi

# wait_for COMMAND...: until it succeeds (at most ~60 s).
wait_for() {
    _i=0
    until "$@"; do
        _i=$((_i + 1))
        [ $_i -lt 1200 ] || return 1
        sleep 0.05
    done
}
has_lines() { [ -s "$1" ]; }

# 1. before the file exists, across rotations and an exec()
"$REC_DUMP" --follow --stall-timeout 60s "$TMP/a.rec" >a.out 2>err &
fpid=$!
# shellcheck disable=SC2016 # $0 is for the inner shell
"$REC_START" -q --flush-interval 100ms --max-chunk-size 8k -o "$TMP/a.rec" \
    sh -c 'exec "$0" 0.3' "$WORKLOADS/demo" >/dev/null 2>start.err
wait $fpid
st=$?
expect_status 0 "follower started before rec-start ends cleanly"
"$REC_DUMP" --ndjson a.rec >a.post 2>/dev/null
chunks=$("$REC_SUMMARY" a.rec 2>/dev/null | sed -n 's/^ *Chunks: *//p')
[ -s a.out ] && cmp -s a.out a.post
ok $? "it printed every event, as a post-mortem rec-dump does ($(wc -l <a.out) lines, $chunks chunks)"
[ "${chunks:-0}" -gt 1 ]
ok $? "the recording rotated while followed"

# 2. after the program ended
"$REC_DUMP" --follow a.rec >b.out 2>err
st=$?
expect_status 0 "follower started after the recording was finished"
[ -s b.out ] && cmp -s b.out a.post
ok $? "same events"
"$REC_DUMP" --follow --events CPUTimeSample a.rec >c.out 2>/dev/null
"$REC_DUMP" --ndjson --events CPUTimeSample a.rec >c.post 2>/dev/null
[ -s c.out ] && cmp -s c.out c.post
ok $? "--events applies"

# 3. the program killed at varying moments
good=0
i=0
while [ $i -lt "$KILLS" ]; do
    i=$((i + 1))
    rm -f k.rec k.pid
    "$REC_DUMP" --follow --stall-timeout 60s "$TMP/k.rec" >k.out 2>k.err &
    fpid=$!
    # shellcheck disable=SC2016 # $$ and $0 are the inner shell's
    "$REC_START" -q --flush-interval 50ms --max-chunk-size 16k -o "$TMP/k.rec" \
        sh -c 'echo $$ >k.pid; exec "$0" -s 5' "$WORKLOADS/budget" \
        >/dev/null 2>/dev/null &
    spid=$!
    wait_for has_lines k.out
    wait_for test -s k.pid
    # a different moment each round: 0..4 more flush intervals
    sleep "0.$(( (i * 37) % 5 ))"
    kill -KILL "$(cat k.pid)" || diag "round $i: no program to kill"
    { wait $spid; } 2>/dev/null
    wait $fpid
    fst=$?
    "$REC_DUMP" --ndjson k.rec >k.post 2>k.perr
    # Killed inside exec() (between the closed recording of sh and the
    # one of the new image), the recording is closed: a clean end then,
    # as the post-mortem rec-dump (no warning) agrees.
    if cmp -s k.out k.post &&
       { { [ $fst -eq 1 ] && grep -q "writer (pid [0-9]*) is gone" k.err; } ||
         { [ $fst -eq 0 ] && [ ! -s k.err ] && [ ! -s k.perr ]; }; }; then
        good=$((good + 1))
    else
        diag "round $i: exit $fst, $(wc -l <k.out) lines printed, $(wc -l <k.post) post-mortem"
        diag_file k.err 3
    fi
done
[ $good -eq "$KILLS" ]
ok $? "program killed $KILLS times: the follower printed exactly what the file holds each time ($good)"

# 4. stop with SIGINT, resume from the position file
rm -f p.rec p.pos
"$REC_DUMP" --follow --position-file p.pos "$TMP/p.rec" >p1.out 2>err &
fpid=$!
"$REC_START" -q --flush-interval 50ms --max-chunk-size 8k -o "$TMP/p.rec" \
    "$WORKLOADS/budget" -s 2 >/dev/null 2>/dev/null &
spid=$!
wait_for has_lines p1.out
kill -INT $fpid
wait $fpid
st=$?
expect_status 0 "a follower stopped with SIGINT"
[ -s p.pos ]
ok $? "it saved its position ($(cat p.pos 2>/dev/null))"
"$REC_DUMP" --follow --position-file p.pos "$TMP/p.rec" >p2.out 2>err
st=$?
wait $spid
expect_status 0 "a follower resumed from the position file"
"$REC_DUMP" --ndjson p.rec >p.post 2>/dev/null
cat p1.out p2.out >p.all
[ -s p2.out ] && cmp -s p.all p.post
ok $? "the two runs printed every event once ($(wc -l <p1.out) + $(wc -l <p2.out) lines, $(wc -l <p.post) in the file)"

# 5. --from-end on a finished recording prints nothing; options
"$REC_DUMP" --follow --from-end a.rec >e.out 2>err
st=$?
expect_status 0 "--from-end on a finished recording"
[ ! -s e.out ]
ok $? "printed nothing"
"$REC_DUMP" --from-end a.rec >/dev/null 2>err
st=$?
expect_status 2 "--from-end without --follow is a usage error"
"$REC_DUMP" --follow a.rec b.rec >/dev/null 2>err
st=$?
expect_status 2 "--follow takes one file"
echo "not a position" >bad.pos
"$REC_DUMP" --follow --position-file bad.pos a.rec >/dev/null 2>err
st=$?
expect_status 1 "a bad position file"
grep -q "not a saved position" err
ok $? "is reported as such"
"$REC_START" -q --flush-interval 5ms -o "$TMP/x.rec" true >/dev/null 2>err
st=$?
expect_status 2 "rec-start refuses a flush interval the sampler would refuse"

# 6. rec-cpu --follow: intervals of the recording's time since the
# follow began, each sample's CPU time spread over the intervals it
# covers: no thread above 100% of a CPU, what came before not shown.
REC_CPU=$top_builddir/tools/rec-cpu
if [ -x "$REC_CPU" ] && command -v jq >/dev/null; then
    "$REC_CPU" --follow --json --interval 100ms a.rec >cpu.out 2>err
    st=$?
    expect_status 0 "rec-cpu --follow --json on a finished recording"
    want=$(grep -c '"type":"CPUTimeSample"' a.post)
    got=$(jq -s '[.[].threads[].samples] | add // 0' cpu.out 2>/dev/null)
    [ "$want" -gt 0 ] && [ "$got" = 0 ] && grep -q "^rec-cpu: $want samples from before the follow began" err
    ok $? "a finished recording: none of its $want samples shown as current, and said so ($got shown)"
    "$REC_START" -q --flush-interval 50ms -o "$TMP/l.rec" "$WORKLOADS/budget" -s 2 >/dev/null 2>&1 &
    spid=$!
    wait_for test -s "$TMP/l.rec"
    "$REC_CPU" --follow --json --interval 200ms "$TMP/l.rec" >l.out 2>err
    st=$?
    wait $spid
    expect_status 0 "rec-cpu --follow of a live recording"
    all=$("$REC_DUMP" --ndjson --events CPUTimeSample "$TMP/l.rec" | wc -l)
    shown=$(jq -s '[.[].threads[].samples] | add // 0' l.out)
    before=$(sed -n 's/^rec-cpu: \([0-9]*\) samples from before.*/\1/p' err)
    top=$(jq -s '[.[].threads[].cpuShare] | max // 0' l.out)
    [ "$shown" -gt 0 ] && [ $((shown + ${before:-0})) -eq "$all" ] &&
        awk -v t="$top" 'BEGIN { exit !(t <= 100.5) }'
    ok $? "live: $shown samples shown + ${before:-0} before = $all, the busiest thread at $top% (at most 100)"
    # A thread's name is the program's choice, a terminal's escape
    # sequence included: plain lines, no control character.
    if command -v python3 >/dev/null; then
        ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        "$REC_START" -q --flush-interval 50ms -o "$TMP/esc.rec" -- python3 -c 'import ctypes, time
ctypes.CDLL(None).prctl(15, b"esc\x1b[31m\x01", 0, 0, 0)
t = time.process_time()
while time.process_time() - t < 1.5:
    pass' >/dev/null 2>&1 &
        spid=$!
        wait_for test -s "$TMP/esc.rec"
        "$REC_CPU" --follow --interval 100ms "$TMP/esc.rec" >cpu.txt 2>err
        wait $spid
        grep -q "HOTTEST" cpu.txt && grep -q 'esc?\[31m?' cpu.txt &&
            ! LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" cpu.txt
        r=$?
        ok $r "plain lines when stdout is not a terminal, a thread's escape sequence as '?'"
        [ $r -eq 0 ] || diag_file cpu.txt
    else
        skip "python3 not installed"
    fi
    # A closed terminal (SIGHUP) ends every follower cleanly, as SIGINT.
    "$REC_START" -q -o "$TMP/h.rec" "$WORKLOADS/budget" -s 3 >/dev/null 2>&1 &
    spid=$!
    wait_for test -s "$TMP/h.rec"
    for tool in "$REC_CPU --json --interval 100ms" "$REC_DUMP"; do
        # shellcheck disable=SC2086 # $tool: the tool and its options
        $tool --follow "$TMP/h.rec" >h.out 2>err &
        fpid=$!
        wait_for has_lines h.out
        kill -HUP $fpid
        wait $fpid
        st=$?
        expect_status 0 "$(basename "${tool%% *}") --follow stopped with SIGHUP"
        rm -f h.out
    done
    kill $spid 2>/dev/null
    wait $spid
else
    skip "rec-cpu or jq missing"
    skip "rec-cpu or jq missing"
    skip "rec-cpu or jq missing"
    skip "rec-cpu or jq missing"
fi

# 7. the file followed is removed, or another recording moved onto its
# name, before it held a chunk: the follower ends (exit 1, one line), and
# never prints the other recording. rec-cpu --follow likewise.
# opened PID NAME: PID has a file whose path ends in NAME open
opened() {
    for fd in /proc/"$1"/fd/*; do
        case $(readlink "$fd" 2>/dev/null) in *"$2") return 0 ;; esac
    done
    return 1
}
# gone_run NAME CHANGE TOOL...: follow an empty NAME, CHANGE it once the
# follower has it open; $st, $NAME.out and $NAME.err tell the rest.
gone_run() {
    _n=$1 _change=$2
    shift 2
    rm -f "$_n.rec"
    : >"$_n.rec"
    "$@" "$TMP/$_n.rec" >"$_n.out" 2>"$_n.err" &
    _p=$!
    wait_for opened $_p "$_n.rec" || diag "$_n: the follower never opened the file"
    case $_change in
    rm) rm -f "$_n.rec" ;;
    mv) cp a.rec "$_n.other" && mv "$_n.other" "$_n.rec" ;;
    esac
    # a follower that waits on is stopped after ~30 s (and fails)
    _i=0
    while kill -0 $_p 2>/dev/null && [ $_i -lt 600 ]; do
        _i=$((_i + 1))
        sleep 0.05
    done
    kill $_p 2>/dev/null
    wait $_p
    st=$?
}
gone_run g1 rm "$REC_DUMP" --follow
[ $st -eq 1 ] && grep -q "g1.rec: file removed while being followed" g1.err &&
    [ "$(wc -l <g1.err)" -eq 1 ] && [ ! -s g1.out ]
ok $? "rec-dump --follow: an empty file removed ends it, exit 1, one line (exit $st: $(cat g1.err))"
gone_run g2 mv "$REC_DUMP" --follow
[ $st -eq 1 ] && grep -q "g2.rec: file replaced while being followed" g2.err &&
    [ ! -s g2.out ]
ok $? "rec-dump --follow: another recording moved onto the name ends it unread, exit 1 (exit $st, $(wc -l <g2.out) lines: $(cat g2.err))"
rm -f g3.rec
"$REC_DUMP" --follow --stall-timeout 30s "$TMP/g3.rec" >g3.out 2>g3.err &
fpid=$!
# once it watches the directory, what a launch that fails leaves: a file
# that comes and goes
watching() { grep -qs "^inotify wd" /proc/"$1"/fdinfo/*; }
wait_for watching $fpid || diag "g3: the follower never watched the directory"
: >g3.rec
rm -f g3.rec
wait $fpid
st=$?
# (opened in between or not: either way it ends)
[ $st -eq 1 ] && grep -Eq "g3.rec: file (created and )?removed" g3.err
ok $? "rec-dump --follow: a file created and removed at once ends it (exit $st: $(cat g3.err))"
if [ -x "$REC_CPU" ]; then
    gone_run g4 rm "$REC_CPU" --follow --interval 100ms
    [ $st -eq 1 ] && grep -q "g4.rec: file removed while being followed" g4.err
    ok $? "rec-cpu --follow: an empty file removed ends it, exit 1 (exit $st: $(cat g4.err))"
    gone_run g5 mv "$REC_CPU" --follow --json --interval 100ms
    [ $st -eq 1 ] && grep -q "g5.rec: file replaced while being followed" g5.err &&
        ! grep -q '"samples":[1-9]' g5.out
    ok $? "rec-cpu --follow: another recording moved onto the name ends it unread, exit 1 (exit $st: $(cat g5.err))"
    # The same stall timeout as rec-dump's: a file that never comes.
    rm -f g6.rec
    "$REC_CPU" --follow --json --interval 100ms --stall-timeout 300ms \
        "$TMP/g6.rec" >g6.out 2>g6.err
    st=$?
    [ $st -eq 1 ] && grep -q "g6.rec: not created within" g6.err
    ok $? "rec-cpu --follow --stall-timeout: a file that never comes ends it, exit 1 (exit $st: $(cat g6.err))"
    "$REC_CPU" --stall-timeout 1s a.rec >/dev/null 2>err
    st=$?
    expect_status 2 "rec-cpu --stall-timeout without --follow is a usage error"
    "$REC_CPU" --follow - <a.rec >/dev/null 2>err
    st=$?
    expect_status 2 "rec-cpu --follow - is a usage error (a pipe is read whole)"
else
    for _ in 1 2 3 4 5; do skip "rec-cpu not built"; done
fi

done_testing
