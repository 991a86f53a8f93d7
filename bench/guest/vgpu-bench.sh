#!/bin/busybox sh
# Guest side of the overhead benchmark (BENCHMARKS.md, step 3): run by testdata/vgpu/guest/init
# instead of the normal workload when the initramfs was built with VGPU_BENCH=1.
#
# The vgpu test app runs VGPU_BENCH_RUNS times under each condition, interleaved:
#   bare      nothing attached, tracefs off
#   gd        ghostdriver live (default --drm-major 226: the vgpu render node), spans to tmpfs
#   bpftrace  bpftrace collecting the same events into maps (only if /bin/bpftrace works here)
#   ftrace    a tracefs instance with the same events + a trace_pipe reader writing to tmpfs
# and then bpfcost measures BPF ns/run per hook per job against empty programs on the same
# hooks (the floor). TCG makes absolute times meaningless: only ratios within this run count.
. /etc/vgpu.conf
R=/out/bench
mkdir -p $R 2>/dev/null || { R=/tmp/bench; mkdir -p $R; }
RUNS=${VGPU_BENCH_RUNS:-3}
JOBS=${JOBS_PER_THREAD:-16}
T=/sys/kernel/tracing
INST=$T/instances/bench

# Keep the global tracefs buffer off: conditions add their own tracing.
[ -e $T/tracing_on ] && echo 0 >$T/tracing_on

# busy and total jiffies of the whole guest (it runs nothing else).
cpu_jiffies() { awk '/^cpu / {print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }
now() { cut -d' ' -f1 /proc/uptime; }

conds="bare gd ftrace"
if [ -x /bin/bpftrace ]; then
	if /bin/bpftrace -e 'BEGIN { exit(); }' >/tmp/bt-probe.log 2>&1; then
		conds="bare gd bpftrace ftrace"
	else
		echo "bpftrace does not run in the guest:" >$R/bpftrace-unavailable.txt
		cat /tmp/bt-probe.log >>$R/bpftrace-unavailable.txt
	fi
else
	echo "bpftrace not in the initramfs (VGPU_BENCH_BPFTRACE=0 or its libraries could not be copied)" >$R/bpftrace-unavailable.txt
fi
echo "vgpu-bench: conditions: $conds, $RUNS runs, $JOBS jobs per thread"

printf 'round\tcondition\tjobs\tapp_s\tjobs_per_s\tguest_busy_ms_per_job\ttracer_jobs_or_events\n' >$R/guest_jobs.tsv
run_cond() {
	local cond=$1 round=$2 pid= i extra=-
	case $cond in
	gd)
		rm -f /tmp/gd.ready
		/bin/ghostdriver live --ready-file /tmp/gd.ready --output /tmp/gd-spans.json >/tmp/gd.out 2>/tmp/gd.err &
		pid=$!
		for i in $(seq 600); do [ -e /tmp/gd.ready ] && break; sleep 0.1; done
		;;
	bpftrace)
		/bin/bpftrace /etc/bench/vgpu.bt >/tmp/bt.out 2>/tmp/bt.err &
		pid=$!
		for i in $(seq 1200); do grep -q '^Attaching' /tmp/bt.out 2>/dev/null && break; sleep 0.1; done
		;;
	ftrace)
		rmdir $INST 2>/dev/null
		mkdir $INST
		echo 16384 >$INST/buffer_size_kb
		for e in gpu_scheduler dma_fence syscalls/sys_enter_ioctl syscalls/sys_exit_ioctl sched/sched_process_exec sched/sched_process_exit; do
			[ -e $INST/events/$e/enable ] && echo 1 >$INST/events/$e/enable
		done
		echo 1 >$INST/tracing_on
		cat $INST/trace_pipe >/tmp/ft.txt &
		pid=$!
		;;
	esac
	sleep 1
	set -- $(cpu_jiffies)
	local b0=$1 t0
	t0=$(now)
	/bin/vgpu_app "$JOBS" >/tmp/app.txt 2>/tmp/app.err
	local t1 b1 jobs
	t1=$(now)
	set -- $(cpu_jiffies)
	b1=$1
	jobs=$(grep -c '^job ' /tmp/app.txt)
	case $cond in
	gd)
		sleep 1
		kill -TERM $pid
		wait $pid
		extra=$(sed -n 's/^jobs: \([0-9]*\) completed.*/\1/p' /tmp/gd.out)
		rm -f /tmp/gd-spans.json
		;;
	bpftrace)
		kill -INT $pid
		wait $pid
		extra=$(awk '/^@jobs/ {print $2}' /tmp/bt.out)
		;;
	ftrace)
		sleep 1
		kill $pid
		wait $pid 2>/dev/null
		extra=$(wc -l </tmp/ft.txt)
		echo 0 >$INST/tracing_on
		echo 0 >$INST/events/enable
		rmdir $INST
		rm -f /tmp/ft.txt
		;;
	esac
	# jiffies are 10 ms (USER_HZ 100): busy ms = jiffies * 10
	awk -v r="$round" -v c="$cond" -v j="$jobs" -v a="$t0" -v b="$t1" -v x="$b0" -v y="$b1" -v e="${extra:-0}" \
		'BEGIN {s = b - a; printf "%s\t%s\t%d\t%.2f\t%.1f\t%.2f\t%s\n", r, c, j, s, (s > 0 ? j / s : 0), (j > 0 ? (y - x) * 10 / j : 0), e}' \
		>>$R/guest_jobs.tsv
	tail -1 $R/guest_jobs.tsv
}

for r in $(seq "$RUNS"); do
	for c in $conds; do
		run_cond "$c" "$r"
	done
done

# BPF ns/run per hook per job: floor (empty programs on ghostdriver's hooks) vs ghostdriver.
if [ -x /bin/bpfcost ]; then
	# One run first to know the number of jobs per app run.
	n=$(awk -F'\t' '$2 == "bare" {print $3; exit}' $R/guest_jobs.tsv)
	/bin/bpfcost cost -rounds "$RUNS" -majors 226 -workload "/bin/vgpu_app $JOBS >/dev/null 2>&1" -units "${n:-1}" \
		-out $R/guest_kernel_cost.tsv 2>$R/guest_kernel_cost.log
	echo "vgpu-bench: bpfcost rc=$?"
fi
echo "vgpu-bench: done"
