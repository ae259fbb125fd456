#!/usr/bin/env bash
# bench/rec.sh - librecord and the rec readers on synthetic recordings.
#
#   bench/rec.sh [--tsv FILE] [EVENTS]   (EVENTS per run, default 1000000)
#
# Measures, median of BENCH_RUNS (>= 5) runs each:
#   writer       rec-synth --bench: events/s through the public writer API
#                (interning a stack per sample, lz4, CRC) and bytes/event of
#                the whole file
#   rec-summary  s per million events (the whole file decoded)
#   rec-dump     --ndjson to /dev/null, s per million events
#   rec-cpu      the per-thread table, s per million events
#   memory       max RSS of both readers on a ~1 GB recording, made on the fly
#                and deleted afterwards (BENCH_BIG_BYTES; 0 skips it)
# Needs a build: REC_BUILD (default _build/) with bench/rec-synth and tools.
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

if [ "${1:-}" = --tsv ]; then BENCH_TSV=$2; shift 2; fi
events=${1:-1000000}
synth=$(rec_prog rec-synth)
summary=$(rec_prog rec-summary)
dump=$(rec_prog rec-dump)
reccpu=$(rec_prog rec-cpu)
big_bytes=${BENCH_BIG_BYTES:-1000000000}

bench_info
echo "# rec-synth with its default threads and stacks, $events events per run"

# ---- writer ---------------------------------------------------------
: > "$BENCH_TMP/w.runs"
for ((i = 0; i < BENCH_RUNS; i++)); do
    rm -f "$BENCH_TMP/s.rec"
    "$synth" -n "$events" --seed $((i + 1)) --bench "$BENCH_TMP/s.rec" >"$BENCH_TMP/w.out" 2>&1 ||
        { cat "$BENCH_TMP/w.out" >&2; exit 1; }
    # "events N wall W s cpu C s rate R events/s (cpu Rc) bytes B bytes/event E"
    awk '{ for (i = 1; i <= NF; i++) { if ($i == "rate") r = $(i + 1); if ($i == "bytes/event") b = $(i + 1);
                                       if ($i == "wall") w = $(i + 1); if ($i == "(cpu") c = $(i + 1) + 0 } }
         END { print r, b, w, c }' "$BENCH_TMP/w.out" >> "$BENCH_TMP/w.runs"
done
rate=$(awk '{print $1}' "$BENCH_TMP/w.runs" | median)
bpe=$(awk '{print $2}' "$BENCH_TMP/w.runs" | median)
wall=$(awk '{print $3}' "$BENCH_TMP/w.runs" | median)
crate=$(awk '{print $4}' "$BENCH_TMP/w.runs" | median)

# Total events in the file (samples plus thread, module... events).
nev=$("$summary" "$BENCH_TMP/s.rec" | awk '$1 == "Events:" { print $2 }')

# ---- readers --------------------------------------------------------
: > "$BENCH_TMP/sum.m"; : > "$BENCH_TMP/dump.m"; : > "$BENCH_TMP/cpu.m"
for ((i = 0; i < BENCH_RUNS; i++)); do
    measure "$BENCH_TMP/sum.m" "$summary" "$BENCH_TMP/s.rec"
    measure "$BENCH_TMP/dump.m" sh -c "'$dump' --ndjson '$BENCH_TMP/s.rec' > /dev/null"
    measure "$BENCH_TMP/cpu.m" "$reccpu" "$BENCH_TMP/s.rec"
done
# wall and CPU (user + sys) seconds per million events; CPU time is the
# steadier figure on a shared machine
per_m() { calc "$(col_median "$1" 1) * 1000000 / $nev" 3; }
cpu_per_m() { calc "$(cpu_median "$1") * 1000000 / $nev" 3; }

table_head "measure|median|unit"
table_row "writer throughput|$(calc "$rate / 1e6" 2)|M events/s"
table_row "writer throughput per CPU second|$(calc "$crate / 1e6" 2)|M events/s"
table_row "writer wall time, $events events|$(calc "$wall" 3)|s"
table_row "file size per event|$(calc "$bpe" 2)|bytes"
table_row "rec-summary|$(per_m "$BENCH_TMP/sum.m")|s per M events"
table_row "rec-summary, CPU|$(cpu_per_m "$BENCH_TMP/sum.m")|s per M events"
table_row "rec-dump --ndjson > /dev/null|$(per_m "$BENCH_TMP/dump.m")|s per M events"
table_row "rec-dump --ndjson, CPU|$(cpu_per_m "$BENCH_TMP/dump.m")|s per M events"
table_row "rec-cpu, CPU|$(cpu_per_m "$BENCH_TMP/cpu.m")|s per M events"
table_row "rec-summary max RSS, $events ev|$(calc "$(col_median "$BENCH_TMP/sum.m" 4) / 1024" 1)|MiB"
table_row "rec-dump max RSS, $events ev|$(calc "$(col_median "$BENCH_TMP/dump.m" 4) / 1024" 1)|MiB"
awk '{ print $4 / 1e6 }' "$BENCH_TMP/w.runs" | bench_fig "writer, M events per CPU second" rec-synth "M/s"
awk '{ print $2 }' "$BENCH_TMP/w.runs" | bench_fig "file bytes per event, synthetic samples" rec-synth B
# readers' CPU s per million events (GNU time: 10 ms resolution, so from
# the big recording when there is one)
fig_readers() {  # fig_readers EVENTS SUMMARY.m DUMP.m CPU.m
    awk -v n="$1" '{ print ($2 + $3) * 1e6 / n }' "$2" |
        bench_fig "summary tool, CPU s per million events" rec-summary s "$1 events"
    awk -v n="$1" '{ print ($2 + $3) * 1e6 / n }' "$3" |
        bench_fig "JSON dump, CPU s per million events" "rec-dump --ndjson" s "$1 events"
    awk -v n="$1" '{ print ($2 + $3) * 1e6 / n }' "$4" |
        bench_fig "per-thread CPU table, CPU s per million events" rec-cpu s "$1 events"
}
[ "$big_bytes" -gt 0 ] || fig_readers "$nev" "$BENCH_TMP/sum.m" "$BENCH_TMP/dump.m" "$BENCH_TMP/cpu.m"
rm -f "$BENCH_TMP/s.rec"

# ---- memory on a big recording ---------------------------------------
[ "$big_bytes" -gt 0 ] || exit 0
nbig=$(awk -v b="$big_bytes" -v e="$bpe" 'BEGIN { printf "%.0f", b / e }')
echo
echo "# big recording: $nbig events (~$((big_bytes / 1000000)) MB)"
"$synth" -n "$nbig" --seed 7 "$BENCH_TMP/big.rec" >/dev/null
size=$(stat -c %s "$BENCH_TMP/big.rec")
: > "$BENCH_TMP/bsum.m"; : > "$BENCH_TMP/bdump.m"; : > "$BENCH_TMP/bcpu.m"
for ((i = 0; i < BENCH_RUNS; i++)); do
    measure "$BENCH_TMP/bsum.m" "$summary" "$BENCH_TMP/big.rec"
    measure "$BENCH_TMP/bdump.m" sh -c "'$dump' --ndjson '$BENCH_TMP/big.rec' > /dev/null"
    measure "$BENCH_TMP/bcpu.m" sh -c "'$reccpu' '$BENCH_TMP/big.rec' > /dev/null"
done
fig_readers "$nbig" "$BENCH_TMP/bsum.m" "$BENCH_TMP/bdump.m" "$BENCH_TMP/bcpu.m"
rm -f "$BENCH_TMP/big.rec"
table_head "reader on $((size / 1000000)) MB|max RSS MiB|wall s|CPU s|CPU s per M ev"
for m in bsum:rec-summary bdump:"rec-dump --ndjson" bcpu:rec-cpu; do
    f=$BENCH_TMP/${m%%:*}.m
    table_row "${m#*:}|$(calc "$(col_median "$f" 4) / 1024" 1)|$(calc "$(col_median "$f" 1)" 2)|$(calc "$(cpu_median "$f")" 2)|$(calc "$(cpu_median "$f") * 1000000 / $nbig" 3)"
    awk '{ print $4 / 1024 }' "$f" | bench_fig "reader max RSS on a $((size / 1000000)) MB recording" "${m#*:}" MiB
done
