#!/usr/bin/env bash
# bench/run-all.sh - every benchmark of bench/ in one run, then
# bench/RESULTS.md and the plots in bench/plots/ (bench/report.py).
#
#   bench/run-all.sh [--quick] [--only LIST] [--out DIR]
#
# --quick   fewer and shorter runs (still the median of >= 5 runs per
#           figure): smaller workloads, a 100 MB instead of a 1 GB recording
#           for the readers' memory, 0.1 M instead of 1 M events for the jfr
#           tool. About 10-15 minutes on an idle 2-core machine; the full
#           mode takes about 40.
# --only    a comma-separated subset of accuracy,cost,memory,stacks,
#           selfcost,peers,rec,unwind,engine,exits,short,blocked,guest,
#           stream,export,runtimes,attach (default: all of these); also
#           retention (bench/retention.sh, only when named: ~26 min, ~9
#           with --quick)
# --out     where RESULTS.md and plots/ go (default: bench/ of this tree)
#
# Each script's human output is kept in a log directory (printed at the
# end); its figures go through BENCH_TSV (bench/lib.sh bench_fig) to
# report.py. A script that fails is reported as such in RESULTS.md and the
# others still run. The scripts that print tables but no BENCH_TSV
# figures (unwind and the ones after it) have their output quoted as it is. The load average is sampled every 10 s during the run
# and reported: the machine may be shared, and every figure that can be is
# CPU-time based so that load mostly widens the ranges.
# Needs the tree built (REC_BUILD, default _build) and python3 for the
# report. Peers (perf, gperftools, JDK >= 25) are used where installed.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
export REC_BUILD=${REC_BUILD:-$top/_build}
export BENCH_RUNS=${BENCH_RUNS:-5}
quick=0 out=$top/bench
only=accuracy,cost,memory,stacks,selfcost,peers,rec,unwind,engine,exits,short,blocked,guest,stream,export,runtimes,attach
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1; shift ;;
    --only) only=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--quick] [--only LIST] [--out DIR]" >&2; exit 2 ;;
    esac
done
[ "$BENCH_RUNS" -ge 5 ] || { echo "BENCH_RUNS must be >= 5" >&2; exit 2; }
[ -x "$REC_BUILD/tools/rec-start" ] ||
    { echo "run-all: build the tree first ($REC_BUILD/tools/rec-start missing)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "run-all: needs python3 for the report" >&2; exit 1; }

work=$(mktemp -d /tmp/rec-bench-all.XXXXXX)
logs=$work/logs
mkdir -p "$logs" "$out/plots"

# The load average, every 10 s, until the end of the run.
( while :; do echo "$(date +%s) $(cut -d' ' -f1-3 /proc/loadavg)"; sleep 10; done ) > "$work/load" &
loadpid=$!
trap 'kill "$loadpid" 2>/dev/null || true' EXIT

want() { case ",$only," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

# Parameters of each script, by mode.
if [ $quick = 1 ]; then
    acc=(--scale 0.25)
    cost=(--work 200)
    mem=(--threads "1 25 50 100")
    stk=(--seconds 0.3)
    peers=(2 300)
    selfcost=("0.1 0.25")
    recev=200000 big=100000000 jfrev=100000
    uw=(--seconds 0.3) eng=(0.25 32 20) short=500 xpev=200000 guest=10
    rtruns=3 ret=(--quick) att=(--quick)
else
    acc=() cost=() mem=() stk=() peers=() selfcost=("0.25 1")
    recev=1000000 big=1000000000 jfrev=1000000
    uw=() eng=() short=2000 xpev=1000000 guest=50 rtruns=5 ret=() att=()
fi
# rec and perf at the same periods, so that each period is one figure
cost+=(--rates "10ms 5ms 2ms 1ms 500us 200us"
       --perf-periods "10000000 5000000 2000000 1000000 500000 200000")

: > "$work/meta"
# run NAME CMD...: the script with its figures going to NAME.tsv; one line
# "name TAB seconds TAB status TAB command" to meta
run() {
    local name=$1 t0 t1 st=0; shift
    want "$name" || return 0
    echo "run-all: $name: $*" >&2
    : > "$work/$name.tsv"
    t0=$(date +%s)
    BENCH_TSV=$work/$name.tsv "$@" > "$logs/$name.log" 2> "$logs/$name.err" || st=$?
    t1=$(date +%s)
    [ $st = 0 ] || { echo "run-all: $name failed ($st), see $logs/$name.err" >&2; tail -3 "$logs/$name.err" >&2; }
    local cmd="$*"
    printf '%s\t%s\t%s\t%s\n' "$name" $((t1 - t0)) "$st" "${cmd//$top\//}" >> "$work/meta"
}

started=$(date -u +%FT%TZ)
b=$top/bench
run accuracy "$b/sampler-accuracy.sh" --runs "$BENCH_RUNS" "${acc[@]}"
run cost "$b/sampler-cost.sh" --runs "$BENCH_RUNS" "${cost[@]}"
run memory "$b/sampler-memory.sh" --runs "$BENCH_RUNS" "${mem[@]}"
run stacks "$b/sampler-stacks.sh" --runs "$BENCH_RUNS" "${stk[@]}"
run selfcost "$b/sampler-selfcost.sh" "$REC_BUILD" "$BENCH_RUNS" "${selfcost[@]}"
run peers env BENCH_JFR_EVENTS=$jfrev "$b/peers.sh" "${peers[@]}"
run rec env BENCH_BIG_BYTES=$big "$b/rec.sh" "$recev"
run unwind "$b/unwind.sh" --runs "$BENCH_RUNS" "${uw[@]}"
run engine "$b/engine.sh" "${eng[@]}"
run exits "$b/sampler-exits.sh" "$REC_BUILD" "$BENCH_RUNS"
run short env SHORT_THREADS=$short "$b/sampler-short.sh" "$REC_BUILD" "$BENCH_RUNS"
run blocked "$b/sampler-blocked.sh" "$REC_BUILD" "$BENCH_RUNS"
run guest "$b/sampler-guest.sh" "$REC_BUILD" "$guest"
run stream "$b/stream.sh"
run export "$b/export.sh" "$xpev"
run runtimes "$b/runtimes.sh" "$REC_BUILD" "$rtruns"
run attach "$b/attach.sh" --runs "$BENCH_RUNS" "${att[@]}"
run retention "$b/retention.sh" --runs "$BENCH_RUNS" "${ret[@]}"
finished=$(date -u +%FT%TZ)
kill "$loadpid" 2>/dev/null || true

# The machine, for the report.
hz=unknown
if [ -r /proc/config.gz ]; then
    hz=$(zcat /proc/config.gz | sed -n 's/^CONFIG_HZ=//p')
elif [ -r "/boot/config-$(uname -r)" ]; then
    hz=$(sed -n 's/^CONFIG_HZ=//p' "/boot/config-$(uname -r)")
fi
jdk=$(for d in /usr/lib/jvm/*; do
          if [ -x "$d/bin/jfr" ] && "$d/bin/java" -version 2>&1 | grep -Eq 'version "(2[5-9]|[3-9][0-9])'; then
              "$d/bin/java" -version 2>&1 | head -1; break
          fi
      done)
{
    echo "mode	$([ $quick = 1 ] && echo quick || echo full)"
    echo "command	bench/run-all.sh$([ $quick = 1 ] && echo ' --quick')"
    echo "runs	$BENCH_RUNS"
    echo "started	$started"
    echo "finished	$finished"
    echo "cpu	$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
    echo "cores	$(nproc)"
    echo "kernel	$(uname -sr)"
    echo "hz	${hz:-unknown}"
    echo "memory	$(awk '$1 == "MemTotal:" { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
    echo "commit	$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "perf	$(perf --version 2>/dev/null || echo 'not installed')"
    echo "gperftools	$(ls /usr/lib/*/libprofiler.so.0 2>/dev/null | head -1 || true)"
    echo "jdk	${jdk:-no JDK >= 25}"
} > "$work/machine"

python3 "$b/report.py" --work "$work" --out "$out"
echo "run-all: wrote $out/RESULTS.md and $out/plots/; logs in $logs" >&2
