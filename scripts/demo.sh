#!/usr/bin/env bash
# Build rec (in _build/) and record the bundled demo program: three threads
# doing different CPU work. Then show what the recording holds.
#
#   scripts/demo.sh
#
# Installs missing build dependencies first (needs root or sudo; the heavy
# test-only ones are skipped). The recording is left in _build/demo.rec.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=$top/_build
cd "$top"

"$top/scripts/deps.sh" --minimal

if [ ! -f "$build/Makefile" ] || [ ! -x "$top/configure" ]; then
    echo "demo.sh: configuring in _build/" >&2
    out=$(autoreconf -fi 2>&1) || { echo "$out" >&2; exit 1; }
    mkdir -p "$build"
    (cd "$build" && "$top/configure" -q)
fi
echo "demo.sh: building" >&2
make -C "$build" -j2 >"$build/demo-make.out" 2>&1 || {
    tail -40 "$build/demo-make.out" >&2
    exit 1
}

cd "$build"
for p in tools/rec-start tools/rec-summary tools/rec-cpu tests/workloads/demo; do
    [ -x "$p" ] || { echo "demo.sh: $p was not built" >&2; exit 1; }
done

run() { printf '\n$ %s\n' "$*"; "$@"; }

run tools/rec-start -f -o demo.rec -- tests/workloads/demo
run tools/rec-summary demo.rec
run tools/rec-cpu demo.rec

printf '\nThe recording is %s. Try:\n' "$build/demo.rec"
printf '  %s\n' \
    "_build/tools/rec-dump --ndjson --events CPUTimeSample _build/demo.rec | head -3" \
    "_build/tools/rec-cpu --hot 5 _build/demo.rec" \
    "_build/tools/rec-cpu --interval 250ms _build/demo.rec"
