#!/bin/sh
# A recording that cannot be written to the end (a file size limit: EFBIG;
# a full file system: ENOSPC): said once, at once, with the system's words,
# also through rec-start when the program has closed its stderr; the
# recording keeps what fit; rec-start's summary says it is short, without
# the error again; the program is not affected (no SIGXFSZ, same status).
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
[ -x "$REC_START" ] || skip_all "rec-start not built"
BURN=$top_builddir/tests/hazards/burn
[ -x "$BURN" ] || skip_all "tests/hazards/burn not built"
cd "$TMP" || exit 99

command -v prlimit >/dev/null 2>&1 || skip_all "prlimit not installed"
# The limit: what a recording holds at its start (its metadata, which
# grows with the schema) and 8 KiB more, so that samples fit before it.
"$REC_START" -q -o "$TMP/empty.rec" -- true 2>/dev/null
limit=$(( ($(wc -c <"$TMP/empty.rec") + 8192 + 1023) / 1024 * 1024 ))

# limited NAME SHELL-COMMAND: run under that file size limit (ulimit -f
# counts 512-byte blocks in sh, 1024-byte ones in bash: set in bytes).
limited() {
    rm -f "$TMP/$1.rec"
    sh -c "prlimit --fsize=$limit -- true 2>/dev/null && exec prlimit --fsize=$limit -- $2" \
        >"$TMP/out" 2>"$TMP/err"
    st=$?
}

limited efbig "'$REC_START' -o '$TMP/efbig.rec' -t 1ms --flush-interval 10ms '$BURN' 1 1000"
expect_status 0 "file size limit: the program's status"
grep -q "^rec: writing $TMP/efbig.rec: File too large" "$TMP/err"
ok $? "file size limit: said on stderr with the system's words"
grep -q "^rec-start: $TMP/efbig.rec: [1-9][0-9]* samples.*stopped early: could not write further, see the error above" "$TMP/err" &&
    [ "$(grep -c "File too large" "$TMP/err")" -eq 1 ]
r=$?
ok $r "file size limit: the summary says the recording is short, the error said once"
[ $r -eq 0 ] || diag_file "$TMP/err"
"$REC_DUMP" --ndjson --events CPUTimeSample "$TMP/efbig.rec" >"$TMP/dump" 2>"$TMP/dump.err"
[ -s "$TMP/dump" ] && ! grep -qi "error" "$TMP/dump.err"
ok $? "file size limit: the recording is readable with what fit ($(wc -l <"$TMP/dump") samples)"

# The program closed its stderr: rec-start says it.
limited closed "'$REC_START' -o '$TMP/closed.rec' -t 1ms --flush-interval 10ms sh -c 'exec 2>&-; exec \"\$0\" 1 1000' '$BURN'"
expect_status 0 "stderr closed: the program's status"
grep -q "^rec-start: rec: writing $TMP/closed.rec: File too large" "$TMP/err"
r=$?
ok $r "stderr closed: rec-start passes the message on"
[ $r -eq 0 ] || diag_file "$TMP/err"

# A full file system (root only: a private mount namespace and a tmpfs
# of the same size, in whole pages).
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null 2>&1 &&
    mkdir -p "$TMP/mnt" && unshare -m true 2>/dev/null; then
    unshare -m sh -c "mount -t tmpfs -o size=$(( (limit + 4095) / 4096 * 4 ))k tmpfs '$TMP/mnt' || exit 77
        '$REC_START' -o '$TMP/mnt/x.rec' -t 1ms --flush-interval 10ms '$BURN' 1 1000
        st=\$?
        '$REC_DUMP' --ndjson --events CPUTimeSample '$TMP/mnt/x.rec' >'$TMP/dump' 2>/dev/null
        exit \$st" >"$TMP/out" 2>"$TMP/err"
    st=$?
    if [ $st -eq 77 ]; then
        skip "full file system: cannot mount a tmpfs here"
        skip "full file system: cannot mount a tmpfs here"
    else
        expect_status 0 "full file system: the program's status"
        grep -q "^rec: writing $TMP/mnt/x.rec: No space left on device" "$TMP/err" &&
            [ "$(grep -c "No space left on device" "$TMP/err")" -eq 1 ] &&
            grep -q "stopped early: could not write further, see the error above" "$TMP/err" &&
            [ -s "$TMP/dump" ]
        r=$?
        ok $r "full file system: said once at once, summary says the recording is short, what fit is readable ($(wc -l <"$TMP/dump") samples)"
        [ $r -eq 0 ] || diag_file "$TMP/err"
    fi
else
    skip "full file system: needs root and unshare"
    skip "full file system: needs root and unshare"
fi

done_testing
