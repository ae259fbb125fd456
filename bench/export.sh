#!/usr/bin/env bash
# bench/export.sh - the export formats on synthetic recordings.
#
#   bench/export.sh [EVENTS]       (samples per recording, default 1000000)
#
# Two recordings from rec-synth: its defaults (8 threads, 300 stacks) and a
# wide one (64 threads, 20000 stacks). For each, median of BENCH_RUNS (>= 5)
# runs: s per million samples and output size of rec-dump --format
# collapsed, pprof and jfr, of rec-flame, and of rec-dump --ndjson for
# reference; pprof size against the recording's; for rec-flame the time
# until the first picture in headless Chromium (performance.now() when the
# page's first draw is done, skipped without chromium); `jfr summary` of the
# JFR file (the JDK's own reader, skipped without a JDK) as a peer figure.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

events=${1:-1000000}
synth=$(rec_prog rec-synth)
dump=$(rec_prog rec-dump)
flame=$(rec_prog rec-flame)
JFR=/usr/lib/jvm/java-17-openjdk-amd64/bin/jfr
[ -x "$JFR" ] || JFR=$(command -v jfr || true)
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)

bench_info
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-8s %-10s %10s %12s %14s\n' recording export "s/M" "bytes" "vs .rec"

run() {         # run NAME REC OUTFILE CMD... : median wall, output size
                # (OUTFILE "": the size of CMD's stdout)
    local name=$1 rec=$2 out=$3; shift 3
    : > "$BENCH_TMP/m"
    for ((i = 0; i < BENCH_RUNS; i++)); do
        [ -z "$out" ] || rm -f "$out"
        measure "$BENCH_TMP/m" "$@"
    done
    local w size
    w=$(col_median "$BENCH_TMP/m" 1)
    if [ -n "$out" ]; then size=$(stat -c %s "$out"); else size=$(stat -c %s "$BENCH_TMP/last.out"); fi
    printf '%-8s %-10s %10.3f %12d %13.2fx\n' "$kind" "$name" \
        "$(awk -v w="$w" -v n="$events" 'BEGIN { print w * 1e6 / n }')" \
        "$size" "$(awk -v a="$size" -v b="$(stat -c %s "$rec")" 'BEGIN { print a / b }')"
}

for kind in default wide; do
    rec=$BENCH_TMP/$kind.rec
    if [ $kind = default ]; then
        "$synth" -n "$events" "$rec" >/dev/null
    else
        "$synth" -n "$events" -t 64 -s 20000 "$rec" >/dev/null
    fi
    run collapsed "$rec" "$BENCH_TMP/o.txt" "$dump" --format collapsed -o "$BENCH_TMP/o.txt" "$rec"
    run pprof "$rec" "$BENCH_TMP/o.pb.gz" "$dump" --format pprof -o "$BENCH_TMP/o.pb.gz" "$rec"
    run jfr "$rec" "$BENCH_TMP/o.jfr" "$dump" --format jfr -o "$BENCH_TMP/o.jfr" "$rec"
    run rec-flame "$rec" "$BENCH_TMP/o.html" "$flame" -o "$BENCH_TMP/o.html" "$rec"
    run ndjson "$rec" "$BENCH_TMP/o.ndjson" "$dump" --ndjson -o "$BENCH_TMP/o.ndjson" "$rec"
    rm -f "$BENCH_TMP/o.ndjson"
    if [ -n "$JFR" ]; then
        "$dump" --format jfr -o "$BENCH_TMP/o.jfr" "$rec"
        run "jfr-summ" "$rec" "" "$JFR" summary "$BENCH_TMP/o.jfr"
    fi
    if [ -n "$CHROMIUM" ]; then
        "$flame" -o "$BENCH_TMP/o.html" "$rec"
        : > "$BENCH_TMP/paint"
        for ((i = 0; i < BENCH_RUNS; i++)); do
            timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
                --no-first-run --disable-background-networking \
                --disable-component-update --disable-sync \
                --user-data-dir="$(mktemp -d "$BENCH_TMP/prof.XXXXXX")" \
                --window-size=1400,900 --dump-dom "file://$BENCH_TMP/o.html" 2>/dev/null \
                | sed -n 's/.*data-drawn-ms="\([0-9]*\)".*/\1/p' | head -1 >> "$BENCH_TMP/paint"
        done
        echo "# $kind: rec-flame first picture in Chromium: $(median < "$BENCH_TMP/paint") ms" \
             "(median of $BENCH_RUNS), page $(stat -c %s "$BENCH_TMP/o.html") bytes"
    fi
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
