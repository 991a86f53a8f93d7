#!/usr/bin/env bash
# `make run`: start the ghostdriver collector on a capture, show what it produced, and
# keep it running (Ctrl-C stops it) unless RUN_FOR is set.
set -euo pipefail
: "${DIST:?}" "${CAPTURE:?}"
out=$(mktemp -d)
export GHOSTDRIVER_CAPTURE=$CAPTURE GHOSTDRIVER_SPANS_OUT=$out/spans.json GHOSTDRIVER_DEBUG_VERBOSITY=${GHOSTDRIVER_DEBUG_VERBOSITY:-basic}
echo "== otelcol-ghostdriver replaying $CAPTURE (spans also written to $out/spans.json)"
"$DIST" --config testdata/run-config.yaml &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true' EXIT
# scrape prints the Prometheus exporter's page through bash's /dev/tcp (no curl needed).
scrape() {
  local body
  exec 3<>/dev/tcp/127.0.0.1/8889 || return 1
  printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1:8889\r\n\r\n' >&3
  body=$(cat <&3)
  exec 3<&-
  printf '%s\n' "$body" | tr -d '\r'
}
# Wait for the replay to finish and the first metrics to reach the Prometheus exporter.
for _ in $(seq 1 120); do
  if scrape 2>/dev/null | grep -q '^ghostdriver_jobs'; then break; fi
  kill -0 $pid 2>/dev/null || { echo "collector exited"; exit 1; }
  sleep 0.5
done
echo
echo "== Prometheus scrape of http://127.0.0.1:8889/metrics (ghostdriver series, first 40 lines)"
{ scrape | grep '^ghostdriver_' || true; } | head -40
echo
sleep 2 # the batch processor and file exporter flush on their own timers
echo "== job spans with their stage children (first 3 completed jobs of $out/spans.json; all of them:"
echo "   bin/ghostdriver spans --limit 0 $out/spans.json)"
bin/ghostdriver spans --completed --limit 3 "$out/spans.json"
if [ -n "${RUN_FOR:-}" ]; then
  sleep "${RUN_FOR}"
else
  echo "== running; Ctrl-C to stop"
  wait $pid
fi
