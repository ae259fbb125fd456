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

# Cut the recording at many sizes and flip bytes in it: the tools must
# never die of a signal, exit 0 or 1, print a valid JSON prefix, and on exit
# 1 print exactly one located error line.
size=$(wc -c <"$REC")
full=$(wc -l <"$GOLDEN/basic.ndjson")
bad=0 cases=0 prefix_bad=0 json_bad=0 line_bad=0 n_err=0 n_ok=0
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
step=$(( size / 61 + 1 ))
for kind in cut flip; do
    i=0
    while [ $i -lt "$size" ]; do
        damage $kind $i "$TMP/d.rec"
        cases=$((cases + 1))
        "$REC_DUMP" --ndjson "$TMP/d.rec" >"$TMP/d.out" 2>"$TMP/d.err"
        s=$?
        case $s in
        0) n_ok=$((n_ok + 1)) ;;
        1) n_err=$((n_err + 1)) ;;
        *) bad=$((bad + 1)); diag "$kind at $i: rec-dump exit $s" ;;
        esac
        # the events printed are a prefix of the intact recording's (a flip
        # inside a payload is caught by its checksum before any of it shows)
        if ! head -n "$(wc -l <"$TMP/d.out")" "$GOLDEN/basic.ndjson" | cmp -s - "$TMP/d.out"; then
            prefix_bad=$((prefix_bad + 1)); diag "$kind at $i: output is not a prefix"
        fi
        if [ $s -eq 1 ] && { [ "$(wc -l <"$TMP/d.err")" -ne 1 ] ||
                             ! grep -Eq "$ERRLINE" "$TMP/d.err"; }; then
            line_bad=$((line_bad + 1)); diag "$kind at $i: $(head -2 "$TMP/d.err")"
        fi
        "$REC_DUMP" --json "$TMP/d.rec" 2>/dev/null | jq -e 'type == "array"' >/dev/null 2>&1 ||
            { json_bad=$((json_bad + 1)); diag "$kind at $i: --json output does not parse"; }
        "$REC_SUMMARY" --json "$TMP/d.rec" >"$TMP/s.out" 2>"$TMP/s.err"
        s=$?
        if [ $s -ne 0 ] && [ $s -ne 1 ]; then
            bad=$((bad + 1)); diag "$kind at $i: rec-summary exit $s"
        fi
        i=$((i + step))
    done
done
ok $bad "no crash on $cases damaged recordings (exit 0 or 1)"
ok $prefix_bad "damaged recordings print a prefix of the events"
ok $line_bad "exit 1 comes with one 'chunk i, offset n' error line"
ok $json_bad "--json output stays one valid array"
diag "intact recording: $full events, $size bytes; damaged: $n_err errors, $n_ok read to the end"
ok $(( n_err < cases / 2 )) "most damage is reported as an error ($n_err of $cases)"
done_testing
