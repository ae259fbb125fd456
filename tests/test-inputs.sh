#!/bin/sh
# The recordings of a command line by identity: an output that is one of
# the inputs is refused (by name, symlink, hard link, redirection) and the
# input survives; the same file given twice is read once, with a warning;
# chunks concatenated out of time order are rejected with a message.
. "$top_srcdir/tests/tools-tap.sh"
REC_CPU=$top_builddir/tools/rec-cpu
MKCPU=$top_builddir/tests/mkcpu
cd "$TMP" || exit 99
cp "$top_srcdir/tests/data/cpu/basic.rec" app.rec
cp app.rec orig.rec
ln -s app.rec link.rec
ln app.rec hard.rec

intact() { cmp -s app.rec orig.rec; ok $? "$1: the recording is intact"; }

"$REC_DUMP" -o app.rec app.rec > /dev/null 2> "$TMP/err"; st=$?
expect_status 2 "rec-dump -o app.rec app.rec: refused"
grep -q 'refusing to overwrite' "$TMP/err"; ok $? "rec-dump -o: says why"
intact "rec-dump -o"
"$REC_DUMP" --ndjson -o link.rec app.rec > /dev/null 2> "$TMP/err"; st=$?
expect_status 2 "rec-dump -o SYMLINK-TO-INPUT: refused"
intact "rec-dump -o symlink"
"$REC_DUMP" app.rec >> app.rec 2> "$TMP/err"; st=$?
expect_status 2 "rec-dump INPUT >> INPUT: refused"
intact "rec-dump >> input"
for opt in --html --svg -o; do
    "$REC_CPU" $opt hard.rec app.rec > /dev/null 2> "$TMP/err"; st=$?
    expect_status 2 "rec-cpu $opt HARDLINK-OF-INPUT: refused"
    intact "rec-cpu $opt"
done
"$REC_CPU" --svg out.html --html out.html app.rec > /dev/null 2> "$TMP/err"; st=$?
expect_status 2 "rec-cpu --svg F --html F: refused"
test ! -e out.html; ok $? "rec-cpu --svg F --html F: nothing written"
"$REC_SUMMARY" app.rec >> app.rec 2> "$TMP/err"; st=$?
expect_status 2 "rec-summary INPUT >> INPUT: refused"
intact "rec-summary >> input"

# The same file twice: read once (a double count would be +100%).
"$REC_CPU" --json app.rec > once.json 2> /dev/null
"$REC_CPU" --json app.rec ./app.rec link.rec > thrice.json 2> "$TMP/err"; st=$?
expect_status 0 "rec-cpu FILE ./FILE SYMLINK"
cmp -s once.json thrice.json; ok $? "rec-cpu: the same figures as the file once"
test "$(grep -c 'the same file as app.rec: read once' "$TMP/err")" -eq 2
ok $? "rec-cpu: says so for each repetition"
"$REC_DUMP" --ndjson app.rec > once.nd 2> /dev/null
"$REC_DUMP" --ndjson app.rec hard.rec > twice.nd 2> "$TMP/err"
cmp -s once.nd twice.nd; ok $? "rec-dump: a hard link of an input is read once"
grep -q 'read once' "$TMP/err"; ok $? "rec-dump: says so"

# Concatenated recordings: in time order they are one recording; out of
# order they would put threads before the start and over 100% of a CPU.
"$MKCPU" child early.rec && "$MKCPU" basic late.rec || exit 99
cat early.rec late.rec > inorder.rec
cat late.rec early.rec > reversed.rec
"$REC_CPU" inorder.rec > /dev/null 2> "$TMP/err"; st=$?
expect_status 0 "rec-cpu: concatenation in time order"
"$REC_CPU" --json reversed.rec > rev.json 2> "$TMP/err"; st=$?
expect_status 1 "rec-cpu: concatenation out of time order is rejected"
grep -q 'out of time order' "$TMP/err"; ok $? "rec-cpu: says why"
grep -q '"processId": 1000' rev.json; ok $? "rec-cpu: the part in order is reported"
if grep -q '"processId": 2000' rev.json; then r=1; else r=0; fi
ok $r "rec-cpu: the chunks out of order are not"
done_testing
