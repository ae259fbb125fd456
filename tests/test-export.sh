#!/bin/sh
# rec-dump --format collapsed|pprof|jfr: on committed recordings and on one
# recorded here under rec-start, every export's total equals rec-cpu's
# sampled + lost CPU time to the nanosecond; the pprof file is read by
# `go tool pprof` and the JFR file by the JDK's `jfr` tool (each skipped
# when not installed; scripts/deps.sh installs them).
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
REC_CPU=$top_builddir/tools/rec-cpu
cd "$TMP" || exit 99

# A live recording with deep stacks, several threads and real symbols.
"$REC_START" -q -o "$TMP/live.rec" --throttle 1ms -- "$WORKLOADS/stacks" 0.3 \
    >"$TMP/out" 2>"$TMP/err"
st=$?
expect_status 0 "stacks workload recorded under rec-start"

RECS="$top_srcdir/tests/data/cpu/basic.rec $top_srcdir/tests/data/cpu/child.rec
$top_srcdir/tests/data/cpu/live.rec $GOLDEN/basic.rec $TMP/live.rec"

GO=
command -v go >/dev/null 2>&1 && GO=go
# go must not touch the caller's home or fetch a toolchain.
export GOTOOLCHAIN=local GOFLAGS='' GOPATH="$TMP/gopath" GOCACHE="$TMP/gocache"
JFR=
for j in /usr/lib/jvm/java-17-openjdk-amd64/bin/jfr "$(command -v jfr 2>/dev/null)"; do
    [ -n "$j" ] && [ -x "$j" ] && { JFR=$j; break; }
done
JFR25=/usr/lib/jvm/temurin-25-jdk-amd64/bin/jfr
[ -x "$JFR25" ] || JFR25=

# ISO-8601 durations of `jfr print --json` (PT0.01S, PT1M2.5S) to ns.
iso_ns='function iso(s,   h, m, t, ip, fp) {
    sub(/^PT/, "", s); h = m = 0
    if (s ~ /H/) { h = s; sub(/H.*/, "", h); sub(/^[^H]*H/, "", s) }
    if (s ~ /M/) { m = s; sub(/M.*/, "", m); sub(/^[^M]*M/, "", s) }
    sub(/S$/, "", s); if (s == "") s = "0"
    ip = s; fp = ""; if (s ~ /\./) { ip = s; sub(/\..*/, "", ip); fp = s; sub(/^[^.]*\./, "", fp) }
    while (length(fp) < 9) fp = fp "0"
    return ((h * 60 + m) * 60 + ip) * 1000000000 + fp
}'

i=0
for r in $RECS; do
    i=$((i + 1))
    name=$(basename "$r")
    "$REC_CPU" --json "$r" >"$TMP/cpu.json" 2>/dev/null
    want=$(jq '[.threads[] | .sampledCpuTime + .lostCpuTime] | add // 0' "$TMP/cpu.json")
    nsamples=$(jq '[.threads[] | .samples] | add // 0' "$TMP/cpu.json")
    nlost=$(jq '[.threads[] | .lostSamples] | add // 0' "$TMP/cpu.json")
    diag "$name: rec-cpu sampled + lost = $want ns, $nsamples samples, $nlost lost"
    test "$want" -gt 0 2>/dev/null; ok $? "$name: rec-cpu reports CPU time"

    "$REC_DUMP" --format collapsed "$r" >"$TMP/c$i.txt" 2>/dev/null
    got=$(awk '{ s += $NF } END { printf "%.0f", s }' "$TMP/c$i.txt")
    test "$got" = "$want"; ok $? "$name: collapsed total $got = rec-cpu $want"
    "$REC_DUMP" --format collapsed --group thread "$r" >"$TMP/ct$i.txt" 2>/dev/null
    got=$(awk '{ s += $NF } END { printf "%.0f", s }' "$TMP/ct$i.txt")
    test "$got" = "$want"; ok $? "$name: collapsed --group thread total $got"
    # per thread too: tid -> CPU ns
    awk '{ if (match($0, /tid=[0-9]+\]/)) s[substr($0, RSTART + 4, RLENGTH - 5)] += $NF }
         END { for (t in s) printf "%s %.0f\n", t, s[t] }' "$TMP/ct$i.txt" | sort >"$TMP/got"
    jq -r '.threads | group_by(.osThreadId)[]
           | "\(.[0].osThreadId) \(map(.sampledCpuTime + .lostCpuTime) | add)"' \
        "$TMP/cpu.json" | awk '$2 != 0' | sort >"$TMP/want"
    cmp -s "$TMP/got" "$TMP/want"
    ok $? "$name: per-thread totals of --group thread = rec-cpu's ($(wc -l <"$TMP/want") threads)"
    "$REC_DUMP" --format collapsed --weight samples "$r" >"$TMP/cs$i.txt" 2>/dev/null
    got=$(awk '{ s += $NF } END { printf "%.0f", s }' "$TMP/cs$i.txt")
    test "$got" = "$((nsamples + nlost))"
    ok $? "$name: --weight samples counts samples + lost samples ($got)"

    "$REC_DUMP" --format pprof -o "$TMP/p$i.pb.gz" "$r" 2>"$TMP/err"
    ok $? "$name: pprof written"
    if [ -n "$GO" ]; then
        go tool pprof -raw "$TMP/p$i.pb.gz" >"$TMP/raw" 2>"$TMP/err"
        got=$(awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
                   s && $2 ~ /^[0-9]+:$/ { t += $1 } END { printf "%.0f", t }' "$TMP/raw")
        test "$got" = "$want"; ok $? "$name: go tool pprof -raw total $got = rec-cpu"
        [ "$got" = "$want" ] || diag_file "$TMP/err"
    else
        skip "go not installed (golang-go)"
    fi

    "$REC_DUMP" --format jfr -o "$TMP/j$i.jfr" "$r" 2>"$TMP/err"
    ok $? "$name: jfr written"
    if [ -n "$JFR" ]; then
        "$JFR" print --json "$TMP/j$i.jfr" >"$TMP/j.json" 2>"$TMP/err"
        got=$(jq -r '.recording.events[]
                     | if .type == "jdk.CPUTimeSample" then .values.samplingPeriod
                       elif .type == "jdk.CPUTimeSamplesLost" then .values.lostTime
                       else empty end' "$TMP/j.json" \
              | awk "$iso_ns"' { t += iso($1) } END { printf "%.0f", t }')
        test "$got" = "$want"; ok $? "$name: jfr print --json total $got = rec-cpu"
        "$JFR" summary "$TMP/j$i.jfr" >"$TMP/sum" 2>&1
        n=$(awk '$1 == "jdk.CPUTimeSample" { print $2 }' "$TMP/sum")
        test "${n:-0}" = "$nsamples"; ok $? "$name: jfr summary: $n jdk.CPUTimeSample events"
    else
        skip "jfr not installed (openjdk-17-jdk-headless)"
        skip "jfr not installed (openjdk-17-jdk-headless)"
    fi
done

# What the consumers show, on the live recording.
if [ -n "$GO" ]; then
    go tool pprof -top "$TMP/p5.pb.gz" >"$TMP/top" 2>&1
    grep -q 'stk_c' "$TMP/top" && grep -q '^Type: cpu' "$TMP/top"
    ok $? "go tool pprof -top: CPU time by default, the workload's functions"
    go tool pprof -raw "$TMP/p5.pb.gz" >"$TMP/raw" 2>&1
    grep -Eq '^cpu/nanoseconds(\[dflt\])? samples/count' "$TMP/raw" \
        && grep -q 'thread_id:\[' "$TMP/raw" && grep -q 'thread:\[stk-main\]' "$TMP/raw"
    ok $? "pprof: sample types cpu/nanoseconds and samples/count, thread labels"
    grep -q 'stacks.c:[0-9]' "$TMP/raw"; ok $? "pprof: source lines"
    grep -Eq 'M=[0-9]+ .*' "$TMP/raw" && grep -q 'Mappings' "$TMP/raw"
    ok $? "pprof: mappings"
else
    for _ in 1 2 3 4; do skip "go not installed (golang-go)"; done
fi
if [ -n "$JFR" ]; then
    "$JFR" print --events CPUTimeSample "$TMP/j5.jfr" >"$TMP/jp" 2>&1
    grep -q 'stacks.stk_c() line: [1-9]' "$TMP/jp" && grep -q 'eventThread = "stk-main"' "$TMP/jp"
    ok $? "jfr print: native frames with module, function and line; thread names"
else
    skip "jfr not installed (openjdk-17-jdk-headless)"
fi
if [ -n "$JFR25" ]; then
    "$JFR25" view cpu-time-statistics "$TMP/j1.jfr" >"$TMP/view" 2>&1
    "$REC_CPU" --json "$top_srcdir/tests/data/cpu/basic.rec" >"$TMP/cpu.json"
    tot=$(jq '[.threads[] | .samples] | add' "$TMP/cpu.json")
    lost=$(jq '[.threads[] | .lostSamples] | add' "$TMP/cpu.json")
    grep -q "^Total Samples: $tot\$" "$TMP/view" && grep -q "^Lost Samples: $lost\$" "$TMP/view"
    ok $? "JDK 25 jfr view cpu-time-statistics: $tot samples, $lost lost"
    [ $? -eq 0 ] || diag_file "$TMP/view"
else
    skip "no JDK 25 jfr (jfr view cpu-time-statistics)"
fi

# Options.
"$REC_DUMP" --format svg "$GOLDEN/basic.rec" >/dev/null 2>"$TMP/err"
st=$?
expect_status 2 "--format svg: usage error"
"$REC_DUMP" --format collapsed --threads 1001 \
    "$top_srcdir/tests/data/cpu/basic.rec" >"$TMP/f.txt" 2>"$TMP/err"
test "$(cat "$TMP/f.txt")" = "worker;fib;fib;fib 150000000"
ok $? "--threads filters the exported stacks"
"$REC_DUMP" --format collapsed --group process \
    "$top_srcdir/tests/data/cpu/basic.rec" >"$TMP/f.txt" 2>"$TMP/err"
grep -q '^\[pid=1000\];\[lost: queue-full\] 30000000$' "$TMP/f.txt"
ok $? "--group process: process root frame; lost CPU as [lost: REASON]"
"$REC_DUMP" --format collapsed "$top_srcdir/tests/data/corpus/truncated-last-block.rec" \
    >"$TMP/f.txt" 2>"$TMP/err"
st=$?
expect_status 1 "damaged input: exit 1"
grep -q 'truncated-last-block.rec' "$TMP/err"; ok $? "damaged input: the error names the file"

# A thread's name is the program's choice, a terminal's escape sequence
# included: the collapsed text writes control characters as \xHH.
if command -v python3 >/dev/null 2>&1; then
    # python3 under a sanitizer build's runtime: its leaks are not ours.
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    "$REC_START" -q -o "$TMP/esc.rec" -- python3 -c 'import ctypes, time
ctypes.CDLL(None).prctl(15, b"esc\x1b[31m\x01", 0, 0, 0)
t = time.process_time()
while time.process_time() - t < 0.3:
    pass' 2>"$TMP/err"
    "$REC_DUMP" --format collapsed --group thread "$TMP/esc.rec" >"$TMP/esc.txt" 2>"$TMP/err"
    ! LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$TMP/esc.txt" &&
        grep -qF '[esc\x1b[31m\x01 tid=' "$TMP/esc.txt"
    r=$?
    ok $r "collapsed: a thread name's control characters written as \\xHH"
    [ $r -eq 0 ] || { diag_file "$TMP/esc.txt"; diag_file "$TMP/err"; }
else
    ok 0 "collapsed: control characters # SKIP python3 not installed"
fi

# A terminal gets no binary (as rec-start -o - refuses it): run under a
# pseudo-terminal, which python3's pty module gives.
ontty() {
    python3 -c 'import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
while True:
    try:
        d = os.read(fd, 65536)
    except OSError:
        break
    if not d:
        break
    out += d
st = os.waitpid(pid, 0)[1]
sys.stdout.buffer.write(out)
sys.exit(os.WEXITSTATUS(st) if os.WIFEXITED(st) else 99)' "$@"
}
if command -v python3 >/dev/null 2>&1 && python3 -c 'import pty' 2>/dev/null; then
    for f in pprof jfr; do
        ontty "$REC_DUMP" --format $f "$GOLDEN/basic.rec" >"$TMP/tty.out"
        st=$?
        expect_status 2 "--format $f to a terminal: refused"
        grep -q "standard output is a terminal" "$TMP/tty.out" &&
            [ "$(wc -c <"$TMP/tty.out")" -lt 400 ]
        ok $? "--format $f to a terminal: says why, writes nothing else"
    done
    ontty "$REC_DUMP" --format collapsed "$GOLDEN/basic.rec" >"$TMP/tty.out"
    st=$?
    expect_status 0 "--format collapsed to a terminal: text, written"
else
    for _ in 1 2 3 4 5; do ok 0 "a terminal # SKIP python3's pty module not available"; done
fi

done_testing
