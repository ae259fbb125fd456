# bench/fig.sh - bench_fig, sourced by bench/lib.sh and by the scripts that
# do not take lib.sh's settings (not run alone).
# shellcheck shell=bash

# bench_fig FIGURE TOOL UNIT [EXTRA] < per-run values, one per line:
# appends "figure TAB tool TAB unit TAB runs TAB median TAB min TAB max TAB
# extra" to $BENCH_TSV (nothing when it is unset). The human tables stay the
# scripts' stdout; this is what bench/report.py turns into bench/RESULTS.md.
# Figures that share a FIGURE name were measured in the same invocation and
# are compared (ratio to rec) there.
bench_fig() {
    if [ -z "${BENCH_TSV:-}" ]; then cat > /dev/null; return 0; fi
    sort -g | awk -v f="$1" -v t="$2" -v u="$3" -v x="${4:-}" '
        NF && $1 != "nan" && $1 != "" { v[++n] = $1 }
        END { if (!n) exit
              m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
              printf "%s\t%s\t%s\t%d\t%.6g\t%.6g\t%.6g\t%s\n", f, t, u, n, m, v[1], v[n], x }' \
        >> "$BENCH_TSV"
}
