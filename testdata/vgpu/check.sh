#!/usr/bin/env bash
# Validate the artifacts of one virtual GPU run:  check.sh 6.1|7.3 [DIR]
#
#  - the workload ran: ≥ 2 processes, ≥ 2 threads each, both rings, cross-process dependencies;
#  - every job the app printed is in the ground truth once, with the same ring, pid, tid and fence;
#  - the fake engine behaved as modelled: serial per ring, a job starts at max(handover, previous end),
#    never ends before start + engine time, never runs before its dependencies ended;
#  - the dependency rules of drm_sched (own entity ignored, same scheduler until scheduled, other
#    until signalled) are all exercised, a ring fills, and no job ran before they made it runnable;
#  - tracefs.txt holds the scheduler / dma_fence events of that kernel generation, one per job;
#  - the timer noise (hw_end - hw_start - engine_ns) is summarised into noise.txt.
# Exit status 0 when every check passes. Needs only bash and awk.
set -uo pipefail

KERNEL_LABEL=${1:?usage: check.sh 6.1|7.3|6.1-arm64 [DIR]}
DIR=${2:-$(cd "$(dirname "$0")" && pwd)/out/$KERNEL_LABEL}
fails=0
ok() { printf 'ok    %s\n' "$*"; }
bad() { printf 'FAIL  %s\n' "$*"; fails=$((fails + 1)); }

for f in app.txt groundtruth.txt; do
	[ -s "$DIR/$f" ] || { bad "$DIR/$f missing or empty"; exit 1; }
done

# ---- app vs ground truth, engine model, dependencies (one awk pass over both files) ----
# kv() turns integer values into numbers, so that times compare as numbers (compared as
# strings, 10 s of uptime sorted before 9.9 s); CONVFMT=%.0f prints them whole (mawk would
# write an 11-digit number as 1.02e+10).
awk_out=$(awk -v CONVFMT=%.0f '
function kv(line, arr,   i, n, f, p, v) {
	n = split(line, f, " ")
	for (i = 1; i <= n; i++) {
		p = index(f[i], "="); if (!p) continue
		v = substr(f[i], p + 1); arr[substr(f[i], 1, p - 1)] = v ~ /^-?[0-9]+$/ ? v + 0 : v
	}
}
FNR == 1 { file++ }
file == 1 && /^job / {
	delete a; kv($0, a); n_app++
	k = a["fence"]; app_ring[k] = a["ring"]; app_pid[k] = a["pid"]; app_tid[k] = a["tid"]; app_dep[k] = a["dep"]
	pids[a["pid"]] = 1; tids[a["pid"] " " a["tid"]] = 1; rings[a["ring"]] = 1
	if (app_seen[k]++) printf "bad duplicate fence %s in app.txt\n", k
	next
}
file == 2 && /^ring=/ {
	delete g; kv($0, g); n_gt++
	k = g["fence"]
	if (gt_seen[k]++) printf "bad duplicate fence %s in groundtruth\n", k
	gt_ring[k] = g["ring"]; gt_pid[k] = g["pid"]; gt_tid[k] = g["tid"]
	start[k] = g["hw_start_ns"]; end[k] = g["hw_end_ns"]; eng[k] = g["engine_ns"]; hand[k] = g["handover_ns"]
	sub_ns[k] = g["submit_ns"]; deps[k] = g["deps"]
	order[n_gt] = k
}
END {
	printf "info  jobs app=%d groundtruth=%d processes=%d threads=%d rings=%d\n", n_app, n_gt, length(pids), length(tids), length(rings)
	if (n_app == 0 || n_app != n_gt) printf "bad job count app=%d groundtruth=%d\n", n_app, n_gt
	early = 0
	if (length(pids) < 2) print "bad fewer than 2 processes"
	if (length(tids) < 4) print "bad fewer than 4 threads"
	if (length(rings) < 2) print "bad fewer than 2 rings"
	mism = 0; missing = 0
	for (k in app_ring) {
		if (!(k in gt_ring)) { missing++; if (missing <= 3) printf "bad app job %s not in groundtruth\n", k; continue }
		if (app_ring[k] != gt_ring[k] || app_pid[k] != gt_pid[k] || app_tid[k] != gt_tid[k]) {
			mism++; if (mism <= 3) printf "bad job %s: app ring/pid/tid %s/%s/%s, groundtruth %s/%s/%s\n", k, app_ring[k], app_pid[k], app_tid[k], gt_ring[k], gt_pid[k], gt_tid[k]
		}
	}
	if (!missing && !mism) printf "ok jobs match (fence, ring, pid, tid) for all %d app jobs\n", n_app
	# dependencies: the app names each explicit in-fence; the ground truth must list exactly it.
	ndep = 0; xproc = 0; dbad = 0; late = 0
	for (k in app_dep) {
		d = app_dep[k]
		if (d == "-") { if (deps[k] != "-" && deps[k] != "") { dbad++; printf "bad job %s has deps %s, app says none\n", k, deps[k] } continue }
		ndep++; split(d, p, ":"); want = p[2] ":" p[3]
		if (deps[k] != want) { dbad++; if (dbad <= 3) printf "bad job %s deps=%s, app waited for %s\n", k, deps[k], want }
		if (p[1] == "sync_file" && (want in gt_pid) && gt_pid[want] != gt_pid[k]) xproc++
		# The engine must not start a job before its dependency ended. (run_job may come earlier: for
		# a dependency on the same scheduler drm_sched only waits for it to be *scheduled*, the ring
		# being FIFO.)
		if ((want in end) && start[k] < end[want]) { late++; printf "bad job %s started (%s) before its dependency %s ended (%s)\n", k, start[k], want, end[want] }
		if ((want in end) && hand[k] < end[want]) early++
	}
	if (!dbad) printf "ok dependencies: %d jobs with an explicit in-fence, all in the ground truth\n", ndep
	if (!late && ndep) printf "ok no job started on the engine before its dependency ended\n"
	printf "info  %d of %d dependent jobs were handed to the ring before their dependency ended (same-ring pipelining)\n", early, ndep
	if (xproc < 1) print "bad no cross-process (sync_file) dependency"; else printf "ok %d cross-process sync_file dependencies\n", xproc
	# engine model, per ring in hw_start order (the log is in completion order, which is the same per ring)
	ebad = 0
	for (i = 1; i <= n_gt; i++) {
		k = order[i]; r = gt_ring[k]
		if (start[k] < hand[k]) { ebad++; printf "bad job %s started before handover\n", k }
		if (end[k] < start[k] + eng[k]) { ebad++; printf "bad job %s ended early\n", k }
		if (hand[k] < sub_ns[k]) { ebad++; printf "bad job %s handed over before submit\n", k }
		if (r in last_end) {
			exp_start = hand[k] > last_end[r] ? hand[k] : last_end[r]
			if (start[k] != exp_start) { ebad++; if (ebad <= 3) printf "bad job %s start %s, model says %s\n", k, start[k], exp_start }
		}
		last_end[r] = end[k]
	}
	if (!ebad) print "ok engine model: serial per ring, start = max(handover, previous end), end >= start + engine_ns"
}' "$DIR/app.txt" "$DIR/groundtruth.txt")
while IFS= read -r line; do
	case $line in
	"bad "*) bad "${line#bad }" ;;
	"ok "*) ok "${line#ok }" ;;
	*) echo "$line" ;;
	esac
done <<<"$awk_out"
N=$(grep -c '^ring=' "$DIR/groundtruth.txt")

# ---- dependency rules: what drm_sched waits for, from the driver's log alone ----
# drm_sched_entity_add_dependency_cb: a fence of the job's own entity (context entity_ctx or
# entity_ctx + 1) is ignored; a fence of the same scheduler (no error, not DONT_PIPELINE) is waited
# for until its scheduled fence signals; any other until it signals. td = max(push, those ends) must
# not be later than the job's run_job (handover) — else the log or the rule is wrong. The rig must
# exercise all three kinds and a ring that fills (a job runnable at td while credit_limit jobs of its
# ring held credits). e2e/vgpu_deps_test.go checks the spans against the same rules.
if grep -q ' push_ns=' "$DIR/groundtruth.txt"; then
	limit=$(sed -n 's/^vgpu credit_limit=//p' "$DIR/modules.txt" 2>/dev/null)
	dep_out=$(awk -v CONVFMT=%.0f -v limit="${limit:-0}" '
	function kv(line, arr,   i, n, f, p, v) {
		n = split(line, f, " ")
		for (i = 1; i <= n; i++) {
			p = index(f[i], "="); if (!p) continue
			v = substr(f[i], p + 1); arr[substr(f[i], 1, p - 1)] = v ~ /^-?[0-9]+$/ ? v + 0 : v
		}
	}
	/^ring=/ {
		delete g; kv($0, g); n++
		ring[n] = g["ring"]; run[n] = g["handover_ns"]; fin[n] = g["finished_ns"]; td = g["push_ns"]
		if (g["deps"] != "-") {
			nd = split(g["deps"], d, ","); split(g["dep_sched"], sc, ","); split(g["dep_signal_ns"], sig, ",")
			split(g["dep_scheduled_ns"], sch, ","); split(g["dep_error"], er, ","); split(g["dep_dont_pipeline"], dp, ",")
			for (i = 1; i <= nd; i++) {
				split(d[i], c, ":")
				if (c[1] == g["entity_ctx"] || c[1] == g["entity_ctx"] + 1) { own++; continue }
				if (sc[i] == g["sched"] && er[i] == 0 && dp[i] == 0) { same++; end = sch[i] } else { other++; end = sig[i] }
				if (end < 0) { printf "bad job %s: dependency %s has no signal time in the log\n", g["fence"], d[i]; continue }
				if (end + 0 > td + 0) td = end
			}
		}
		tdj[n] = td
		if (td + 0 > g["handover_ns"] + 0) early++
		if (td + 0 > g["handover_ns"] + 0) printf "bad job %s: by the scheduler rules runnable at %s, but run_job came at %s\n", g["fence"], td, g["handover_ns"]
	}
	END {
		for (j = 1; j <= n; j++) {
			busy = 0
			for (k = 1; k <= n; k++) if (k != j && ring[k] == ring[j] && run[k] <= tdj[j] && fin[k] > tdj[j]) busy++
			if (limit > 0 && busy >= limit && run[j] > tdj[j]) full++
		}
		printf "info  dependencies by rule: own entity %d, same scheduler %d, other scheduler %d; %d runnable jobs found the ring full (credit_limit %d)\n", own, same, other, full, limit
		if (!own) print "bad no dependency on the job'"'"'s own entity"
		if (!same) print "bad no same-scheduler dependency"
		if (!other) print "bad no cross-scheduler dependency"
		if (!full) print "bad no runnable job waited for ring credits"
		if (own && same && other && full) print "ok dependency rules exercised (all three kinds, a full ring)"
		if (!early) print "ok no job ran before the scheduler rules made it runnable"
	}' "$DIR/groundtruth.txt")
	while IFS= read -r line; do
		case $line in
		"bad "*) bad "${line#bad }" ;;
		"ok "*) ok "${line#ok }" ;;
		*) echo "$line" ;;
		esac
	done <<<"$dep_out"
else
	bad "groundtruth.txt has no push_ns: vgpu.ko predates the dependency ground truth"
fi

# ---- timer noise: how late the hrtimer "interrupt" fired ----
awk '{ for (i = 1; i <= NF; i++) { split($i, a, "="); v[a[1]] = a[2] }
       print v["hw_end_ns"] - v["hw_start_ns"] - v["engine_ns"] }' "$DIR/groundtruth.txt" | sort -n |
	awk -v label="$KERNEL_LABEL" '{ x[NR] = $1; s += $1 }
	END { printf "timer_lateness_ns kernel=%s n=%d min=%d p50=%d p90=%d p99=%d max=%d mean=%d\n", label, NR,
		x[1], x[int((NR - 1) * 0.5) + 1], x[int((NR - 1) * 0.9) + 1], x[int((NR - 1) * 0.99) + 1], x[NR], s / NR }' |
	tee "$DIR/noise.txt"

# ---- tracefs events of this kernel generation ----
T=$DIR/tracefs.txt
if [ ! -s "$T" ]; then
	bad "tracefs.txt missing"
else
	count() { grep -c " $1: " "$T"; }
	expect_eq() { # EVENT N
		local c; c=$(count "$1")
		if [ "$c" = "$2" ]; then ok "tracefs $1: $c (one per job)"; else bad "tracefs $1: $c, want $2"; fi
	}
	expect_ge() { # EVENT N
		local c; c=$(count "$1")
		if [ "$c" -ge "$2" ]; then ok "tracefs $1: $c (>= $2)"; else bad "tracefs $1: $c, want >= $2"; fi
	}
	ndeps=$(grep -c 'dep=[a-z]' "$DIR/app.txt")
	case $KERNEL_LABEL in
	6.1 | 6.1-*)
		expect_eq drm_sched_job "$N"
		expect_eq drm_run_job "$N"
		expect_eq drm_sched_process_job "$N"
		for e in drm_sched_job_queue drm_sched_job_run drm_sched_job_done; do
			[ "$(count $e)" = 0 ] || bad "tracefs has the 6.17+ event $e on 6.1"
		done
		echo "info  tracefs drm_sched_job_wait_dep: $(count drm_sched_job_wait_dep) (only when the dependency was unsignalled)"
		;;
	7.3 | 7.3-*)
		expect_eq drm_sched_job_queue "$N"
		expect_eq drm_sched_job_run "$N"
		expect_eq drm_sched_job_done "$N"
		expect_ge drm_sched_job_add_dep "$ndeps"
		for e in drm_sched_job drm_run_job drm_sched_process_job; do
			[ "$(count $e)" = 0 ] || bad "tracefs has the pre-6.17 event $e on 7.3"
		done
		# 6.17+ events carry the finished fence: every ground-truth fence is in a queue event.
		miss=0
		while read -r f; do
			grep -q " drm_sched_job_queue: .*fence=$f," "$T" || miss=$((miss + 1))
		done < <(sed -n 's/.* fence=\([0-9]*:[0-9]*\) .*/\1/p' "$DIR/groundtruth.txt")
		if [ $miss = 0 ]; then ok "every ground-truth fence is in a drm_sched_job_queue event"; else bad "$miss ground-truth fences missing from drm_sched_job_queue"; fi
		;;
	esac
	expect_eq dma_fence_emit "$N"
	expect_ge dma_fence_signaled "$((2 * N))"
	c=$(grep -c ' sys_ioctl(fd: ' "$T"); if [ "$c" -ge "$N" ]; then ok "tracefs sys_enter_ioctl: $c"; else bad "tracefs sys_enter_ioctl: $c, want >= $N"; fi
	c=$(grep -c 'tracing_mark_write: job ' "$T"); if [ "$c" = "$N" ]; then ok "tracefs trace_marker: $c"; else bad "tracefs trace_marker: $c, want $N"; fi
	echo "info  tracefs hrtimer_expire_entry (vgpu_engine_irq): $(grep -c ' hrtimer_expire_entry: ' "$T")"

	# Clock agreement: the tracefs timestamps (trace_clock=mono, µs) of the hardware fence's emit and
	# signal vs the ground truth's ktime_get_ns() taken next to them. This, not the timer lateness, is
	# the tolerance a span-vs-ground-truth check needs.
	if grep -q '^# trace_clock=.*\[mono\]' "$DIR/formats.txt" 2>/dev/null; then
		awk '
		function kv(line, arr,   i, n, f, p) {
			n = split(line, f, " ")
			for (i = 1; i <= n; i++) { p = index(f[i], "="); if (p) arr[substr(f[i], 1, p - 1)] = substr(f[i], p + 1) }
		}
		FNR == 1 { file++ }
		file == 1 { delete g; kv($0, g); hw[g["hw_fence"]] = 1; emit_gt[g["hw_fence"]] = g["handover_ns"]; sig_gt[g["hw_fence"]] = g["hw_end_ns"]; next }
		/ dma_fence_(emit|signaled): driver=vgpu / {
			for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { ts = substr($i, 1, length($i) - 1); break }
			delete e; kv($0, e); k = e["context"] ":" e["seqno"]
			if (!(k in hw)) next
			d = ts * 1e9 - (/dma_fence_emit/ ? emit_gt[k] : sig_gt[k])
			if (/dma_fence_emit/) { de[++ne] = d } else { ds[++ns] = d }
		}
		function stats(name, a, n,   i, j, t, lo, hi) {
			for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
			if (n) printf "tracefs_minus_groundtruth_ns event=%s n=%d min=%d p50=%d max=%d\n", name, n, a[1], a[int((n - 1) / 2) + 1], a[n]
		}
		END { stats("dma_fence_emit-vs-handover_ns", de, ne); stats("dma_fence_signaled-vs-hw_end_ns", ds, ns) }
		' "$DIR/groundtruth.txt" "$T" | tee -a "$DIR/noise.txt"
	fi
fi

if [ -e "$DIR/modules.txt" ]; then
	grep -qx 'vgpu loaded' "$DIR/modules.txt" && ok "vgpu loaded" || bad "vgpu not loaded"
	grep -E '^(amdgpu|i915|xe) ' "$DIR/modules.txt" | sed 's/^/info  /'
fi
if [ -e "$DIR/spans.json" ]; then echo "info  spans.json present ($(wc -c <"$DIR/spans.json") bytes): checked by the Go side"; fi
# The jobs-mode receiver (records: jobs) beside it: every job the hardware ran completed
# there too (its spans against the events mode's, the replay's and the ground truth: Go side).
if [ -e "$DIR/ghostdriver-jobs.log" ]; then
	jl=$(grep -m1 '^jobs: ' "$DIR/ghostdriver-jobs.log")
	jc=$(echo "$jl" | sed -n 's/^jobs: \([0-9]*\) completed.*/\1/p')
	jlost=$(sed -n 's/^events lost before decoding: \([0-9]*\).*/\1/p' "$DIR/ghostdriver-jobs.log" | head -1)
	# As on the Go side (e2e jobDamage): a record the kernel could not reserve (counted by
	# the receiver) damages at most one job, so up to that many jobs short are excused;
	# nothing may go missing uncounted.
	short=$((N - ${jc:-0}))
	if [ "$short" = 0 ]; then
		ok "jobs mode: $jl"
	elif [ "$short" -gt 0 ] && [ "$short" -le "${jlost:-0}" ]; then
		ok "jobs mode: $jl; $short short of the hardware's $N, explained by the ${jlost} events the receiver reported lost"
	else
		bad "jobs mode: ${jl:-no summary in ghostdriver-jobs.log}, the hardware ran $N, ${jlost:-0} events reported lost"
	fi
fi

if [ $fails = 0 ]; then echo "PASS vgpu $KERNEL_LABEL ($N jobs)"; else echo "FAIL vgpu $KERNEL_LABEL: $fails check(s) failed"; exit 1; fi
