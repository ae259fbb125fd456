#!/bin/sh
# rec-summary agrees with the events rec-dump prints: counts per type,
# CPU-time statistics per thread and overall.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"

[ -x "$REC_SUMMARY" ] || skip_all "rec-summary not built"
command -v jq >/dev/null || skip_all "jq not installed"
for rec in "$GOLDEN/basic.rec" "$GOLDEN/unfinished.rec"; do
    b=${rec##*/}
    "$REC_DUMP" --ndjson "$rec" >"$TMP/ev" 2>/dev/null
    "$REC_SUMMARY" --json "$rec" >"$TMP/sum" 2>/dev/null
    ok $? "$b: rec-summary --json exits 0"
    check "$b: summary is one JSON object" jq -e 'type == "object"' "$TMP/sum"
    # expected figures computed from the dump
    jq -s '{
        events: length,
        types: (group_by(.type) | map({key: .[0].type, value: length}) | from_entries),
        threads: (map(select(.type == "CPUTimeSample" or .type == "CPUTimeSampleLost"))
            | group_by(.eventThread.osThreadId) | map({
                osThreadId: .[0].eventThread.osThreadId,
                successfulSamples: map(select(.type == "CPUTimeSample" and (.failed | not))) | length,
                failedSamples: map(select(.type == "CPUTimeSample" and .failed)) | length,
                biasedSamples: map(select(.type == "CPUTimeSample" and .biased)) | length,
                totalSamples: map(select(.type == "CPUTimeSample")) | length,
                lostSamples: (map(.lostSamples // 0) | add),
                sampledTime: (map(.samplingPeriod // 0) | add),
                lostTime: (map(.lostTime // 0) | add)}))
      }' "$TMP/ev" >"$TMP/want"
    check "$b: event count" jq -e --slurpfile w "$TMP/want" '.events == $w[0].events' "$TMP/sum"
    check "$b: count per event type" jq -e --slurpfile w "$TMP/want" '
        (.eventTypes | map(select(.count > 0) | {key: .type, value: .count}) | from_entries)
        == $w[0].types' "$TMP/sum"
    check "$b: bytes reported for every type with events" jq -e \
        'all(.eventTypes[]; (.count > 0) == (.bytes > 0))' "$TMP/sum"
    check "$b: per-thread CPU statistics match the events" jq -e --slurpfile w "$TMP/want" '
        (.cpuTimeSamples.threads | map(del(.name))) == $w[0].threads' "$TMP/sum"
    check "$b: threads sorted by tid" jq -e \
        '.cpuTimeSamples.threads | map(.osThreadId) | . == sort' "$TMP/sum"
    check "$b: total is the sum over threads" jq -e '
        .cpuTimeSamples as $c | $c.total | to_entries | all(.value ==
            ([$c.threads[][.key]] | add // 0))' "$TMP/sum"
    check "$b: text and JSON agree on the totals" sh -c "
        '$REC_SUMMARY' '$rec' 2>/dev/null | grep -E '^ all ' | awk '{print \$2, \$3, \$4, \$5, \$6}' >'$TMP/t1'
        jq -r '.cpuTimeSamples.total | \"\(.successfulSamples) \(.failedSamples) \(.biasedSamples) \(.totalSamples) \(.lostSamples)\"' '$TMP/sum' >'$TMP/t2'
        cmp '$TMP/t1' '$TMP/t2'"
done
check "basic.rec is complete, unfinished.rec is not" sh -c "
    '$REC_SUMMARY' --json '$GOLDEN/basic.rec' | jq -e '.complete' &&
    '$REC_SUMMARY' --json '$GOLDEN/unfinished.rec' 2>/dev/null | jq -e '.complete | not'"
check "basic.rec has 2 chunks" sh -c "'$REC_SUMMARY' --json '$GOLDEN/basic.rec' | jq -e '.chunks == 2'"
done_testing
