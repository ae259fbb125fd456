#!/bin/sh
# tests/test-sampler-hazards-perf.sh - the sampler's hazard suite with the
# perf_event engine (skipped where perf_event_open is not allowed).
REC_TEST_ENGINE=perf
export REC_TEST_ENGINE
exec sh "$(dirname "$0")/test-sampler-hazards.sh"
