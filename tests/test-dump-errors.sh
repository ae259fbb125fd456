#!/bin/sh
# rec-dump and rec-summary on bad command lines and damaged recordings:
# exit status 2 for usage, 1 for bad data (never a signal), the valid events
# printed first and then exactly one error line.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"

[ -x "$REC_DUMP" ] || skip_all "rec-dump not built"
REC=$GOLDEN/basic.rec
ERRLINE='^rec-(dump|summary): [^:]+: chunk [0-9]+, offset [0-9]+: .+$'

status_is() {   # status_is WANT DESCRIPTION COMMAND...
    _w=$1 _d=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    _s=$?
    ok $(( _s != _w )) "$_d: exit $_s (want $_w)"
}

for tool in "$REC_DUMP" "$REC_SUMMARY"; do
    t=${tool##*/}
    status_is 2 "$t without FILE" "$tool"
    check "$t without FILE says so" grep -q "no recording" "$TMP/err"
    status_is 2 "$t with an unknown option" "$tool" --bogus "$REC"
    status_is 0 "$t --help" "$tool" --help
    check "$t --help prints usage" grep -q "^Usage: $t" "$TMP/out"
    status_is 0 "$t --version" "$tool" --version
    status_is 1 "$t on a missing file" "$tool" "$TMP/missing.rec"
    check "$t: missing file error names it" \
        grep -qx "$t: $TMP/missing.rec: No such file or directory" "$TMP/err"
    printf 'hello, this is not a recording at all\n' >"$TMP/text.rec"
    status_is 1 "$t on a text file" "$tool" "$TMP/text.rec"
    check "$t: one error line for a text file" sh -c "[ \$(wc -l <'$TMP/err') -eq 1 ]"
done
status_is 2 "--stack-depth x" "$REC_DUMP" --stack-depth x "$REC"
status_is 2 "--since yesterday" "$REC_DUMP" --since yesterday "$REC"
status_is 2 "--until 10 (no unit)" "$REC_DUMP" --until +10 "$REC"
status_is 2 "--events ''" "$REC_DUMP" --events '' "$REC"
status_is 2 "--threads ,," "$REC_DUMP" --threads ,, "$REC"
status_is 1 "-o into a missing directory" "$REC_DUMP" -o "$TMP/no/such/dir" "$REC"

# A missing file among good ones: the others are still printed.
cp "$REC" "$TMP/copy.rec"   # a copy: the same file twice is read once
status_is 1 "good, missing, good" "$REC_DUMP" --ndjson "$REC" "$TMP/missing.rec" "$TMP/copy.rec"
n1=$("$REC_DUMP" --ndjson "$REC" | wc -l)
check "good files around a missing one are printed" sh -c "[ \$(wc -l <'$TMP/out') -eq $((2 * n1)) ]"

# Damaged recordings. tests/test-reader-damage reads the 122 damaged copies
# of this recording (cut, and one byte xored with 0x5a, every size/61+1
# bytes) in process: the intact events before the damage, then the end or
# an error code, and a "FILE: chunk I, offset N: WHAT" message. Here, what
# only the tools do: all 122 through one rec-dump and one rec-summary (no
# signal, exit 1, one located error line per file, each file's events
# before its error: the intact prefix, as many as rec-summary counts), and
# ten of them one by one (exit 1, the error line, the events before it,
# --json closed).
size=$(wc -c <"$REC")
full=$(wc -l <"$GOLDEN/basic.ndjson")
step=$(( size / 61 + 1 ))
damage() {   # damage KIND N OUT
    case $1 in
    cut) head -c "$2" "$REC" >"$3" ;;
    flip)
        cp "$REC" "$3"
        # xor one byte with 0x5a via printf/dd (portable enough here)
        b=$(od -An -tu1 -j "$2" -N1 "$REC" | tr -d ' ')
        printf "$(printf '\\%03o' $(( b ^ 90 )))" |
            dd of="$3" bs=1 seek="$2" conv=notrunc 2>/dev/null ;;
    esac
}
mkdir "$TMP/d" || exit 99
cases=0
for kind in cut flip; do
    i=0
    while [ $i -lt "$size" ]; do
        damage $kind $i "$TMP/d/$kind-$i.rec"
        cases=$((cases + 1))
        i=$((i + step))
    done
done
printf '%s\n' "$TMP"/d/*.rec | sort >"$TMP/d.files"

# error_lines TOOL ERR: one located error line per damaged file, naming it
error_lines() {
    [ "$(wc -l <"$2")" -eq "$cases" ] && ! grep -Evq "$ERRLINE" "$2" &&
        sed -E "s/^$1: ([^:]+): chunk .*/\\1/" "$2" | sort | cmp -s - "$TMP/d.files"
}
# shellcheck disable=SC2046
status_is 1 "rec-dump --ndjson on $cases damaged recordings" "$REC_DUMP" --ndjson $(cat "$TMP/d.files")
check "rec-dump: one located error line for each of $cases" error_lines rec-dump "$TMP/err"
check "rec-dump: every NDJSON line printed parses" sh -c "jq -c . '$TMP/out' >/dev/null"
mv "$TMP/out" "$TMP/d.ndjson"
# shellcheck disable=SC2046
status_is 1 "rec-dump --json on $cases damaged recordings" "$REC_DUMP" --json $(cat "$TMP/d.files")
check "rec-dump: --json output stays one valid array" jq -e 'type == "array"' "$TMP/out"
# shellcheck disable=SC2046
status_is 1 "rec-summary --json on $cases damaged recordings" "$REC_SUMMARY" --json $(cat "$TMP/d.files")
check "rec-summary: one located error line for each of $cases" error_lines rec-summary "$TMP/err"
# each file's events, as many as rec-summary counts in it, were printed
# before its error line: a prefix of the intact recording's
jq -r '"\(.file) \(.events)"' "$TMP/out" >"$TMP/d.counts"
while read -r _f n; do head -n "$n" "$GOLDEN/basic.ndjson"; done <"$TMP/d.counts" >"$TMP/d.want"
check "rec-summary reports on each of $cases" sh -c "cut -d' ' -f1 '$TMP/d.counts' | cmp -s - '$TMP/d.files'"
check "rec-dump: each file's events printed are the intact prefix rec-summary counts" \
    cmp -s "$TMP/d.want" "$TMP/d.ndjson"

# The first chunk alone ends cleanly; damage after it leaves its events.
chunk0=$(od -An -tu4 -j24 -N4 "$REC" | tr -d ' ')
head -c "$chunk0" "$REC" >"$TMP/chunk0.rec"
status_is 0 "rec-dump --ndjson on the first chunk ($chunk0 bytes)" "$REC_DUMP" --ndjson "$TMP/chunk0.rec"
n0=$(wc -l <"$TMP/out")
ok $(( n0 == 0 || n0 >= full )) "the first chunk holds $n0 of the $full events"

for c in cut-0 cut-$step cut-$((30 * step)) cut-$((40 * step)) cut-$((60 * step)) \
         flip-0 flip-$step flip-$((31 * step)) flip-$((32 * step)) flip-$((60 * step)); do
    f=$TMP/d/$c.rec
    at=${c#*-}
    [ "$at" -ge "$chunk0" ] && least=$n0 || least=0
    status_is 1 "$c: rec-dump --ndjson" "$REC_DUMP" --ndjson "$f"
    if [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -Eq "$ERRLINE" "$TMP/err" &&
       grep -q "^rec-dump: $f: chunk " "$TMP/err"; then
        ok 0 "$c: one located error line: $(cat "$TMP/err")"
    else
        ok 1 "$c: one located error line"
        diag_file "$TMP/err" 3
    fi
    n=$(wc -l <"$TMP/out")
    head -n "$n" "$GOLDEN/basic.ndjson" | cmp -s - "$TMP/out"
    ok $(( $? != 0 || n < least )) "$c: the $n events before the error printed (at least $least, the intact prefix)"
    "$REC_DUMP" --json "$f" >"$TMP/json" 2>/dev/null
    check "$c: --json output is one array of $n" jq -e "type == \"array\" and length == $n" "$TMP/json"
    status_is 1 "$c: rec-summary --json" "$REC_SUMMARY" --json "$f"
    check "$c: rec-summary counts $n events" jq -e ".events == $n" "$TMP/out"
done
done_testing
