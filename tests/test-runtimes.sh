#!/bin/sh
# Stacks through JIT-compiled code, on the runtimes Debian packages: node
# (V8) and Java (HotSpot with -XX:+PreserveFramePointer). Code of no module
# is walked by its frame pointers and kept as [jit] frames, named from the
# runtime's perf map (/tmp/perf-PID.map) where it writes one; the
# program's output and status are its own. Each part skips where its
# runtime is not installed.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
[ -x "$REC_START" ] || skip_all "rec-start not built"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
case $(uname -m) in
x86_64) ;;
*) skip_all "the JIT walk is tested on x86-64" ;;
esac
cd "$TMP" || exit 99
SRC=$(cd "$top_srcdir/tests/runtimes" && pwd)
# Under the sanitizers their runtime is preloaded into the JVM too, which
# catches the SIGSEGVs HotSpot raises on purpose (safepoint polls, null
# checks) and reports the JVM's own allocations as leaks.
asan=0
if ldd "$top_builddir/libsampler/.libs/libsampler.so" 2>/dev/null | grep -q libasan; then
    asan=1
    export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
fi

# stacks NAME THREAD: "leaf<TAB>root<TAB>all frames" per sample of THREAD.
stacks() {
    "$REC_DUMP" --ndjson --stack-depth 0 --events CPUTimeSample "$TMP/$1.rec" |
        jq -r --arg t "$2" 'select(.eventThread.name == $t) |
            [.stackTrace.frames // [] | .[].function // "?"] |
            [.[0] // "-", .[-1] // "-", join(" ")] | @tsv' >"$TMP/$1.tsv"
}
# collapsed_share NAME REGEX THREAD: percentage of the CPU time of THREAD
# in NAME.rec whose collapsed stack (the export: JIT names written later
# applied) matches.
collapsed_share() {
    "$REC_DUMP" --format collapsed --group thread "$TMP/$1.rec" 2>/dev/null |
        awk -v re="$2" -v th="[$3 tid=" 'index($0, th) == 1 {
                w = $NF; t += w; if ($0 ~ re) k += w }
            END { print t ? int(100 * k / t) : 0 }'
}
# share NAME AWK-CONDITION: percentage of the samples that satisfy it.
share() {
    awk -F '\t' "{ n++ } $2 { k++ } END { print n ? int(100 * k / n) : 0 }" "$TMP/$1.tsv"
}
count() { wc -l <"$TMP/$1.tsv"; }

# 1. node with --perf-basic-prof: JS functions named, stacks rooted.
if command -v node >/dev/null 2>&1; then
    node "$SRC/hot.js" 300 >"$TMP/node-plain.out" 2>&1
    pst=$?
    "$REC_START" -q -o "$TMP/node.rec" -- node --perf-basic-prof "$SRC/hot.js" 1500 \
        >"$TMP/node.out" 2>"$TMP/err"
    st=$?
    expect_status $pst "node: status unchanged"
    cmp -s "$TMP/node-plain.out" "$TMP/node.out"
    ok $? "node: output unchanged"
    # node leaves its perf map behind in /tmp.
    for p in $("$REC_DUMP" --ndjson --events ProcessInfo "$TMP/node.rec" | jq -r .processId); do
        rm -f "/tmp/perf-$p.map"
    done
    stacks node node
    # Samples taken before a module's table was built end there (early
    # stacks, counted in the recording): not judged.
    early=$(early_stacks "$TMP/node.rec")
    named=$(awk -F '\t' -v e="$early" '{ n++ } $3 ~ /hot[.]js/ { k++ }
        END { print (n - e > 0 ? int(100 * k / (n - e)) : 0) }' "$TMP/node.tsv")
    rooted=$(awk -F '\t' -v e="$early" '{ n++ } $2 == "_start" { k++ }
        END { print (n - e > 0 ? int(100 * k / (n - e)) : 0) }' "$TMP/node.tsv")
    diag "node: $(count node) samples ($early early); of the others, $named% name a function of hot.js, $rooted% rooted"
    # Under the sanitizers node's own allocations run in their runtime.
    want=90
    [ $asan = 1 ] && want=75
    [ "$(count node)" -ge 50 ] && [ "$named" -ge $want ]
    ok $? "node --perf-basic-prof: at least $want% of samples name the JS function ($named%)"
    [ $? -eq 0 ] || sort "$TMP/node.tsv" | cut -f1,2 | uniq -c | sort -rn | diag_file /dev/stdin
    [ "$rooted" -ge 90 ]
    ok $? "node: at least 90% of samples walked to _start ($rooted%)"
    # Without the flag: the JIT leaf is kept, as [jit], not dropped.
    "$REC_START" -q -o "$TMP/node2.rec" -- node "$SRC/hot.js" 1000 >/dev/null 2>"$TMP/err"
    stacks node2 node
    jit=$(share node2 '$1 == "[jit]"')
    [ "$jit" -ge $((want - 10)) ]
    ok $? "node without a perf map: JIT leaves kept as [jit] ($jit%)"
    # --perf-prof writes a jitdump file (in the working directory) instead
    # of a map. V8 writes it through a buffer: code made in the first
    # second is often named only after the samples that met it were
    # written; those names come as JitCodeName events, which the exports
    # apply.
    if [ $asan = 1 ]; then
        # The sanitizer runtime, preloaded into node too, stops it at a
        # use-after-free of V8's own jitdump writer (LinuxPerfJitLogger),
        # with or without rec.
        skip "node --perf-prof under the sanitizers' runtime (V8's jitdump writer)"
    else
        mkdir -p "$TMP/jd"
        (cd "$TMP/jd" && "$REC_START" -q -o "$TMP/node3.rec" -- node --perf-prof "$SRC/hot.js" 1500 \
            >/dev/null 2>"$TMP/err")
        stacks node3 node
        named=$(awk -F '\t' '$3 ~ /hot[.]js/' "$TMP/node3.tsv" | wc -l)
        # How many are named as sampled depends on when V8 flushes its
        # jitdump buffer (often only at exit): said, not judged; reading
        # a jitdump as it grows is test-jit's.
        diag "node --perf-prof: JS functions named from its jitdump as sampled: $named of $(count node3) samples"
        late=$(collapsed_share node3 'hot[.]js' node)
        [ "$late" -ge $((want - 10)) ]
        ok $? "node --perf-prof: with the names written later, the export names hot.js in $late% of its thread's CPU time"
        rm -rf "$TMP/jd"
    fi
else
    skip "node not installed"
fi

# 2. Java with -XX:+PreserveFramePointer: through compiled Java code down
#    to the thread's root; the JVM's own SIGSEGV use keeps working.
if [ $asan = 1 ]; then
    skip "java under the sanitizers' runtime (HotSpot's own SIGSEGVs)"
elif command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1 &&
   javac -d "$TMP" "$SRC/Hot.java" >"$TMP/javac.log" 2>&1; then
    java -cp "$TMP" Hot 300 >"$TMP/java-plain.out" 2>&1
    pst=$?
    "$REC_START" -q -o "$TMP/java.rec" -- java -XX:+PreserveFramePointer -cp "$TMP" Hot 2000 \
        >"$TMP/java.out" 2>"$TMP/err"
    st=$?
    expect_status $pst "java: status unchanged"
    cmp -s "$TMP/java-plain.out" "$TMP/java.out"
    ok $? "java: output unchanged"
    stacks java java
    jit=$(share java '$3 ~ /\[jit\]/')
    # Walks that met a module before its table was built (early) or JIT
    # code committed after the last scan of the mappings (unknown-code:
    # HotSpot commits its code cache as it compiles; a scan follows within
    # 100 ms) say so and are judged apart: at most 10% of the samples, or
    # 10 of them (they come at the start: a loaded machine that gives the
    # run fewer samples does not give it fewer of them).
    cut=$("$REC_DUMP" --ndjson --events CPUTimeSample "$TMP/java.rec" |
        jq -r 'select(.eventThread.name == "java") |
               select(.stackTrace.truncationReason == "early" or
                      .stackTrace.truncationReason == "unknown-code") | 1' | wc -l)
    rooted=$(awk -F '\t' -v e="$cut" '{ n++ } $2 == "__clone3" || $2 == "start_thread" || $2 == "clone" { k++ }
        END { print (n - e > 0 ? int(100 * k / (n - e)) : 0) }' "$TMP/java.tsv")
    diag "java: $(count java) samples, $jit% through JIT code, $cut cut short at a table or code not known yet, $rooted% of the others rooted"
    [ "$(count java)" -ge 50 ] && [ "$jit" -ge 80 ] && [ "$rooted" -ge 95 ] &&
        { [ $((cut * 10)) -le "$(count java)" ] || [ "$cut" -le 10 ]; }
    r=$?
    ok $r "java -XX:+PreserveFramePointer: at least 95% walked through JIT code to the thread's root ($rooted%, $cut cut short at code not known yet)"
    if [ $r -ne 0 ]; then
        sort "$TMP/java.tsv" | cut -f1,2 | uniq -c | sort -rn | head -8 | diag_file /dev/stdin
        "$REC_DUMP" --ndjson --events CPUTimeSample "$TMP/java.rec" |
            jq -r 'select(.eventThread.name == "java") | .stackTrace.truncationReason // "whole"' |
            sort | uniq -c | diag_file /dev/stdin
    fi
    # HotSpot writes its perf map at exit: after every sample, before the
    # recording ends. The names come as JitCodeName events; the export
    # names the Java methods with them.
    "$REC_START" -q -o "$TMP/java2.rec" -- java -XX:+PreserveFramePointer \
        -XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit -cp "$TMP" Hot 2000 \
        >/dev/null 2>"$TMP/err"
    for p in $("$REC_DUMP" --ndjson --events ProcessInfo "$TMP/java2.rec" | jq -r .processId); do
        rm -f "/tmp/perf-$p.map"
    done
    named=$(collapsed_share java2 'Hot[.]' java)
    [ "$named" -ge 90 ]
    ok $? "java -XX:+DumpPerfMapAtExit: the export names a Java method of Hot in $named% of its thread's CPU time"
else
    skip "java or javac not installed"
fi

done_testing
