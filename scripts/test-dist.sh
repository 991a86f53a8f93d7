#!/usr/bin/env bash
# The distribution end to end: the ocb-built collector on the bundled capture
# (spans through the file exporter, a parsed Prometheus scrape). See e2e/dist_test.go.
set -euo pipefail
: "${DIST:?}"
GHOSTDRIVER_DIST=$(realpath "$DIST") go test -count=1 -v -run TestDistribution ./e2e/
