#!/bin/sh
# Thread names follow renames while the threads run: set by another
# thread's pthread_setname_np(), by the thread's own prctl(PR_SET_NAME),
# and by syscall(SYS_prctl). The sampler reads a name when a rename it
# sees happened, not on a fixed schedule (every 10 s for the renames it
# cannot see), so samples drained while their thread lives must carry the
# new name within a drain or two.
. "${top_srcdir:-$(dirname "$0")/..}/tests/tools-tap.sh"
[ -x "$REC_START" ] || skip_all "rec-start not built"
[ -x "$WORKLOADS/rename" ] || skip_all "rename workload not built"
command -v jq >/dev/null 2>&1 || skip_all "jq not installed"
cd "$TMP" || exit 99

for engine in perf timer; do
    "$REC_START" -q --force --engine "$engine" -o "$TMP/n.rec" \
        "$WORKLOADS/rename" 2500 >"$TMP/out" 2>"$TMP/err"
    st=$?
    expect_status 0 "$engine: the workload's status"
    # CPU time sampled per name, in ms: counted in time, not in samples (a
    # stopped VM turns several expiries into one signal).
    "$REC_DUMP" --ndjson --events CPUTimeSample "$TMP/n.rec" |
        jq -r '"\(.eventThread.name)\t\(.samplingPeriod)"' |
        awk -F '\t' '{ t[$1] += $2 } END { for (k in t) printf "%d %s\n", t[k] / 1e6, k }' \
        > "$TMP/names"
    for how in setname prctl syscall; do
        # 2.5 s of CPU after the rename; a drain every second at most, and
        # the first after the rename may still take the old name.
        n=$(awk -v k="by-$how" '$2 == k { print $1 }' "$TMP/names")
        test "${n:-0}" -ge 1000
        r=$?
        ok $r "$engine: renamed by $how: ${n:-0} ms of CPU sampled under the new name"
        [ $r -eq 0 ] || diag_file "$TMP/names"
    done
done

done_testing
