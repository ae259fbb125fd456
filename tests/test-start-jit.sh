#!/bin/sh
# JIT code named as it was when each sample was taken: a program that
# writes a jitdump (tests/workloads/jitmove.c) loads code, moves it, and
# loads other code where it was, running each place in each phase in its
# own thread. Every sample of a thread whose pc is in that code must carry
# the name its thread was told (none for code that had moved away): the
# name before a move, after it, and after the address was reused, though
# the three share their pcs and their stacks.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
[ -x "$REC_START" ] || skip_all "rec-start not built"
[ -x "$WORKLOADS/jitmove" ] || skip_all "jitmove workload not built"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
cd "$TMP" || exit 99

for engine in perf timer; do
    "$REC_START" -q --force --engine "$engine" -o "$TMP/j.rec" \
        "$WORKLOADS/jitmove" 300 >"$TMP/want" 2>"$TMP/err"
    st=$?
    [ $st -eq 77 ] && skip_all "no JIT loop written for this machine"
    expect_status 0 "$engine: the workload's status"
    # Samples whose innermost frame is the JIT code: thread, name.
    "$REC_DUMP" --ndjson --events CPUTimeSample "$TMP/j.rec" |
        jq -r '.eventThread.osThreadId as $t | .stackTrace.frames[0]? |
               select(.module == "[jit]") | "\($t) \(.function)"' \
        > "$TMP/got"
    while read -r tid want; do
        [ "$want" = - ] && want="[jit]"
        n=$(awk -v t="$tid" '$1 == t' "$TMP/got" | wc -l)
        bad=$(awk -v t="$tid" -v w="$want" '$1 == t && $2 != w' "$TMP/got" | wc -l)
        # 300 ms of CPU at 10 ms: about 30, some taken before the sampler
        # knew the code's mapping (their innermost frame is the caller).
        [ "$n" -ge 10 ] && [ "$bad" -eq 0 ]
        r=$?
        ok $r "$engine: thread $tid: $n samples in the JIT code, all named $want ($bad not)"
        if [ $r -ne 0 ]; then
            awk -v t="$tid" '$1 == t { n[$2]++ } END { for (k in n) print n[k], k }' \
                "$TMP/got" > "$TMP/names"
            diag_file "$TMP/names"
        fi
    done < "$TMP/want"
done

done_testing
