#!/usr/bin/env bash
# Build rec out of tree and run its test suite.
#
#   scripts/test.sh [--sanitizers] [--quick] [--minimal-deps]
#
#   (default)      install deps, autoreconf, build in _build/, make check,
#                  then make distcheck
#   --sanitizers   build in _build-asan/ with --enable-sanitizers (ASan+UBSan)
#                  and run make check (no distcheck)
#   --quick        skip make distcheck
#   --minimal-deps do not install heavy test-only packages (tests that need
#                  them skip)
#
# The last line is `N passed, N failed[, N skipped]`, summed over every test
# point of the automake .trs files (a build or distcheck failure counts as one
# failure). The same line is written to <builddir>/test-summary.txt for .ci/run.
# Exit status is non-zero on any failure.
set -uo pipefail

sanitizers=0 quick=0 deps_args=()
for arg in "$@"; do
    case $arg in
        --sanitizers) sanitizers=1 ;;
        --quick) quick=1 ;;
        --minimal-deps) deps_args+=(--minimal) ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) echo "test.sh: unknown option $arg" >&2; exit 2 ;;
    esac
done

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
jobs=${REC_JOBS:-2}
start=$(date +%s)
step() { printf '\n=== %s (%ds)\n' "$*" $(( $(date +%s) - start )); }

if [ $sanitizers = 1 ]; then
    build=$top/_build-asan
    conf=(--enable-sanitizers)
    # Leaks are errors for the tools and libraries; UBSan stops at the first
    # report (configure also passes -fno-sanitize-recover=undefined).
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:abort_on_error=0}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
    export LSAN_OPTIONS=${LSAN_OPTIONS:-}
    # The preloaded sampler is itself ASan-instrumented; a program that loads
    # it through LD_PRELOAD must have the ASan runtime first in the preload
    # list. Tests and rec-start find the runtime's path here (configure also
    # records it as REC_ASAN_RUNTIME).
    REC_ASAN_RUNTIME=$(${CC:-gcc} -print-file-name=libasan.so)
    export REC_ASAN_RUNTIME
else
    build=$top/_build
    conf=()
fi

failed_extra=0   # build/distcheck failures, counted as one failed test each
summary() {
    local pass=0 fail=0 skip=0 r
    # :test-result: lines: one per TAP test point (or per plain test).
    if [ -d "$build" ]; then
        while read -r r; do
            case $r in
                PASS|XFAIL) pass=$((pass + 1)) ;;
                FAIL|XPASS|ERROR) fail=$((fail + 1)) ;;
                SKIP) skip=$((skip + 1)) ;;
            esac
        done < <(find "$build" -path "$build/rec-*" -prune -o -name '*.trs' -print0 |
                 xargs -0r sed -n 's/^:test-result: *\([A-Z]*\).*/\1/p')
    fi
    fail=$((fail + failed_extra))
    local line="$pass passed, $fail failed"
    [ $skip -gt 0 ] && line+=", $skip skipped"
    mkdir -p "$build"
    echo "$line" > "$build/test-summary.txt"
    step "done"
    echo "$line"
    [ $fail -eq 0 ]
    exit
}

step "dependencies"
if ! "$top/scripts/deps.sh" "${deps_args[@]}"; then
    echo "test.sh: installing dependencies failed" >&2
    failed_extra=1; summary
fi

step "autoreconf"
if ! out=$(autoreconf -fi 2>&1); then
    echo "$out"
    failed_extra=1; summary
fi

step "configure in ${build#$top/}"
mkdir -p "$build"
cd "$build" || exit 1
# Old results would be summed with the new ones.
find . -path './rec-*' -prune -o \( -name '*.trs' -o -name '*.log' \) -type f -print0 |
    xargs -0r rm -f
if ! "$top/configure" -q "${conf[@]}"; then
    [ -f config.log ] && tail -40 config.log
    failed_extra=1; summary
fi

step "make -j$jobs"
if ! make -j"$jobs" >make.out 2>&1; then
    grep -E -B2 -A8 'error|Error' make.out | tail -80
    failed_extra=1; summary
fi
grep -E 'warning:' make.out | sort -u | head -40

step "make -j$jobs check"
if ! make -j"$jobs" check >check.out 2>&1; then
    if [ -f test-suite.log ]; then
        grep -E '^(FAIL|ERROR|XPASS):|^# [A-Z]+: ' check.out
        echo "--- test-suite.log (logs of the failed tests)"
        head -n 3000 test-suite.log
    else
        # No log: the check programs did not build.
        grep -E -A6 'error:|\*\*\*' check.out | tail -60
        failed_extra=1
    fi
    summary
fi
grep -E '^# (TOTAL|PASS|SKIP|XFAIL|FAIL|XPASS|ERROR)' check.out

if [ $sanitizers = 0 ] && [ $quick = 0 ]; then
    step "make distcheck"
    if ! make -j"$jobs" distcheck >distcheck.out 2>&1; then
        tail -60 distcheck.out
        # A failing test inside distcheck leaves its log in the dist tree.
        find . -path './rec-*' -name test-suite.log -exec cat {} + 2>/dev/null | head -200
        failed_extra=1
    else
        grep -E 'archives ready|tar.gz' distcheck.out | head -3
    fi
    # distcheck leaves rec-*/ behind only on failure; its tarball stays.
fi

summary
