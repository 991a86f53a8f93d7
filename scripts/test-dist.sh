#!/usr/bin/env bash
# The distribution end to end: the ocb-built collector on the bundled capture
# (spans through the file exporter, a parsed Prometheus scrape; e2e/dist_test.go), its deploy
# configs, and kill -9 of a live collector (e2e/lifecycle/kill9_collector_test.go).
set -euo pipefail
: "${DIST:?}"
# The tests below must run, not skip (internal/testreq): a missing collector fails them.
export GHOSTDRIVER_REQUIRE="${GHOSTDRIVER_REQUIRE:+$GHOSTDRIVER_REQUIRE,}dist"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# passed NAME...: each test passed in the last run (a renamed test would leave -run
# matching nothing, which go test reports as ok)
passed() { for n in "$@"; do grep -q "^--- PASS: $n " "$log" || { echo "$n did not run and pass" >&2; exit 1; }; done; }
GHOSTDRIVER_DIST=$(realpath "$DIST") go test -count=1 -v -run TestDistribution ./e2e/ | tee "$log"
passed TestDistributionReplay TestDistributionValidatesDeployConfigs TestDistributionRunSummary
# kill -9 of the collector itself leaves no BPF object behind, and a restart resumes (root).
GHOSTDRIVER_DIST=$(realpath "$DIST") go test -count=1 -v -run TestKill9CollectorLeavesNothingAttached ./e2e/lifecycle/ | tee "$log"
passed TestKill9CollectorLeavesNothingAttached
