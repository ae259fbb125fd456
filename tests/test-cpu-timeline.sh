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

CHROMIUM=
for c in chromium chromium-browser google-chrome; do
    if command -v "$c" > /dev/null 2>&1; then CHROMIUM=$c; break; fi
done
if [ -z "$CHROMIUM" ]; then
    for _ in 1 2 3 4 5 6; do skip "chromium not installed (scripts/deps.sh)"; done
    done_testing
    exit $?
fi
TO=
command -v timeout > /dev/null 2>&1 && TO="timeout 120"
browse() {      # browse ARGS... : headless Chromium with a fresh profile
    $TO "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
        --no-first-run --disable-background-networking \
        --disable-component-update --disable-sync \
        --user-data-dir="$(mktemp -d "$T/profile.XXXXXX")" "$@" 2> /dev/null
}
browse --dump-dom "file://$T/t.html" > "$T/dom.html"
test "$(grep -o 'class="lane"' "$T/dom.html" | wc -l)" -eq 7
ok $? "chromium: rendered DOM has 7 lanes"
browse --dump-dom "file://$T/names.svg" > "$T/names-dom.txt"
test "$(grep -o 'class="lane"' "$T/names-dom.txt" | wc -l)" -eq 5 \
    && ! grep -q 'parsererror' "$T/names-dom.txt"
ok $? "chromium: SVG with odd names parses (5 lanes)"

# Non-blank check without python: a page draws the screenshot into a canvas
# and counts the pixels that are not white.
cat > "$T/count.html" <<'HTML'
<!DOCTYPE html><html><body><pre id="out">pending</pre><script>
var img = new Image();
img.onload = function () {
  var c = document.createElement('canvas');
  c.width = img.width; c.height = img.height;
  var g = c.getContext('2d');
  g.drawImage(img, 0, 0);
  var d = g.getImageData(0, 0, c.width, c.height).data, n = 0, red = 0;
  for (var i = 0; i < d.length; i += 4) {
    if (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240) n++;
    if (d[i] > 150 && d[i + 1] < 100 && d[i + 2] < 100) red++;
  }
  document.getElementById('out').textContent = 'result ' + n + ' ' + red;
};
img.onerror = function () { document.getElementById('out').textContent = 'result error'; };
img.src = 'shot.png';
</script></body></html>
HTML
pixels() {      # pixels FILE: "nonwhite red" counts of a screenshot of FILE
    rm -f "$T/shot.png"
    (cd "$T" && browse --screenshot="$T/shot.png" --window-size=1200,800 "file://$1" > /dev/null)
    test -s "$T/shot.png" || { echo "none"; return; }
    browse --allow-file-access-from-files --virtual-time-budget=5000 \
        --dump-dom "file://$T/count.html" | sed -n 's/.*id="out">result \([^<]*\)<.*/\1/p'
}
# shellcheck disable=SC2046  # two numbers, split on purpose
set -- $(pixels "$T/t.html")
echo "# html screenshot: ${1:-?} non-white pixels, ${2:-?} bar-red pixels"
test "${1:-0}" -gt 20000 2> /dev/null; ok $? "chromium: HTML screenshot is not blank"
test "${2:-0}" -gt 5000 2> /dev/null; ok $? "chromium: HTML screenshot shows the CPU bars"
# shellcheck disable=SC2046
set -- $(pixels "$T/t.svg")
echo "# svg screenshot: ${1:-?} non-white pixels, ${2:-?} bar-red pixels"
test "${1:-0}" -gt 20000 2> /dev/null; ok $? "chromium: SVG screenshot is not blank"
test "${2:-0}" -gt 5000 2> /dev/null; ok $? "chromium: SVG screenshot shows the CPU bars"

done_testing
