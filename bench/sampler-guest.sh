#!/bin/bash
# bench/sampler-guest.sh - what the program it records may do to rec, and
# what rec costs an idle program: the outcome of each host-safety hazard
# over RUNS runs per engine, and the sampler thread's CPU time while the
# program sleeps.
#
#   sampler-guest.sh [BUILD [RUNS]]     (BUILD: a build tree, default _build)
#
# Hazards (tests/hazards/, each under the preloaded sampler as rec-start
# runs it; a run counts as held when every condition holds):
#   reenter     sigaction() from a handler that interrupted its thread
#               inside sigaction(): status 0 (no deadlock), totals add up
#   _exit       _exit() from a SIGTERM handler that interrupted its thread
#               inside malloc: status 3, recording finished with both
#               threads ended, nothing given up
#   exec        the same handler re-executing the program: status 5, both
#               images' recordings finished
#   stuck-exec  exec with the sampler thread stopped for good, 10 ms and
#               1 ms periods: the new image keeps its status 5 (no SIGPROF
#               left behind)
#   forkstack   a followed fork child of a threaded process: status 0 (its
#               sampler thread runs clean)
#   statuspipe  the status pipe's reader gone: the program's status 0 (no
#               SIGPIPE of rec's)
#   sealed      rec-start on a program leaving by a raw exit_group
#               (tests/workloads/rawexit): status 7, the recording complete
#               and sealed
# Idle: `sleep 10` under rec-start, the sampler thread's CPU time (its
# start included) from the recording's ProcessUsage, median of 5.
# Start: CPU time per process start (perf stat task-clock over 20 runs,
# children included, rec-start's own counted once) of /bin/true and
# python3 -c pass, alone, under rec-start and under perf record -g; and a
# C build of 10 files, make -j2, alone, under rec-start -c and under perf
# record -g (which follows children too), wall time, median of 5. The
# shared table cache is warm (a first run fills it); a cold cache costs
# the first process of each module its tables.
set -u
B=$(cd "${1:-_build}" && pwd)
RUNS=${2:-50}
LIB=$B/libsampler/.libs/libsampler.so
H=$B/tests/hazards
CHECK=$B/tests/sampler-check
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s -C "$B" tests/sampler-check tests/hazards/sigreenter tests/hazards/sigexit \
    tests/hazards/stuck tests/hazards/forkstack tests/hazards/burn \
    tests/workloads/rawexit >/dev/null || exit 1
export LD_LIBRARY_PATH=$B/librecord/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) cpus runs=$RUNS load: $(cut -d' ' -f1-3 /proc/loadavg)"

# under ENGINE [VAR=VALUE...] -- PROGRAM ARGS: as rec-start runs it; rc.
under() {
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    rm -f "$tmp"/r.rec*
    # shellcheck disable=SC2016  # expanded by the inner shell
    timeout -s KILL 60 env REC_OUTPUT="$tmp/r.rec" "${envs[@]}" \
        sh -c 'REC_ROOT_PID=$$ LD_PRELOAD="$0" exec "$@"' "$LIB" "$@" \
        >"$tmp/out" 2>"$tmp/err"
    rc=$?
}
chk() { "$CHECK" --accounting 1000000 "$tmp/r.rec" >"$tmp/chk" 2>&1; }

printf '%-7s %-16s %s\n' engine hazard held
for e in timer perf; do
    declare -A held=([reenter]=0 [_exit]=0 [exec]=0 [stuck-exec-10ms]=0
                     [stuck-exec-1ms]=0 [forkstack]=0 [statuspipe]=0 [sealed]=0)
    for _ in $(seq "$RUNS"); do
        under REC_ENGINE=$e -- "$H/sigreenter" 1000
        [ $rc = 0 ] && chk && held[reenter]=$((held[reenter] + 1))
        under REC_ENGINE=$e -- "$H/sigexit" 200
        [ $rc = 3 ] && chk && grep -q " ends=2 .* usage=1 " "$tmp/chk" &&
            ! grep -q "could not finish" "$tmp/err" && held[_exit]=$((held[_exit] + 1))
        under REC_ENGINE=$e -- "$H/sigexit" 200 exec
        [ $rc = 5 ] && chk && grep -q " processinfo=2 usage=2 " "$tmp/chk" &&
            ! grep -q "could not finish" "$tmp/err" && held[exec]=$((held[exec] + 1))
        for p in 10ms 1ms; do
            under REC_ENGINE=$e REC_THROTTLE=$p -- "$H/stuck" exec
            [ $rc = 5 ] && held[stuck-exec-$p]=$((held[stuck-exec-$p] + 1))
        done
        under REC_ENGINE=$e REC_FOLLOW_CHILDREN=1 -- "$H/forkstack"
        [ $rc = 0 ] && held[forkstack]=$((held[forkstack] + 1))
        rm -f "$tmp/st.rc" "$tmp/st.rec"
        {
            exec 9>&1
            id=$(stat -L -c %d:%i /proc/self/fd/9)
            sleep 0.2
            env REC_OUTPUT="$tmp/st.rec" REC_ENGINE=$e REC_STATUS_FD="9:$id" \
                LD_PRELOAD="$LIB" "$H/burn" 1 50 >/dev/null 2>&1
            echo $? >"$tmp/st.rc"
        } | true
        [ "$(cat "$tmp/st.rc")" = 0 ] && held[statuspipe]=$((held[statuspipe] + 1))
        "$B/tools/rec-start" -q --force --engine "$e" -o "$tmp/seal.rec" \
            "$B/tests/workloads/rawexit" 100 >/dev/null 2>&1
        [ $? = 7 ] && "$B/tools/rec-summary" --json "$tmp/seal.rec" 2>/dev/null |
            grep -q '"sealed": true' && held[sealed]=$((held[sealed] + 1))
    done
    for k in reenter _exit exec stuck-exec-10ms stuck-exec-1ms forkstack statuspipe sealed; do
        printf '%-7s %-16s %d/%d\n' "$e" "$k" "${held[$k]}" "$RUNS"
    done
    unset held
done

: >"$tmp/idle"
for _ in 1 2 3 4 5; do
    "$B/tools/rec-start" -q -o "$tmp/idle.rec" --force -- sleep 10 >/dev/null 2>&1
    "$B/tools/rec-dump" --ndjson --events ProcessUsage "$tmp/idle.rec" 2>/dev/null |
        sed -n 's/.*"samplerCpuTime": *\([0-9]*\).*/\1/p' >>"$tmp/idle"
done
idle=$(median <"$tmp/idle")
echo "idle: sleep 10, the sampler thread's CPU: $(awk -v n="$idle" 'BEGIN { printf "%.2f ms (%.3f ms per wall second)", n / 1e6, n / 1e7 }')"
if command -v perf >/dev/null 2>&1; then
    # task-clock in ms of CMD..., over 20 runs (perf stat's mean).
    cpu_ms() { perf stat -r 20 -x, -e task-clock "$@" 2>&1 >/dev/null | awk -F, '$3 == "task-clock" { print $1 }' | tail -1; }
    py=python3
    [ -x /usr/bin/python3 ] && py=/usr/bin/python3
    for prog in /bin/true "$py -c pass"; do
        # shellcheck disable=SC2086  # the program and its arguments
        "$B/tools/rec-start" -q -o "$tmp/s.rec" --force -- $prog    # the cache
        # shellcheck disable=SC2086
        plain=$(cpu_ms $prog)
        # shellcheck disable=SC2086
        rec=$(cpu_ms "$B/tools/rec-start" -q -o "$tmp/s.rec" --force -- $prog)
        # shellcheck disable=SC2086
        prf=$(cpu_ms perf record -q -g -o "$tmp/p.data" -- $prog)
        echo "start: $prog: $plain ms alone, $rec ms under rec-start: +$(awk -v a="$plain" -v b="$rec" 'BEGIN { printf "%.1f", b - a }') ms; perf record -g: +$(awk -v a="$plain" -v b="$prf" 'BEGIN { printf "%.1f", b - a }') ms"
    done
else
    echo "start: perf not installed, not measured"
fi
mkdir -p "$tmp/mk"
for i in $(seq 10); do
    printf '#include <stdio.h>\n#include <string.h>\nint f%d(int x) { char b[64]; snprintf(b, sizeof b, "%%d", x); return (int)strlen(b) + x * %d; }\n' "$i" "$i" >"$tmp/mk/f$i.c"
done
printf 'int main(void) { return 0; }\n' >"$tmp/mk/main.c"
# shellcheck disable=SC2016  # make's variables
printf 'OBJS = $(patsubst %%.c,%%.o,$(wildcard *.c))\napp: $(OBJS)\n\t$(CC) -o $@ $^\n%%.o: %%.c\n\t$(CC) -O2 -c $< -o $@\n' >"$tmp/mk/Makefile"
: >"$tmp/mk-plain"
: >"$tmp/mk-rec"
: >"$tmp/mk-perf"
ms_now() { echo $(($(date +%s%N) / 1000000)); }
for _ in 1 2 3 4 5; do
    rm -f "$tmp"/mk/*.o "$tmp/mk/app"
    t0=$(ms_now); make -s -C "$tmp/mk" -j2 >/dev/null 2>&1; t1=$(ms_now)
    echo $((t1 - t0)) >>"$tmp/mk-plain"
    rm -f "$tmp"/mk/*.o "$tmp/mk/app" "$tmp"/mk.rec*
    t0=$(ms_now)
    "$B/tools/rec-start" -q -c -o "$tmp/mk.rec" -- make -s -C "$tmp/mk" -j2 >/dev/null 2>&1
    t1=$(ms_now)
    echo $((t1 - t0)) >>"$tmp/mk-rec"
    if command -v perf >/dev/null 2>&1; then
        rm -f "$tmp"/mk/*.o "$tmp/mk/app"
        t0=$(ms_now)
        perf record -q -g -o "$tmp/mk.data" -- make -s -C "$tmp/mk" -j2 >/dev/null 2>&1
        t1=$(ms_now)
        echo $((t1 - t0)) >>"$tmp/mk-perf"
    fi
done
p=$(median <"$tmp/mk-plain")
r=$(median <"$tmp/mk-rec")
echo "build: make -j2 of 10 C files: $p ms alone, $r ms under rec-start -c ($(awk -v p="$p" -v r="$r" 'BEGIN { printf "%.2f", r / p }')x)"
if [ -s "$tmp/mk-perf" ]; then
    f=$(median <"$tmp/mk-perf")
    echo "build: the same under perf record -g: $f ms ($(awk -v p="$p" -v r="$f" 'BEGIN { printf "%.2f", r / p }')x)"
fi
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
