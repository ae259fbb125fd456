#!/bin/sh
# tests/test-recgen.sh - schemas/recgen accepts the real schema and the
# schemas under tests/data/recgen/valid/, and rejects every schema under
# tests/data/recgen/invalid/<case>/schema.json with a message containing
# the text of <case>/error. A new case is a new directory.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
. "$top_srcdir/tests/tap-lib.sh"
tap_scratch test-recgen
recgen="$top_builddir/schemas/recgen"
data="$top_srcdir/tests/data/recgen"

if "$recgen" "$top_srcdir/schemas/events.json" "$TMP/e.h" "$TMP/e.c" 2>"$TMP/err" &&
   grep -q 'REC_TYPE_CPUTimeSample = 32' "$TMP/e.h" &&
   grep -q 'rec_emit_CPUTimeSample' "$TMP/e.c"; then
    ok 0 "the project schema generates"
else
    ok 1 "the project schema generates"
    diag_file "$TMP/err"
fi
# The METADATA bytes, as one hex string: "comment" is dropped, the rest is
# there.
hex=$(sed -n '/rec__metadata\[/,/^};/p' "$TMP/e.c" |
      grep -o '0x[0-9a-f][0-9a-f]' | tr -d '\n' | sed 's/0x//g')
case $hex in
*$(printf 'comment' | od -An -tx1 | tr -d ' \n')*) ok 1 "\"comment\" is dropped from the metadata" ;;
*$(printf 'CPUTimeSample' | od -An -tx1 | tr -d ' \n')*) ok 0 "\"comment\" is dropped from the metadata" ;;
*) ok 1 "metadata holds the schema" ;;
esac

for d in "$data"/valid/*; do
    c=$(basename "$d")
    "$recgen" "$d/schema.json" "$TMP/x.h" "$TMP/x.c" 2>"$TMP/err"
    ok $? "valid/$c generates"
    diag_file "$TMP/err"
done

for d in "$data"/invalid/*; do
    c=$(basename "$d")
    want=$(cat "$d/error")
    if "$recgen" "$d/schema.json" "$TMP/x.h" "$TMP/x.c" 2>"$TMP/err"; then
        ok 1 "invalid/$c: accepted"
    elif grep -qF -- "$want" "$TMP/err"; then
        ok 0 "invalid/$c: $(head -1 "$TMP/err" | sed "s/.*schema.json: //")"
    else
        ok 1 "invalid/$c: message lacks '$want'"
        diag_file "$TMP/err"
    fi
done
done_testing
