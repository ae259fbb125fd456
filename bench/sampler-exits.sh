#!/bin/bash
# bench/sampler-exits.sh - programs that end without exit(), and SIGKILL.
#
#   sampler-exits.sh [BUILD [RUNS]]     (BUILD: a build tree, default _build)
#
# 1. _exit: tests/hazards/exiter burns 1 s in its main thread while a
#    worker spins, then calls _exit (directly, and run by sh -c, which
#    ends with _exit too: --follow-children, every file checked). For
#    every thread, |sampled + lost - kernel CPU| against
#    max(period + 4 ms, 1% of its CPU); the recording must be finished.
# 2. Flush interval cost: tests/workloads/sigblock (2 x 1.5 s) at 1 ms and
#    10 ms with --flush-interval 1s, 100ms, 20ms and without (the default):
#    process CPU (user+sys), the sampler thread's CPU and file size,
#    medians.
# 3. SIGKILL at a random moment (0.3 to 2.3 s into a 2 x 3 s run): the
#    CPU time in the recording (samples + lost, read up to the last flush)
#    as a share of the kernel's figure read just before the kill (sum of
#    /proc/PID/task/*/schedstat but rec's sampler thread), with the
#    default flush interval.
# 4. A raw exit_group, as every Go program ends (tests/workloads/rawexit,
#    2 threads x 0.5 s and x 2 s; and a Go program doing the same, if go
#    is installed, which the sampler recognizes): the CPU time rec-start's
#    sealing counts lost (samples after the last flush), as a share of the
#    recording's CPU time, with the default cadence.
# PARTS=13 (say) runs only those parts. Medians over RUNS (>= 5). Prints the load average before and after.
set -u
B=$(cd "${1:-_build}" && pwd)
RUNS=${2:-5}
PARTS=${PARTS:-1234}  # PARTS=3: only the SIGKILL part
START=$B/tools/rec-start
CHECK=$B/tests/sampler-check
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s -C "$B" tests/sampler-check tests/hazards/exiter tests/workloads/sigblock \
    tests/workloads/rawexit >/dev/null || exit 1
median() { sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { sed -n "s/^total .*\\<$1=\\([0-9]*\\).*/\\1/p" "$2"; }

echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) cpus runs=$RUNS load: $(cut -d' ' -f1-3 /proc/loadavg)"

# 1. _exit, directly and through sh -c.
if [[ $PARTS == *1* ]]; then
for how in direct "sh -c"; do
    : >"$tmp/runs"
    for _ in $(seq "$RUNS"); do
        rm -f "$tmp"/e.rec*
        if [ "$how" = direct ]; then
            "$START" -q -o "$tmp/e.rec" -- "$B/tests/hazards/exiter" _exit 1000
        else
            # The shell forks the program: followed into e.rec.PID.
            "$START" -q -c -o "$tmp/e.rec" -- sh -c "\"$B/tests/hazards/exiter\" _exit 1000; exit \$?"
        fi
        st=$?
        : >"$tmp/chk"
        finished=0
        for f in "$tmp"/e.rec*; do
            "$CHECK" "$f" >>"$tmp/chk" 2>&1 || finished=1
        done
        # worst thread: |diff| / allowed (<= 1 is within bounds)
        awk -v st=$st -v fin=$finished '
            /^thread / && /ended=1/ {
                for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
                d = v["diff"] < 0 ? -v["diff"] : v["diff"]
                allow = 14000000; if (v["cpu_ns"] / 100 > allow) allow = v["cpu_ns"] / 100
                if (d / allow > worst) worst = d / allow
                n++
            }
            END { printf "%.3f %d %d %d\n", worst, n, st, fin == 0 }' "$tmp/chk" >>"$tmp/runs"
    done
    printf '_exit (%s): worst |recorded-kernel|/max(period+4ms,1%%) %s (median; <= 1 is within), threads ended %s, status %s, finished in %s/%s runs\n' \
        "$how" "$(awk '{ print $1 }' "$tmp/runs" | median)" \
        "$(awk '{ print $2 }' "$tmp/runs" | median)" "$(awk '{ print $3 }' "$tmp/runs" | sort -u | tr '\n' ' ')" \
        "$(awk '{ s += $4 } END { print s }' "$tmp/runs")" "$RUNS"
done
fi

# 2. Flush interval cost. "default": no --flush-interval (the short cadence
#    while samples arrive). The sampler thread's own CPU is read from
#    /proc/PID/task/TID/schedstat, polled every 10 ms until the end.
sampler_cpu() { # PID: prints the rec-sampler thread's last CPU figure (ns)
    local pid=$1 last=0 tid='' v rest d
    while kill -0 "$pid" 2>/dev/null; do
        if [ -z "$tid" ]; then
            # time -> rec-start -> the program
            for d in $(pgrep -P "$(pgrep -P "$pid" | paste -sd,)" 2>/dev/null | sed 's|.*|/proc/&/task/*|'); do
                [ "$(cat "$d/comm" 2>/dev/null)" = rec-sampler ] && tid=$d
            done
        fi
        if [ -n "$tid" ] && read -r v rest 2>/dev/null <"$tid/schedstat"; then
            last=$v
        fi
        sleep 0.01
    done
    echo "$last"
}
if [[ $PARTS == *2* ]]; then
for thr in 1ms 10ms; do
    for fl in 1s 100ms 20ms default; do
        : >"$tmp/runs"
        opt="--flush-interval $fl"
        [ $fl = default ] && opt=
        for _ in $(seq "$RUNS"); do
            rm -f "$tmp/f.rec"
            # shellcheck disable=SC2086
            /usr/bin/time -f '%U %S' -o "$tmp/time" "$START" -q -t $thr $opt \
                -o "$tmp/f.rec" -- "$B/tests/workloads/sigblock" mask 2 1500 >/dev/null &
            sc=$(sampler_cpu $!)
            wait
            echo "$(awk '{ print $1 + $2 }' "$tmp/time") $(stat -c %s "$tmp/f.rec") $sc" >>"$tmp/runs"
        done
        printf 'throttle %-4s flush %-7s process CPU %s s, sampler thread %s ms, file %s bytes (medians)\n' $thr $fl \
            "$(awk '{ print $1 }' "$tmp/runs" | median)" \
            "$(awk '{ print $3 / 1e6 }' "$tmp/runs" | median)" "$(awk '{ print $2 }' "$tmp/runs" | median)"
    done
done
fi

# 3. SIGKILL at a random moment.
if [[ $PARTS == *3* ]]; then
: >"$tmp/runs"
for _ in $(seq "$RUNS"); do
    rm -f "$tmp/k.rec"
    "$START" -q -o "$tmp/k.rec" -- "$B/tests/workloads/sigblock" mask 2 3000 >/dev/null 2>&1 &
    rs=$!
    sleep 0.2
    pid=$(pgrep -P $rs | head -1)
    sleep "$(awk -v s=$RANDOM 'BEGIN { printf "%.3f", 0.1 + (s % 2000) / 1000 }')"
    k=0
    # The program's threads (not rec's own sampler thread).
    for d in /proc/$pid/task/*; do
        [ "$(cat "$d/comm" 2>/dev/null)" = rec-sampler ] && continue
        k=$((k + $(cut -d' ' -f1 "$d/schedstat" 2>/dev/null || echo 0)))
    done
    kill -KILL "$pid"
    wait $rs 2>/dev/null
    "$CHECK" "$tmp/k.rec" >"$tmp/chk" 2>/dev/null
    p=$(field period_ns "$tmp/chk"); l=$(field lost_ns "$tmp/chk")
    awk -v p="${p:-0}" -v l="${l:-0}" -v k=$k 'BEGIN { printf "%.4f %.3f\n", (p + l) / k, k / 1e9 }' >>"$tmp/runs"
done
printf 'SIGKILL: recorded/kernel CPU %s (median; runs: %s)\n' \
    "$(awk '{ print $1 }' "$tmp/runs" | median)" "$(awk '{ printf "%s@%ss ", $1, $2 }' "$tmp/runs")"
fi

# 4. A raw exit_group.
if [[ $PARTS == *4* ]]; then
progs="$B/tests/workloads/rawexit"
if command -v go >/dev/null 2>&1; then
    mkdir -p "$tmp/goexit"
    cat >"$tmp/goexit/main.go" <<'EOF'
package main

import "C" // cgo: a dynamic executable, which LD_PRELOAD needs

import (
	"os"
	"strconv"
	"sync"
	"time"
)

// Two goroutines burn MS ms of wall time each, then main returns.
func main() {
	ms, _ := strconv.Atoi(os.Args[1])
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := uint64(1)
			for end := time.Now().Add(time.Duration(ms) * time.Millisecond); time.Now().Before(end); {
				for i := 0; i < 100000; i++ {
					x = x*6364136223846793005 + 1
				}
			}
			if x == 0 {
				println(x)
			}
		}()
	}
	wg.Wait()
}
EOF
    (cd "$tmp/goexit" && printf 'module goexit\ngo 1.19\n' >go.mod &&
     go build -o goexit . >/dev/null 2>&1) && progs="$progs $tmp/goexit/goexit"
fi
for prog in $progs; do
for ms in 500 2000; do
    : >"$tmp/runs"
    for _ in $(seq "$RUNS"); do
        rm -f "$tmp/r.rec"
        "$START" -q -o "$tmp/r.rec" -- "$prog" "$ms" >/dev/null 2>&1
        "$CHECK" "$tmp/r.rec" >"$tmp/chk" 2>/dev/null
        p=$(field period_ns "$tmp/chk"); l=$(field lost_ns "$tmp/chk")
        awk -v p="${p:-0}" -v l="${l:-0}" 'BEGIN { if (p + l > 0) printf "%.4f %.1f\n", l / (p + l), l / 1e6 }' >>"$tmp/runs"
    done
    printf 'raw exit_group, %s, after 2 x %s ms: lost (sealed) share %s, %s ms (medians of %d)\n' \
        "$(basename "$prog")" "$ms" "$(awk '{ print $1 }' "$tmp/runs" | median)" \
        "$(awk '{ print $2 }' "$tmp/runs" | median)" "$(wc -l <"$tmp/runs")"
done
done
fi
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
