#!/bin/sh
# Call chains as recorded: in the stacks workload every sample whose top
# frame is a busy function must carry the exact chain of its callers -
# including the caller of a frameless leaf, which a plain frame-pointer
# walk skips - symbolized to function, module, file and line.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
[ -x "$REC_START" ] || skip_all "rec-start not built"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
[ -x "$REC_DUMP" ] || skip_all "rec-dump not built"
cd "$TMP" || exit 99

"$REC_START" -q -o "$TMP/s.rec" --throttle 1ms -- "$WORKLOADS/stacks" 0.5 \
    >"$TMP/out" 2>"$TMP/err"
st=$?
expect_status 0 "stacks workload recorded"
"$REC_DUMP" --ndjson --stack-depth 0 --events CPUTimeSample "$TMP/s.rec" >"$TMP/s.ndjson" 2>"$TMP/err"
ok $? "rec-dump reads it"

# thread <TAB> failed <TAB> function names innermost first
jq -r '[.eventThread.name // "?", (.failed | tostring),
        ((.stackTrace.frames // []) | map(.function // "?") | join(" "))] | @tsv' \
    "$TMP/s.ndjson" >"$TMP/chains.tsv"
total=$(wc -l <"$TMP/chains.tsv")
diag "$total samples"

# check THREAD TOP EXPECTED-CHAIN-PREFIX (early stacks not judged)
early=$(early_stacks "$TMP/s.rec")
check_chain() {
    _thread=$1 _top=$2 _want=$3
    awk -F '\t' -v t="$_thread" -v top="$_top" -v want="$_want" \
        -v early="$early" '
        $1 == t && $2 == "false" {
            split($3, f, " ")
            if (f[1] != top) next
            n++
            if (index($3 " ", want " ") == 1) good++
            else if (bad++ < 5) print "# unexpected: " $3
        }
        END {
            printf "# %s: %d samples in %s, %d with the exact chain, %d early stacks in the recording\n", t, n, top, good, early
            spare = n - good < early ? n - good : early
            exit !(n >= 20 && good >= 0.99 * (n - spare))
        }' "$TMP/chains.tsv"
    ok $? "$_thread: >= 99% of samples in $_top have: $_want"
}

check_chain stk-main stk_c "stk_c stk_b stk_a main"
check_chain stk-leaf stk_leaf "stk_leaf stk_leaf_parent stk_leaf_thread"
rec=""
i=0
while [ $i -le 7 ]; do rec="$rec stk_rec"; i=$((i + 1)); done
check_chain stk-rec stk_rec_bottom "stk_rec_bottom$rec stk_rec_thread"

# Symbolization of one busy frame: module, source file and line.
jq -c 'select(.stackTrace) | .stackTrace.frames[0] | select(.function == "stk_c")' \
    "$TMP/s.ndjson" | head -1 >"$TMP/frame.json"
jq -e --arg m "$WORKLOADS/stacks" '
    (.module | endswith("/stacks")) and (.file | endswith("stacks.c")) and
    .line > 0 and .offset > 0 and (.inlined | not)' "$TMP/frame.json" >/dev/null
ok $? "stk_c frame: module, file, line ($(cat "$TMP/frame.json"))"

# Failed walks and biased samples stay rare in this program.
failed=$(awk -F '\t' '$2 == "true"' "$TMP/chains.tsv" | wc -l)
[ "$failed" -le $((total / 100)) ]
ok $? "failed walks: $failed of $total"

done_testing
