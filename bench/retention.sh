#!/usr/bin/env bash
# bench/retention.sh - how fast a recording grows: bytes per hour of an
# idle process and of a process sampled at 100 Hz, for rec-start into a
# file and into a pipe (-o -), beside JFR.
#
#   bench/retention.sh [--quick] [--runs N] [--tsv FILE] [idle] [busy]
#
# Every figure is a median over BENCH_RUNS (>= 5) runs, with the range.
# Each run records the same program twice, for T and for 2T seconds
# (T = RETENTION_SECS, default 30; 10 with --quick), and takes the slope:
#   bytes per hour   (bytes(2T) - bytes(T)) / T x 3600, the steady rate
#   bytes at start   2 bytes(T) - bytes(2T), the fixed part (metadata,
#                    modules, process and thread events, JVM start...)
# Parts (default both):
#   idle   `retention-prog idle T` (blocked in poll()) under rec-start
#          -o FILE and -o - (all the bytes of the
#          pipe, read by `retention-prog chunks`); a Java program in
#          Thread.sleep under -XX:StartFlightRecording with settings=default
#          and settings=profile (each JDK found under /usr/lib/jvm: 17 and
#          >= 25; >= 25 also profile + jdk.CPUTimeSample at 10 ms), the
#          size of its .jfr at exit. The runs of one round go in parallel
#          (they hardly use the CPU).
#   busy   one thread burning a CPU for T seconds of wall time: bench/
#          retention-prog burn under rec-start --throttle 10ms (100 samples
#          per CPU second), file and pipe; a Java busy loop under JFR:
#          on the JDK below 25 settings=profile (jdk.ExecutionSample every
#          10 ms), on the JDK >= 25 settings=profile with
#          jdk.ExecutionSample off and jdk.CPUTimeSample at a 10 ms
#          throttle. Also samples per second
#          and bytes per sample (slope of the bytes over the slope of the
#          samples: rec-summary's total, jfr summary's count). The T and 2T
#          runs of one profiler go in parallel (2 cores), profilers one
#          after the other.
# For rec, each recording's chunks are counted (an 80-byte header each;
# a pipe gets one chunk per flush) and their bytes split into event
# blocks and the rest (metadata and pool blocks, headers): "beyond events
# per chunk" is what a chunk costs besides its events. The load average is
# printed before and after. --quick: T = 10 s (unless RETENTION_SECS is
# set). Takes about 2 x T x BENCH_RUNS x (1 + the busy profilers: 2 for
# rec, 1 per JDK): ~26 min at T = 30 with two JDKs, ~9 with --quick.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

quick=0 parts=
while [ $# -gt 0 ]; do
    case $1 in
    --quick) quick=1; shift ;;
    --runs) BENCH_RUNS=$2; shift 2 ;;
    --tsv) BENCH_TSV=$2; shift 2 ;;
    idle | busy) parts="$parts $1"; shift ;;
    *) echo "usage: $0 [--quick] [--runs N] [--tsv FILE] [idle] [busy]" >&2; exit 2 ;;
    esac
done
[ "$BENCH_RUNS" -ge 5 ] || { echo "--runs must be >= 5" >&2; exit 2; }
parts=${parts:-idle busy}
if [ $quick = 1 ]; then T=${RETENTION_SECS:-10}; else T=${RETENTION_SECS:-30}; fi
T2=$((2 * T))

START=$(rec_prog rec-start)
SUMMARY=$(rec_prog rec-summary)
RP=$(rec_prog retention-prog)
cd "$BENCH_TMP" || exit 1

# The JDKs: the newest below 25 (17 here) and the first >= 25, each with
# javac and jfr; "major dir" lines.
jdk_major() { "$1/bin/java" -version 2>&1 | sed -n '1s/.*version "\([0-9]*\).*/\1/p'; }
jdks=$(for d in /usr/lib/jvm/*; do
           [ -L "$d" ] && continue
           [ -x "$d/bin/javac" ] && [ -x "$d/bin/jfr" ] || continue
           m=$(jdk_major "$d") && [ -n "$m" ] && echo "$m $d"
       done | sort -n | awk '$1 < 25 { old = $0 } $1 >= 25 && !new { new = $0 }
                             END { if (old) print old; if (new) print new }')
[ -n "$jdks" ] || echo "jfr: no JDK with javac and jfr under /usr/lib/jvm; skipped (apt-get install openjdk-17-jdk-headless)"

mkdir -p java
cat > java/Retention.java <<'JAVA'
// bench/retention.sh: sleep or burn one CPU for SECONDS of wall time.
public class Retention {
    static long sink;
    static long step(long x) {
        for (int i = 0; i < 20000; i++) x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }
    public static void main(String[] a) throws Exception {
        double secs = Double.parseDouble(a[1]);
        if (a[0].equals("sleep")) { Thread.sleep((long) (secs * 1000)); return; }
        long end = System.nanoTime() + (long) (secs * 1e9), x = 1;
        while (System.nanoTime() < end) x = step(x);
        sink = x;
    }
}
JAVA
while read -r m d; do
    [ -n "$m" ] || continue
    mkdir -p "java/$m"
    "$d/bin/javac" -d "java/$m" java/Retention.java
done <<<"$jdks"

echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, $BENCH_RUNS runs, T = $T s and $T2 s"
echo "rec-start: $START; JDKs: $(echo "$jdks" | awk 'NF { printf "%s%s", s, $2; s = ", " }')"

# The profilers of each part: "label|kind|args", kind rec-file, rec-pipe
# or jfr:MAJOR (args: the -XX:StartFlightRecording settings). Busy: JFR's
# ExecutionSample on the JDK below 25, CPUTimeSample on the one >= 25.
cpu10=jdk.CPUTimeSample#enabled=true,jdk.CPUTimeSample#throttle=10ms
profilers() {   # profilers idle|busy
    echo "rec file|rec-file"
    echo "rec pipe|rec-pipe"
    while read -r m d; do
        [ -n "$m" ] || continue
        if [ "$1" = idle ]; then
            echo "jfr $m default|jfr:$m|settings=default"
            echo "jfr $m profile|jfr:$m|settings=profile"
            [ "$m" -lt 25 ] || echo "jfr $m profile+cputime|jfr:$m|settings=profile,$cpu10"
        elif [ "$m" -lt 25 ]; then
            echo "jfr $m profile|jfr:$m|settings=profile"
        else
            echo "jfr $m cputime|jfr:$m|settings=profile,jdk.ExecutionSample#enabled=false,$cpu10"
        fi
    done <<<"$jdks"
}
legend() {
    echo "rec file: rec-start --throttle 10ms -o FILE; rec pipe: rec-start --throttle 10ms -o - (every byte of the pipe)"
    echo "jfr N default / profile: -XX:StartFlightRecording=filename=X.jfr,settings=default / profile (profile: jdk.ExecutionSample every 10 ms, default: 20 ms)"
    echo "jfr N profile+cputime: settings=profile,$cpu10"
    echo "jfr N cputime: settings=profile,jdk.ExecutionSample#enabled=false,$cpu10"
}
legend

# one KIND ARGS MODE SECS OUT: record the sleeping (MODE idle) or burning
# (busy) program for SECS seconds; OUT gets "bytes N samples N chunks N
# events N metadata N pool N other N" (JFR: bytes, samples, chunks only).
one() {
    local kind=$1 args=$2 mode=$3 secs=$4 out=$5 prog
    local st=0
    prog=("$RP" "$mode" "$secs")
    [ "$mode" = busy ] && prog=("$RP" burn "$secs")
    # A run whose program did not end well (a signal from elsewhere...)
    # leaves no result.
    case $kind in
    rec-file)
        rm -f "$out.rec"
        "$START" -q -f --throttle 10ms -o "$out.rec" -- "${prog[@]}" >/dev/null 2>"$out.err" || st=$?
        [ $st = 0 ] || { echo "exit status $st" >>"$out.err"; return 0; }
        echo "$("$RP" chunks "$out.rec") samples $(rec_samples "$out.rec")" >"$out"
        ;;
    rec-pipe)
        "$START" -q --throttle 10ms -o - -- "${prog[@]}" 2>"$out.err" |
            tee "$out.rec" | "$RP" chunks >"$out.c" || st=$?
        [ $st = 0 ] || { echo "exit status $st" >>"$out.err"; return 0; }
        echo "$(cat "$out.c") samples $(rec_samples "$out.rec")" >"$out"
        ;;
    jfr:*)
        local m=${kind#jfr:} d
        d=$(awk -v m="$m" '$1 == m { print $2 }' <<<"$jdks")
        rm -f "$out.jfr"
        "$d/bin/java" -Xlog:disable "-XX:StartFlightRecording=filename=$out.jfr,$args" \
            -cp "java/$m" Retention "$([ "$mode" = idle ] && echo sleep || echo burn)" "$secs" \
            >/dev/null 2>"$out.err" || st=$?
        [ $st = 0 ] || { echo "exit status $st" >>"$out.err"; return 0; }
        "$d/bin/jfr" summary "$out.jfr" | awk -v sz="$(stat -c %s "$out.jfr")" '
            $1 == "Chunks:" { c = $2 }
            $1 == "jdk.ExecutionSample" || $1 == "jdk.CPUTimeSample" { s += $2 }
            END { printf "bytes %d chunks %d samples %d\n", sz, c, s }' >"$out"
        ;;
    esac
    rm -f "$out.rec" "$out.jfr"
}

# Total samples of a recording (rec-summary's "all" row).
rec_samples() { "$SUMMARY" "$1" 2>/dev/null | awk '$1 == "all" { print $5; exit }' | grep . || echo 0; }

# get FIELD FILE: its value, 0 if absent
get() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) v = $(i + 1) } END { print v + 0 }' "$2"; }

# fig FIGURE TOOL UNIT NOTE < per-run values: a row of the table (rows)
# and bench_fig
fig() {
    local v
    v=$(cat)
    [ -n "$v" ] || return 0
    printf '%s|%s|%s %s|%s … %s\n' "$1" "$2" "$(echo "$v" | median | awk '{ printf "%.4g", $1 }')" "$3" \
        "$(echo "$v" | sort -g | head -1)" "$(echo "$v" | sort -g | tail -1)" >>rows
    echo "$v" | bench_fig "$1" "$2" "$3" "$4"
}
# The rows, in columns as wide as they need.
table() {
    awk -F'|' '{ for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } n = NR; nf = NF }
        END { split("figure|tool|median|range", h, "|")
              for (i = 1; i <= nf; i++) if (length(h[i]) > w[i]) w[i] = length(h[i])
              for (i = 1; i <= nf; i++) printf "%-*s  ", w[i], h[i]; print ""
              for (i = 1; i <= nf; i++) { d = ""; for (j = 0; j < w[i]; j++) d = d "-"; printf "%s  ", d } print ""
              for (r = 1; r <= n; r++) { for (i = 1; i <= nf; i++) printf "%-*s  ", w[i], c[r, i]; print "" } }' rows
    rm -f rows
}

part() {        # part idle|busy
    local mode=$1 r label kind args i
    local -a profs
    mapfile -t profs < <(profilers "$mode")
    echo
    echo "== $mode: $([ "$mode" = idle ] && echo "a sleeping process" || echo "one thread burning a CPU, 100 samples per CPU second"), T = $T s and $T2 s; load $(cut -d' ' -f1-3 /proc/loadavg)"
    for r in $(seq "$BENCH_RUNS"); do
        i=0
        for p in "${profs[@]}"; do
            IFS='|' read -r label kind args <<<"$p"
            one "$kind" "$args" "$mode" "$T" "$mode.$i.$r.a" &
            one "$kind" "$args" "$mode" "$T2" "$mode.$i.$r.b" &
            # busy: one profiler at a time (its two runs take both cores);
            # idle: the JVMs' starts a little apart
            if [ "$mode" = busy ]; then wait; else sleep 2; fi
            i=$((i + 1))
        done
        wait
        echo "  run $r of $BENCH_RUNS done; load $(cut -d' ' -f1-3 /proc/loadavg)"
    done
    # per run: the slope between T and 2T
    i=0
    for p in "${profs[@]}"; do
        IFS='|' read -r label kind args <<<"$p"
        for r in $(seq "$BENCH_RUNS"); do
            a=$mode.$i.$r.a b=$mode.$i.$r.b
            [ -s "$a" ] && [ -s "$b" ] || { echo "  $label run $r: no result ($(cat "$a.err" "$b.err" 2>/dev/null | head -2))"; continue; }
            printf '%s %s %s %s %s %s %s %s %s %s\n' \
                "$(get bytes "$a")" "$(get bytes "$b")" "$(get samples "$a")" "$(get samples "$b")" \
                "$(get chunks "$a")" "$(get chunks "$b")" "$(get events "$b")" \
                "$(get metadata "$b")" "$(get pool "$b")" "$(get other "$b")"
        done >"$mode.$i.runs"
        i=$((i + 1))
    done
    local what
    what=$([ "$mode" = idle ] && echo idle || echo "100 Hz")
    rm -f rows
    i=0
    for p in "${profs[@]}"; do
        IFS='|' read -r label kind args <<<"$p"
        awk -v t="$T" '{ printf "%.6g\n", ($2 - $1) / t * 3600 / 1e6 }' "$mode.$i.runs" |
            fig "$what, bytes per hour" "$label" MB/h "slope between ${T} s and ${T2} s"
        i=$((i + 1))
    done
    i=0
    for p in "${profs[@]}"; do
        IFS='|' read -r label kind args <<<"$p"
        awk '{ print 2 * $1 - $2 }' "$mode.$i.runs" |
            fig "$what, bytes at start" "$label" B "2 bytes(${T} s) - bytes(${T2} s)"
        i=$((i + 1))
    done
    if [ "$mode" = busy ]; then
        i=0
        for p in "${profs[@]}"; do
            IFS='|' read -r label kind args <<<"$p"
            awk -v t="$T" '{ printf "%.6g\n", ($4 - $3) / t }' "$mode.$i.runs" |
                fig "$what, samples per second" "$label" "/s" "of wall time; the program's CPU share on a shared machine"
            i=$((i + 1))
        done
        i=0
        for p in "${profs[@]}"; do
            IFS='|' read -r label kind args <<<"$p"
            awk '$4 > $3 { printf "%.6g\n", ($2 - $1) / ($4 - $3) }' "$mode.$i.runs" |
                fig "$what, bytes per sample" "$label" B "slope of bytes over slope of samples"
            i=$((i + 1))
        done
    fi
    i=0
    for p in "${profs[@]}"; do
        IFS='|' read -r label kind args <<<"$p"
        awk -v t="$T" '{ printf "%.6g\n", ($6 - $5) / t * 3600 }' "$mode.$i.runs" |
            fig "$what, chunks per hour" "$label" "/h" "chunk headers (JFR: jfr summary)"
        i=$((i + 1))
    done
    i=0
    for p in "${profs[@]}"; do
        IFS='|' read -r label kind args <<<"$p"
        case $kind in rec-*) ;; *) i=$((i + 1)); continue ;; esac
        awk '$6 > 0 { printf "%.6g\n", ($2 - $7) / $6 }' "$mode.$i.runs" |
            fig "$what, bytes beyond events per chunk" "$label" B "${T2} s run: (all - event blocks) / chunks"
        awk '$6 > 0 { printf "%.6g\n", $8 / $6 }' "$mode.$i.runs" |
            fig "$what, metadata block bytes per chunk" "$label" B "${T2} s run"
        awk '$6 > 0 { printf "%.6g\n", $9 / $6 }' "$mode.$i.runs" |
            fig "$what, pool block bytes per chunk" "$label" B "${T2} s run"
        awk '$2 > 0 { printf "%.4g\n", 100 * $7 / $2 }' "$mode.$i.runs" |
            fig "$what, event blocks' share of the bytes" "$label" % "${T2} s run"
        i=$((i + 1))
    done
    table
    echo
    echo "raw per run (bytes T, bytes 2T, samples T, samples 2T, chunks T, chunks 2T; rec, 2T: events metadata pool other):"
    i=0
    for p in "${profs[@]}"; do
        IFS='|' read -r label kind args <<<"$p"
        awk -v l="$label" '{ print "  " l ": " $0 }' "$mode.$i.runs"
        i=$((i + 1))
    done
}

for p in $parts; do part "$p"; done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
