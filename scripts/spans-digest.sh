#!/usr/bin/env bash
# Digest of what `ghostdriver replay` makes of every bundled capture: the spans, metrics and
# summary of each, with a fixed epoch, as one sha256 per file. A refactoring that claims to
# change no behaviour is run before and after it and the two listings compared (diff).
# usage: scripts/spans-digest.sh [GHOSTDRIVER_BINARY]   (default: builds one)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
if [ -z "$bin" ]; then go build -o "$work/ghostdriver" ./cmd/ghostdriver; bin=$work/ghostdriver; fi
# The bundled captures (the Perfetto textprotos among them), and the rig's when a rig run left
# them (testdata/vgpu/out: gitignored). internal/ftrace/testdata/gpu-stamps/ holds a survey of
# format files, not a capture: it is not replayed.
for c in testdata/captures/* testdata/captures/drivers/* testdata/captures/virgl/*/tracefs.txt \
  testdata/vgpu/out/*/tracefs.txt testdata/vgpu/out/*/record.txt; do
  [ -f "$c" ] || continue
  n=$(echo "${c#testdata/}" | tr / _)
  rc=0
  "$bin" replay --epoch 0 --output "$work/$n.spans" --metrics-output "$work/$n.metrics" "$c" >"$work/$n.summary" 2>"$work/$n.err" || rc=$?
  for k in spans metrics summary; do
    [ -f "$work/$n.$k" ] || : >"$work/$n.$k"
    # metrics carry the wall clock of the run (the collection times): those are blanked
    if [ "$k" = metrics ]; then
      sed -E 's/"(startTimeUnixNano|timeUnixNano)":"[0-9]+"/"\1":""/g' "$work/$n.$k" >"$work/$n.$k.norm"
    else
      cp "$work/$n.$k" "$work/$n.$k.norm"
    fi
    printf '%s  %s.%s rc=%s\n' "$(sha256sum <"$work/$n.$k.norm" | cut -c1-16)" "$n" "$k" "$rc"
  done
done
