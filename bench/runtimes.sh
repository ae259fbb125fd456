#!/bin/bash
# bench/runtimes.sh - stacks through code without unwind tables, beside
# perf record -g (frame-pointer call chains) on the same programs: a cgo Go
# program (goroutine stacks), node --perf-basic-prof and Java with
# -XX:+PreserveFramePointer (JIT-compiled code), and Debian's python3
# (CPython 3.11: Python functions read from the interpreter's frames; perf
# names them only on 3.12 and later with -X perf). Per program and tool, over
# RUNS runs (median): the share of the program's samples with a stack of
# at least two frames, rooted (walked to the thread's or goroutine's
# root), and naming the program's own hot function (for Java, whose
# methods neither tool names without a perf map: a frame in JIT code).
#
#   runtimes.sh [BUILD [RUNS]]     (BUILD: a build tree, default _build)
#
# perf names JIT frames from the same perf map at report time (node's);
# neither tool names Java methods without one. A runtime that is not
# installed is skipped.
set -u
B=$(cd "${1:-_build}" && pwd)
RUNS=${2:-5}
SRC=$(cd "$(dirname "$0")/.." && pwd)
START=$B/tools/rec-start
DUMP=$B/tools/rec-dump
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# fig FIGURE TOOL UNIT [EXTRA] < values (bench/fig.sh)
# shellcheck source=bench/fig.sh
. "$(dirname "$0")/fig.sh"
fig() { bench_fig "$@"; }

echo "# $(date -u +%FT%TZ) $(uname -r) $(nproc) cpus runs=$RUNS load: $(cut -d' ' -f1-3 /proc/loadavg)"
have_perf=0
perf record -q -o "$tmp/probe.data" -- true >/dev/null 2>&1 && have_perf=1

# shares FILE ROOT-REGEX NAME-REGEX: "with rooted named" percentages of the
# stacks in FILE (one per line, frames innermost first, space-separated).
shares() {
    awk -v root="$2" -v name="$3" '
        { n++; k = split($0, f, " "); if (k >= 2) w++
          if (f[k] ~ root) r++
          if ($0 ~ name) m++ }
        END { if (n) printf "%.1f %.1f %.1f %d\n", 100 * w / n, 100 * r / n, 100 * m / n, n }' "$1"
}

# rec_stacks REC THREAD-NAME: one line per sample of that thread.
rec_stacks() {
    "$DUMP" --ndjson --stack-depth 0 --events CPUTimeSample "$1" |
        jq -r --arg t "$2" 'select(.eventThread.name == $t) |
            [.stackTrace.frames // [] | .[].function // "?" | gsub(" "; "_")] | join(" ")'
}

# perf_stacks DATA COMM: one line per sample of that command.
perf_stacks() {
    perf script -i "$1" -F comm,ip,sym 2>/dev/null | awk -v c="$2" '
        /^[^ \t]/ { if (keep && line != "") print line; keep = ($1 == c); line = ""; next }
        NF >= 2 { s = $2; for (i = 3; i <= NF; i++) s = s "_" $i; line = line == "" ? s : line " " s }
        END { if (keep && line != "") print line }'
}

# one NAME THREAD ROOT NAMEX CMD...: RUNS runs under each tool.
one() {
    local name=$1 thread=$2 root=$3 namex=$4
    shift 4
    : >"$tmp/rec.v"
    : >"$tmp/perf.v"
    for _ in $(seq "$RUNS"); do
        "$START" -q -f -o "$tmp/r.rec" -- "$@" >/dev/null 2>&1 || continue
        rec_stacks "$tmp/r.rec" "$thread" >"$tmp/r.txt"
        shares "$tmp/r.txt" "$root" "$namex" >>"$tmp/rec.v"
        if [ $have_perf = 1 ]; then
            perf record -q -g -o "$tmp/p.data" -- "$@" >/dev/null 2>&1 || continue
            perf_stacks "$tmp/p.data" "$thread" >"$tmp/p.txt"
            shares "$tmp/p.txt" "$root" "$namex" >>"$tmp/perf.v"
        fi
    done
    for t in rec perf; do
        [ -s "$tmp/$t.v" ] || continue
        w=$(awk '{ print $1 }' "$tmp/$t.v" | median)
        r=$(awk '{ print $2 }' "$tmp/$t.v" | median)
        m=$(awk '{ print $3 }' "$tmp/$t.v" | median)
        n=$(awk '{ print $4 }' "$tmp/$t.v" | median)
        printf "%-28s %-5s with a stack %5.1f%%  rooted %5.1f%%  naming %-14s %5.1f%%  (%s samples)\n" \
            "$name" "$t" "$w" "$r" "$namex" "$m" "$n"
        awk '{ print $2 }' "$tmp/$t.v" | fig "stacks rooted, $name" "$t" % \
            "share of the program's samples walked to the root ($root)"
        awk '{ print $3 }' "$tmp/$t.v" | fig "stacks naming $namex, $name" "$t" % \
            "share of the program's samples with a frame naming it"
    done
}

if command -v go >/dev/null 2>&1; then
    mkdir -p "$tmp/go"
    cp "$SRC/tests/hazards/go/main.go" "$SRC/tests/hazards/go/go.mod" "$tmp/go/"
    if (cd "$tmp/go" && GOFLAGS=-mod=mod GOPROXY=off CGO_ENABLED=1 \
            GOCACHE="$tmp/gocache" GOPATH="$tmp/gopath" go build -o goburn . >/dev/null 2>&1); then
        one "Go (cgo), 4 goroutines" goburn 'runtime[.]goexit' 'main[.]goBurn' \
            "$tmp/go/goburn" 200000000
    fi
else
    echo "go: not installed"
fi
if command -v node >/dev/null 2>&1; then
    one "node --perf-basic-prof" node '^(_start|__libc_start_call_main)$' 'hot[.]js' \
        node --perf-basic-prof "$SRC/tests/runtimes/hot.js" 2000
    rm -f /tmp/perf-*.map
else
    echo "node: not installed"
fi
if command -v javac >/dev/null 2>&1 && javac -d "$tmp" "$SRC/tests/runtimes/Hot.java" 2>/dev/null; then
    one "java -XX:+PreserveFramePointer" java '^(__clone3|start_thread|clone)$' 'jit' \
        java -XX:+PreserveFramePointer -cp "$tmp" Hot 2000
else
    echo "java: not installed"
fi
if [ -x /usr/bin/python3 ]; then
    one "python3 $(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])'), pure Python" \
        python3 '^(_start|__clone3|start_thread|clone)$' '(^| )(inner|gen|consume)( |$)' \
        /usr/bin/python3 "$SRC/tests/runtimes/hot.py" 1500
else
    echo "python3: not installed"
fi
