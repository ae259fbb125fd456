#!/usr/bin/env bash
# bench/attach-daemon.sh - rec-start -p on a daemon nobody here wrote:
# redis-server under load, recorded twice (or more) while the load runs.
#
#   bench/attach-daemon.sh [--port P] [--requests N] [--duration T]
#                          [--gap S] [--rounds R] [--keep DIR]
#
# Starts redis-server on 127.0.0.1:P (default 6390; no persistence, not as
# a service), then redis-benchmark -t set,get -n N (default 2000000) -c 20
# -l in the background, whose throughput lines (one per 250 ms) are time
# stamped as they come. Timeline: S seconds of load alone (--gap, default
# 5), rec-start -p PID --duration T (default 5s) into redis1.rec, S
# seconds, the same into redis2.rec (the sampler dormant in the process
# since the first), and so on for R attaches (--rounds, default 2), then
# S seconds. Prints:
#   - requests/s of redis-benchmark in each window (median of its 250 ms
#     figures, with the range and the ratio to the load alone; the first
#     second of load is left out), then all the windows without an attach
#     together against all those with one: the same load without and with
#     the attach (on a shared machine, other work moves every window);
#   - per attach: rec-start's attach and detach times and its summary
#     line, redis-cli ping's answer halfway through and after, threads
#     named rec-* left in redis afterwards, rec-summary and rec-dump
#     reading the recording, rec-flame's page naming redis functions
#     (the ones of DAEMON_FUNCS found in it), rec-cpu's table (threads
#     and process lines), the five hottest leaf functions;
#   - redis-benchmark still running at the end and any error it printed,
#     what redis logged after it was ready, and its exit status on the
#     SIGTERM that ends it (0: a normal shutdown).
# --keep DIR: the recordings and flame graphs are copied there. Needs
# redis-server, redis-benchmark and redis-cli (apt-get install
# redis-server redis-tools). Not part of run-all.sh. The load average is
# printed before and after: the machine may be shared, which moves the
# requests/s of every window, with or without the attach.
own_tmp=0
[ -n "${BENCH_TMP:-}" ] || own_tmp=1
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

port=6390 requests=2000000 duration=5s gap=5 rounds=2 keep=''
while [ $# -gt 0 ]; do
    case $1 in
    --port) port=$2; shift 2 ;;
    --requests) requests=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --gap) gap=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    *) echo "usage: $0 [--port P] [--requests N] [--duration T] [--gap S] [--rounds R] [--keep DIR]" >&2
       exit 2 ;;
    esac
done
for p in redis-server redis-benchmark redis-cli; do
    command -v $p >/dev/null ||
        { echo "attach-daemon: $p not installed (apt-get install redis-server redis-tools)" >&2; exit 1; }
done
START=$(rec_prog rec-start)
DUMP=$(rec_prog rec-dump)
SUMMARY=$(rec_prog rec-summary)
CPU=$(rec_prog rec-cpu)
FLAME=$(rec_prog rec-flame)
DAEMON_FUNCS=${DAEMON_FUNCS:-"aeMain aeProcessEvents readQueryFromClient processCommand call writeToClient setCommand getCommand"}
cd "$BENCH_TMP" || exit 1

redis_pid='' bench_pid=''
cleanup() {
    [ -z "$bench_pid" ] || kill "$bench_pid" 2>/dev/null || true
    [ -z "$redis_pid" ] || kill "$redis_pid" 2>/dev/null || true
    wait 2>/dev/null || true
    [ $own_tmp = 0 ] || rm -rf "$BENCH_TMP"
}
trap cleanup EXIT

if redis-cli -p "$port" ping >/dev/null 2>&1; then
    echo "attach-daemon: something answers on port $port already" >&2
    exit 1
fi
echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores; $(redis-server --version)"
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
    >redis.log 2>&1 &
redis_pid=$!
i=0
until redis-cli -p "$port" ping >/dev/null 2>&1; do
    sleep 0.1
    i=$((i + 1))
    [ $i -lt 100 ] || { echo "attach-daemon: redis-server did not answer" >&2; cat redis.log >&2; exit 1; }
done
ready_line=$(grep -n 'Ready to accept connections' redis.log | head -1 | cut -d: -f1)
echo "redis-server: pid $redis_pid, threads: $(cat /proc/"$redis_pid"/task/*/comm 2>/dev/null | tr '\n' ' ')"

# Each line of redis-benchmark (its progress lines end in \r) with the
# wall time it arrived at.
stamp() { while IFS= read -r -d $'\r' l; do printf '%s %s\n' "$EPOCHREALTIME" "${l//$'\n'/ }"; done; }
redis-benchmark -p "$port" -t set,get -n "$requests" -c 20 -l -q > >(stamp >bench.log) 2>&1 &
bench_pid=$!
t_load=$EPOCHREALTIME
echo "redis-benchmark -p $port -t set,get -n $requests -c 20 -l -q: pid $bench_pid"

ours() { cat /proc/"$redis_pid"/task/*/comm 2>/dev/null | grep -c '^rec-' || true; }
half=$(awk -v d="$duration" 'BEGIN { v = d + 0; if (d ~ /ms$/) v /= 1000; else if (d ~ /m$/) v *= 60; printf "%.3f", v / 2 }')

# attach N: one rec-start -p session into redisN.rec; the times of its
# start and end go to windows.
attach() {
    local n=$1 rs st=0 t0 t1
    sleep "$gap"
    t0=$EPOCHREALTIME
    "$START" -p "$redis_pid" --duration "$duration" -o "redis$n.rec" 2>"a$n.err" &
    rs=$!
    sleep "$half"
    echo "ping_during=$(redis-cli -p "$port" ping 2>&1)" >"a$n.res"
    wait "$rs" || st=$?
    t1=$EPOCHREALTIME
    echo "attach$n $t0 $t1" >>windows
    {
        echo "status=$st"
        echo "ping_after=$(redis-cli -p "$port" ping 2>&1)"
        sleep 0.2
        echo "rec_threads_left=$(ours)"
    } >>"a$n.res"
}
echo "load alone $t_load" >windows
for n in $(seq "$rounds"); do attach "$n"; done
sleep "$gap"
t_end=$EPOCHREALTIME
bench_alive=yes
kill -0 "$bench_pid" 2>/dev/null || bench_alive=no
final_ping=$(redis-cli -p "$port" ping 2>&1)
kill "$bench_pid" 2>/dev/null || true
wait "$bench_pid" 2>/dev/null || true
bench_pid=''
kill -TERM "$redis_pid"
redis_st=0
wait "$redis_pid" || redis_st=$?
redis_pid=''
sleep 0.2

# Requests/s by window: the load alone (from 1 s into the load to the
# first attach), each attach, the gaps between and after them; then all
# the gaps together against all the attaches together.
# win LABEL FROM TO [FROM TO]...: median and range of the rps figures in
# those spans, and the ratio to the load alone (the first window)
win() {
    local l=$1 v tests m
    shift
    v=$(awk -v r="$*" 'BEGIN { n = split(r, s, " ") }
        $3 ~ /^rps=/ { for (i = 1; i < n; i += 2) if ($1 >= s[i] + 0 && $1 < s[i + 1] + 0) {
            sub(/^rps=/, "", $3); sub(/:$/, "", $2); print $3 + 0, $2; break } }' bench.log)
    if [ -z "$v" ]; then printf '%-26s no figure\n' "$l"; return 0; fi
    tests=$(echo "$v" | awk '{ print $2 }' | sort -u | tr '\n' ' ')
    v=$(echo "$v" | awk '{ print $1 }')
    m=$(echo "$v" | median)
    printf '%-26s %8.0f req/s  %-10s  (%.0f … %.0f; %d figures; %s)\n' "$l" "$m" \
        "$([ -z "${alone:-}" ] || echo "x$(calc "$m / $alone" 2)")" \
        "$(echo "$v" | sort -g | head -1)" "$(echo "$v" | sort -g | tail -1)" "$(echo "$v" | wc -l)" "${tests% }"
    [ -n "${alone:-}" ] || alone=$m
}
alone=''
echo
echo "== redis-benchmark requests/s by window (median of its 250 ms figures; x: ratio to the load alone)"
mapfile -t spans < <(awk '$1 ~ /^attach/ { print $2, $3 }' windows)
prev=$(calc "$t_load + 1" 6) gaps='' withs=''
for n in $(seq "$rounds"); do
    read -r s e <<<"${spans[$((n - 1))]}" || true
    win "$([ "$n" = 1 ] && echo "load alone" || echo "between")" "$prev" "$s"
    win "during attach $n$([ "$n" = 1 ] || echo " (again)")" "$s" "$e"
    gaps="$gaps $prev $s" withs="$withs $s $e" prev=$e
done
win "after" "$prev" "$t_end"
gaps="$gaps $prev $t_end"
# shellcheck disable=SC2086 # the spans are words
win "all without the attach" $gaps
# shellcheck disable=SC2086
win "all during the attaches" $withs
echo "redis-benchmark still running at the end: $bench_alive"
errs=$(grep -aiE 'error|refused|reset|timeout|broken' bench.log | cut -d' ' -f2- | sort | uniq -c || true)
echo "redis-benchmark errors: ${errs:-none}"
done_tests=$(grep -a 'requests per second' bench.log | cut -d' ' -f2- | sed 's/^ *//' || true)
[ -z "$done_tests" ] || printf 'redis-benchmark tests completed:\n%s\n' "$done_tests"

for n in $(seq "$rounds"); do
    echo
    echo "== attach $n$([ "$n" = 1 ] || echo " (the sampler loaded since attach 1)")"
    sed 's/^/  /' "a$n.err"
    sed 's/^/  /' "a$n.res"
    r=redis$n.rec
    "$SUMMARY" "$r" >"s$n.out" 2>&1 && echo "  rec-summary: reads it" || echo "  rec-summary: FAILED: $(head -3 "s$n.out")"
    if "$DUMP" --ndjson "$r" >"d$n.json" 2>"d$n.err"; then
        echo "  rec-dump: reads it, $(wc -l <"d$n.json") events, $(grep -c '"type":"CPUTimeSample"' "d$n.json") samples"
    else
        echo "  rec-dump: FAILED: $(head -3 "d$n.err")"
    fi
    if "$FLAME" -o "flame$n.html" "$r" 2>"f$n.err"; then
        found=''
        for f in $DAEMON_FUNCS; do
            if grep -q "$f" "flame$n.html"; then found="$found $f"; fi
        done
        echo "  rec-flame: $(stat -c %s "flame$n.html") bytes, names:${found:- none of $DAEMON_FUNCS}"
    else
        echo "  rec-flame: FAILED: $(head -3 "f$n.err")"
    fi
    echo "  rec-cpu (each thread's sampled CPU against the kernel's over the window):"
    "$CPU" "$r" 2>&1 | sed 's/^/    /' || echo "    rec-cpu: FAILED"
    echo "  hottest functions (leaf frames):"
    grep '"type":"CPUTimeSample"' "d$n.json" | grep -o '"frames":\[{"function":"[^"]*"' |
        sed 's/.*"function":"//; s/"$//' | sort | uniq -c | sort -rn | head -5 | sed 's/^/   /' || true
done

echo
echo "redis-cli ping after the attaches: $final_ping"
echo "redis-server exit status on SIGTERM: $redis_st"
echo "redis log after it was ready:"
tail -n +"$((${ready_line:-0} + 1))" redis.log | sed 's/^/  /'
if [ -n "$keep" ]; then
    mkdir -p "$keep"
    cp redis[0-9]*.rec flame[0-9]*.html "$keep"/
    echo "kept: the recordings and flame graphs in $keep"
fi
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
