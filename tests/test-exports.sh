#!/bin/sh
# tests/test-exports.sh - the shared libraries export their API and nothing
# else. Every dynamic symbol librecord.so and the sampler library define
# must be covered by their version scripts (librecord/librecord.map,
# libsampler/libsampler.map), every name of <rec/sampler.h> must be
# exported, and the sampler must not reach one of its own exports through
# its PLT (a call that another preloaded object could capture).
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
. "$top_srcdir/tests/tap-lib.sh"
tap_scratch rec-exports

command -v nm >/dev/null 2>&1 || skip_all "nm not installed"
command -v readelf >/dev/null 2>&1 || skip_all "readelf not installed"

# map_patterns MAP: the global patterns of a version script, one a line.
map_patterns() {
    sed -e 's,/\*.*\*/,,g' -e '/\/\*/,/\*\//d' "$1" |
        awk '/global:/ {g = 1; next} /local:/ {g = 0} g' |
        tr ';' '\n' | tr -d ' \t' | grep -v '^$'
}

# exports SO: the names SO defines in its dynamic symbol table.
exports() {
    nm -D --defined-only "$1" | awk '{print $3}' | sed 's/@.*//' | sort -u
}

# uncovered SO MAP: exported names no pattern of MAP matches.
uncovered() {
    map_patterns "$2" > "$TMP/pat"
    exports "$1" | while read -r sym; do
        hit=0
        while read -r pat; do
            # shellcheck disable=SC2254
            case $sym in $pat) hit=1; break ;; esac
        done < "$TMP/pat"
        [ $hit = 1 ] || echo "$sym"
    done
}

check_lib() {   # check_lib NAME SO MAP
    if [ ! -f "$2" ]; then
        ok 1 "$1: $2 built"
        return
    fi
    uncovered "$2" "$3" > "$TMP/extra"
    [ ! -s "$TMP/extra" ]
    ok $? "$1 exports only what $(basename "$3") lists"
    diag_file "$TMP/extra" 20
    n=$(exports "$2" | wc -l)
    [ "$n" -gt 0 ]
    ok $? "$1 exports something ($n symbols)"
}

LIBREC=$top_builddir/librecord/.libs/librecord.so
LIBSAMP=$(ls "$top_builddir"/libsampler/.libs/lib*sampler.so 2>/dev/null | head -1)
check_lib librecord "$LIBREC" "$top_srcdir/librecord/librecord.map"
check_lib sampler "$LIBSAMP" "$top_srcdir/libsampler/libsampler.map"

# No internal name (rec__*, recs__*) leaks from either library.
exports "$LIBREC" "$LIBSAMP" 2>/dev/null | grep -E '^recs?__' > "$TMP/int"
[ ! -s "$TMP/int" ]
ok $? "no rec__/recs__ internal is exported"
diag_file "$TMP/int"

# Every function a public header declares is exported by its library,
# but for the static inline wrappers that pass the caller's sizeof.
header_exported() {   # header_exported HEADER PREFIX SO
    sed -n "s/^static inline .*\\<\\($2[a-z_]*\\)(.*/\\1/p" "$top_srcdir/$1" |
        sort -u > "$TMP/inline"
    grep -oE "\\b$2[a-z_]+\\(" "$top_srcdir/$1" | tr -d '(' | sort -u |
        comm -23 - "$TMP/inline" > "$TMP/api"
    exports "$3" > "$TMP/have"
    comm -23 "$TMP/api" "$TMP/have" > "$TMP/missing"
    [ -s "$TMP/api" ] && [ ! -s "$TMP/missing" ]
    ok $? "every function of <${1#*/}> is exported ($(wc -l < "$TMP/api"))"
    diag_file "$TMP/missing"
}
header_exported libsampler/rec/sampler.h recs_ "$LIBSAMP"
header_exported librecord/rec/record.h rec_ "$LIBREC"

# The sampler's PLT: none of its own exports is called through it.
readelf -rW "$LIBSAMP" | awk '/JUMP_SLOT|GLOB_DAT/ {print $5}' |
    sed 's/@.*//' | sort -u > "$TMP/imports"
exports "$LIBSAMP" > "$TMP/have"
comm -12 "$TMP/imports" "$TMP/have" > "$TMP/self"
[ ! -s "$TMP/self" ]
ok $? "the sampler calls none of its own exports through the PLT"
diag_file "$TMP/self"

done_testing
