#!/bin/sh
# Python functions in native stacks, read from the interpreter's own frames
# in the signal handler, on Debian's python3 and on any other CPython 3.9
# to 3.13 found (pyenv's): each eval-loop call's Python functions sit in
# front of its native frame (before 3.11: one each), named "qualname" (the
# name before 3.11), with file, line and kind python; generators and a
# second thread included; --no-python leaves them out; the program's
# output and status are its own.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
[ -x "$REC_START" ] || skip_all "rec-start not built"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
cd "$TMP" || exit 99
SRC=$top_srcdir/tests/runtimes
if ldd "$top_builddir/libsampler/.libs/libsampler.so" 2>/dev/null | grep -q libasan; then
    export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
fi

# The interpreters: Debian's, then any other minor version installed.
pys=""
for p in /usr/bin/python3 "$HOME"/.pyenv/versions/3.9.*/bin/python3.9 \
         "$HOME"/.pyenv/versions/3.1[0123].*/bin/python3.1[0123]; do
    [ -x "$p" ] || continue
    v=$("$p" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || continue
    case $v in 3.9|3.10|3.11|3.12|3.13) ;; *) continue ;; esac
    case " $pys " in *" $v:"*) continue ;; esac
    pys="$pys $v:$p"
done
[ -n "$pys" ] || skip_all "no CPython 3.9 to 3.13 installed"
for v in 3.9 3.10; do
    case " $pys " in *" $v:"*) ;; *) skip "python $v: not installed (pyenv's $HOME/.pyenv/versions/$v.*)" ;; esac
done

# frames NAME: per sample, truncated or whole, then its frames as
# kind/function/line, joined by "|".
frames() {
    "$REC_DUMP" --ndjson --stack-depth 0 --events CPUTimeSample "$TMP/$1.rec" |
        jq -r '[(if .stackTrace.truncated then "truncated" else "whole" end),
                (.stackTrace.frames // [] | .[] |
                 "\(.kind // "-")/\(.function // "?")/\(.line // 0)")] | join("|")' \
        >"$TMP/$1.txt"
}
pct() { awk -v k="$1" -v n="$2" 'BEGIN { print (n > 0 ? int(100 * k / n) : 0) }'; }

for e in $pys; do
    v=${e%%:*} py=${e#*:}
    # Before 3.11 a code object has its name only, and each Python frame
    # its own eval-loop call.
    case $v in
    3.9|3.10) hl=hot_loop ge='<genexpr>' ev='native/_PyEval_EvalFrameDefault/[0-9]+[|](native/[^|]*[|])*' ;;
    *) hl='Worker[.]hot_loop' ge='other[.]<locals>[.]<genexpr>' ev='' ;;
    esac
    "$py" "$SRC/hot.py" 40 >"$TMP/plain.out" 2>&1
    pst=$?
    "$REC_START" -q -o "$TMP/py$v.rec" -- "$py" "$SRC/hot.py" 1500 \
        >"$TMP/py.out" 2>"$TMP/err"
    st=$?
    expect_status $pst "python $v: status unchanged"
    "$py" "$SRC/hot.py" 1500 >"$TMP/plain.out" 2>&1
    cmp -s "$TMP/plain.out" "$TMP/py.out"
    ok $? "python $v: output unchanged"
    frames "py$v"
    n=$(wc -l <"$TMP/py$v.txt")
    # Every sample after the interpreter's start is in a function of
    # hot.py; inner's with its line and callers.
    named=$(grep -Ec "python/(inner|gen|consume|other|$hl|$ge)/" "$TMP/py$v.txt")
    inner=$(grep -c 'python/inner/' "$TMP/py$v.txt")
    chain=$(grep -Ec "python/inner/(8|9|10)[|]${ev}python/$hl/24[|]${ev}python/<module>/34[|]" "$TMP/py$v.txt")
    gen=$(grep -Ec 'python/gen/1[45][|].*python/consume/18[|].*python/other/' "$TMP/py$v.txt")
    diag "python $v: $n samples, $named in hot.py's functions, $inner in inner ($chain with lines and callers), $gen in gen (via consume, other)"
    [ "$n" -ge 50 ] && [ "$(pct "$named" "$n")" -ge 90 ]
    ok $? "python $v: at least 90% of samples name the Python function ($(pct "$named" "$n")%)"
    [ $? -eq 0 ] || sort "$TMP/py$v.txt" | uniq -c | sort -rn | head -5 | diag_file /dev/stdin
    [ "$inner" -ge 30 ] && [ "$(pct "$chain" "$inner")" -ge 95 ]
    ok $? "python $v: inner's samples give its line and its callers' ($(pct "$chain" "$inner")%)"
    [ "$gen" -ge 10 ]
    ok $? "python $v: generator frames in the second thread ($gen samples)"
    # Each eval-loop call's Python frames just before its native frame,
    # outermost <module> before the call that runs it (a walk cut short
    # puts them at its end).
    bad=$(grep '^whole|.*python/<module>/' "$TMP/py$v.txt" |
          grep -vc 'python/<module>/[0-9]*|native/_PyEval_EvalFrameDefault/')
    [ "$bad" -eq 0 ]
    ok $? "python $v: <module> always just before its eval loop's native frame ($bad not)"
    if [ -n "$ev" ]; then
        # One eval-loop call per Python frame, each frame just before its
        # call's native frame, in a stack walked to its root; only the
        # innermost call may have none (sampled before it sets its frame,
        # or after it gives its caller's back), never the outermost.
        paired=$(awk -F '|' '$1 == "whole" && /python[/]/ {
                n++; py = ev = 0; bad = 0; last = 0
                for (i = 2; i <= NF; i++) {
                    if ($i ~ /^python[/]/) { py++; if ($(i + 1) !~ /^native[/]_PyEval_EvalFrameDefault[/]/) bad = 1 }
                    if ($i ~ /^native[/]_PyEval_EvalFrameDefault[/]/) { ev++; last = i }
                }
                if (!bad && (py == ev || py == ev - 1) && $(last - 1) ~ /^python[/]/) k++
            } END { print k + 0, n + 0 }' "$TMP/py$v.txt")
        [ "${paired% *}" -eq "${paired#* }" ] && [ "${paired#* }" -ge 50 ]
        ok $? "python $v: each Python frame just before an eval loop of its own (${paired% *} of ${paired#* } whole stacks)"
    fi
    # The line of every instruction of the standard library's code, as
    # the drain reads it from the line table, is the interpreter's own.
    hex=$("$py" -c 'import sys; print("%x" % (sys.hexversion >> 16))')
    "$py" "$SRC/lines.py" 2>/dev/null | "$top_builddir/tests/py-lines" "$hex" \
        >"$TMP/lines.out" 2>"$TMP/lines.err"
    r=$?
    read -r ninstr nbad <"$TMP/lines.out"
    [ $r -eq 0 ] && [ "${ninstr:-0}" -ge 10000 ]
    ok $? "python $v: lines from the line table as the interpreter's (${ninstr:-0} instructions, ${nbad:-?} not)"
    [ $r -eq 0 ] || diag_file "$TMP/lines.err"
    # The tools show them as "qualname (file.py:line)".
    "$REC_DUMP" --format collapsed "$TMP/py$v.rec" >"$TMP/py.collapsed" 2>"$TMP/err"
    grep -Eq ";$hl [(]hot.py:24[)];([^;(]*;)*inner [(]hot.py:(8|9|10)[)]" "$TMP/py.collapsed"
    ok $? "python $v: collapsed stacks show 'inner (hot.py:LINE)'"
done

# Without Python frames when asked.
py=${pys# }
py=${py%% *}
py=${py#*:}
"$REC_START" -q --no-python -o "$TMP/nopy.rec" -- "$py" "$SRC/hot.py" 300 >/dev/null 2>&1
frames nopy
k=$(grep -c 'python/' "$TMP/nopy.txt")
[ "$(wc -l <"$TMP/nopy.txt")" -ge 10 ] && [ "$k" -eq 0 ]
ok $? "--no-python: no Python frame ($k samples with one)"

done_testing
