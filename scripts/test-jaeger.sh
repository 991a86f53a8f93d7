#!/usr/bin/env bash
# Live end to end (root): OTEP 4947 / TRACEPARENT applications on this host, the eBPF
# source, the enricher, the ocb distribution as an agent, a real Jaeger: the application's
# spans and its GPU job spans must come back from Jaeger's query API as one trace, and the
# agent's Prometheus exporter must show the stage histograms with service_name.
# See e2e/jaeger_test.go for what is real and what is synthetic on a host without DRM.
#
# Needs: go, gcc, root, the distribution (make dist). Jaeger all-in-one v1.75.0 is built
# from the module proxy through the tools module tools/jaeger (its dependencies stay out
# of the main go.mod); keep GOCACHE/GOMODCACHE between CI runs: the cold build is minutes,
# a warm one seconds (the script prints the time).
set -euo pipefail
cd "$(dirname "$0")/.."
DIST=${DIST:-build/otelcol-ghostdriver/otelcol-ghostdriver}
JAEGER=${JAEGER:-build/jaeger/jaeger}
command -v gcc >/dev/null || { echo "gcc missing: apt-get install -y gcc" >&2; exit 1; }
[ -x "$DIST" ] || { echo "$DIST missing: make dist" >&2; exit 1; }
mkdir -p "$(dirname "$JAEGER")"
start=$(date +%s)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
(cd tools/jaeger && go build -o "$OLDPWD/$JAEGER" github.com/jaegertracing/jaeger/cmd/jaeger)
echo "jaeger build: $(( $(date +%s) - start ))s"
# The test must run, not skip (internal/testreq): no Jaeger, no collector or no root fails it.
GHOSTDRIVER_REQUIRE="${GHOSTDRIVER_REQUIRE:+$GHOSTDRIVER_REQUIRE,}jaeger,root" \
GHOSTDRIVER_JAEGER=$(realpath "$JAEGER") GHOSTDRIVER_DIST=$(realpath "$DIST") \
  go test -count=1 -v -run TestLiveContextJoinsJaegerTrace ./e2e/ | tee "$log"
# a renamed test would leave -run matching nothing, which go test reports as ok
grep -q '^--- PASS: TestLiveContextJoinsJaegerTrace ' "$log" || { echo "TestLiveContextJoinsJaegerTrace did not run and pass" >&2; exit 1; }
