#!/bin/sh
# The CFI stack walker on programs built without frame pointers: exact
# chains down to the thread's root, a sample inside the program's own
# signal handler, a stack pointer that cannot be trusted, a library loaded
# and unloaded in a loop while sampling at 1 ms, and the module+0xSTART
# names of a stripped library (and their offline resolution by
# rec-dump --debug-dir).
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
[ -x "$REC_START" ] || skip_all "rec-start not built"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
[ -x "$REC_DUMP" ] || skip_all "rec-dump not built"
case $(uname -m) in
x86_64) ;;
*) skip_all "CFI tables are built for x86-64 only" ;;
esac
cd "$TMP" || exit 99

# Shorter runs under the sanitizers (the sampler is instrumented).
secs=0.5
iters=300
if ldd "$top_builddir/libsampler/.libs/libsampler.so" 2>/dev/null | grep -q libasan; then
    secs=0.3
fi

# record NAME REC-START-OPTIONS... -- PROGRAM ARGS: $TMP/NAME.tsv holds
# thread <TAB> failed <TAB> functions innermost first.
record() {
    _name=$1
    shift
    "$REC_START" -q -o "$TMP/$_name.rec" --throttle 1ms "$@" >"$TMP/out" 2>"$TMP/err"
    st=$?
    expect_status 0 "$_name recorded"
    "$REC_DUMP" --ndjson --stack-depth 0 --events CPUTimeSample \
        "$TMP/$_name.rec" >"$TMP/$_name.ndjson" 2>"$TMP/err"
    jq -r '[.eventThread.name // "?", (.failed | tostring),
            ((.stackTrace.frames // []) | map(.function // "?") | join(" "))] | @tsv' \
        "$TMP/$_name.ndjson" >"$TMP/$_name.tsv"
    early_stacks "$TMP/$_name.rec" >"$TMP/$_name.early"
}

# check_chain FILE THREAD TOP PATTERN [MIN% [EARLY]]: of the samples of
# THREAD whose top frame is TOP, MIN% (99) match the awk regular expression
# PATTERN. EARLY, a chain of function names: samples whose frames are a
# shorter prefix of it are counted apart, not judged (a walk that stopped
# early, not a wrong one), and at least 10 must match. The samples the
# recording counts as early stacks (taken before a module's table was
# built: they end in that module) are not judged either.
check_chain() {
    awk -F '\t' -v t="$2" -v top="$3" -v want="$4" -v min="${5:-99}" \
        -v early="${6:-}" -v tables="$(cat "$TMP/$1.early")" '
        ($1 == t || t == "*") && $2 == "false" {
            split($3, f, " ")
            if (f[1] != top) next
            if (early != "" && $3 != early && index(early " ", $3 " ") == 1) {
                short++
                next
            }
            n++
            if ($3 ~ want) good++
            else if (bad++ < 5) print "# unexpected: " $3
        }
        END {
            printf "# %s: %d samples in %s, %d match", t, n, top, good
            if (early != "") printf ", %d cut short apart", short
            printf ", %d early stacks in the recording\n", tables
            spare = n - good < tables ? n - good : tables
            exit !(n >= 10 && good >= min / 100 * (n - spare))
        }' "$TMP/$1.tsv"
    ok $? "$2: >= ${5:-99}% of samples in $3 match: $4"
}

# 1. The known chains, built with -fomit-frame-pointer, down to the root
#    (_start for the main thread, clone for the others).
record nofp -- "$WORKLOADS/stacks-nofp" $secs
root='( _start| (__)?clone3?)$'
# Without libc's debug file, a thread's root frames (start_thread and
# clone3, local symbols) are named by their module and start.
libc_so=$(ldd "$WORKLOADS/stacks-nofp" | awk '$1 ~ /^libc[.]so/ { print $3 }')
libc_bid=$(readelf -n "$libc_so" 2>/dev/null | awk '/Build ID:/ { print $3 }')
if [ -n "$libc_bid" ] &&
   [ ! -e "/usr/lib/debug/.build-id/$(echo "$libc_bid" | cut -c1-2)/$(echo "$libc_bid" | cut -c3-).debug" ]; then
    root='( _start| (__)?clone3?| libc[.]so[.]6[+]0x[0-9a-f]+ libc[.]so[.]6[+]0x[0-9a-f]+)$'
fi
check_chain nofp stk-main stk_c "^stk_c stk_b stk_a main "
# A walk that reached the thread's root is whole: not truncated, no reason.
n_root=$(jq -r 'select(.stackTrace.frames[-1].function == "_start") |
    [.stackTrace.truncated, .stackTrace.truncationReason] | @json' "$TMP/nofp.ndjson" |
    sort | uniq -c | tr '\n' ' ')
case $n_root in
*'[false,null]'*) case $n_root in *true*) r=1 ;; *) r=0 ;; esac ;;
*) r=1 ;;
esac
ok $r "stacks rooted at _start are whole, without a reason ($n_root)"
check_chain nofp stk-leaf stk_leaf "^stk_leaf stk_leaf_parent stk_leaf_thread "
rec8=" stk_rec stk_rec stk_rec stk_rec stk_rec stk_rec stk_rec stk_rec"
check_chain nofp stk-rec stk_rec_bottom "^stk_rec_bottom$rec8 stk_rec_thread "
check_chain nofp stk-main stk_c "$root"
check_chain nofp stk-rec stk_rec_bottom "$root"
"$REC_DUMP" --events RecordingSettings "$TMP/nofp.rec" 2>/dev/null |
    jq -e '[.. | objects | select(has("unwinder")) | .unwinder] | .[0] == "cfi"' \
    >/dev/null
ok $? "RecordingSettings.unwinder is cfi by default"

# The unwind and symbol tables shared across processes (REC_CACHE_DIR):
# written 0600 in a private directory by the first run, used by the next;
# a damaged file is not used, and is replaced.
cache="$TMP/cache"
REC_CACHE_DIR=$cache record cached -- "$WORKLOADS/stacks-nofp" $secs
n_files=$(find "$cache" -name '*.uwt' -perm 0600 | wc -l)
n_syms=$(find "$cache" -name '*.sym' -perm 0600 | wc -l)
[ "$(stat -c %a "$cache")" = 700 ] && [ "$n_files" -ge 2 ] && [ "$n_syms" -ge 2 ]
ok $? "shared tables: $n_files unwind, $n_syms symbol tables, 0600 in a 0700 directory"
REC_CACHE_DIR=$cache record cached2 -- "$WORKLOADS/stacks-nofp" $secs
check_chain cached2 stk-main stk_c "^stk_c stk_b stk_a main .*$root"
# The program's own table and libc's: on every chain, so needed each run.
damaged=""
for m in "$WORKLOADS/stacks-nofp" "$(ldd "$WORKLOADS/stacks-nofp" | awk '$1 ~ /^libc[.]so/ { print $3 }')"; do
    bid=$(readelf -n "$m" 2>/dev/null | awk '/Build ID:/ { print $3 }')
    for f in "$cache/$bid"-*.uwt "$cache/$bid"-*.sym; do
        [ -n "$bid" ] && [ -f "$f" ] || continue
        printf 'damaged' | dd of="$f" bs=1 seek=400 conv=notrunc 2>/dev/null
        cp "$f" "$f.damaged"
        damaged="$damaged $f"
    done
done
REC_CACHE_DIR=$cache record cached3 -- "$WORKLOADS/stacks-nofp" $secs
check_chain cached3 stk-main stk_c "^stk_c stk_b stk_a main .*$root"
n_same=0
for f in $damaged; do
    cmp -s "$f" "$f.damaged" && n_same=$((n_same + 1))
done
[ -n "$damaged" ] && [ "$n_same" -eq 0 ]
ok $? "$(echo $damaged | wc -w) damaged tables were not used, and are replaced ($n_same left)"

# A module whose cached symbols say it has no DWARF that was opened, and
# whose files (its own, and the debug file its names came from, if any) are
# unchanged, is named without opening them: with a warm cache a Debian
# program (stripped, a debuglink) never loads libdw, and every (module,
# offset, leaf or caller) has the name a run without the cache gives it (a
# return address is looked up one byte back; a frame of a stripped module
# sampled before its table was built has no name yet).
gz=$(command -v gzip)
if [ -n "$gz" ] && command -v readelf >/dev/null 2>&1; then
    head -c 4000000 /dev/urandom >"$TMP/gz.in"
    gzrec() {    # gzrec NAME CACHE-SETTING
        REC_CACHE_DIR=$2 "$REC_START" -q -t 1ms -o "$TMP/$1.rec" -- \
            "$gz" -6 -c "$TMP/gz.in" >/dev/null 2>"$TMP/$1.err"
        "$REC_DUMP" --ndjson --stack-depth 0 --events CPUTimeSample "$TMP/$1.rec" |
            jq -r '.stackTrace.frames // [] | to_entries[] | select(.value.function) |
                   "\(.value.module)+\(.value.offset)/\(.key == 0)\t\(.value.function)"' |
            sort -u >"$TMP/$1.names"
    }
    # mods NAME: the modules a recording's samples reach.
    mods() {
        "$REC_DUMP" --ndjson --stack-depth 0 --events CPUTimeSample "$TMP/$1.rec" |
            jq -r '.stackTrace.frames[]?.module // empty' | sort -u
    }
    gzrec gz-off off
    gzrec gz-cold "$TMP/gzcache"
    mods gz-cold >"$TMP/gz-seen.mods"
    # A warm run that reached a module no earlier run reached (the
    # loader's code at exit) builds its table, one that reached the vdso
    # (read from memory, never cached) reads it with libdw, and one with a
    # frame that has a line read it from DWARF: such a run does not show
    # what a warm cache does. Again then, up to 5 times (a loaded machine
    # spreads gzip's samples wider); none clean, the check is skipped.
    clean=
    for _ in 1 2 3 4 5; do
        LD_DEBUG=files gzrec gz-warm "$TMP/gzcache"
        mods gz-warm >"$TMP/gz-warm.mods"
        new=$(comm -23 "$TMP/gz-warm.mods" "$TMP/gz-seen.mods")
        wl=$("$REC_DUMP" --ndjson --stack-depth 0 --events CPUTimeSample "$TMP/gz-warm.rec" |
             jq -r '.stackTrace.frames // [] | .[] | select(.line) | .module' | sort -u)
        [ -z "$new" ] && [ -z "$wl" ] && ! grep -qx '\[vdso\]' "$TMP/gz-warm.mods" &&
            { clean=1; break; }
        sort -u "$TMP/gz-seen.mods" "$TMP/gz-warm.mods" -o "$TMP/gz-seen.mods"
    done
    lines=$("$REC_DUMP" --ndjson --stack-depth 0 --events CPUTimeSample "$TMP/gz-off.rec" |
            jq -r '.stackTrace.frames // [] | .[] | select(.line) | .line' | head -1)
    if [ -n "$lines" ]; then
        skip "a debug file with DWARF is installed for gzip or its libraries: lines need libdw"
    elif ldd "$top_builddir/libsampler/.libs/libsampler.so" 2>/dev/null | grep -q libasan; then
        # Any sample in the sanitizer's runtime (its DWARF is in the
        # library) is named with libdw, and whether one lands there is luck.
        skip "the sanitizers' runtime carries DWARF: its frames need libdw"
    elif [ -z "$clean" ]; then
        skip "each of 5 warm runs reached a module no earlier run had, the vdso, or code with DWARF lines: $(tr '\n' ' ' <"$TMP/gz-warm.mods")"
    else
        # The loader's lines of gzip's process (rec-start's own are there
        # too: a sanitizer build links it with libdw).
        gzpid=$("$REC_DUMP" --ndjson --events ProcessInfo "$TMP/gz-warm.rec" | jq -r .processId)
        grep "^ *$gzpid:" "$TMP/gz-warm.err" >"$TMP/gz-warm.ld"
        ! grep -q 'file=libdw' "$TMP/gz-warm.ld" && grep -q 'file=libc' "$TMP/gz-warm.ld"
        r=$?
        ok $r "warm cache: gzip recorded without loading libdw"
        [ $r -eq 0 ] || { diag "modules reached:"; diag_file "$TMP/gz-warm.mods"; }
    fi
    both=$(join -t "$(printf '\t')" "$TMP/gz-off.names" "$TMP/gz-warm.names" | wc -l)
    differ=$(join -t "$(printf '\t')" "$TMP/gz-off.names" "$TMP/gz-warm.names" |
             awk -F '\t' '$2 != $3' | wc -l)
    echo "# $both frames in both recordings, $differ named differently"
    join -t "$(printf '\t')" "$TMP/gz-off.names" "$TMP/gz-warm.names" |
        awk -F '\t' '$2 != $3 { print "# " $0 }' | head -5
    [ "$both" -ge 3 ] && [ "$differ" -eq 0 ]
    ok $? "warm cache: the same names as without the cache ($both frames)"
else
    skip "gzip or readelf not installed"
    skip "gzip or readelf not installed"
fi

# The frame-pointer walker is still there to compare with.
record nofp-fp --stack-walker fp -- "$WORKLOADS/stacks" $secs
check_chain nofp-fp stk-main stk_c "^stk_c stk_b stk_a main"
"$REC_START" -q -o "$TMP/x.rec" --stack-walker dwarf -- /bin/true 2>"$TMP/err"
st=$?
expect_status 2 "--stack-walker dwarf is a usage error"

# 2. A sample inside the program's signal handler shows the code the
#    signal interrupted below the trampoline.
record sig -- "$WORKLOADS/unwind-sig" $secs
check_chain sig unwind-sig usig_burn \
    "^usig_burn usig_handler [^ ]+( [^ ]+)* usig_spin main "

# 3. Stack pointer in the heap (outside the thread's stack: nothing is
#    read there, the sample keeps its leaf alone), then on random words of
#    the stack (short samples): no crash, with either walker.
for w in cfi fp; do
    record bad-$w --stack-walker $w -- "$WORKLOADS/unwind-bad" 0.2
    failed=$(awk -F '\t' '$2 == "true" || ($2 == "false" && $3 == "bad_spin")' "$TMP/bad-$w.tsv" | wc -l)
    short=$(awk -F '\t' '$2 == "false" && $3 ~ /^bad_spin/ { n++; if (split($3, f, " ") > 3) long++ }
        END { print (n > 0 && long + 0 == 0) ? "ok" : n "/" long + 0 }' "$TMP/bad-$w.tsv")
    [ "$failed" -gt 0 ] && [ "$short" = ok ]
    ok $? "$w: corrupt stack pointer: $failed leaf-only or failed samples, short stacks ($short)"
    # Each of those short stacks says it was cut short, and why.
    unsaid=$(jq -r 'select(.failed == false and .stackTrace.frames[0].function == "bad_spin") |
        select((.stackTrace.frames | length) < 4) |
        select(.stackTrace.truncated != true or (.stackTrace.truncationReason // "") == "") |
        .stackTrace.frames[0].function' "$TMP/bad-$w.ndjson" | wc -l)
    reasons=$(jq -r 'select(.stackTrace.frames[0].function == "bad_spin") |
        .stackTrace.truncationReason // empty' "$TMP/bad-$w.ndjson" | sort | uniq -c | tr '\n' ' ')
    [ "$unsaid" -eq 0 ]
    ok $? "$w: corrupt stack pointer: every short stack is truncated with a reason ($reasons; $unsaid without)"
done

# 4. dlopen/dlclose in a loop while sampling at 1 ms: every frame in the
#    library is named right; the chains are complete but for the samples
#    taken before the library's table was built: those keep a correct
#    prefix of the chain (the leaf), and how many there are depends on how
#    fast the sampler thread builds the table (a few on an idle machine,
#    a third of them under the sanitizers on a loaded one).
record dl -- "$WORKLOADS/unwind-dl" "$WORKLOADS/.libs/libunwdl.so" $iters
jq -r '.stackTrace.frames[]? | select(.module // "" | endswith("/libunwdl.so")) |
       .function // "?"' "$TMP/dl.ndjson" | sort | uniq -c >"$TMP/dl-names"
n_in=$(awk '{ n += $1 } END { print n + 0 }' "$TMP/dl-names")
# The library's own code also runs at each load and unload: its .init and
# .fini and the C runtime's helpers there are named right too.
n_bad=$(awk '$2 != "unwdl_inner" && $2 != "unwdl_burn" && $2 != "cpu_ns" && $2 !~ /@plt$/ &&
             $2 !~ /^(_init|_fini|frame_dummy|register_tm_clones|deregister_tm_clones|__do_global_dtors_aux)$/ { n += $1 }
             END { print n + 0 }' "$TMP/dl-names")
diag_file "$TMP/dl-names"
[ "$n_in" -ge 10 ] && [ "$n_bad" -eq 0 ]
ok $? "dlopen loop: $n_in frames in the library, $n_bad misnamed"
check_chain dl unwind-dl unwdl_inner "^unwdl_inner unwdl_burn unwdl_loop main " 99 \
    "unwdl_inner unwdl_burn unwdl_loop main"
# Those early stacks are short, and say so: each is marked truncated.
n_early=$(cat "$TMP/dl.early")
n_trunc=$(jq -s '[.[] | select(.stackTrace.truncated)] | length' "$TMP/dl.ndjson")
if [ "$n_early" -gt 0 ]; then
    [ "$n_trunc" -ge "$n_early" ]
    ok $? "dlopen loop: the $n_early early stacks are marked truncated ($n_trunc truncated)"
    n_why=$(jq -s '[.[] | select(.stackTrace.truncationReason == "early")] | length' "$TMP/dl.ndjson")
    [ "$n_why" -eq "$n_early" ]
    ok $? "dlopen loop: each gives the reason early ($n_why of $n_early)"
else
    skip "dlopen loop: no early stack in this run"
fi

# 5. A stripped library: functions named module+0xSTART, START the
#    function's address in the unstripped copy.
lib="$WORKLOADS/.libs/libunws.so"
if command -v strip >/dev/null 2>&1 && command -v nm >/dev/null 2>&1; then
    strip -o "$TMP/libunws.so" "$lib"
    leaf=$(nm "$lib" | awk '$3 == "unws_leaf" { sub(/^0+/, "", $1); print $1 }')
    mid=$(nm "$lib" | awk '$3 == "unws_mid" { sub(/^0+/, "", $1); print $1 }')
    record strip -- "$WORKLOADS/unws-main" "$TMP/libunws.so" $secs
    check_chain strip unws-main "libunws.so+0x$leaf" \
        "^libunws[.]so[+]0x$leaf libunws[.]so[+]0x$mid unws_run main " 95
    if [ -n "$(nm "$TMP/libunws.so" 2>&1 | grep unws_leaf)" ]; then
        ok 1 "the copy is stripped"
    fi
    # 6. Offline: the debug file by build-id under --debug-dir.
    if command -v objcopy >/dev/null 2>&1; then
        bid=$(jq -r 'select(.module) | .module | select(.path | endswith("libunws.so")) | .buildId' \
            "$TMP/strip.ndjson" 2>/dev/null | head -1)
        if [ -z "$bid" ]; then
            "$REC_DUMP" --ndjson --events ModuleLoad "$TMP/strip.rec" >"$TMP/mods.ndjson"
            bid=$(jq -r '.module | select(.path | endswith("libunws.so")) | .buildId' \
                "$TMP/mods.ndjson" | head -1)
        fi
        d=$(echo "$bid" | cut -c1-2)
        rest=$(echo "$bid" | cut -c3-)
        mkdir -p "$TMP/dbg/.build-id/$d"
        objcopy --only-keep-debug "$lib" "$TMP/dbg/.build-id/$d/$rest.debug"
        "$REC_DUMP" --ndjson --stack-depth 0 --events CPUTimeSample \
            --debug-dir "$TMP/dbg" "$TMP/strip.rec" >"$TMP/strip2.ndjson" 2>"$TMP/err"
        ok $? "rec-dump --debug-dir reads it"
        jq -r '[.eventThread.name // "?", (.failed | tostring),
                ((.stackTrace.frames // []) | map(.function // "?") | join(" "))] | @tsv' \
            "$TMP/strip2.ndjson" >"$TMP/strip2.tsv"
        cp "$TMP/strip.early" "$TMP/strip2.early"    # the same recording
        check_chain strip2 unws-main unws_leaf "^unws_leaf unws_mid unws_run main " 95
        # The other readers too (exact outputs: tests/test-debug-dir.sh).
        "$top_builddir/tools/rec-cpu" --hot 3 --debug-dir "$TMP/dbg" \
            "$TMP/strip.rec" >"$TMP/hot" 2>"$TMP/err" &&
            grep -q ' unws_leaf$' "$TMP/hot"
        ok $? "rec-cpu --hot --debug-dir: unws_leaf among the hot functions"
        "$REC_DUMP" --format collapsed --debug-dir "$TMP/dbg" "$TMP/strip.rec" \
            >"$TMP/folded" 2>"$TMP/err" &&
            grep -q ';unws_run;unws_mid;unws_leaf [0-9]*$' "$TMP/folded"
        ok $? "rec-dump --format collapsed --debug-dir: ...;unws_run;unws_mid;unws_leaf"
    else
        skip "objcopy not installed"
    fi
else
    skip "strip/nm not installed"
fi

# 6b. MiniDebugInfo: the stripped copy with a .gnu_debugdata section (an
#     xz-compressed ELF holding the .symtab entries .dynsym lacks, made as
#     Fedora does) is named without any debug file.
if command -v strip >/dev/null 2>&1 && command -v objcopy >/dev/null 2>&1 &&
   command -v nm >/dev/null 2>&1 && command -v xz >/dev/null 2>&1; then
    nm -D "$lib" --format=posix --defined-only | awk '{ print $1 }' | sort >"$TMP/dynsyms"
    nm "$lib" --format=posix --defined-only |
        awk '$2 ~ /^[TtWw]$/ { print $1 }' | sort >"$TMP/funcsyms"
    comm -13 "$TMP/dynsyms" "$TMP/funcsyms" >"$TMP/keep"
    objcopy --only-keep-debug "$lib" "$TMP/mini.debug"
    objcopy -S --remove-section .gdb_index --remove-section .comment \
        --keep-symbols="$TMP/keep" "$TMP/mini.debug" "$TMP/mini"
    xz -f "$TMP/mini"
    mkdir -p "$TMP/minidir"
    strip --strip-all -R .comment -o "$TMP/minidir/libunws.so" "$lib"
    objcopy --add-section .gnu_debugdata="$TMP/mini.xz" "$TMP/minidir/libunws.so"
    ! nm "$TMP/minidir/libunws.so" 2>/dev/null | grep -q unws_leaf &&
        grep -q unws_leaf "$TMP/keep"
    ok $? "the MiniDebugInfo copy has no .symtab; unws_leaf is in .gnu_debugdata"
    record mini -- "$WORKLOADS/unws-main" "$TMP/minidir/libunws.so" $secs
    check_chain mini unws-main unws_leaf "^unws_leaf unws_mid unws_run main " 95
else
    skip "strip, objcopy, nm or xz not installed"
fi

# 6c. A debug file that holds only symbols names a stripped library. With
#     the shared cache warm, a debug file installed since or removed since
#     changes the names, as it would without the cache (the cache names a
#     module without opening its files only while they are the same).
if command -v strip >/dev/null 2>&1 && command -v objcopy >/dev/null 2>&1; then
    mkdir -p "$TMP/dlink"
    objcopy --only-keep-debug "$lib" "$TMP/dlink/full.debug"
    objcopy --strip-debug "$TMP/dlink/full.debug" "$TMP/dlink/syms.debug"
    strip -o "$TMP/dlink/libunws.so" "$lib"
    objcopy --add-gnu-debuglink="$TMP/dlink/syms.debug" "$TMP/dlink/libunws.so"
    mv "$TMP/dlink/syms.debug" "$TMP/dlink/syms.off"
    dcache="$TMP/dcache"
    drun() {    # drun NAME LEAF CHAIN
        REC_CACHE_DIR=$dcache record "$1" -- "$WORKLOADS/unws-main" "$TMP/dlink/libunws.so" $secs
        check_chain "$1" unws-main "$2" "$3" 95
    }
    stripped="^libunws[.]so[+]0x$leaf libunws[.]so[+]0x$mid unws_run main "
    drun dl-none "libunws.so+0x$leaf" "$stripped"
    mv "$TMP/dlink/syms.off" "$TMP/dlink/syms.debug"
    drun dl-installed unws_leaf "^unws_leaf unws_mid unws_run main "
    drun dl-warm unws_leaf "^unws_leaf unws_mid unws_run main "
    rm "$TMP/dlink/syms.debug"
    drun dl-removed "libunws.so+0x$leaf" "$stripped"
else
    skip "strip or objcopy not installed"
fi

# 7. A library with .debug_frame only (-fno-asynchronous-unwind-tables
#    -g): its frames are walked from the file's .debug_frame.
dflib="$WORKLOADS/.libs/libunwdf.so"
if ! command -v readelf >/dev/null 2>&1; then
    skip "readelf not installed"
elif [ "$(readelf --debug-dump=frames "$dflib" 2>/dev/null | grep -c 'FDE')" -eq 0 ] ||
     readelf -lW "$dflib" | grep -q GNU_EH_FRAME; then
    skip "libunwdf.so was built with .eh_frame FDEs or without .debug_frame"
else
    record df -- "$WORKLOADS/unws-main" "$dflib" $secs
    check_chain df unws-main unws_leaf "^unws_leaf unws_mid unws_run main " 95
fi

done_testing
