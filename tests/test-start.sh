#!/bin/sh
# rec-start refuses what it cannot profile, before anything runs: unknown
# or non-executable programs, static and set-ID programs, outputs it cannot
# create or would overwrite; and its usage errors.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
[ -x "$REC_START" ] || skip_all "rec-start not built"
cd "$TMP" || exit 99

# A program that leaves a trace if it ever runs.
MARK=$TMP/ran
cat >"$TMP/prog.sh" <<EOS
#!/bin/sh
touch "$MARK"
EOS
chmod +x "$TMP/prog.sh"
ran() { [ -e "$MARK" ]; }

# refused WANT DESCRIPTION MESSAGE-REGEX ARGS...: refused with exit WANT,
# an explanation on stderr, nothing run, no output file left.
refused() {
    _want=$1 _desc=$2 _re=$3
    shift 3
    rm -f "$MARK"
    "$REC_START" "$@" >"$TMP/out" 2>"$TMP/err"
    st=$?
    expect_status "$_want" "$_desc"
    grep -Eq "$_re" "$TMP/err"
    ok $? "$_desc: says why"
    [ $? -eq 0 ] || diag_file "$TMP/err"
    ! ran && [ ! -s "$TMP/out" ] && [ -z "$(ls "$TMP"/*.rec 2>/dev/null)" ]
    ok $? "$_desc: nothing ran, no recording"
}

"$REC_START" --help >"$TMP/out" 2>&1
st=$?
[ $st -eq 0 ] && grep -q -- '--throttle' "$TMP/out"
ok $? "--help"
"$REC_START" --version >"$TMP/out" 2>&1 && grep -q '^rec-start' "$TMP/out"
ok $? "--version"

refused 2 "no program" "no program" -q
refused 2 "unknown option" "unrecognized|invalid option" --no-such-option "$TMP/prog.sh"
refused 2 "bad throttle" "invalid throttle" --throttle 10 "$TMP/prog.sh"
refused 2 "bad stack depth" "stack depth" --stack-depth 0 "$TMP/prog.sh"
refused 2 "bad signal" "signal" --signal SIGKILL "$TMP/prog.sh"
refused 127 "program not in PATH" "command not found" rec-no-such-program-here
refused 127 "missing path" "No such file" "$TMP/nope/prog"

printf '#!/bin/sh\ntouch "%s"\n' "$MARK" >"$TMP/noexec.sh"
chmod 644 "$TMP/noexec.sh"
refused 126 "not executable" "Permission denied" "$TMP/noexec.sh"
refused 126 "a directory" "directory" "$TMP"
# (a text file without "#!" is a shell script, run by /bin/sh like execvp()
# does: tests/test-start-runs.sh)
printf '\177ELF truncated' >"$TMP/text"
chmod +x "$TMP/text"
refused 126 "not an ELF program" "not an ELF" "$TMP/text"

# A static program: LD_PRELOAD cannot apply.
printf 'int main(void){return 0;}\n' >"$TMP/static.c"
if ${CC:-cc} -static -o "$TMP/static" "$TMP/static.c" 2>/dev/null; then
    refused 1 "static program" "statically linked.*LD_PRELOAD" "$TMP/static"
else
    skip "static program: no static libc to build one"
    skip "static program: says why"
    skip "static program: nothing ran"
fi

# Set-ID copies. Refused on the mode bits even as root (where the loader
# would keep LD_PRELOAD for a root-owned program): one rule.
cp "$WORKLOADS/stacks" "$TMP/suid"
chmod u+s "$TMP/suid"
refused 1 "set-user-ID program" "set-user-ID.*LD_PRELOAD" "$TMP/suid"
cp "$WORKLOADS/stacks" "$TMP/sgid"
chmod g+s,g+x "$TMP/sgid"
refused 1 "set-group-ID program" "set-group-ID.*LD_PRELOAD" "$TMP/sgid"
printf '#!%s\n' "$TMP/suid" >"$TMP/suid-interp.sh"
chmod +x "$TMP/suid-interp.sh"
refused 1 "script with a set-user-ID interpreter" "set-user-ID" "$TMP/suid-interp.sh"

# A Go program built without cgo: dynamically linked (-buildmode=pie)
# but without the C library, nothing could be sampled in it.
GO_SRC=$top_srcdir/tests/hazards/go
if command -v go >/dev/null 2>&1; then
    mkdir -p "$TMP/gosrc" "$top_builddir/tests/go-cache"
    sed '/^import "C"/d; /^\/\*$/,/^\*\/$/d; s/int(C.hz_go_cadd(C.int(i\&1023), 1))/i \& 1/' \
        "$GO_SRC/main.go" >"$TMP/gosrc/main.go"
    cp "$GO_SRC/go.mod" "$TMP/gosrc/"
    if (cd "$TMP/gosrc" && GOCACHE="$top_builddir/tests/go-cache" GOFLAGS=-mod=mod \
            GOPATH="$TMP/gopath" GOPROXY=off CGO_ENABLED=0 \
            go build -buildmode=pie -o "$TMP/gopure" . >"$TMP/gobuild.log" 2>&1); then
        refused 1 "Go program without cgo" "CGO_ENABLED=1" "$TMP/gopure"
    else
        skip "Go program without cgo: go build failed"
        skip "Go program without cgo: go build failed"
        skip "Go program without cgo: go build failed"
        diag_file "$TMP/gobuild.log"
    fi
else
    skip "Go program without cgo: go not installed"
    skip "Go program without cgo: go not installed"
    skip "Go program without cgo: go not installed"
fi

# Outputs.
refused 1 "output directory missing" "cannot create" -o "$TMP/no/such/dir/x.rec" "$TMP/prog.sh"
refused 1 "output on a file system that refuses files" "cannot create" -o /proc/x.rec "$TMP/prog.sh"
refused 1 "output is a directory" "is a directory" -o "$TMP" "$TMP/prog.sh"
refused 1 "--force on a directory" "is a directory" -f -o "$TMP" "$TMP/prog.sh"
# --force replaces a regular file only: never a device node (below), or
# what a symbolic link points to (the link is not followed either). A
# FIFO is streamed into (test-start-stream.sh).
echo "precious" >"$TMP/victim.data"
ln -s "$TMP/victim.data" "$TMP/link.data"
refused 1 "output is a symbolic link" "exists" -o "$TMP/link.data" "$TMP/prog.sh"
rm -f "$MARK"
"$REC_START" -q -f -o "$TMP/link.data" "$TMP/prog.sh" >"$TMP/out" 2>"$TMP/err"
st=$?
expect_status 1 "--force on a symbolic link refused"
grep -q "symbolic link" "$TMP/err" && ! ran && [ -L "$TMP/link.data" ] &&
    [ "$(cat "$TMP/victim.data")" = precious ]
ok $? "--force on a symbolic link: link and target untouched, nothing ran"
rm -f "$TMP/link.data"
if [ "$(id -u)" -eq 0 ] && mknod "$TMP/null" c 1 3 2>/dev/null; then
    rm -f "$MARK"
    "$REC_START" -q -f -o "$TMP/null" "$TMP/prog.sh" >"$TMP/out" 2>"$TMP/err"
    st=$?
    expect_status 1 "--force on a device node refused"
    grep -q "a device" "$TMP/err" && ! ran && [ -c "$TMP/null" ]
    ok $? "--force on a device node: still there, nothing ran"
    rm -f "$TMP/null"
else
    skip "device node: needs root to create one"
    skip "device node: needs root to create one"
fi
# A directory we may not write: sysfs refuses new files even to root.
if [ "$(id -u)" -ne 0 ]; then
    mkdir "$TMP/ro"
    chmod 555 "$TMP/ro"
    refused 1 "read-only directory" "cannot create" -o "$TMP/ro/x.rec" "$TMP/prog.sh"
else
    refused 1 "directory refusing new files" "cannot create" -o /sys/x.rec "$TMP/prog.sh"
fi

echo "precious" >"$TMP/keep.data"
rm -f "$MARK"
"$REC_START" -q -o "$TMP/keep.data" "$TMP/prog.sh" >"$TMP/out" 2>"$TMP/err"
st=$?
expect_status 1 "existing output refused"
grep -q "exists" "$TMP/err" && ! ran && [ "$(cat "$TMP/keep.data")" = precious ]
ok $? "existing output: untouched, nothing ran"

"$REC_START" -q --force -o "$TMP/keep.data" "$TMP/prog.sh" >"$TMP/out" 2>"$TMP/err"
st=$?
expect_status 0 "--force replaces it"
ran && [ "$(cat "$TMP/keep.data" 2>/dev/null)" != precious ]
ok $? "--force: the program ran, the old content is gone"

# The recording is private whatever the umask: it holds command lines.
rm -f "$TMP/mode.rec"
(umask 000; "$REC_START" -q -o "$TMP/mode.rec" "$TMP/prog.sh") >"$TMP/out" 2>"$TMP/err"
[ "$(stat -c %a "$TMP/mode.rec" 2>/dev/null)" = 600 ]
ok $? "recording created with mode 0600 under umask 000 ($(stat -c %a "$TMP/mode.rec" 2>/dev/null))"

# Default name: rec-<pid>.rec in the current directory, pid = the program's.
rm -f "$MARK" "$TMP"/rec-*.rec
"$REC_START" -q sh -c 'echo $$' >"$TMP/out" 2>"$TMP/err"
st=$?
pid=$(cat "$TMP/out")
expect_status 0 "default output name"
[ -f "$TMP/rec-$pid.rec" ]
ok $? "default output is rec-<program pid>.rec ($(cd "$TMP" && echo rec-*))"

done_testing
