#!/usr/bin/env bash
# `make run`: build the CLI, show its replay summary of the capture, build the collector
# distribution (with progress), run it on the capture and show what it produced: where the
# time went per ring (from its Prometheus scrape), a few job trees (from its file exporter),
# how to read them, and what to run next. Then it keeps running (Ctrl-C stops it), or stops
# after RUN_FOR.
set -euo pipefail
: "${DIST:?}" "${CAPTURE:?}"
MAKE=${MAKE:-make}
GO=${GO:-go}
out=build/run
mkdir -p "$out"
rm -f "$out"/spans.json "$out"/collector.log "$out"/scrape.txt
start=$SECONDS
export MAKE_RUN_T0=$(date +%s) # build-dist.sh's progress lines count from here too
stamp() { local s=$((SECONDS - start)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }
mib() { du -sm "$1" 2>/dev/null | cut -f1; }
modcache=$($GO env GOMODCACHE)
buildcache=$($GO env GOCACHE)

# heartbeat LABEL CMD...: run CMD with its output in a log, printing a line every 15 s
# (elapsed time, the Go caches' sizes); show the log if it fails.
heartbeat() {
  local label=$1 log
  shift
  log=$(mktemp)
  "$@" >"$log" 2>&1 &
  local p=$! last=$SECONDS
  while kill -0 $p 2>/dev/null; do
    sleep 1
    if ((SECONDS - last >= 15)) && kill -0 $p 2>/dev/null; then
      printf '   [%s] %s: module cache %s MiB, build cache %s MiB\n' "$(stamp)" "$label" "$(mib "$modcache")" "$(mib "$buildcache")"
      last=$SECONDS
    fi
  done
  if ! wait $p; then
    cat "$log"
    rm -f "$log"
    echo "make run: $label failed (output above)" >&2
    return 1
  fi
  rm -f "$log"
}

cat <<EOF
== make run: the ghostdriver collector on a real capture (no GPU needed)
   $CAPTURE
   The first run on empty Go caches downloads about 360 MiB of Go modules (2.1 GiB once
   unpacked in the module cache) and fills about 1 GiB of build cache; it takes 15-25 minutes
   on a 2-core machine, most of it compiling the collector (about 1180 packages). Later runs
   take a minute or two. Each step below says what it is doing while it runs.

== 1/4 building the CLI (bin/ghostdriver)
EOF
heartbeat "building bin/ghostdriver" "$MAKE" --no-print-directory cli
printf '   [%s] done\n' "$(stamp)"

echo
echo "== 2/4 something to read while the collector builds: the CLI's replay of the capture (bin/ghostdriver replay $CAPTURE)"
bin/ghostdriver replay "$CAPTURE" | sed 's/^/   /'

echo
echo "== 3/4 building the collector distribution ($DIST)"
if [ -n "${OCB:-}" ] && [ ! -x "$OCB" ]; then
  heartbeat "installing ocb, the collector builder ($OCB)" "$MAKE" --no-print-directory "$OCB"
fi
"$MAKE" --no-print-directory dist

echo
echo "== 4/4 the collector replaying the capture (log: $out/collector.log)"
export GHOSTDRIVER_CAPTURE=$CAPTURE GHOSTDRIVER_SPANS_OUT=$out/spans.json
if [ -n "${GHOSTDRIVER_DEBUG_VERBOSITY:-}" ]; then
  # Asked for the debug exporter's output: it goes to the console, with the log.
  "$DIST" --config testdata/run-config.yaml 2>&1 | tee "$out/collector.log" &
else
  export GHOSTDRIVER_DEBUG_VERBOSITY=basic
  "$DIST" --config testdata/run-config.yaml >"$out/collector.log" 2>&1 &
fi
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
# jobcount sums ghostdriver_jobs_total over its series.
jobcount() { awk '/^ghostdriver_jobs_total/ { n += $NF } END { printf "%d", n }' "$1"; }
# Wait for the replay to finish: the job count reaches the exporter and stops changing.
prev=-1
for _ in $(seq 1 240); do
  kill -0 $pid 2>/dev/null || { cat "$out/collector.log"; echo "make run: the collector exited (log above)" >&2; exit 1; }
  if scrape >"$out/scrape.txt" 2>/dev/null && grep -q '^ghostdriver_jobs_total' "$out/scrape.txt"; then
    n=$(jobcount "$out/scrape.txt")
    [ "$n" = "$prev" ] && break
    prev=$n
  fi
  sleep 1
done

echo
cat <<EOF
== where the time went, per ring (from the collector's Prometheus scrape, saved in $out/scrape.txt)
   share of job: the stage's summed duration ÷ the summed duration of the ring's job spans.
   measured: the part of those stage spans whose two bounds both came from kernel hooks.
   busy ratio: the ring's execution time (union of intervals) ÷ source time, over the last
   collection window (here the whole capture: it replays within the first window).
EOF
awk -f scripts/run-summary.awk "$out/scrape.txt" | sed 's/^/   /'

sleep 2 # the batch processor and file exporter flush on their own timers
echo
echo "== job spans with their stage children (the first 3 completed jobs of $out/spans.json)"
bin/ghostdriver spans --completed --limit 3 "$out/spans.json" | sed 's/^/   /'
cat <<EOF

   How to read them:
   pid ?          the process id is not in the capture (recorded without the record-tgid
                  option): jobs carry the submitting thread's id and name only.
   measured       both bounds of the stage came from kernel hooks.
   inferred       a named rule supplied at least one bound; nothing is faked, a stage with no
                  basis at all is left out.
   a→b            the hook or rule behind the stage's start (a) and end (b). For example
                  ring_serial→fallback_to_finished on execution: the start is ring_serial (the
                  later of the job's emission and the previous job's end on the same ring), the
                  end is fallback_to_finished (the capture has no signal of the job's hardware
                  fence, so the scheduler's finished fence stands in). Every rule:
                  docs/stages.md.

== what next
   every job tree:          bin/ghostdriver spans --limit 0 $out/spans.json
   metrics while it runs:   http://127.0.0.1:8889/metrics (saved: $out/scrape.txt)
   the collector's log:     $out/collector.log   (GHOSTDRIVER_DEBUG_VERBOSITY=detailed make run: every span on the console)
   your own capture:        make run CAPTURE=path/to/trace.txt   (tracefs text or trace-cmd report, gzip or plain)
                            or bin/ghostdriver replay path/to/trace.txt
   this host, live:         bin/ghostdriver doctor   (which hooks this kernel offers, and why not)
   the model:               docs/README.md
EOF
if [ -n "${RUN_FOR:-}" ]; then
  sleep "${RUN_FOR}"
else
  echo
  echo "== running; Ctrl-C to stop"
  wait $pid
fi
