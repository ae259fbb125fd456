#!/usr/bin/env bash
# bench/attach.sh - rec-start -p PID on a process already running: how
# long the attach and the detach take, what the attach costs the process,
# beside perf record -p PID.
#
#   bench/attach.sh [--quick] [--runs N] [--tsv FILE] [--threads N]
#                   [--idle-threads N] [--window S] [busy] [idle]
#
# Every figure is a median over BENCH_RUNS (>= 5) runs, with the range.
# Each run starts a fresh target and records it three times, one session
# after the other: rec-start -p (the first attach: ptrace, dlopen of the
# sampler), rec-start -p again (the sampler stays loaded, dormant, between
# the two), then perf record -p. A session lasts until the tool reports it
# records (rec-start's "attached" line; perf: its perf_event descriptors
# are open), then S seconds (--window, default 3, 1 with --quick), then
# SIGINT to the tool, as Ctrl-C does. Targets, started anew each run:
#   busy   bench/peer-burn N threads of CPU-bound work (cc -O2, frame
#          pointers; --threads N, default 2, as bench/peers.sh)
#   idle   N threads and the main one blocked in poll() (attach-probe idle;
#          --idle-threads N, default 8)
# Figures (wall-clock ms unless said; bench/attach-probe takes the times):
#   command to first sample   first CPUTimeSample's startTime (rec-dump,
#          ns since the epoch) or perf sample's time (perf record -k
#          CLOCK_MONOTONIC, perf script --ns) minus the clock read just
#          before the tool's exec: includes the tool's own start and the
#          10 ms of a thread's CPU time the first sample waits for (rec's
#          default period; perf -e cpu-clock -c 10000000 -g). Busy only.
#   attach time rec-start reports   its "attached to process P in N ms".
#   SIGINT to exit            the signal to the tool's exit (a pidfd).
#   SIGINT to no rec- thread  ... to the target having no thread named
#          "rec-*" left (polled every 1 ms).
#   detach time rec-start reports   its "detached from process P in N ms".
#   target CPU                idle target only: its process CPU clock
#          (ns, all threads, dead ones included) from just before the
#          command to the "attached" line (the attach), from there to the
#          SIGINT (S seconds of recording an idle process) and from the
#          SIGINT to the end (the detach); "none" is the same process over
#          S seconds with no tool.
# The target must outlive every session and die of the SIGTERM the script
# ends it with (status 143), as it would without us: any other outcome is
# printed. perf needs perf_event access (perf stat -e task-clock true);
# without it the perf rows are skipped with the reason. perf's cpu-clock
# and task-clock sampling are hrtimers that count a thread's time on the
# CPU from each of its slices: on a loaded machine (short slices) with
# more threads than cores it may take no sample at all in a window, and
# its first-sample figure is then missing from that run (said so). The
# load average is printed before, during and after. ~1.5 min with --quick,
# ~2.5 without.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

quick=0 threads=2 ithreads=8 window='' parts=''
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1; shift ;;
    --runs) BENCH_RUNS=$2; shift 2 ;;
    --tsv) BENCH_TSV=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --idle-threads) ithreads=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    busy | idle) parts="$parts $1"; shift ;;
    *) echo "usage: $0 [--quick] [--runs N] [--tsv FILE] [--threads N] [--idle-threads N] [--window S] [busy] [idle]" >&2
       exit 2 ;;
    esac
done
[ "$BENCH_RUNS" -ge 5 ] || { echo "--runs must be >= 5" >&2; exit 2; }
parts=${parts:-busy idle}
if [ $quick = 1 ]; then W=${window:-1}; else W=${window:-3}; fi

START=$(rec_prog rec-start)
DUMP=$(rec_prog rec-dump)
cd "$BENCH_TMP" || exit 1
cc -O2 -g -fno-omit-frame-pointer -pthread "$bench_top/bench/peer-burn.c" -o peer-burn
cc -O2 -pthread "$bench_top/bench/attach-probe.c" -o attach-probe
PROBE=$BENCH_TMP/attach-probe

perf_why=
if ! command -v perf >/dev/null 2>&1; then
    perf_why="perf not installed (apt-get install linux-perf)"
elif ! perf stat -e task-clock true >/dev/null 2>&1; then
    perf_why="perf_event not permitted here (kernel.perf_event_paranoid = $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null))"
fi
tools="rec rec-again"
if [ -z "$perf_why" ]; then tools="$tools perf"; else echo "perf: skipped: $perf_why"; fi

echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, $BENCH_RUNS runs, window $W s"
echo "rec-start: $START; $(perf --version 2>/dev/null || echo 'no perf')"
echo "rec: rec-start -p PID -o FILE (default 10 ms period); rec again: the same on the same process, the sampler loaded"
echo "perf: perf record -e cpu-clock -c 10000000 -g -k CLOCK_MONOTONIC -p PID -o FILE"

# until_ok SECONDS CMD...: CMD every 10 ms until it succeeds (0) or the
# time is up (1).
until_ok() {
    local n=$(($(calc "$1 * 100" 0))) i=0; shift
    while [ $i -lt "$n" ]; do
        "$@" && return 0
        sleep 0.01
        i=$((i + 1))
    done
    return 1
}
attached_line() { grep -q "attached to process" "$1"; }
perf_open() { find "/proc/$1/fd" -lname '*perf_event*' 2>/dev/null | grep -q .; }

# ms NS: in ms, nothing for an unknown (empty or -1) value
ms() { if [ -n "$1" ] && [ "$1" != -1 ]; then calc "$1 / 1e6" 3; fi; }

# session TOOL TARGET OUT: one attach, S seconds, SIGINT. OUT gets
# "key=value ..." (empty values for what the session did not give);
# OUT.fail says why when it failed.
session() {
    local tool=$1 pid=$2 out=$3 rs st=0 cpu0 cpu1 ready
    local attach='' first='' detach='' samples='' exit_ns='' gone_ns='' c_sig='' c_end=''
    rm -f "$out" "$out.fail" "$out.rec" "$out.data"
    cpu0=$("$PROBE" cpu "$pid")
    if [ "$tool" = perf ]; then
        "$PROBE" stamp "$out.t0" -- perf record -q -e cpu-clock -c 10000000 -g \
            -k CLOCK_MONOTONIC -p "$pid" -o "$out.data" 2>"$out.err" &
        rs=$!
        ready=(perf_open "$rs")
    else
        "$PROBE" stamp "$out.t0" -- "$START" -p "$pid" -o "$out.rec" 2>"$out.err" &
        rs=$!
        ready=(attached_line "$out.err")
    fi
    if ! until_ok 20 "${ready[@]}"; then
        kill -INT "$rs" 2>/dev/null || true
        wait "$rs" || true
        echo "$tool: not recording within 20 s: $(head -3 "$out.err")" >"$out.fail"
        return 0
    fi
    cpu1=$("$PROBE" cpu "$pid")
    sleep "$W"
    "$PROBE" stop 2 "$rs" "$pid" >"$out.stop"
    wait "$rs" || st=$?
    # perf leaves with the status of the SIGINT it handled (130)
    if [ $st != 0 ] && ! { [ "$tool" = perf ] && [ $st = 130 ]; }; then
        echo "$tool: exit status $st: $(head -3 "$out.err")" >"$out.fail"
    fi
    read -r exit_ns gone_ns c_sig c_end < <(sed 's/[a-z_]*=//g' "$out.stop") || true
    if [ "$tool" = perf ]; then
        gone_ns=
        perf script -i "$out.data" -F time --ns 2>/dev/null | tr -d ' :' | grep . >"$out.times" || true
        samples=$(wc -l <"$out.times")
        first=$(sort -g "$out.times" | head -1 |
            awk -v t0="$(cut -d' ' -f1 "$out.t0")" 'NF { split($1, a, "."); printf "%.3f", ((a[1] * 1e9 - t0) + a[2]) / 1e6 }')
    else
        attach=$(sed -n 's/.*attached to process [0-9]* in \([0-9]*\) ms.*/\1/p' "$out.err")
        detach=$(sed -n 's/.*detached from process [0-9]* in \([0-9]*\) ms.*/\1/p' "$out.err")
        "$DUMP" --ndjson --events CPUTimeSample "$out.rec" >"$out.json" 2>"$out.derr" ||
            echo "$tool: rec-dump failed: $(head -3 "$out.derr")" >>"$out.fail"
        grep -o '"startTime":[0-9]*' "$out.json" | cut -d: -f2 >"$out.times" || true
        rm -f "$out.json"
        samples=$(wc -l <"$out.times")
        # ns since the epoch: 1.8e18 is within 256 ns in a double
        first=$(sort -n "$out.times" | head -1 |
            awk -v t0="$(cut -d' ' -f2 "$out.t0")" 'NF { printf "%.3f", ($1 - t0) / 1e6 }')
        [ "$gone_ns" != -1 ] || echo "$tool: a rec- thread still in process $pid 30 s after the SIGINT" >>"$out.fail"
    fi
    [ "$exit_ns" != -1 ] || echo "$tool: still running 30 s after the SIGINT" >>"$out.fail"
    kill -0 "$pid" 2>/dev/null || echo "$tool: the target process is gone" >>"$out.fail"
    echo "attach=$attach first=$first exit=$(ms "$exit_ns") gone=$(ms "$gone_ns") detach=$detach" \
         "samples=$samples cpu_attach=$(ms $((cpu1 - cpu0))) cpu_window=$(ms $((c_sig - cpu1)))" \
         "cpu_detach=$(ms $((c_end - c_sig)))" >"$out"
    rm -f "$out.rec" "$out.data"
}

# get FIELD FILE: its value, nothing if absent or empty
get() { [ -s "$2" ] && tr ' ' '\n' <"$2" | sed -n "s/^$1=\(.\+\)/\1/p"; true; }

# fig FIGURE TOOL UNIT NOTE < per-run values: a row of the table (rows)
# and bench_fig
fig() {
    local v
    v=$(grep . || true)
    [ -n "$v" ] || return 0
    printf '%s|%s|%s %s|%s … %s|%s\n' "$1" "$2" "$(echo "$v" | median | awk '{ printf "%.4g", $1 }')" "$3" \
        "$(echo "$v" | sort -g | head -1)" "$(echo "$v" | sort -g | tail -1)" "$(echo "$v" | wc -l)" >>rows
    echo "$v" | bench_fig "$1" "$2" "$3" "$4"
}
table() {
    [ -s rows ] || return 0
    awk -F'|' '{ for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } n = NR; nf = NF }
        END { split("figure|tool|median|range|runs", h, "|")
              for (i = 1; i <= nf; i++) if (length(h[i]) > w[i]) w[i] = length(h[i])
              for (i = 1; i <= nf; i++) printf "%-*s  ", w[i], h[i]; print ""
              for (i = 1; i <= nf; i++) { d = ""; for (j = 0; j < w[i]; j++) d = d "-"; printf "%s  ", d } print ""
              for (r = 1; r <= n; r++) { for (i = 1; i <= nf; i++) printf "%-*s  ", w[i], c[r, i]; print "" } }' rows
    rm -f rows
}
label() { case $1 in rec) echo rec ;; rec-again) echo "rec again" ;; perf) echo "perf record" ;; none) echo "no tool" ;; esac; }

part() {        # part busy|idle
    local mode=$1 r pid st t n=$threads
    [ "$mode" = busy ] || n=$ithreads
    echo
    echo "== $mode: $([ "$mode" = busy ] && echo "bench/peer-burn $n threads" || echo "$n threads in poll()"); load $(cut -d' ' -f1-3 /proc/loadavg)"
    for r in $(seq "$BENCH_RUNS"); do
        if [ "$mode" = busy ]; then
            ./peer-burn "$n" 100000000 >/dev/null &
        else
            "$PROBE" idle "$n" &
        fi
        pid=$!
        sleep 0.3
        if [ "$mode" = idle ]; then
            # the target alone over the same window
            c0=$("$PROBE" cpu "$pid")
            sleep "$W"
            echo "cpu_window=$(calc "($("$PROBE" cpu "$pid") - $c0) / 1e6" 3)" >"$mode.$r.none"
        fi
        for t in $tools; do
            session "$t" "$pid" "$mode.$r.$t"
            [ ! -s "$mode.$r.$t.fail" ] || sed "s/^/  run $r: /" "$mode.$r.$t.fail"
            if [ "$mode" = busy ] && [ "$(get samples "$mode.$r.$t")" = 0 ]; then
                echo "  run $r: $(label "$t"): no sample in the window"
            fi
        done
        st=0
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" || st=$?
        [ $st = 143 ] || echo "  run $r: the target ended with status $st, not 143 (SIGTERM)"
        echo "  run $r of $BENCH_RUNS done; load $(cut -d' ' -f1-3 /proc/loadavg)"
    done
    rm -f rows
    local what="$mode, $n threads"
    local -a figs=()
    [ "$mode" != busy ] || figs+=("first|command to first sample|ms|tool's exec to the first sample's time")
    figs+=("attach|attach time rec-start reports|ms|its 'attached to process P in N ms'"
           "exit|SIGINT to the tool's exit|ms|pidfd"
           "gone|SIGINT to no rec- thread left|ms|/proc/PID/task/*/comm every 1 ms"
           "detach|detach time rec-start reports|ms|its 'detached from process P in N ms'"
           "samples|samples|samples|window ${W} s after the tool said it records")
    [ "$mode" != idle ] || figs+=("cpu_attach|target CPU, command to attached|ms|process CPU clock of the target"
                                 "cpu_window|target CPU, ${W} s recorded|ms|attached to SIGINT"
                                 "cpu_detach|target CPU, SIGINT to detached|ms|SIGINT to the tool's exit and no rec- thread")
    local f key name unit note
    for f in "${figs[@]}"; do
        IFS='|' read -r key name unit note <<<"$f"
        for t in none $tools; do
            [ "$t" != none ] || [ "$key" = cpu_window ] || continue
            for r in $(seq "$BENCH_RUNS"); do get "$key" "$mode.$r.$t"; done |
                fig "$what: $name" "$(label "$t")" "$unit" "$note"
        done
    done
    table
    echo
    echo "raw per run:"
    for t in $([ "$mode" = idle ] && echo none) $tools; do
        for r in $(seq "$BENCH_RUNS"); do
            if [ -s "$mode.$r.$t" ]; then echo "  $t run $r: $(cat "$mode.$r.$t")"; fi
        done
    done
}

for p in $parts; do part "$p"; done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
