#!/bin/sh
# The NDJSON contract of rec-dump(1), OUTPUT, checked with jq on a recording
# that holds every event type (tests/data/golden/basic.rec), independently
# of the committed expected outputs.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"

[ -x "$REC_DUMP" ] || skip_all "rec-dump not built"
command -v jq >/dev/null || skip_all "jq not installed"
REC=$GOLDEN/basic.rec
"$REC_DUMP" --ndjson "$REC" >"$TMP/all" 2>"$TMP/err"
ok $? "rec-dump --ndjson exits 0"
"$REC_DUMP" --ndjson --stack-depth 0 "$REC" >"$TMP/full" 2>/dev/null
"$REC_DUMP" --metadata "$REC" >"$TMP/meta" 2>/dev/null
ok $? "rec-dump --metadata exits 0"

# jq -e on every line: exit status is that of the last output, so each
# check reduces the whole stream (-s) to one boolean.
jqcheck() {   # jqcheck DESCRIPTION FILE FILTER
    if jq -e -s "$3" "$2" >"$TMP/jq.out" 2>&1; then
        ok 0 "$1"
    else
        ok 1 "$1"
        head -5 "$TMP/jq.out" | sed 's/^/# /'
    fi
}

n=$(wc -l <"$TMP/all")
ok $(( n < 10 )) "at least 10 events ($n)"
check "every line parses as JSON" sh -c "jq -c . '$TMP/all' | wc -l | grep -qx ' *$n'"
jqcheck "every line is an object" "$TMP/all" 'all(type == "object")'
jqcheck "type then startTime come first" "$TMP/all" \
    'all(keys_unsorted[0:2] == ["type", "startTime"])'
jqcheck "type is a string, startTime an integer ns since the epoch" "$TMP/all" \
    'all((.type | type) == "string" and (.startTime | type) == "number" and
         .startTime == (.startTime | floor) and .startTime > 1000000000000000000)'
if jq -e -n --slurpfile m "$TMP/meta" --slurpfile e "$TMP/all" '
    ($m[0].types | map(select(.kind == "event") | .name) | sort) as $want
    | ($e | map(.type) | unique) as $have
    | $want - $have == []' >/dev/null; then
    ok 0 "events of every type are present"
else
    ok 1 "events of every type are present"
fi
if jq -e -n --slurpfile m "$TMP/meta" --slurpfile e "$TMP/all" '
    ($m[0].types | map(select(.kind == "event") |
        {key: .name, value: (["type", "startTime"] +
            [.fields[].name | select(. != "startTime")])}) | from_entries) as $order
    | all($e[]; keys_unsorted == $order[.type])' >/dev/null; then
    ok 0 "fields appear under their schema names in schema order"
else
    ok 1 "fields appear under their schema names in schema order"
fi
jqcheck "eventThread is {osThreadId, name, processId}" "$TMP/all" \
    'map(select(has("eventThread")) | .eventThread) | length > 0 and all(
        keys_unsorted == ["osThreadId", "name", "processId"] and
        (.osThreadId | type) == "number" and (.processId | type) == "number" and
        ((.name | type) == "string" or .name == null))'
jqcheck "some thread has no name (null)" "$TMP/all" \
    'any(.[]; has("eventThread") and .eventThread.name == null)'
S='map(select(.type == "CPUTimeSample"))'
jqcheck "CPUTimeSample: integer samplingPeriod, boolean failed/biased" "$TMP/all" \
    "$S | length > 0 and all((.samplingPeriod | type) == \"number\" and
        (.failed | type) == \"boolean\" and (.biased | type) == \"boolean\")"
jqcheck "failed samples have a null stackTrace, others a stack" "$TMP/all" \
    "$S | any(.failed) and all(if .failed then .stackTrace == null
        else (.stackTrace | type) == \"object\" end)"
jqcheck "stackTrace is {truncated, frames} with frame objects" "$TMP/all" \
    "$S | map(.stackTrace | select(.)) | all(
        keys_unsorted == [\"truncated\", \"frames\"] and
        (.truncated | type) == \"boolean\" and
        all(.frames[]; has(\"function\") and has(\"module\") and has(\"offset\")
            and has(\"file\") and has(\"line\")))"
jqcheck "default --stack-depth 5 prints at most 5 frames" "$TMP/all" \
    "$S | map(.stackTrace | select(.)) | all(.frames | length <= 5)"
jqcheck "--stack-depth 0 shows deeper stacks" "$TMP/full" \
    "$S | any(.stackTrace.frames | length > 5)"
if jq -e -n --slurpfile a "$TMP/all" --slurpfile f "$TMP/full" '
    [$a[], $f[]] | length > 0 and
    ([range($a | length)] | all(. as $i |
        ($f[$i].stackTrace) as $full | ($a[$i].stackTrace) as $cut |
        if $full == null then $cut == null
        elif ($full.frames | length) > 5 then
            $cut.truncated and $cut.frames == $full.frames[0:5]
        else $cut == $full end))' >/dev/null; then
    ok 0 "cut stacks say truncated and keep the innermost frames"
else
    ok 1 "cut stacks say truncated and keep the innermost frames"
fi
jqcheck "unknown frame parts are null" "$TMP/full" \
    "$S | [.[].stackTrace.frames[]?] | any(.function == null) and any(.file == null and .line == null)"
jqcheck "String references render as strings" "$TMP/all" \
    'map(select(.type == "RecordingSettings")) | all((.throttle | type) == "string")'
jqcheck "other pool references render as objects" "$TMP/all" \
    'map(select(.type == "ModuleLoad")) | length > 0 and all(.module | type == "object" and (.path | type) == "string")'
jqcheck "durations are integer ns" "$TMP/all" \
    'map(.. | objects | (.samplingPeriod, .lostTime, .cpuTime) | select(. != null)) |
     all(type == "number" and . == floor and . >= 0)'
check "output is deterministic" sh -c "'$REC_DUMP' --ndjson '$REC' | cmp - '$TMP/all'"
done_testing
