#!/bin/sh
# tests/test-recgen.sh - schemas/recgen accepts the real schema and rejects
# broken ones with a message naming the problem.
recgen="$top_builddir/schemas/recgen"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/test-recgen.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; }

if "$recgen" "$top_srcdir/schemas/events.json" "$tmp/e.h" "$tmp/e.c" 2>"$tmp/err" &&
   grep -q 'REC_TYPE_CPUTimeSample = 32' "$tmp/e.h" && grep -q 'rec_emit_CPUTimeSample' "$tmp/e.c"; then
    ok "the project schema generates"
else
    notok "the project schema generates: $(cat "$tmp/err")"
fi
# the METADATA bytes, as one hex string: "comment" is dropped, the rest is there
hex=$(sed -n '/rec__metadata\[/,/^};/p' "$tmp/e.c" | grep -o '0x[0-9a-f][0-9a-f]' | tr -d '\n' | sed 's/0x//g')
case $hex in
*$(printf 'comment' | od -An -tx1 | tr -d ' \n')*) notok "\"comment\" is dropped from the metadata" ;;
*$(printf 'CPUTimeSample' | od -An -tx1 | tr -d ' \n')*) ok "\"comment\" is dropped from the metadata" ;;
*) notok "metadata holds the schema" ;;
esac

# expect NAME PATTERN JSON: recgen must fail and say PATTERN
expect() {
    printf '%s\n' "$3" >"$tmp/s.json"
    if "$recgen" "$tmp/s.json" "$tmp/x.h" "$tmp/x.c" 2>"$tmp/err"; then
        notok "$1: accepted"
    elif grep -q "$2" "$tmp/err"; then
        ok "$1: $(cat "$tmp/err")"
    else
        notok "$1: message '$(cat "$tmp/err")' lacks '$2'"
    fi
}

S='{ "id": 1, "name": "String", "kind": "pool", "label": "S", "description": "d", "fields": [ { "name": "value", "type": "string", "label": "V", "description": "d" } ] }'
E='"label": "E", "description": "d"'
T='{ "name": "t", "type": "ticks", "label": "T", "description": "d" }'

printf '%s\n' "{ \"version\": 1, \"types\": [ $S ] }" >"$tmp/s.json"
"$recgen" "$tmp/s.json" "$tmp/x.h" "$tmp/x.c" 2>/dev/null && ok "minimal schema generates" || notok "minimal schema generates"
expect "invalid JSON" "line" '{ "version": 1, "types": [ '
expect "duplicate id" "duplicate id 1" "{ \"version\": 1, \"types\": [ $S, { \"id\": 1, \"name\": \"Ev\", \"kind\": \"event\", $E, \"fields\": [ $T ] } ] }"
expect "duplicate name" "duplicate name" "{ \"version\": 1, \"types\": [ $S, { \"id\": 2, \"name\": \"String\", \"kind\": \"event\", $E, \"fields\": [ $T ] } ] }"
expect "unknown field type" "unknown type \"Strang\"" "{ \"version\": 1, \"types\": [ $S, { \"id\": 2, \"name\": \"Ev\", \"kind\": \"event\", $E, \"fields\": [ $T, { \"name\": \"s\", \"type\": \"Strang\", \"label\": \"S\", \"description\": \"d\" } ] } ] }"
expect "missing label" "missing or empty string \"label\"" "{ \"version\": 1, \"types\": [ $S, { \"id\": 2, \"name\": \"Ev\", \"kind\": \"event\", \"description\": \"d\", \"fields\": [ $T ] } ] }"
expect "missing fields" "\"fields\" must be" "{ \"version\": 1, \"types\": [ { \"id\": 2, \"name\": \"Ev\", \"kind\": \"event\", $E } ] }"
expect "reference to an event" "is an event type" "{ \"version\": 1, \"types\": [ { \"id\": 2, \"name\": \"Ev\", \"kind\": \"event\", $E, \"fields\": [ $T, { \"name\": \"e\", \"type\": \"Ev\", \"label\": \"S\", \"description\": \"d\" } ] } ] }"
expect "bad kind" "\"kind\" must be" "{ \"version\": 1, \"types\": [ { \"id\": 2, \"name\": \"Ev\", \"kind\": \"thing\", $E, \"fields\": [ $T ] } ] }"
expect "event without ticks" "needs a ticks field" "{ \"version\": 1, \"types\": [ { \"id\": 2, \"name\": \"Ev\", \"kind\": \"event\", $E, \"fields\": [ { \"name\": \"u\", \"type\": \"uint\", \"label\": \"U\", \"description\": \"d\" } ] } ] }"
expect "ticks in a pool" "only allowed in events" "{ \"version\": 1, \"types\": [ { \"id\": 2, \"name\": \"P\", \"kind\": \"pool\", $E, \"fields\": [ $T ] } ] }"
expect "C keyword as field name" "not a valid C identifier" "{ \"version\": 1, \"types\": [ { \"id\": 2, \"name\": \"Ev\", \"kind\": \"event\", $E, \"fields\": [ $T, { \"name\": \"int\", \"type\": \"uint\", \"label\": \"U\", \"description\": \"d\" } ] } ] }"
expect "nullable boolean" "cannot be nullable" "{ \"version\": 1, \"types\": [ { \"id\": 2, \"name\": \"Ev\", \"kind\": \"event\", $E, \"fields\": [ $T, { \"name\": \"b\", \"type\": \"boolean\", \"nullable\": true, \"label\": \"U\", \"description\": \"d\" } ] } ] }"
expect "unknown key" "unknown key \"colour\"" "{ \"version\": 1, \"types\": [ { \"id\": 2, \"name\": \"Ev\", \"kind\": \"event\", \"colour\": 1, $E, \"fields\": [ $T ] } ] }"
expect "id out of range" "\"id\" must be" "{ \"version\": 1, \"types\": [ { \"id\": 0, \"name\": \"Ev\", \"kind\": \"event\", $E, \"fields\": [ $T ] } ] }"
echo "1..$n"
exit $fail
