#!/bin/sh
# Directory recordings (chunk files named in recording order, read as one
# recording), times before the end of the data (--since 500ms), and
# rec-dump --format rec (the whole chunks of a window as one recording).
# The directories are cut from a real multi-chunk recording at its chunk
# boundaries, so every answer can be compared with the file's.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
REC_FLAME=$top_builddir/tools/rec-flame
cd "$TMP" || exit 99

"$REC_START" -q --flush-interval 50ms --max-chunk-size 8k --chunk-age 100ms -o whole.rec \
    "$WORKLOADS/demo" 0.6 >/dev/null 2>start.err ||
    skip_all "rec-start cannot record here: $(head -1 start.err)"

# u64 FILE OFFSET: the little-endian u64 there
u64() { od -An -t u8 -j "$2" -N 8 "$1" | tr -d ' '; }
# chunks FILE: "offset size start_ns end_ns" per chunk (80-byte headers:
# size at 24, start wall clock at 32, duration in ticks at 48, ticks per
# second at 56)
chunks() {
    _o=0 _len=$(wc -c <"$1")
    while [ "$_o" -lt "$_len" ]; do
        _s=$(u64 "$1" $((_o + 24))) _w=$(u64 "$1" $((_o + 32)))
        _d=$(u64 "$1" $((_o + 48))) _t=$(u64 "$1" $((_o + 56)))
        [ $((1000000000 % _t)) -eq 0 ] || { echo "ticks per second $_t" >&2; exit 99; }
        echo "$_o $_s $_w $((_w + _d * (1000000000 / _t)))"
        _o=$((_o + _s))
    done
}
# split FILE DIR PER: the chunks of FILE, PER to a file, as DIR/NNN....rec
split_rec() {
    mkdir -p "$2"
    _i=0 _n=0 _first=
    chunks "$1" > "$2.chunks"
    while read -r _o _s _w _e; do
        [ -n "$_first" ] || _first=$_o
        _n=$((_n + 1))
        if [ "$_n" -eq "$3" ]; then
            tail -c +$((_first + 1)) "$1" | head -c $((_o + _s - _first)) \
                > "$2/$(printf %012d "$_i").rec"
            _i=$((_i + 1)) _n=0 _first=
        fi
    done < "$2.chunks"
    if [ -n "$_first" ]; then
        tail -c +$((_first + 1)) "$1" > "$2/$(printf %012d "$_i").rec"
    fi
    rm -f "$2.chunks"
}

chunks whole.rec > whole.chunks
nchunks=$(wc -l < whole.chunks)
[ "$nchunks" -ge 6 ] || skip_all "the recording has $nchunks chunks, want 6"
diag "whole.rec: $nchunks chunks"
"$REC_DUMP" --ndjson whole.rec > whole.nd 2>/dev/null
split_rec whole.rec d2 2
split_rec whole.rec d1 1

# ---- reading a directory ----

for d in d2 d1; do
    "$REC_DUMP" --ndjson $d > $d.nd 2> "$TMP/err"; st=$?
    expect_status 0 "rec-dump $d (chunks per file: ${d#d})"
    cmp -s whole.nd $d.nd; ok $? "rec-dump $d: the events of the file, in order"
    test ! -s "$TMP/err"; ok $? "rec-dump $d: no warning (intermediate files end without LAST)"
done
# Others than the visible *.rec regular files are not chunk files.
cp d2/000000000000.rec d2/.hidden.rec
echo notes > d2/notes.txt
mkdir d2/sub.rec
"$REC_DUMP" --ndjson d2 > d2x.nd 2>/dev/null
cmp -s whole.nd d2x.nd; ok $? "hidden files, other names and directories are ignored"
rm -r d2/.hidden.rec d2/notes.txt d2/sub.rec

"$REC_SUMMARY" --json whole.rec | grep -v '"file"' > whole.sum
"$REC_SUMMARY" --json d1 | grep -v '"file"' > d1.sum
cmp -s whole.sum d1.sum; ok $? "rec-summary: the directory's figures are the file's"
"$REC_CPU" --json whole.rec > whole.cpu 2>/dev/null
"$REC_CPU" --json d1 > d1.cpu 2> "$TMP/err"; st=$?
expect_status 0 "rec-cpu DIR"
cmp -s whole.cpu d1.cpu; ok $? "rec-cpu: the directory's figures are the file's"
"$REC_FLAME" --title t -o whole.html whole.rec 2>/dev/null
"$REC_FLAME" --title t -o d1.html d1 2> "$TMP/err"; st=$?
expect_status 0 "rec-flame DIR"
cmp -s whole.html d1.html; ok $? "rec-flame: the directory's page is the file's" ||
    diff whole.html d1.html | head -5 | sed 's/^/# /'

# The oldest file removed (retention): the rest reads as its files do.
cp -r d2 gone
rm gone/000000000000.rec
cat gone/*.rec > gone.cat
"$REC_DUMP" --ndjson gone.cat > gone.want 2>/dev/null
"$REC_DUMP" --ndjson gone > gone.nd 2> "$TMP/err"; st=$?
expect_status 0 "a directory whose first file is gone"
cmp -s gone.want gone.nd; ok $? "it reads as the files left"

# A damaged file: every event before it, then its name, chunk and offset.
cp -r d2 bad
printf 'XXXXXXXX' | dd of=bad/000000000002.rec bs=1 seek=100 conv=notrunc 2>/dev/null
cat d2/000000000000.rec d2/000000000001.rec > before.cat
"$REC_DUMP" --ndjson before.cat > before.nd 2>/dev/null
"$REC_DUMP" --ndjson bad > bad.nd 2> "$TMP/err"; st=$?
expect_status 1 "a damaged file in the directory"
grep -Eq "^rec-dump: bad/000000000002\.rec: chunk 4, offset [0-9]+: " "$TMP/err"
ok $? "the message names the file, the chunk (counted across files) and the offset"
diag_file "$TMP/err" 2
head -n "$(wc -l < before.nd)" bad.nd | cmp -s - before.nd
ok $? "every event of the files before it is printed"
test "$(wc -l < bad.nd)" -ge "$(wc -l < before.nd)"
ok $? "and no event is printed twice"

# The last file without its closing chunk: not closed, said of that file.
cp -r d1 open
rm "open/$(printf %012d $((nchunks - 1))).rec"
"$REC_DUMP" --ndjson open > /dev/null 2> "$TMP/err"; st=$?
expect_status 0 "a directory recording not closed yet"
grep -q "warning: open/$(printf %012d $((nchunks - 2))).rec: recording not closed" "$TMP/err"
ok $? "'not closed' is judged at the end of the last file"

mkdir empty
"$REC_DUMP" empty > /dev/null 2> "$TMP/err"; st=$?
expect_status 1 "a directory without .rec files"
grep -q "empty: no .rec file in the directory" "$TMP/err"; ok $? "says so"
cp -r d2 hole
: > hole/000000000001.rec
"$REC_DUMP" --ndjson hole > /dev/null 2> "$TMP/err"; st=$?
expect_status 1 "an empty file that is not the newest"
grep -q "hole/000000000001.rec: chunk 2, offset 0: empty file" "$TMP/err"; ok $? "is named"
: > d2/999999999999.rec
"$REC_DUMP" --ndjson d2 > d2e.nd 2>/dev/null; st=$?
expect_status 0 "an empty newest file (created, nothing written yet)"
rm d2/999999999999.rec

"$REC_DUMP" --follow d2 > /dev/null 2> "$TMP/err"; st=$?
expect_status 1 "rec-dump --follow DIR is refused"
grep -q "d2: a directory recording cannot be followed" "$TMP/err"; ok $? "with a message"

# ---- times before the end ----

end=$(awk '$4 > m { m = $4 } END { print m }' whole.chunks)
start=$(head -1 whole.chunks | cut -d' ' -f3)
since=$((end - 500000000)) until=$((end - 200000000))
"$REC_DUMP" --ndjson --since "$since" --until "$until" whole.rec > abs.nd
"$REC_DUMP" --ndjson --since 500ms --until -200ms d1 > rel.nd 2> "$TMP/err"; st=$?
expect_status 0 "rec-dump --since 500ms --until -200ms DIR"
all=$(wc -l < whole.nd) some=$(wc -l < abs.nd)
[ "$some" -gt 0 ] && [ "$some" -lt "$all" ]
ok $? "the window holds some events, not all ($some of $all)"
cmp -s abs.nd rel.nd; ok $? "rec-dump: the events of the absolute window (end of data - 500 ms ..)"
for tool in "$REC_SUMMARY --json" "$REC_CPU --json" "$REC_FLAME"; do
    t=${tool%% *}
    $tool --since "$since" --until "$until" d1 > abs.out 2>/dev/null
    $tool --since -500ms --until 200ms d1 > rel.out 2> "$TMP/err"; st=$?
    expect_status 0 "${t##*/} --since -500ms --until 200ms"
    cmp -s abs.out rel.out; ok $? "${t##*/}: the same as with the absolute times"
done
"$REC_DUMP" --ndjson --since "+$(( (since - start) / 1000000 ))ms" whole.rec > plus.nd
test -s plus.nd; ok $? "+DURATION still counts from the start"
cat whole.rec | "$REC_DUMP" --since 5m - > /dev/null 2> "$TMP/err"; st=$?
expect_status 2 "a time before the end of a pipe is a usage error"
grep -q "a pipe can be read only once" "$TMP/err"; ok $? "says why"
"$REC_DUMP" --since 5x whole.rec > /dev/null 2> "$TMP/err"; st=$?
expect_status 2 "--since 5x: not a time"

# ---- rec-dump --format rec ----

# The chunks whose span [start, end] meets [since, until).
awk -v s="$since" -v u="$until" '$3 < u && $4 >= s' whole.chunks > want.chunks
want_n=$(wc -l < want.chunks)
want_bytes=$(awk '{ n += $2 } END { print n }' want.chunks)
"$REC_DUMP" --format rec --since 500ms --until -200ms -o win.rec d1 2> "$TMP/err"; st=$?
expect_status 0 "--format rec --since 500ms --until -200ms -o FILE DIR"
test "$(wc -c < win.rec)" -eq "$want_bytes"
ok $? "the copy is exactly the $want_n chunks meeting the window ($want_bytes bytes)"
"$REC_DUMP" --ndjson win.rec > win.nd 2> "$TMP/err"; st=$?
expect_status 0 "the copy reads"
test ! -s "$TMP/err"; ok $? "without a warning: a closed recording"
"$REC_DUMP" --ndjson --since "$since" --until "$until" win.rec > winsel.nd
# The copy is a recording of its own: the mappings its first chunk
# restates are shown there (the whole recording showed them earlier).
grep -v '"type":"ModuleLoad"' abs.nd > abs-nomod.nd
grep -v '"type":"ModuleLoad"' winsel.nd > winsel-nomod.nd
cmp -s abs-nomod.nd winsel-nomod.nd; ok $? "it holds every event of the window"
first=$(head -1 want.chunks | cut -d' ' -f1)
last_off=$((want_bytes - $(tail -1 want.chunks | cut -d' ' -f2)))
tail -c +$((first + 1)) whole.rec | head -c "$last_off" | cmp -s -n "$last_off" - win.rec
ok $? "the chunks before the last are copied byte for byte"
flags=$(od -An -t u1 -j $((last_off + 21)) -N 1 win.rec | tr -d ' ')
test $((flags & 1)) -eq 1; ok $? "the last chunk copied has the LAST flag"

"$REC_DUMP" --format rec -o all.rec d2 2>/dev/null
cmp -s all.rec whole.rec; ok $? "the whole directory copied is the file"

# An OPEN chunk: copied up to its last flush, finished.
"$REC_DUMP" --format rec -o fin.rec "$GOLDEN/unfinished.rec" 2> "$TMP/err"; st=$?
expect_status 0 "--format rec of an unfinished recording"
"$REC_DUMP" --ndjson fin.rec > fin.nd 2> "$TMP/err"; st=$?
expect_status 0 "its copy reads"
test ! -s "$TMP/err"; ok $? "without a warning"
"$REC_DUMP" --ndjson "$GOLDEN/unfinished.rec" 2>/dev/null | cmp -s - fin.nd
ok $? "with every flushed event"
state=$(od -An -t u1 -j 20 -N 2 fin.rec | tr -s ' ' | sed 's/^ //')
test "$state" = "2 1"; ok $? "its header says FINISHED and LAST (got '$state')"

"$REC_DUMP" --format rec --until 1 -o none.rec whole.rec 2> "$TMP/err"; st=$?
expect_status 0 "a window without chunks"
grep -q "no chunk of the recording meets the time window" "$TMP/err"; ok $? "warns"
"$REC_DUMP" --format rec -o d2/x.rec d2 2> "$TMP/err"; st=$?
expect_status 2 "an output inside the input directory is refused"
test ! -e d2/x.rec; ok $? "and not created"
cat whole.rec | "$REC_DUMP" --format rec -o p.rec - 2> "$TMP/err"; st=$?
expect_status 2 "--format rec of a pipe is refused"
"$REC_DUMP" --format rec --events 'CPU*' -o e.rec whole.rec 2> "$TMP/err"; st=$?
expect_status 2 "--format rec --events is refused (whole chunks)"

done_testing
