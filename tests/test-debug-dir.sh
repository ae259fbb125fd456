#!/bin/sh
# --debug-dir in every reader that names frames: a recording of a stripped
# library (tests/mkgolden stripped: the sampler's module+0xSTART names, and
# a frame no FDE named) is resolved through the build-id it records by the
# separate debug file under DIR, exactly as tests/data/debug-dir/ says, and
# only with --debug-dir: rec-dump (NDJSON, collapsed, pprof, JFR), rec-cpu
# --hot and rec-flame.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
REC_CPU=$top_builddir/tools/rec-cpu
REC_FLAME=$top_builddir/tools/rec-flame
WANT=$top_srcdir/tests/data/debug-dir
lib=$WORKLOADS/.libs/libunws.so
for t in readelf nm objcopy jq; do
    command -v $t >/dev/null 2>&1 || skip_all "$t not installed"
done
[ -f "$lib" ] || skip_all "tests/workloads/libunws.la not built"

bid=$(readelf -n "$lib" | awk '/Build ID:/ { print $3 }')
leaf=$(nm "$lib" | awk '$3 == "unws_leaf" { print $1 }')
mid=$(nm "$lib" | awk '$3 == "unws_mid" { print $1 }')
[ -n "$bid" ] && [ -n "$leaf" ] && [ -n "$mid" ] || skip_all "no build-id or symbols in $lib"
"$MKGOLDEN" stripped "$TMP/s.rec" "$bid" "$leaf" "$mid" 2>"$TMP/err"
st=$?
expect_status 0 "mkgolden stripped writes the recording"
d=$(echo "$bid" | cut -c1-2)
mkdir -p "$TMP/dbg/.build-id/$d" "$TMP/empty"
objcopy --only-keep-debug "$lib" "$TMP/dbg/.build-id/$d/$(echo "$bid" | cut -c3-).debug"

# same NAME FILE: FILE equals tests/data/debug-dir/NAME.
same() {
    diff -u "$WANT/$1" "$2" >"$TMP/diff" 2>&1
    _r=$?
    ok $_r "$1: the golden output"
    [ $_r -eq 0 ] || diag_file "$TMP/diff"
}

# no_names FILE WHAT: without debug files, the stripped functions keep the
# sampler's names.
no_names() {
    ! grep -a -q 'unws_leaf\|unws_mid' "$1"
    ok $? "$2: no debug names without the debug file"
}

# run OUT CMD...: the command succeeds with nothing on stderr.
run() {
    _out=$1
    shift
    "$@" >"$_out" 2>"$TMP/err"
    st=$?
    [ $st -eq 0 ] && [ ! -s "$TMP/err" ]
    ok $? "$(basename "$1") $2 $3: exit 0, no message"
    [ -s "$TMP/err" ] && diag_file "$TMP/err"
}

names() {
    jq -r '.stackTrace.frames | map(.function // "?") | join(" ")' "$1"
}

# rec-dump, NDJSON.
for dir in dbg empty; do
    run "$TMP/$dir.ndjson" "$REC_DUMP" --ndjson --stack-depth 0 --debug-dir "$TMP/$dir" \
        --events CPUTimeSample "$TMP/s.rec"
    names "$TMP/$dir.ndjson" >"$TMP/$dir.names"
done
same dump-names.txt "$TMP/dbg.names"
no_names "$TMP/empty.names" "rec-dump --ndjson, an empty --debug-dir"

# rec-dump --format collapsed.
run "$TMP/c1" "$REC_DUMP" --format collapsed --debug-dir "$TMP/dbg" "$TMP/s.rec"
same collapsed.txt "$TMP/c1"
run "$TMP/c0" "$REC_DUMP" --format collapsed "$TMP/s.rec"
no_names "$TMP/c0" "rec-dump --format collapsed"
grep -q "^main;unws_run;libunws.so+0x${mid#"${mid%%[!0]*}"};libunws.so+0x${leaf#"${leaf%%[!0]*}"} 30000000\$" "$TMP/c0"
ok $? "rec-dump --format collapsed: the sampler's names without it"

# rec-dump --format pprof and jfr: the names are in the string tables.
run "$TMP/p1" "$REC_DUMP" --format pprof --debug-dir "$TMP/dbg" -o "$TMP/p1.pb.gz" "$TMP/s.rec"
gzip -dc "$TMP/p1.pb.gz" | grep -a -q unws_leaf && \
    gzip -dc "$TMP/p1.pb.gz" | grep -a -q unws_mid
ok $? "rec-dump --format pprof --debug-dir: unws_leaf and unws_mid"
run "$TMP/p0" "$REC_DUMP" --format pprof -o "$TMP/p0.pb.gz" "$TMP/s.rec"
gzip -dc "$TMP/p0.pb.gz" >"$TMP/p0.pb"
no_names "$TMP/p0.pb" "rec-dump --format pprof"
run "$TMP/j1" "$REC_DUMP" --format jfr --debug-dir "$TMP/dbg" -o "$TMP/j1.jfr" "$TMP/s.rec"
grep -a -q unws_leaf "$TMP/j1.jfr" && grep -a -q unws_mid "$TMP/j1.jfr"
ok $? "rec-dump --format jfr --debug-dir: unws_leaf and unws_mid"
run "$TMP/j0" "$REC_DUMP" --format jfr -o "$TMP/j0.jfr" "$TMP/s.rec"
no_names "$TMP/j0.jfr" "rec-dump --format jfr"

# rec-cpu --hot (its hot-function tables; the thread table has times).
run "$TMP/h1" "$REC_CPU" --hot --debug-dir "$TMP/dbg" "$TMP/s.rec"
sed -n '/^Hot functions/,$p' "$TMP/h1" >"$TMP/hot1"
same cpu-hot.txt "$TMP/hot1"
run "$TMP/h0" "$REC_CPU" --hot "$TMP/s.rec"
no_names "$TMP/h0" "rec-cpu --hot"

# rec-flame: the page's frame names.
run "$TMP/f1" "$REC_FLAME" --debug-dir "$TMP/dbg" "$TMP/s.rec"
grep -q '"unws_leaf"' "$TMP/f1" && grep -q '"unws_mid"' "$TMP/f1"
ok $? "rec-flame --debug-dir: unws_leaf and unws_mid"
run "$TMP/f0" "$REC_FLAME" "$TMP/s.rec"
no_names "$TMP/f0" "rec-flame"

# A directory that is not there is a usage error in each.
for tool in "$REC_DUMP" "$REC_CPU --hot" "$REC_FLAME"; do
    # shellcheck disable=SC2086
    $tool --debug-dir "$TMP/nowhere" "$TMP/s.rec" >"$TMP/out" 2>"$TMP/err"
    st=$?
    [ $st -eq 2 ] && grep -q "debug-dir: .*nowhere" "$TMP/err"
    ok $? "$(basename "${tool%% *}") --debug-dir DIR that does not exist: exit 2 ($st)"
done

done_testing
