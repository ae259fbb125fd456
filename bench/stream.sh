#!/bin/bash
# bench/stream.sh - live streaming: event-to-consumer latency (median, p99)
# and follower CPU for a synthetic writer at 10,000 events/s and for
# rec-start at its default and a 100 ms flush interval; the program's CPU
# time with and without a follower and at 1 s / 100 ms / 50 ms flush
# intervals; a follower surviving SIGKILL of the program at random
# moments (STREAM_KILLS rounds, default 100); and rec-start -o - into a
# pipe: latency, and what the stream costs in bytes against the same
# program recorded into a file (streamed chunks: header and END blocks, a
# chunk per --chunk-age).
# Medians over BENCH_RUNS (>= 5) runs. Short runs: a few seconds each.
# Arguments: the parts to run (synthetic sampler cost kills; default all).
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

SB=$(rec_prog stream-bench)
DUMP=$(rec_prog rec-dump)
START=$(rec_prog rec-start)
BUDGET=$REC_BUILD/tests/workloads/budget
KILLS=${STREAM_KILLS:-100}
cd "$BENCH_TMP" || exit 1
echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, $BENCH_RUNS runs"

# field NAME LINE: the value after NAME
field() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'; }

synthetic() {   # synthetic FLUSH_MS
    : >syn.txt
    for _ in $(seq "$BENCH_RUNS"); do
        rm -f s.rec
        "$SB" follow s.rec >f.txt &
        fp=$!
        "$SB" gen s.rec 10000 3 "$1"
        wait $fp
        cat f.txt >>syn.txt
    done
    printf "synthetic 10000 ev/s, flush %4s ms: latency median %s ms, p99 %s ms; follower CPU %s%% of a core\n" \
        "$1" "$(field median_ms <syn.txt | median)" "$(field p99_ms <syn.txt | median)" \
        "$(field cpu_ms <syn.txt | awk '{ print $1 / 30 }' | median)"
}

sampler() {     # sampler FLUSH
    : >sam.txt
    for _ in $(seq "$BENCH_RUNS"); do
        rm -f r.rec
        "$SB" follow r.rec >f.txt &
        fp=$!
        "$START" -q --flush-interval "$1" -o r.rec "$BUDGET" -s 0.5 >/dev/null 2>&1
        wait $fp
        cat f.txt >>sam.txt
    done
    printf "rec-start, flush %5s: latency median %s ms, p99 %s ms (%s events/run)\n" \
        "$1" "$(field median_ms <sam.txt | median)" "$(field p99_ms <sam.txt | median)" \
        "$(field events <sam.txt | median)"
}

cost() {        # cost FLUSH FOLLOW(0/1)
    : >cost.txt
    for _ in $(seq "$BENCH_RUNS"); do
        rm -f c.rec
        if [ "$2" = 1 ]; then "$DUMP" --follow c.rec >/dev/null 2>&1 & fp=$!; fi
        $GNU_TIME -f "%U %S %e" -o t.txt "$START" -q --flush-interval "$1" -o c.rec \
            "$BUDGET" -s 0.5 >/dev/null 2>&1
        [ "$2" = 1 ] && wait $fp
        awk '{ print $1 + $2, $3 }' t.txt >>cost.txt
    done
    printf "flush %5s, follower %s: program CPU %s s, wall %s s\n" "$1" \
        "$([ "$2" = 1 ] && echo yes || echo no)" \
        "$(awk '{ print $1 }' cost.txt | median)" "$(awk '{ print $2 }' cost.txt | median)"
}

kills() {
    local good=0 inexec=0 i fst
    for i in $(seq "$KILLS"); do
        rm -f k.rec k.pid k.out
        "$DUMP" --follow --stall-timeout 60s k.rec >k.out 2>k.err &
        fp=$!
        "$START" -q --flush-interval 50ms --max-chunk-size 16k -o k.rec \
            sh -c 'echo $$ >k.pid; exec "$0" -s 5' "$BUDGET" >/dev/null 2>&1 &
        sp=$!
        local n=0
        until { [ -s k.pid ] && [ -s k.out ]; } || [ $n -ge 3000 ]; do
            sleep 0.02
            n=$((n + 1))
        done
        sleep "0.$((RANDOM % 1000))"
        kill -KILL "$(cat k.pid)" || true
        { wait $sp; } 2>/dev/null || true
        wait $fp && fst=0 || fst=$?
        "$DUMP" --ndjson k.rec >k.post 2>k.perr || true
        if [ $fst -ne 0 ] && grep -q "is gone" k.err && cmp -s k.out k.post; then
            good=$((good + 1))
        elif [ $fst -eq 0 ] && [ ! -s k.perr ] && cmp -s k.out k.post; then
            # rec-start sealed what the killed program left open (or it
            # was killed inside exec(): a closed recording)
            inexec=$((inexec + 1))
        else
            echo "  round $i: exit $fst, $(wc -l <k.out) printed, $(wc -l <k.post) post-mortem: $(head -1 k.err)"
        fi
    done
    echo "SIGKILL at random moments: of $KILLS followers, $inexec ended cleanly on the recording rec-start sealed (or closed: killed inside exec()) and $good with a message that the writer is gone, each having printed exactly the events rec-dump reads afterwards; the $((KILLS - inexec - good)) others are listed above"
}

pipe() {        # pipe FLUSH
    : >pipe.txt
    : >ovh.txt
    for _ in $(seq "$BENCH_RUNS"); do
        "$START" -q --flush-interval "$1" -o - "$BUDGET" -s 0.5 2>/dev/null |
            "$SB" pipe >p.txt
        rm -f p.rec
        $GNU_TIME -f "%e" -o t.txt "$START" -q --flush-interval "$1" -o p.rec \
            "$BUDGET" -s 0.5 >/dev/null 2>&1
        "$SB" pipe <p.rec >f.txt
        cat p.txt >>pipe.txt
        # The same program into a file: what the stream adds, per extra
        # chunk (if any) and per second of the run.
        paste -d' ' p.txt f.txt t.txt | awk '{
            pb = $12; pc = $10; fb = $26; fc = $24; wall = $NF
            print int((pb - fb) / (pc - fc > 0 ? pc - fc : 1)), int((pb - fb) / wall) }' >>ovh.txt
    done
    printf "rec-start -o - | reader, flush %5s: sample latency median %s ms, p99 %s ms; %s chunks, %s bytes per run; stream overhead against the file %s bytes per extra chunk, %s bytes/s\n" \
        "$1" "$(field median_ms <pipe.txt | median)" "$(field p99_ms <pipe.txt | median)" \
        "$(field chunks <pipe.txt | median)" "$(field bytes <pipe.txt | median)" \
        "$(awk '{ print $1 }' ovh.txt | median)" "$(awk '{ print $2 }' ovh.txt | median)"
}

parts=${*:-synthetic sampler cost kills pipe}
for part in $parts; do
    case $part in
    synthetic) synthetic 1000; synthetic 100 ;;
    sampler) sampler 1s; sampler 100ms; sampler 50ms ;;
    cost) cost 1s 0; cost 1s 1; cost 100ms 0; cost 50ms 0 ;;
    kills) kills ;;
    pipe) pipe 100ms; pipe 1s ;;
    *) echo "usage: stream.sh [synthetic|sampler|cost|kills|pipe]..." >&2; exit 2 ;;
    esac
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
