# shellcheck shell=sh
# tests/chromium-lib.sh - headless Chromium for the page tests.
#
# Sourced after tap-lib.sh. chromium_find sets CHROMIUM or returns 1;
# browse DIR ARGS... runs a headless Chromium with a fresh profile under
# DIR; pixels DIR FILE prints "nonwhite red" pixel counts of a screenshot
# of FILE, counted by a page of our own drawing it into a canvas (so no
# image library is needed).

chromium_find() {
    CHROMIUM=
    for c in chromium chromium-browser google-chrome; do
        if command -v "$c" >/dev/null 2>&1; then CHROMIUM=$c; return 0; fi
    done
    return 1
}

browse() {
    _dir=$1; shift
    _to=
    command -v timeout >/dev/null 2>&1 && _to="timeout 120"
    $_to "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
        --no-first-run --disable-background-networking \
        --disable-component-update --disable-sync --enable-logging=stderr --v=0 \
        --user-data-dir="$(mktemp -d "$_dir/profile.XXXXXX")" "$@"
}

pixels() {
    cat >"$1/count.html" <<'HTML'
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
img.onerror = function () { document.getElementById('out').textContent = 'result none'; };
img.src = 'shot.png';
</script></body></html>
HTML
    rm -f "$1/shot.png"
    (cd "$1" && browse "$1" --window-size=1200,800 --screenshot="$1/shot.png" \
        "file://$2" >/dev/null 2>&1)
    test -s "$1/shot.png" || { echo "none"; return; }
    browse "$1" --allow-file-access-from-files --virtual-time-budget=5000 \
        --dump-dom "file://$1/count.html" 2>/dev/null |
        sed -n 's/.*id="out">result \([^<]*\)<.*/\1/p'
}
