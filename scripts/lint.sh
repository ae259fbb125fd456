#!/usr/bin/env bash
# The conventions leg of CI: a warnings-as-errors build (-Wconversion
# without sign conversions included), cppcheck on C, shellcheck on shell
# scripts.
#
#   scripts/lint.sh
#
# Builds in _build-lint/. Prints one line per finding and, last,
# `N passed, N failed` over the three checks; exits non-zero on a finding.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
pass=0 fail=0
result() {   # result NAME STATUS
    if [ "$2" -eq 0 ]; then
        pass=$((pass + 1)); echo "lint: $1: clean"
    else
        fail=$((fail + 1)); echo "lint: $1: findings above"
    fi
}

# 1. -Werror build with the project's warnings and a few more.
[ -x configure ] || autoreconf -fi >/dev/null 2>&1
mkdir -p _build-lint
(cd _build-lint && ../configure -q CFLAGS="-O2 -g -Werror -Wshadow -Wformat=2 -Wundef -Wconversion -Wno-sign-conversion" \
     >/dev/null && make -j"${REC_JOBS:-2}" >/dev/null 2>build.err) ||
    { grep -E 'error|warning' _build-lint/build.err | head -40; false; }
result "warnings-as-errors build" $?

# 2. cppcheck: real defects only (style is the compiler's and review's).
# Suppressed on purpose: alloca in the exec interposers (execl & co. may run
# in a vfork child, where malloc is not allowed); readdir (readdir_r is
# deprecated: a directory stream is not shared between threads here); the
# ucontext functions in hook-sigwait.c (the program's own raise of the sampling
# signal runs its SA_ONSTACK handler on the alternate stack, as the kernel
# would: glibc has no other way to switch stacks); fd -1 to mmap in
# hook-preload.c, session-attach.c and librecord/writer.c (what
# MAP_ANONYMOUS asks for:
# cppcheck's POSIX model knows only file mappings).
if command -v cppcheck >/dev/null; then
    cppcheck -q --error-exitcode=1 --inline-suppr --std=c11 \
        --enable=warning,portability --suppress=missingIncludeSystem \
        --suppress=allocaCalled:libsampler/hook-preload.c --suppress=readdirCalled \
        --suppress=invalidFunctionArg:libsampler/hook-preload.c \
        --suppress=invalidFunctionArg:librecord/writer.c \
        --suppress=invalidFunctionArg:libsampler/session-attach.c \
        --suppress=getcontextCalled:libsampler/hook-sigwait.c \
        --suppress=makecontextCalled:libsampler/hook-sigwait.c \
        --suppress=swapcontextCalled:libsampler/hook-sigwait.c \
        -I librecord -I _build-lint/librecord -I libsampler -I tools/cli \
        -D__x86_64__ -D__linux__ --library=posix \
        librecord libsampler tools schemas 2>&1 | head -60
    result cppcheck "${PIPESTATUS[0]}"
else
    echo "lint: cppcheck not installed"; fail=$((fail + 1))
fi

# 3. shellcheck on every shell script of the tree.
if command -v shellcheck >/dev/null; then
    mapfile -t scripts < <(git ls-files '*.sh' .ci/run)
    shellcheck -S warning -x "${scripts[@]}" 2>&1 | head -80
    result shellcheck "${PIPESTATUS[0]}"
else
    echo "lint: shellcheck not installed"; fail=$((fail + 1))
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
