#!/usr/bin/env bash
# `make bench`: the overhead budget of ghostdriver, measured side by side with its floor,
# bpftrace and ftrace (method and results: BENCHMARKS.md). Run as root on the project's
# machine kind; not part of `make test`.
#
#   scripts/bench.sh            full run (≈ 10–15 min, the guest part included)
#   QUICK=1 scripts/bench.sh    fewer rounds, smaller inputs, no guest (≈ 3–4 min)
#
# Environment:
#   BENCH_OUT     result directory (default bench/results/<date>-<host>[-quick])
#   BENCH_BUILD   build directory (default /tmp/ghostdriver-bench)
#   BENCH_GUEST   0/1: run the virtual GPU guest part (default 1, 0 with QUICK=1)
#   BENCH_ROUNDS  interleaved rounds of the host parts (default 7, 3 with QUICK=1)
#   BENCH_IOCTLS  ioctls per whole-system run (default 1000000, 300000 with QUICK=1)
#   BENCH_STEPS   subset of: kernel system loss jobloss user export guest (default: all)
#   BENCH_GD_BASE a ghostdriver binary of another commit: the system step adds condition
#                 base-1 (that binary following every ioctl) beside gd-1, for before/after runs
#                 (send-1, always there, is gd-1 with --send-jobless-ioctls: every ioctl's records)
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
QUICK=${QUICK:-}
if [ -n "$QUICK" ]; then
	ROUNDS=${BENCH_ROUNDS:-3} IOCTLS=${BENCH_IOCTLS:-300000} GUEST=${BENCH_GUEST:-0}
	COST_IOCTLS=200000 EXECS=50 LOSS_SECONDS=3 LOSS_RATES=50000 GEN_JOBS=100000 PENDING="10000 100000" DELAY_S=3
	JOBLOSS_RATES=20000 JOBLOSS_SECONDS=5
	BENCHTIME=1x GUEST_RUNS=1
else
	ROUNDS=${BENCH_ROUNDS:-7} IOCTLS=${BENCH_IOCTLS:-1000000} GUEST=${BENCH_GUEST:-1}
	COST_IOCTLS=1000000 EXECS=200 LOSS_SECONDS=10 LOSS_RATES=50000,100000,200000 GEN_JOBS=200000 PENDING="10000 100000 1000000" DELAY_S=10
	JOBLOSS_RATES=20000,100000 JOBLOSS_SECONDS=60
	BENCHTIME=3x GUEST_RUNS=3
fi
STEPS=${BENCH_STEPS:-kernel system loss jobloss user export guest}
BUILD=${BENCH_BUILD:-/tmp/ghostdriver-bench}
OUT=${BENCH_OUT:-bench/results/$(date -u +%Y%m%dT%H%M)-$(hostname -s)${QUICK:+-quick}}
mkdir -p "$BUILD" "$OUT"
OUT=$(cd "$OUT" && pwd)

log() { echo "bench: $*" >&2; }
die() { log "$*"; exit 1; }
has() { [[ " $STEPS " == *" $1 "* ]]; }
[ "$(id -u)" = 0 ] || die "run as root (BPF, tracefs, apt-get)"

# ---- tools ----
need=()
command -v gcc >/dev/null || need+=(gcc libc6-dev)
command -v bpftrace >/dev/null || need+=(bpftrace)
if [ ${#need[@]} -gt 0 ]; then
	log "apt-get install ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; }
fi
log "build into $BUILD"
CGO_ENABLED=0 go build -o "$BUILD/ghostdriver" ./cmd/ghostdriver
CGO_ENABLED=0 go build -o "$BUILD/bpfcost" ./bench/bpfcost
CGO_ENABLED=0 go build -o "$BUILD/gencapture" ./bench/gencapture
CGO_ENABLED=0 go build -o "$BUILD/userbench" ./bench/userbench
CGO_ENABLED=0 go build -o "$BUILD/report" ./bench/report
gcc -O2 -Wall -o "$BUILD/ioctlloop" bench/ioctlloop/ioctlloop.c
gcc -O2 -Wall -static -o "$BUILD/ioctlloop.static" bench/ioctlloop/ioctlloop.c 2>/dev/null || true

# ---- context of the run (the machine is shared: absolute times are noisy) ----
{
	echo "date=$(date -u +%FT%TZ)"
	echo "commit=$(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo -dirty)"
	echo "kernel=$(uname -r)"
	echo "cpus=$(nproc)"
	echo "cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
	echo "quick=${QUICK:-0} rounds=$ROUNDS ioctls=$IOCTLS"
	echo "bpftrace=$(bpftrace --version 2>/dev/null)"
	echo "go=$(go version | cut -d' ' -f3)"
	echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/context.txt"
loadavg() { echo "$(date -u +%T) $1 $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/loadavg.txt"; }
loadavg start

# The floor's programs on the syscall tracepoints, bpftrace and the ftrace peer need tracefs
# (ghostdriver mounts it only while attaching): mounted here when it is not, for the run.
T=/sys/kernel/tracing
TRACEFS_OURS=
if ! mountpoint -q "$T"; then
	mount -t tracefs nodev "$T" && TRACEFS_OURS=1
fi
trap '[ -z "$TRACEFS_OURS" ] || umount "$T" 2>/dev/null || true' EXIT

# ---- 1. kernel side: per-program ns/run vs the empty-program floor (BPF stats) ----
if has kernel; then
	log "1/5 kernel: floor vs ghostdriver (226 = filter miss, 1 = filter hit), $ROUNDS rounds"
	"$BUILD/bpfcost" cost -rounds "$ROUNDS" -ioctls "$COST_IOCTLS" -execs "$EXECS" -majors 226,1 \
		-out "$OUT/kernel_cost.tsv" 2>"$OUT/kernel_cost.log"
	log "1/5 kernel: hook bodies that do not fire here (BPF_PROG_TEST_RUN, fake objects)"
	GHOSTDRIVER_HOOKCOST_OUT="$OUT/kernel_testrun.tsv" GHOSTDRIVER_HOOKCOST_RUNS=$((COST_IOCTLS / 10)) \
		go test -count=1 -run 'TestHookCostTestRun' ./internal/probe >"$OUT/kernel_testrun.log" 2>&1 ||
		{ cat "$OUT/kernel_testrun.log" >&2; die "hook test-run costs failed"; }
	loadavg kernel
fi

# ---- 2. whole system: ioctl loop under nothing / ghostdriver / bpftrace / ftrace ----
INST=$T/instances/ghostdriver-bench
FTRACE_EVENTS="syscalls/sys_enter_ioctl syscalls/sys_exit_ioctl sched/sched_process_exec sched/sched_process_exit dma_fence gpu_scheduler"
# task_cpu_ns PID: CPU time of every thread of PID (schedstat: ns on CPU).
task_cpu_ns() {
	local s=0 f v
	for f in /proc/"$1"/task/*/schedstat; do
		read -r v _ <"$f" 2>/dev/null || continue
		s=$((s + v))
	done
	echo $s
}
ftrace_start() {
	rmdir "$INST" 2>/dev/null || true
	mkdir "$INST"
	echo 16384 >"$INST/buffer_size_kb"
	local e
	for e in $FTRACE_EVENTS; do
		[ -e "$INST/events/$e/enable" ] && echo 1 >"$INST/events/$e/enable"
	done
	echo 1 >"$INST/tracing_on"
}
ftrace_lost() {
	cat "$INST"/per_cpu/cpu*/stats | awk '/^overrun:/ {o += $2} /^dropped events:/ {d += $3} /^read events:/ {r += $3} END {printf "%d %d\n", o + d, r}'
}
ftrace_stop() {
	[ -d "$INST" ] || return 0
	echo 0 >"$INST/tracing_on" 2>/dev/null || true
	echo 0 >"$INST/events/enable" 2>/dev/null || true
	rmdir "$INST" 2>/dev/null || true
}
# system_run COND ROUND: one run of the loop under COND; one TSV row.
system_run() {
	local cond=$1 round=$2
	local pid= tmp=$BUILD/sys.$1 lost=0 events=0 i
	rm -f "$tmp".*
	case $cond in
	bare) ;;
	gd-* | base-* | send-*)
		local bin=$BUILD/ghostdriver extra=
		[ "${cond%%-*}" = base ] && bin=$BENCH_GD_BASE
		[ "${cond%%-*}" = send ] && extra=--send-jobless-ioctls
		"$bin" live --drm-major "${cond#*-}" $extra --ready-file "$tmp.ready" >"$tmp.out" 2>"$tmp.err" &
		pid=$!
		for i in $(seq 300); do [ -e "$tmp.ready" ] && break; sleep 0.1; done
		[ -e "$tmp.ready" ] || { cat "$tmp.err" >&2; die "ghostdriver did not attach"; }
		;;
	bpftrace)
		bpftrace bench/bpftrace/ghostdriver-events.bt >"$tmp.out" 2>"$tmp.err" &
		pid=$!
		for i in $(seq 300); do grep -q '^Attaching' "$tmp.out" 2>/dev/null && break; sleep 0.1; done
		grep -q '^Attaching' "$tmp.out" || { cat "$tmp.err" >&2; die "bpftrace did not attach"; }
		;;
	ftrace)
		ftrace_start
		cat "$INST/trace_pipe" >"$tmp.trace" &
		pid=$!
		;;
	esac
	sleep 0.5
	local c0=0 c1=0
	[ -n "$pid" ] && c0=$(task_cpu_ns "$pid")
	local line
	line=$("$BUILD/ioctlloop" "$IOCTLS")
	sleep 0.3 # let the readers drain what the loop left
	[ -n "$pid" ] && c1=$(task_cpu_ns "$pid")
	case $cond in
	gd-* | base-* | send-*)
		kill -TERM "$pid"
		wait "$pid" || true
		lost=$(sed -n 's/^events lost before decoding: \([0-9]*\).*/\1/p' "$tmp.out") # the leading count (a live run adds its two kinds)
		events=$(sed -n 's/^events decoded: .*(total \([0-9]*\)).*/\1/p' "$tmp.out")
		;;
	bpftrace)
		kill -INT "$pid"
		wait "$pid" || true
		;;
	ftrace)
		read -r lost events < <(ftrace_lost)
		kill "$pid"
		wait "$pid" 2>/dev/null || true
		ftrace_stop
		;;
	esac
	local wall cpu
	wall=$(sed -n 's/.*wall_ns_per_op=\([0-9.]*\).*/\1/p' <<<"$line")
	cpu=$(sed -n 's/.*cpu_ns_per_op=\([0-9.]*\).*/\1/p' <<<"$line")
	printf '%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t%s\n' "$round" "$cond" "$wall" "$cpu" \
		"$(awk -v a="$c0" -v b="$c1" -v n="$IOCTLS" 'BEGIN {print (b - a) / n}')" "${events:-0}" "${lost:-0}" \
		"$(cut -d' ' -f1 /proc/loadavg)"
	rm -f "$tmp".*
}
if has system; then
	conds="bare gd-1 send-1${BENCH_GD_BASE:+ base-1} gd-226 bpftrace ftrace"
	log "2/5 system: $ROUNDS × ($conds), $IOCTLS ioctls each"
	echo "system_conditions=$conds${BENCH_GD_BASE:+ base=$BENCH_GD_BASE}" >>"$OUT/context.txt"
	trap 'ftrace_stop; [ -z "$TRACEFS_OURS" ] || umount "$T" 2>/dev/null || true' EXIT
	printf 'round\tcondition\twall_ns_per_ioctl\tloop_cpu_ns_per_ioctl\ttracer_cpu_ns_per_ioctl\ttracer_events\ttracer_lost\tloadavg1\n' >"$OUT/system.tsv"
	for r in $(seq "$ROUNDS"); do
		for c in $conds; do
			system_run "$c" "$r" >>"$OUT/system.tsv"
		done
		log "  round $r done (load $(cut -d' ' -f1 /proc/loadavg))"
	done
	loadavg system
fi

# ---- 3. ring-buffer loss at sustained rates (live source + pipeline) ----
if has loss; then
	log "3/5 loss: ${LOSS_RATES} ioctls/s × ${LOSS_SECONDS}s (2 events each)"
	"$BUILD/bpfcost" loss -rates "$LOSS_RATES" -seconds "$LOSS_SECONDS" -loop "$BUILD/ioctlloop" >"$OUT/loss.tsv"
	loadavg loss
fi

# ---- 3b. loss at a rate of jobs: a generated ring through the live reader, the pipeline and
# the OTLP protobuf encoding (TestRingGeneratorLoss; this host has no DRM to run jobs) ----
if has jobloss; then
	log "3b jobloss: ${JOBLOSS_RATES} jobs/s × ${JOBLOSS_SECONDS}s (generated 6.17 records → live reader → pipeline → OTLP)"
	jobloss_run() { # the rates and span output come in the environment
		GHOSTDRIVER_RINGGEN_OUT="$OUT/jobloss.tsv" GHOSTDRIVER_RINGGEN_SECONDS=$JOBLOSS_SECONDS \
			go test -count=1 -timeout 30m -run 'TestRingGeneratorLoss' ./internal/probe >>"$OUT/jobloss.log" 2>&1 ||
			{ cat "$OUT/jobloss.log" >&2; die "generated-ring loss test failed"; }
	}
	: >"$OUT/jobloss.log"
	GHOSTDRIVER_RINGGEN_RATES=$JOBLOSS_RATES jobloss_run
	# the highest rate again with no span output: what the reader and the assembler sustain
	GHOSTDRIVER_RINGGEN_SPANS=none GHOSTDRIVER_RINGGEN_RATES=${JOBLOSS_RATES##*,} jobloss_run
	loadavg jobloss
fi

# ---- 4. user space: decode → assemble → pdata, memory per pending job, delay ----
if has user; then
	log "4/5 user: generated captures, $GEN_JOBS jobs"
	"$BUILD/gencapture" -style 4.11 -jobs "$GEN_JOBS" -rings 4 -procs 8 -o "$BUILD/gen-4.11.txt"
	"$BUILD/gencapture" -style 6.17 -jobs "$GEN_JOBS" -rings 4 -procs 8 -o "$BUILD/gen-6.17.txt"
	ls -l "$BUILD"/gen-*.txt | awk '{print $5, $9}' >"$OUT/user_captures.txt"
	GHOSTDRIVER_BENCH_CAPTURES="$BUILD/gen-4.11.txt,$BUILD/gen-6.17.txt" \
		go test -count=1 -run '^$' -bench 'BenchmarkReplayPipeline' -benchtime "$BENCHTIME" ./bench/ >"$OUT/user_throughput.txt" 2>&1 ||
		{ cat "$OUT/user_throughput.txt" >&2; die "user-space benchmark failed"; }
	# the component benchmarks that already exist, for reference
	go test -count=1 -run '^$' -bench 'BenchmarkDecode$|BenchmarkAssemble$|BenchmarkAppend$' -benchmem \
		./internal/ftrace/ ./internal/assemble/ ./internal/emit/ >"$OUT/user_components.txt" 2>&1 || true
	hdr=-header
	for n in $PENDING; do
		for s in 4.11 6.17; do
			"$BUILD/userbench" pending $hdr -jobs "$n" -style "$s" >>"$OUT/user_pending.tsv"
			hdr=
		done
	done
	"$BUILD/userbench" delay -seconds "$DELAY_S" -style 6.17 -rate 2000 >"$OUT/user_delay.tsv"
	# what pdata alone costs these jobs' spans, beside the SpanBuilder and the JobEncoder
	go run ./bench/pdatafloor -jobs "$GEN_JOBS" -rounds "$ROUNDS" -o "$OUT/pdatafloor.tsv" ||
		die "pdata floor benchmark failed"
	loadavg user
fi

# ---- 4b. export path: CLI replay → json/proto files, collector replay → file exporter ----
if has export; then
	dist=${DIST:-build/otelcol-ghostdriver/otelcol-ghostdriver}
	[ -x "$dist" ] || log "export: $dist missing (make dist): CLI only"
	log "4b export: scripts/bench-export.sh"
	EXPORT_JOBS=${EXPORT_JOBS:-$([ -n "$QUICK" ] && echo 200000 || echo 1000000)} EXPORT_ROUNDS=${EXPORT_ROUNDS:-3} \
		EXPORT_COLLECTOR=$([ -x "$dist" ] && echo 1 || echo 0) DIST=$dist BENCH_OUT="$OUT/export" BENCH_BUILD="$BUILD" \
		scripts/bench-export.sh >"$OUT/export.log" 2>&1 || { tail -20 "$OUT/export.log" >&2; die "export benchmark failed"; }
	loadavg export
fi

# ---- 5. guest: the virtual GPU app under the four conditions ----
if has guest && [ "$GUEST" = 1 ]; then
	log "5/5 guest: testdata/vgpu/run.sh 6.1 with VGPU_BENCH=1 ($GUEST_RUNS runs per condition)"
	mkdir -p "$OUT/guest"
	# A private build directory (other users of the rig rebuild theirs concurrently), with
	# the shared downloads linked in.
	vcache=$BUILD/vgpu-cache
	mkdir -p "$vcache"
	for d in testdata/vgpu/cache/*; do
		[ -e "$d" ] || continue
		b=$(basename "$d")
		case $b in build-*) ;; *) [ -e "$vcache/$b" ] || ln -s "$(realpath "$d")" "$vcache/$b" ;; esac
	done
	if VGPU_BENCH=1 VGPU_BENCH_RUNS=$GUEST_RUNS VGPU_JOBS=${VGPU_JOBS:-64} VGPU_NO_CHECK=1 VGPU_OPTIONAL_DRIVERS="" VGPU_OUT="$OUT/guest" \
		VGPU_BENCH_BIN="$BUILD/bpfcost" VGPU_CACHE="$vcache" VGPU_TIMEOUT=900 \
		testdata/vgpu/run.sh 6.1 >"$OUT/guest/run.log" 2>&1; then
		rm -f "$OUT/guest/tracefs.txt" "$OUT/guest/dmesg.txt"
	else
		log "guest run failed (see $OUT/guest/run.log): its results are left out"
	fi
	loadavg guest
fi

echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/context.txt"
"$BUILD/report" "$OUT" >"$OUT/summary.md"
log "results in $OUT (summary.md)"
cat "$OUT/summary.md"
