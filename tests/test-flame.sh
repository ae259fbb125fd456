#!/bin/sh
# rec-flame: the page is self-contained, its embedded profile sums to
# rec-cpu's sampled + lost CPU time, --diff marks the recordings' sides;
# in headless Chromium (skipped if absent) the page loads without a script
# error, draws the expected frames, computes the search's matched share,
# and its screenshot is not blank.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
REC_FLAME=$top_builddir/tools/rec-flame
REC_CPU=$top_builddir/tools/rec-cpu
B=$top_srcdir/tests/data/cpu/basic.rec
cd "$TMP" || exit 99

# data FILE: the embedded profile as JSON
data() { sed -n '/<script id="data"/,/<\/script>/p' "$1" | sed '1d;$d'; }

"$REC_FLAME" -o "$TMP/f.html" "$B" 2>"$TMP/err"
st=$?
expect_status 0 "rec-flame writes a page"
data "$TMP/f.html" >"$TMP/d.json"
want=$("$REC_CPU" --json "$B" | jq '[.threads[] | .sampledCpuTime + .lostCpuTime] | add')
got=$(jq '.unit as $u | [.cells | range(2; length; 3) as $i | .[$i] * $u] | add' "$TMP/d.json")
test "$got" = "$want"; ok $? "embedded weights sum to rec-cpu's sampled + lost ($got ns)"
jq -e '[.strings[]] | index("[lost: queue-full]") and index("[failed]")' "$TMP/d.json" >/dev/null
ok $? "lost and failed CPU are frames of the page"
! grep -qiE 'https?:|src=|href=|@import|url\(' "$TMP/f.html"
ok $? "no external resources"

"$REC_FLAME" --diff -o "$TMP/d.html" "$GOLDEN/basic.rec" "$B" 2>"$TMP/err"
st=$?
expect_status 0 "--diff BEFORE AFTER writes a page"
data "$TMP/d.html" >"$TMP/dd.json"
jq -e '.diff and ([.threads | range(3; length; 4) as $i | .[$i]] | unique == [0, 1])' \
    "$TMP/dd.json" >/dev/null
ok $? "--diff: threads of both recordings, marked before/after"
"$REC_FLAME" --diff "$B" >/dev/null 2>"$TMP/err"
st=$?
expect_status 2 "--diff with one file: usage error"
# The default title names two files, then counts the rest.
for i in 1 2 3 4; do cp "$B" "$TMP/in$i.rec"; done
"$REC_FLAME" -o "$TMP/t.html" "$TMP/in1.rec" "$TMP/in2.rec" "$TMP/in3.rec" \
    "$TMP/in4.rec" 2>"$TMP/err"
title=$(data "$TMP/t.html" | jq -r .title)
test "$title" = "$TMP/in1.rec, $TMP/in2.rec and 2 more"
ok $? "four files: a title of two names and a count ($title)"

. "$top_srcdir/tests/chromium-lib.sh"
if ! chromium_find; then
    for _ in 1 2 3 4 5; do skip "chromium not installed (scripts/deps.sh)"; done
    done_testing
    exit $?
fi
# One load: the DOM after the script ran, with a preselected search.
browse "$TMP" --window-size=1200,600 --dump-dom "file://$TMP/f.html#q=fib" \
    >"$TMP/dom.html" 2>"$TMP/console"
! grep -q 'Uncaught' "$TMP/console"; ok $? "chromium: no script error"
grep 'Uncaught' "$TMP/console" | head -3 | sed 's/^/# /'
n=0
for fr in main compute leaf worker fib poll '[failed]' '[lost: queue-full]'; do
    grep -qF ">$fr</div>" "$TMP/dom.html" && n=$((n + 1))
done
test $n -eq 8; ok $? "chromium: the expected frames are drawn ($n of 8)"
grep -q 'id="match">matched: 30.00% (150.0 ms)<' "$TMP/dom.html"
ok $? "chromium: search 'fib' matches 30% of the CPU time"

# Second load: a screenshot of the diff page, its pixels counted.
# shellcheck disable=SC2046  # two numbers, split on purpose
set -- $(pixels "$TMP" "$TMP/d.html")
px=$1
test -s "$TMP/shot.png"; ok $? "chromium: screenshot of the --diff page"
diag "diff screenshot: ${px:-?} non-white pixels"
test "${px:-0}" -gt 20000 2>/dev/null; ok $? "chromium: the screenshot is not blank"
done_testing
