#!/bin/sh
# rec-dump and rec-summary against committed recordings (tests/mkgolden) and
# their expected outputs (tests/data/golden/). Filters and other formats are
# checked against expectations derived from the committed NDJSON.
# After an intended change of the output or of the recordings, regenerate
# the expected files with
#   REGEN=1 top_builddir=BUILD tests/test-dump-golden.sh
# and review the diff.
# Note: jq 1.6 rounds integers above 2^53, so startTime (ns since the epoch)
# is compared as text or removed before jq compares events.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
set -f   # patterns in the cases are for the tools, not the shell

[ -x "$REC_DUMP" ] || skip_all "rec-dump not built"
command -v jq >/dev/null || skip_all "jq not installed"
cd "$GOLDEN" || exit 99

# name|tool|expected status|arguments
cases='basic.ndjson|dump|0|--ndjson basic.rec
unfinished.ndjson|dump|0|--ndjson unfinished.rec
basic.summary.txt|summary|0|basic.rec
basic.summary.json|summary|0|--json basic.rec
unfinished.summary.txt|summary|0|unfinished.rec'

while IFS='|' read -r name tool want args; do
    case $tool in
    dump) bin=$REC_DUMP ;;
    *) bin=$REC_SUMMARY ;;
    esac
    # shellcheck disable=SC2086
    "$bin" $args >"$TMP/out" 2>"$TMP/err"
    status=$?
    if [ -n "$REGEN" ]; then
        cp "$TMP/out" "$GOLDEN/$name"
        if [ -s "$TMP/err" ]; then cp "$TMP/err" "$GOLDEN/$name.err"; else rm -f "$GOLDEN/$name.err"; fi
    fi
    ok $(( status != want )) "$name: exit status $status (want $want)"
    if cmp -s "$TMP/out" "$name"; then
        ok 0 "$name: output matches"
    else
        ok 1 "$name: output matches"
        diff -u "$name" "$TMP/out" | head -30 | sed 's/^/# /'
    fi
    if [ -f "$name.err" ]; then
        cmp -s "$TMP/err" "$name.err"
    else
        [ ! -s "$TMP/err" ]
    fi
    st=$?
    ok $st "$name: standard error as expected"
    [ $st -eq 0 ] || sed 's/^/# /' "$TMP/err" | head -5
done <<EOF2
$cases
EOF2

same() {   # same DESCRIPTION EXPECTED ACTUAL
    if cmp -s "$2" "$3"; then
        ok 0 "$1"
    else
        ok 1 "$1"
        diff -u "$2" "$3" | head -20 | sed 's/^/# /'
    fi
}
notime() { jq -c 'del(.startTime)' "$@"; }

# --json (the default) is the NDJSON lines as one array.
awk 'BEGIN { printf "[\n" } NR > 1 { printf ",\n" } { printf "%s", $0 }
     END { printf "\n]\n" }' basic.ndjson >"$TMP/want"
"$REC_DUMP" --json basic.rec >"$TMP/out"
same "--json is an array of the NDJSON objects" "$TMP/want" "$TMP/out"
"$REC_DUMP" basic.rec >"$TMP/out"
same "--json is the default" "$TMP/want" "$TMP/out"
check "--json output parses" jq -e 'type == "array" and length == 24' "$TMP/out"
printf '[]\n' >"$TMP/want"
"$REC_DUMP" --since +1000h basic.rec >"$TMP/out"
same "--json without events prints []" "$TMP/want" "$TMP/out"

# --metadata is the schema the recording was written with: the committed
# recording's types are still in schemas/events.json under the same ids
# (types are only ever appended); a fresh recording's are the schema itself.
"$REC_DUMP" --metadata basic.rec >"$TMP/meta"
ok $? "--metadata exits 0"
check "--metadata: format version 1.0" jq -e '.formatVersion == "1.0"' "$TMP/meta"
check "--metadata: types, fields, units, labels, descriptions" jq -e '
    (.types | length) > 10 and all(.types[]; has("id") and has("name") and
        (.kind == "event" or .kind == "pool") and has("label") and has("description") and
        all(.fields[]; has("name") and has("type") and has("label") and has("description")))
    and any(.types[].fields[]; .unit == "ns") and any(.types[].fields[]; .nullable)
    and any(.types[].fields[]; .array)' "$TMP/meta"
check "--metadata of the committed recording fits schemas/events.json" \
    jq -e -n --slurpfile m "$TMP/meta" --slurpfile s "$top_srcdir/schemas/events.json" '
    ($s[0].types | map({key: (.id | tostring), value: .name}) | from_entries) as $ids
    | all($m[0].types[]; $ids[.id | tostring] == .name)'
if [ -x "$MKGOLDEN" ] && "$MKGOLDEN" basic "$TMP/meta.rec" >/dev/null 2>&1; then
    "$REC_DUMP" --metadata "$TMP/meta.rec" | jq -S '.types' >"$TMP/out"
    # ("optional" only tells schemas/jsonschema.c what older recordings lack.)
    jq -S '.types | map(.fields |= map(del(.optional)))' "$top_srcdir/schemas/events.json" >"$TMP/want"
    same "--metadata of a fresh recording equals schemas/events.json" "$TMP/want" "$TMP/out"
fi

# --events: the lines of matching types, as text.
grep -E '^\{"type":"(Thread[A-Za-z]*|CPUTimeSampleLost)"' basic.ndjson >"$TMP/want"
"$REC_DUMP" --ndjson --events 'Thread*,CPUTimeSampleLost' basic.rec >"$TMP/out"
same "--events Thread*,CPUTimeSampleLost" "$TMP/want" "$TMP/out"
grep -E '^\{"type":"CPUTimeSample"' basic.ndjson >"$TMP/want"
"$REC_DUMP" --ndjson --events CPUTimeSample basic.rec >"$TMP/out"
same "--events CPUTimeSample (no prefix match)" "$TMP/want" "$TMP/out"

# --threads: by name glob and by tid; events without a thread are left out.
notime basic.ndjson | jq -c 'select(.eventThread != null and
    ((.eventThread.name // "" | startswith("worker-")) or .eventThread.osThreadId == 1002))' >"$TMP/want"
"$REC_DUMP" --ndjson --threads 'worker-*,1002' basic.rec | notime >"$TMP/out"
same "--threads worker-*,1002" "$TMP/want" "$TMP/out"
check "--threads selects something" test -s "$TMP/out"
"$REC_DUMP" --ndjson --threads 'odd*' basic.rec | notime >"$TMP/out"
notime basic.ndjson | jq -c 'select(.eventThread.osThreadId == 1003)' >"$TMP/want"
same "--threads matches a name with odd characters" "$TMP/want" "$TMP/out"

# --stack-depth 1: frames cut to one, truncated set when frames were cut.
notime basic.ndjson | jq -c 'if .stackTrace then .stackTrace |=
    (.truncated = (.truncated or (.frames | length) > 1) | .frames = .frames[0:1])
    else . end' >"$TMP/want"
"$REC_DUMP" --ndjson --stack-depth=1 basic.rec | notime >"$TMP/out"
same "--stack-depth 1" "$TMP/want" "$TMP/out"

# --since/--until against startTime as integers (shell arithmetic is 64-bit).
start=$(sed -n 's/^  "startTime": \([0-9]*\),$/\1/p' basic.summary.json)
check "summary has the recording start" test -n "$start"
since=$((start + 3500000)) until=$((start + 6500000))
: >"$TMP/want"
while IFS= read -r line; do
    t=$(printf '%s\n' "$line" | sed 's/^{"type":"[A-Za-z]*","startTime":\([0-9]*\),.*/\1/')
    if [ "$t" -ge "$since" ] && [ "$t" -lt "$until" ]; then
        printf '%s\n' "$line" >>"$TMP/want"
    fi
done <basic.ndjson
"$REC_DUMP" --ndjson --since +3500us --until +6.5ms basic.rec >"$TMP/out"
same "--since +3500us --until +6.5ms" "$TMP/want" "$TMP/out"
check "the time window holds 3 events" sh -c "[ \$(wc -l <'$TMP/out') -eq 3 ]"
"$REC_DUMP" --ndjson --since "$since" --until "$until" basic.rec >"$TMP/out"
same "--since/--until in ns since the epoch" "$TMP/want" "$TMP/out"
rfc=$(date -u -d "@$((since / 1000000000))" +%Y-%m-%dT%H:%M:%S 2>/dev/null)
if [ -n "$rfc" ]; then
    frac=$(printf '%09d' $((since % 1000000000)))
    "$REC_DUMP" --ndjson --since "$rfc.${frac}Z" --until "$until" basic.rec >"$TMP/out"
    same "--since in RFC 3339" "$TMP/want" "$TMP/out"
fi

# Several files: one output, in order; the warning of the unfinished one.
cat basic.ndjson unfinished.ndjson >"$TMP/want"
"$REC_DUMP" --ndjson basic.rec unfinished.rec >"$TMP/out" 2>"$TMP/err"
ok $? "two recordings: exit 0"
same "two recordings: events of both in order" "$TMP/want" "$TMP/out"
same "two recordings: the unfinished one warns" unfinished.ndjson.err "$TMP/err"
cat basic.summary.json >"$TMP/want"
"$REC_SUMMARY" --json unfinished.rec >>"$TMP/want" 2>/dev/null
"$REC_SUMMARY" --json basic.rec unfinished.rec >"$TMP/out" 2>/dev/null
same "two recordings: one summary each" "$TMP/want" "$TMP/out"
check "-o writes to a file" sh -c "'$REC_DUMP' --ndjson -o '$TMP/o.ndjson' basic.rec && cmp '$TMP/o.ndjson' basic.ndjson"

# A recording written now by mkgolden through the writer and read back gives
# the committed output, times aside (the recording's start differs).
if [ -x "$MKGOLDEN" ]; then
    "$MKGOLDEN" basic "$TMP/fresh.rec" >/dev/null 2>&1
    ok $? "mkgolden writes a recording"
    # Fields appended to the schema since basic.rec was written are absent
    # from the committed output: each fresh event, and each pool entry in
    # it (a frame's kind), keeps only the fields its committed counterpart
    # has (nulls out of both events).
    nonull='del(.startTime) | del(.[] | select(. == null))'
    jq -c "$nonull" basic.ndjson >"$TMP/want"
    "$REC_DUMP" --ndjson "$TMP/fresh.rec" | jq -c "$nonull" >"$TMP/all"
    jq -c -n --slurpfile o "$TMP/all" --slurpfile w "$TMP/want" '
        def keep($w):
          if type == "object" and ($w | type) == "object" then
            with_entries(select(.key as $k | $w | has($k)) |
                         .key as $k | .value |= keep($w[$k]))
          elif type == "array" and ($w | type) == "array" then
            [range(0; length) as $j | .[$j] | keep($w[$j])]
          else . end;
        $o | to_entries[] | .key as $i | .value | keep($w[$i] // {})' >"$TMP/out"
    same "fresh recording dumps like the golden one (times aside)" "$TMP/want" "$TMP/out"
fi
done_testing
