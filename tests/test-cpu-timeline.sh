#!/bin/sh
# rec-cpu --svg/--html: self-contained pictures with one lane per thread,
# checked as text, then rendered in headless Chromium (skipped if absent;
# scripts/deps.sh installs it): the rendered DOM has the lanes and the
# screenshot is not blank.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
. "$top_srcdir/tests/cpu-lib.sh"
B=$DATA/basic.rec

"$REC_CPU" --svg "$T/t.svg" --html "$T/t.html" --interval 10ms "$B" > "$T/out.txt"
ok $? "--svg and --html: exit 0"
grep -q 'main' "$T/out.txt"; ok $? "--svg FILE: the report still goes to stdout"
for f in t.svg t.html; do
    test "$(grep -c '<g class="lane"' "$T/$f")" -eq 7
    ok $? "$f: one lane per thread (7)"
    cpu=$(grep -c '<rect class="cpu"' "$T/$f")
    titled=$(grep -c '<rect class="cpu"[^>]*><title>[^<]*</title></rect>' "$T/$f")
    test "$cpu" -gt 20 && test "$cpu" -eq "$titled"
    ok $? "$f: $cpu interval bars, each with a tooltip"
    grep -q '>0.10<' "$T/$f"; ok $? "$f: time axis labels (s)"
    grep -q '1000/1001 worker-1' "$T/$f"; ok $? "$f: thread names"
    ! grep -v 'xmlns="http://www.w3.org/2000/svg"' "$T/$f" \
        | grep -qiE 'https?:|href=|src=|@import|url\('
    ok $? "$f: no external resources"
done
# Lost CPU (no stack) in the lanes: basic.rec's main thread lost 30 ms,
# no other thread lost any; the grey bars of its lane add up to it.
lost=$(awk '/<g class="lane"/ { lane = $0 }
    /class="lost"/ { match(lane, /data-tid="[0-9]+"/); tid = substr(lane, RSTART + 10, RLENGTH - 11)
        match($0, /: [0-9.]+ ms CPU without/); sum[tid] += substr($0, RSTART + 2, RLENGTH - 2) + 0 }
    END { for (t in sum) printf "%s:%.2f\n", t, sum[t] }' "$T/t.svg")
test "$(echo "$lost" | awk -F: '$1 == 1000 && $2 > 29.95 && $2 < 30.05' | wc -l)" -eq 1 &&
    test "$(echo "$lost" | wc -l)" -eq 1
ok $? "lost CPU drawn in its thread's lane only, adding up to its 30 ms ($lost)"
"$REC_CPU" --svg - "$B" > "$T/stdout.svg"
head -c 5 "$T/stdout.svg" | grep -q '<?xml'; ok $? "--svg -: the picture replaces the report"

"$REC_CPU" --html - "$B" > "$T/stdout.html"
grep -q '^<!DOCTYPE html>' "$T/stdout.html" && grep -q '</html>' "$T/stdout.html"
ok $? "--html -: a whole page on stdout"

"$MKCPU" names "$T/names.rec"
"$REC_CPU" --svg "$T/names.svg" --html "$T/names.html" "$T/names.rec" > /dev/null
ok $? "names needing escapes: exit 0"
grep -q '&lt;b&gt;&amp;amp;&quot;x&quot;&lt;/b&gt;' "$T/names.svg"
ok $? "names are XML-escaped"

. "$top_srcdir/tests/chromium-lib.sh"
if ! chromium_find; then
    for _ in 1 2 3 4 5 6; do skip "chromium not installed (scripts/deps.sh)"; done
    done_testing
    exit $?
fi
browse "$T" --dump-dom "file://$T/t.html" 2>/dev/null > "$T/dom.html"
test "$(grep -o 'class="lane"' "$T/dom.html" | wc -l)" -eq 7
ok $? "chromium: rendered DOM has 7 lanes"
browse "$T" --dump-dom "file://$T/names.svg" 2>/dev/null > "$T/names-dom.txt"
test "$(grep -o 'class="lane"' "$T/names-dom.txt" | wc -l)" -eq 5 \
    && ! grep -q 'parsererror' "$T/names-dom.txt"
ok $? "chromium: SVG with odd names parses (5 lanes)"

# shellcheck disable=SC2046  # two numbers, split on purpose
set -- $(pixels "$T" "$T/t.html")
echo "# html screenshot: ${1:-?} non-white pixels, ${2:-?} bar-red pixels"
test "${1:-0}" -gt 20000 2> /dev/null; ok $? "chromium: HTML screenshot is not blank"
test "${2:-0}" -gt 5000 2> /dev/null; ok $? "chromium: HTML screenshot shows the CPU bars"
# shellcheck disable=SC2046
set -- $(pixels "$T" "$T/t.svg")
echo "# svg screenshot: ${1:-?} non-white pixels, ${2:-?} bar-red pixels"
test "${1:-0}" -gt 20000 2> /dev/null; ok $? "chromium: SVG screenshot is not blank"
test "${2:-0}" -gt 5000 2> /dev/null; ok $? "chromium: SVG screenshot shows the CPU bars"

done_testing
