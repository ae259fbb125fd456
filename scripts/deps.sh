#!/usr/bin/env bash
# Install what a fresh Debian 12 machine needs to build and test rec.
#
#   scripts/deps.sh [--minimal]
#
# Idempotent and quick when everything is present: packages are checked with
# dpkg-query and apt-get runs (with one `apt-get update`) only for the missing
# ones. Needs root, or sudo.
#
# --minimal (or REC_DEPS_MINIMAL=1) skips the heavy test-only packages
# (chromium, used by rec-cpu's rendered-timeline test, which skips without
# it). CI (CI=true) always installs everything.
set -euo pipefail

# Build: compiler, autotools, the libraries configure checks for.
build_pkgs=(build-essential autoconf automake libtool pkg-config
            libcbor-dev liblz4-dev libjansson-dev libelf-dev libdw-dev
            zlib1g-dev liblzma-dev)
# Tests: jq checks rec-dump's NDJSON; time gives bench and tests max RSS;
# strace traces a process that rec-start -p must refuse.
test_pkgs=(jq time cppcheck shellcheck strace)
# Heavy, test-only: headless browser (rec-cpu and rec-flame pages), the
# real consumers of the export formats (go tool pprof, jfr), a JSON
# Schema validator, and node (stacks through JIT code, with Java's).
heavy_pkgs=(chromium fonts-dejavu-core golang-go openjdk-17-jdk-headless
            nodejs python3-jsonschema)

minimal=${REC_DEPS_MINIMAL:-0}
for arg in "$@"; do
    case $arg in
        --minimal) minimal=1 ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "deps.sh: unknown option $arg" >&2; exit 2 ;;
    esac
done
[ "${CI:-}" = true ] && minimal=0

want=("${build_pkgs[@]}" "${test_pkgs[@]}")
[ "$minimal" = 1 ] || want+=("${heavy_pkgs[@]}")

missing=()
for p in "${want[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = installed ] || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi

if [ ! -r /etc/debian_version ]; then
    echo "deps.sh: not a Debian system; install by hand: ${missing[*]}" >&2
    exit 1
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
        sudo=(sudo)
    else
        echo "deps.sh: missing packages (${missing[*]}); run as root or install sudo" >&2
        exit 1
    fi
fi

echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps.sh: done" >&2
