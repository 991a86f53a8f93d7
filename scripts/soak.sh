#!/usr/bin/env bash
# Soak benchmark (not CI): the live source under a sustained ioctl flood for a long time,
# sampling its resident memory, then accounting for every event.
#
#   sudo SOAK_DURATION=11m scripts/soak.sh            # defaults: 11m, 4 load threads
#
# Load: LOAD_THREADS processes each calling ioctl(TCGETS) in a loop on SOAK_DEV, a device
# whose major nobody else on the machine uses (default: a node of the cpuid driver, major
# 203, made in the output directory; /dev/null when that driver is absent); the live source
# follows that major (--drm-major), so every ioctl is an enter and an exit record (≥ 100k
# events/s needs ≥ 50k ioctls/s; one thread does several hundred k/s).
# Output: RSS every SAMPLE seconds (flat = no leak), then decoded + lost events against
# 2 × the ioctls the load issued. "unexplained" is decoded + lost − 2 × issued: 0 on a
# private major (anything else is a bug: negative = loss nobody counted); on /dev/null
# (major 1, shared with every process) other processes' ioctls make it ≥ 0.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${SOAK_DURATION:-11m}
THREADS=${LOAD_THREADS:-4}
SAMPLE=${SAMPLE:-10}
OUT=${SOAK_OUT:-$(mktemp -d)}
BIN=${GHOSTDRIVER:-}

[ "$(id -u)" = 0 ] || { echo "soak.sh: needs root (loads eBPF programs)" >&2; exit 1; }
if [ -z "$BIN" ]; then
	CGO_ENABLED=0 go build -o "$OUT/ghostdriver" ./cmd/ghostdriver
	BIN=$OUT/ghostdriver
fi
if [ ! -x "$OUT/ioctlflood" ]; then
	mkdir -p "$OUT/flood"
	cat >"$OUT/flood/main.go" <<'EOF'
// ioctlflood DEVICE: ioctl(TCGETS) on DEVICE until SIGTERM, then prints how many it made.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

func main() {
	f, err := os.Open(os.Args[1])
	if err != nil {
		panic(err)
	}
	var stop atomic.Bool
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-c; stop.Store(true) }()
	n := uint64(0)
	for !stop.Load() {
		for i := 0; i < 1000; i++ {
			syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, 0)
		}
		n += 1000
	}
	fmt.Println(n)
}
EOF
	(cd "$OUT/flood" && cat >go.mod <<<'module ioctlflood' && CGO_ENABLED=0 go build -o "$OUT/ioctlflood" .)
fi

DEV=${SOAK_DEV:-}
if [ -z "$DEV" ]; then
	if grep -qE '^ *203 cpu/cpuid$' /proc/devices || modprobe cpuid 2>/dev/null && grep -qE '^ *203 cpu/cpuid$' /proc/devices; then
		DEV=$OUT/soak-cpuid0
		[ -e "$DEV" ] || mknod "$DEV" c 203 0
	else
		DEV=/dev/null
	fi
fi
MAJOR=$(( 0x$(stat -c %t "$DEV") ))
echo "soak: $DURATION, $THREADS load threads on $DEV (major $MAJOR), output in $OUT"
"$BIN" live --drm-major "$MAJOR" --no-tenant --duration "$DURATION" --ready-file "$OUT/ready" \
	--metrics-output "$OUT/metrics.json" >"$OUT/summary.txt" 2>"$OUT/live.err" &
live=$!
for _ in $(seq 600); do [ -f "$OUT/ready" ] && break; sleep 0.1; done
[ -f "$OUT/ready" ] || { cat "$OUT/live.err"; exit 1; }

pids=()
for i in $(seq "$THREADS"); do
	"$OUT/ioctlflood" "$DEV" >"$OUT/flood.$i" &
	pids+=($!)
done

start=$SECONDS
echo "elapsed_s rss_kib" | tee "$OUT/rss.txt"
while kill -0 "$live" 2>/dev/null; do
	rss=$(awk '/^VmRSS/ {print $2}' "/proc/$live/status" 2>/dev/null || true)
	[ -n "$rss" ] && echo "$((SECONDS - start)) $rss" | tee -a "$OUT/rss.txt"
	sleep "$SAMPLE"
done &
sampler=$!

# The load stops 5 s before the source ends, so that the source sees all of it.
secs=0
rest=$DURATION
while [[ $rest =~ ^([0-9]+)([smh])(.*)$ ]]; do
	case ${BASH_REMATCH[2]} in s) m=1 ;; m) m=60 ;; h) m=3600 ;; esac
	secs=$((secs + BASH_REMATCH[1] * m))
	rest=${BASH_REMATCH[3]}
done
sleep $((secs - 5))
kill -TERM "${pids[@]}"
issued=0
for i in $(seq "$THREADS"); do
	wait "${pids[$((i - 1))]}" || true
	issued=$((issued + $(cat "$OUT/flood.$i")))
done
wait "$live" || true
wait "$sampler" 2>/dev/null || true

decoded=$(grep -o 'ioctl_enter=[0-9]*' "$OUT/summary.txt" | cut -d= -f2)
exits=$(grep -o 'ioctl_exit=[0-9]*' "$OUT/summary.txt" | cut -d= -f2)
lost=$(python3 - "$OUT/metrics.json" 2>/dev/null <<'PY'
import json, sys
v = 0
for line in open(sys.argv[1]):
    for rm in json.loads(line).get("resourceMetrics", []):
        for sm in rm.get("scopeMetrics", []):
            for m in sm.get("metrics", []):
                if m["name"] == "ghostdriver.source.lost_events":
                    v = int(m["sum"]["dataPoints"][-1].get("asInt", 0))
print(v)
PY
) || lost=$(tail -1 "$OUT/metrics.json" | grep -o 'lost_events"[^]]*"asInt":"[0-9]*"' | grep -o '[0-9]*"$' | tr -d '"')
events=$((decoded + exits))
echo
echo "duration:          $DURATION ($secs s); load ran $((secs - 5)) s on $THREADS threads"
echo "ioctls issued:     $issued  (events expected: $((2 * issued)))"
echo "events decoded:    $events  ($((events / secs)) /s)"
echo "events lost:       $lost (counted by the kernel: ring buffer full)"
echo "device:            $DEV (major $MAJOR)"
echo "unexplained:       $((events + lost - 2 * issued)) (must be 0 on a private major; ≥ 0 on /dev/null: other processes' ioctls)"
awk 'NR>1 {if (min==""||$2<min) min=$2; if ($2>max) max=$2; last=$2} END {printf "rss KiB:           min %d max %d last %d\n", min, max, last}' "$OUT/rss.txt"
