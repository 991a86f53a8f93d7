"""PyTorch workload with a known number of launches and syncs (VALIDATION.md, NVIDIA H200).

Each iteration enqueues K in-place adds (one elementwise kernel each) and one matmul on the
current stream between two CUDA events, then synchronises with one of three calls in turn
(torch.cuda.synchronize -> cudaDeviceSynchronize, stream.synchronize ->
cudaStreamSynchronize, event.synchronize -> cudaEventSynchronize), timing the sync call on
the host (perf_counter_ns) and the batch on the GPU (event elapsed time).

  workload.py OUT.json [--iters N] [--k K] [--profile] [--ctx LIBOTELCTX] [--pin CPU] [--ref N]
--profile counts kernels with torch.profiler (CUPTI): the independent launch count; the
measured loop's wall time under the profiler (measure_wall_ns, the profiler's start and
stop excluded) is the peer's overhead. Warm-up iterations run first and are excluded from every number.
--ctx loads otelctx.c's library and publishes an OTEP 4947 thread context whose span is
new in every iteration (recorded in OUT as span_id): what an instrumented application
does around each step. The library is loaded before torch, so it exists at the
process's first CUDA call, when ghostdriver resolves the process's recipe.
--pin pins the main thread to that CPU after the warm-up (its other threads keep the
process's affinity). Besides the loop's wall time, every iteration's launch phase (from
before the first event record to after the last: K+1 launches, 2 event records) and
sync phase are timed on the host clock and the launch phase on the thread's CPU clock
(launch_ns, sync_ns, launch_cpu_ns); the loop's thread and process CPU time, the main
thread's run-queue wait (schedstat) and involuntary switches, and the load average are
recorded (hook-cost measurement: run8.sh). --ref N times, after every iteration's sync, a
pure-Python loop of N additions (ref_ns) that no hook and no profiler sees: a gauge of the
CPU's speed at that moment (the device is a VM whose vCPUs' speed moves by tens of per
cent within seconds), against which each iteration's launch phase is normalised.
"""
import ctypes, json, os, sys, time

otelctx = None
TRACE_ID = bytes.fromhex("4bf92f3577b34da6a3ce929d0e0e4736")
if "--ctx" in sys.argv:
    otelctx = ctypes.CDLL(sys.argv[sys.argv.index("--ctx") + 1])

def span_of(i, warm):
    """The application span of iteration i: 8 bytes, warm-up ones marked 0xff."""
    return bytes([0xff if warm else 0x5a, 0, 0, 0]) + i.to_bytes(4, "big")

import torch

out = sys.argv[1]
iters = int(sys.argv[sys.argv.index("--iters") + 1]) if "--iters" in sys.argv else 300
K = int(sys.argv[sys.argv.index("--k") + 1]) if "--k" in sys.argv else 20
profile = "--profile" in sys.argv
n = int(sys.argv[sys.argv.index("--n") + 1]) if "--n" in sys.argv else 4096
REF = int(sys.argv[sys.argv.index("--ref") + 1]) if "--ref" in sys.argv else 0

dev = torch.device("cuda")
x = torch.randn(n, n, device=dev)
w = torch.randn(n, n, device=dev)
y = torch.empty(n, n, device=dev)
s = torch.cuda.current_stream()
SYNCS = ["device", "stream", "event"]

def one(i, rec, warm=False):
    if otelctx is not None:
        otelctx.otelctx_set(TRACE_ID, span_of(i, warm))
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    c0 = time.thread_time_ns()
    l0 = time.perf_counter_ns()
    start.record()
    for _ in range(K):
        x.add_(1e-6)
    torch.mm(x, w, out=y)
    end.record()
    kind = SYNCS[i % 3]
    t0 = time.perf_counter_ns()
    c1 = time.thread_time_ns()
    if kind == "device":
        torch.cuda.synchronize()
    elif kind == "stream":
        s.synchronize()
    else:
        end.synchronize()
    t1 = time.perf_counter_ns()
    if phases is not None and not warm:
        phases[0].append(t0 - l0)
        phases[1].append(t1 - t0)
        phases[2].append(c1 - c0)
        if REF:
            acc = 0
            r0 = time.perf_counter_ns()
            for v in range(REF):
                acc += v
            phases[3].append(time.perf_counter_ns() - r0)
    if rec is not None:
        rec.append({"i": i, "sync": kind, "host_sync_ns": t1 - t0, "gpu_batch_ms": start.elapsed_time(end),
                    "t0_mono_ns": t0, "t1_mono_ns": t1,
                    "span_id": span_of(i, warm).hex() if otelctx is not None else None})

phases = None  # launch_ns, sync_ns, launch_cpu_ns of the measured iterations
for i in range(9):  # warm-up: cuBLAS handles, kernels loaded, caching allocator filled
    one(i, None, warm=True)
torch.cuda.synchronize()
if "--pin" in sys.argv:
    os.sched_setaffinity(0, {int(sys.argv[sys.argv.index("--pin") + 1])})
phases = ([], [], [], [])

def schedstat():
    """The main thread's CPU ns, run-queue wait ns and timeslices (/proc/thread-self/schedstat)."""
    with open("/proc/thread-self/schedstat") as f:
        return [int(v) for v in f.read().split()]

def cpu_marks():
    import resource
    th, pr = resource.getrusage(resource.RUSAGE_THREAD), resource.getrusage(resource.RUSAGE_SELF)
    return (time.thread_time_ns(), pr.ru_utime + pr.ru_stime, th.ru_nivcsw, schedstat())

res = {"pid": os.getpid(), "iters": iters, "k": K, "n": n, "torch": torch.__version__, "cuda": torch.version.cuda,
       "trace_id": TRACE_ID.hex() if otelctx is not None else None}
if profile:
    from torch.profiler import profile as prof, ProfilerActivity
    with prof(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        m0 = cpu_marks()
        t0 = time.perf_counter_ns()
        for i in range(iters):
            one(i, None)
        torch.cuda.synchronize()
        wall = time.perf_counter_ns() - t0
        m1 = cpu_marks()
    kernels, runtime = {}, {}
    c0 = time.perf_counter_ns()
    try:
        # The profiler's raw Kineto events: p.events() builds a Python event tree over
        # them first (about 30 s for 100 k launches on the H200), which only costs time.
        evs = [(e.name(), e.device_type()) for e in p.profiler.kineto_results.events()]
        res["profiler_count_path"] = "kineto_results"
    except Exception as err:  # another torch: the event tree it is
        res["profiler_count_error"] = repr(err)
        evs = [(e.name, e.device_type) for e in p.events()]
        res["profiler_count_path"] = "events"
    for name, dt in evs:
        if dt == torch.autograd.DeviceType.CUDA:
            kernels[name] = kernels.get(name, 0) + 1
        elif name.startswith("cuda") or name.startswith("cu"):
            runtime[name] = runtime.get(name, 0) + 1
    res["profiler_count_s"] = (time.perf_counter_ns() - c0) / 1e9
    res.update({"measure_wall_ns": wall, "profiler_kernels": kernels, "profiler_kernel_total": sum(kernels.values()),
                "profiler_runtime_calls": runtime})
else:
    rec = []
    m0 = cpu_marks()
    t0 = time.perf_counter_ns()
    for i in range(iters):
        one(i, rec)
    wall = time.perf_counter_ns() - t0
    m1 = cpu_marks()
    res.update({"measure_wall_ns": wall, "syncs": rec})
res.update({"launch_ns": phases[0], "sync_ns": phases[1], "launch_cpu_ns": phases[2], "ref_ns": phases[3], "ref": REF,
            "loop_thread_cpu_ns": m1[0] - m0[0], "loop_process_cpu_ns": round((m1[1] - m0[1]) * 1e9),
            "loop_nivcsw": m1[2] - m0[2], "loop_run_delay_ns": m1[3][1] - m0[3][1],
            "loadavg": open("/proc/loadavg").read().split()[:3],
            "cpu": os.sched_getaffinity(0) and sorted(os.sched_getaffinity(0))})
json.dump(res, open(out, "w"))
print(f"workload: pid {os.getpid()} done", file=sys.stderr)
