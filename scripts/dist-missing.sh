#!/usr/bin/env bash
# List source files of the work tree that `make dist` leaves out of the
# tarball (files git tracks or would track, minus the ones that are only for
# git). A missing test data file or script breaks `make distcheck` or, worse,
# silently skips a test in a build from the tarball.
#
#   scripts/dist-missing.sh [BUILD_DIR]      (default _build, configured)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/_build}
[ -f "$build/Makefile" ] || { echo "dist-missing.sh: configure $build first" >&2; exit 2; }

make -C "$build" -s dist-gzip >/dev/null
tarball=$(ls -t "$build"/rec-*.tar.gz | head -1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -tzf "$tarball" | sed 's|^[^/]*/||' | grep -v '/$' | sort > "$tmp/dist"
git -C "$top" ls-files --cached --others --exclude-standard | sort > "$tmp/tree"
# Files only git needs.
grep -Ev '^(\.gitignore|.*/\.gitkeep|\.gitattributes)$' "$tmp/tree" > "$tmp/want"
missing=$(comm -23 "$tmp/want" "$tmp/dist")
if [ -n "$missing" ]; then
    echo "not in $(basename "$tarball"):"
    echo "$missing" | sed 's/^/  /'
    exit 1
fi
echo "every source file is in $(basename "$tarball")"
