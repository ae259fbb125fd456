#!/bin/sh
# The JSON Schema generated from schemas/events.json
# (schemas/rec-dump.schema.json in the build tree) accepts rec-dump's
# NDJSON and JSON output of committed recordings and of one recorded here,
# checked by a real validator (python3-jsonschema; skipped if absent), and
# rejects events that break the contract.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
SCHEMA=$top_builddir/schemas/rec-dump.schema.json
[ -s "$SCHEMA" ] || skip_all "schema not built"
python3 -c 'import jsonschema' 2>/dev/null || skip_all "python3-jsonschema not installed"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
cd "$TMP" || exit 99

# validate FILE NDJSON|JSON: prints "<n> valid" or the first errors
cat >"$TMP/validate.py" <<'PY'
import json, sys
import jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
text = open(sys.argv[2]).read()
docs = [json.loads(l) for l in text.splitlines() if l.strip()] \
    if sys.argv[3] == "NDJSON" else [json.loads(text)]
bad = 0
for d in docs:
    for e in v.iter_errors(d):
        bad += 1
        if bad <= 3:
            print("invalid:", e.message[:300], list(e.absolute_path))
print("%d documents, %d errors" % (len(docs), bad))
sys.exit(1 if bad else 0)
PY

"$REC_START" -q -o "$TMP/live.rec" --throttle 1ms -- "$WORKLOADS/stacks" 0.2 \
    >"$TMP/out" 2>"$TMP/err"
st=$?
expect_status 0 "stacks workload recorded under rec-start"

for r in "$GOLDEN/basic.rec" "$top_srcdir/tests/data/cpu/basic.rec" \
         "$top_srcdir/tests/data/cpu/child.rec" "$TMP/live.rec"; do
    name=$(basename "$(dirname "$r")")/$(basename "$r")
    "$REC_DUMP" --ndjson --stack-depth 0 "$r" >"$TMP/e.ndjson" 2>/dev/null
    python3 "$TMP/validate.py" "$SCHEMA" "$TMP/e.ndjson" NDJSON >"$TMP/v" 2>&1
    ok $? "$name: NDJSON valid ($(tail -1 "$TMP/v"))"
    [ $? -eq 0 ] || diag_file "$TMP/v"
done
"$REC_DUMP" --json "$TMP/live.rec" >"$TMP/e.json" 2>/dev/null
python3 "$TMP/validate.py" "$SCHEMA" "$TMP/e.json" JSON >"$TMP/v" 2>&1
ok $? "live recording: --json array valid ($(tail -1 "$TMP/v"))"

# The schema is strict: a wrong type, a missing or an unknown field fails.
head -1 "$TMP/e.ndjson" >"$TMP/one"
for edit in '.startTime = "x"' 'del(.eventThread)' '.extra = 1'; do
    jq -c "select(.type == \"CPUTimeSample\") | $edit" "$TMP/e.ndjson" 2>/dev/null \
        | head -1 >"$TMP/bad.ndjson"
    test -s "$TMP/bad.ndjson" \
        && ! python3 "$TMP/validate.py" "$SCHEMA" "$TMP/bad.ndjson" NDJSON >/dev/null 2>&1
    ok $? "a CPUTimeSample with $edit is rejected"
done
# An event type the schema does not know (a newer recording) is accepted.
echo '{"type":"FutureEvent","startTime":1,"x":true}' >"$TMP/future.ndjson"
python3 "$TMP/validate.py" "$SCHEMA" "$TMP/future.ndjson" NDJSON >/dev/null 2>&1
ok $? "events of unknown types need only type and startTime"
done_testing
