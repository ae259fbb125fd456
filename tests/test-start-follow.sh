#!/bin/sh
# Descendants: recorded into FILE.PID with --follow-children, not at all
# without; a program that exec()s keeps its one recording.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
[ -x "$REC_START" ] || skip_all "rec-start not built"
cd "$TMP" || exit 99

# samples FILE: its CPUTimeSample count.
samples() {
    "$REC_DUMP" --ndjson --events CPUTimeSample "$1" 2>/dev/null | wc -l
}

child='"$0" -s 0.1 & echo $!; wait'
"$REC_START" -q -o "$TMP/nf.rec" sh -c "$child" "$WORKLOADS/budget" >"$TMP/out" 2>"$TMP/err"
st=$?
expect_status 0 "without --follow-children"
cpid=$(cat "$TMP/out")
[ -f "$TMP/nf.rec" ] && [ ! -e "$TMP/nf.rec.$cpid" ] &&
    ! ls "$TMP"/nf.rec.* >/dev/null 2>&1
ok $? "only the program's own recording ($(ls "$TMP" | tr '\n' ' '))"

"$REC_START" -c -o "$TMP/f.rec" sh -c "$child" "$WORKLOADS/budget" >"$TMP/out" 2>"$TMP/err"
st=$?
expect_status 0 "with --follow-children"
grep -q "^rec-start: 1 descendant recording: $TMP/f.rec.<pid>" "$TMP/err"
ok $? "the summary points at the descendant's recording"
[ $? -eq 0 ] || diag_file "$TMP/err"
# The child is forked by sh, then execs: its new image is a root of its
# own and must not look for rec-start's status pipe (closed on exec).
! grep -q 'REC_STATUS_FD' "$TMP/err"
ok $? "a followed child that execs says nothing of the status pipe"
cpid=$(cat "$TMP/out")
[ -f "$TMP/f.rec" ] && [ -f "$TMP/f.rec.$cpid" ]
ok $? "the child recorded into f.rec.$cpid"
if [ -x "$REC_DUMP" ]; then
    n=$(samples "$TMP/f.rec.$cpid")
    [ "$n" -gt 10 ]
    ok $? "the child's recording has its samples ($n)"
else
    skip "rec-dump not built"
fi

# Descendants that are not recorded do not inherit the sampler: no REC_*
# variable, LD_PRELOAD as the user had it (fork+exec from a shell, and
# posix_spawn, which glibc runs past the exec wrappers).
# (A sanitizer build of rec-start runs with that LD_PRELOAD too.)
ASAN_OPTIONS="$ASAN_OPTIONS:verify_asan_link_order=0" LD_PRELOAD=libm.so.6 \
    "$REC_START" -q -o "$TMP/env1.rec" sh -c 'env' >"$TMP/out" 2>"$TMP/err"
st=$?
expect_status 0 "a shell running env"
! grep -q '^REC_' "$TMP/out" && grep -qx 'LD_PRELOAD=libm.so.6' "$TMP/out"
ok $? "fork+exec, not followed: no REC_ variable, the user's LD_PRELOAD only"
[ $? -eq 0 ] || diag_file "$TMP/out"
# The library path is the user's too: a build-tree rec-start is run by
# libtool's wrapper script, which adds the build tree's librecord to it.
LD_LIBRARY_PATH=$TMP/nolib "$REC_START" -q -o "$TMP/env4.rec" sh -c env \
    >"$TMP/out" 2>"$TMP/err"
st=$?
expect_status 0 "LD_LIBRARY_PATH set"
env -u LD_LIBRARY_PATH "$REC_START" -q -o "$TMP/env5.rec" sh -c env \
    >"$TMP/out2" 2>"$TMP/err"
r=$?
grep -qx "LD_LIBRARY_PATH=$TMP/nolib" "$TMP/out" && [ $r -eq 0 ] &&
    ! grep -q '^LD_LIBRARY_PATH=' "$TMP/out2"
ok $? "the program's LD_LIBRARY_PATH is the user's, set or not"
[ $? -eq 0 ] || diag_file "$TMP/out"
SPAWNENV=$top_builddir/tests/hazards/spawnenv
if [ -x "$SPAWNENV" ]; then
    "$REC_START" -q -o "$TMP/env2.rec" "$SPAWNENV" >"$TMP/out" 2>"$TMP/err"
    st=$?
    expect_status 0 "posix_spawn of env"
    ! grep -q '^REC_' "$TMP/out" && ! grep -q '^LD_PRELOAD=' "$TMP/out" &&
        grep -q '^PATH=' "$TMP/out"
    ok $? "posix_spawn, not followed: no REC_ variable, no LD_PRELOAD"
    [ $? -eq 0 ] || diag_file "$TMP/out"
    "$REC_START" -q -c -o "$TMP/env3.rec" "$SPAWNENV" >"$TMP/out" 2>"$TMP/err"
    st=$?
    grep -q '^REC_OUTPUT=' "$TMP/out" && grep -q '^LD_PRELOAD=.*libsampler' "$TMP/out"
    ok $? "posix_spawn with --follow-children: the child is recorded (environment kept)"
    # rec-start preloads the file the sampler's soname names, and it is there.
    lib=$(sed -n 's/^LD_PRELOAD=//p' "$TMP/out" | tr ' :' '\n\n' | grep libsampler | head -1)
    [ "${lib##*/}" = "${LIBSAMPLER_SONAME:-libsampler.so}" ] && [ -f "$lib" ]
    ok $? "the sampler preloaded is its soname's file ($lib)"
else
    skip "tests/hazards/spawnenv not built"
    skip "tests/hazards/spawnenv not built"
    skip "tests/hazards/spawnenv not built"
    skip "tests/hazards/spawnenv not built"
fi

# exec: the new image appends to the same file.
"$REC_START" -o "$TMP/ex.rec" sh -c 'exec "$0" 0.1' "$WORKLOADS/demo" \
    >"$TMP/out" 2>"$TMP/err"
st=$?
expect_status 0 "a program that execs"
! ls "$TMP"/ex.rec.* >/dev/null 2>&1 && grep -q "^rec-start: $TMP/ex.rec: [1-9][0-9]* samples" "$TMP/err"
ok $? "one file, with the exec'd image's samples"
[ $? -eq 0 ] || diag_file "$TMP/err"

# A child forked without exec, built without frame pointers: it walks its
# stacks with the unwind tables it inherited (kept, not rebuilt), builds
# those it lacks, and its chains are exact, down to the thread's root (but
# for the early stacks it counts).
NOFP=$top_builddir/tests/workloads/stacks-nofp
if [ -x "$NOFP" ] && [ -x "$REC_DUMP" ] && [ "$(uname -m)" = x86_64 ]; then
    # (The child abandons the parent's sampler state by design: no leak
    # report for it under the sanitizers.)
    ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
        "$REC_START" -q -c -t 1ms -o "$TMP/fk.rec" "$NOFP" 0.3 fork >"$TMP/out" 2>"$TMP/err"
    st=$?
    expect_status 0 "a program that forks and runs in its child"
    set -- "$TMP"/fk.rec.*
    "$REC_DUMP" --ndjson --stack-depth 0 --events CPUTimeSample "$1" 2>/dev/null |
        jq -r 'select(.failed | not) | [.eventThread.name,
               ((.stackTrace.frames // []) | map(.function // "?") | join(" "))] | @tsv' \
        >"$TMP/fk.tsv"
    early=$(early_stacks "$1")
    awk -F '\t' -v early="$early" '
        $1 == "stk-main" && $2 ~ /^stk_c / { n++; if ($2 ~ /^stk_c stk_b stk_a main .*_start$/) good++; else if (bad++ < 3) print "# unexpected: " $2 }
        $1 == "stk-leaf" && $2 ~ /^stk_leaf / { n++; if ($2 ~ /^stk_leaf stk_leaf_parent stk_leaf_thread .*clone3?$/) good++; else if (bad++ < 3) print "# unexpected: " $2 }
        END { printf "# forked child: %d of %d samples exact, %d early stacks in the recording\n", good, n, early
              spare = n - good < early ? n - good : early
              exit !(n >= 20 && good >= 0.99 * (n - spare)) }' "$TMP/fk.tsv"
    ok $? "the forked child's chains are exact, down to the root"
else
    skip "stacks-nofp or rec-dump not built, or not x86-64"
    skip "stacks-nofp or rec-dump not built, or not x86-64"
fi

done_testing
