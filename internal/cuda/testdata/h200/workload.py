"""PyTorch workload with a known number of launches and syncs (VALIDATION.md, NVIDIA H200).

Each iteration enqueues K in-place adds (one elementwise kernel each) and one matmul on the
current stream between two CUDA events, then synchronises with one of three calls in turn
(torch.cuda.synchronize -> cudaDeviceSynchronize, stream.synchronize ->
cudaStreamSynchronize, event.synchronize -> cudaEventSynchronize), timing the sync call on
the host (perf_counter_ns) and the batch on the GPU (event elapsed time).

  workload.py OUT.json [--iters N] [--k K] [--profile] [--ctx LIBOTELCTX]
--profile counts kernels with torch.profiler (CUPTI): the independent launch count; the
measured loop's wall time under the profiler (measure_wall_ns, the profiler's start and
stop excluded) is the peer's overhead. Warm-up iterations run first and are excluded from every number.
--ctx loads otelctx.c's library and publishes an OTEP 4947 thread context whose span is
new in every iteration (recorded in OUT as span_id): what an instrumented application
does around each step. The library is loaded before torch, so it exists at the
process's first CUDA call, when ghostdriver resolves the process's recipe.
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
    start.record()
    for _ in range(K):
        x.add_(1e-6)
    torch.mm(x, w, out=y)
    end.record()
    kind = SYNCS[i % 3]
    t0 = time.perf_counter_ns()
    if kind == "device":
        torch.cuda.synchronize()
    elif kind == "stream":
        s.synchronize()
    else:
        end.synchronize()
    t1 = time.perf_counter_ns()
    if rec is not None:
        rec.append({"i": i, "sync": kind, "host_sync_ns": t1 - t0, "gpu_batch_ms": start.elapsed_time(end),
                    "t0_mono_ns": t0, "t1_mono_ns": t1,
                    "span_id": span_of(i, warm).hex() if otelctx is not None else None})

for i in range(9):  # warm-up: cuBLAS handles, kernels loaded, caching allocator filled
    one(i, None, warm=True)
torch.cuda.synchronize()

res = {"pid": os.getpid(), "iters": iters, "k": K, "n": n, "torch": torch.__version__, "cuda": torch.version.cuda,
       "trace_id": TRACE_ID.hex() if otelctx is not None else None}
if profile:
    from torch.profiler import profile as prof, ProfilerActivity
    with prof(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        t0 = time.perf_counter_ns()
        for i in range(iters):
            one(i, None)
        torch.cuda.synchronize()
        wall = time.perf_counter_ns() - t0
    kernels, runtime = {}, {}
    for e in p.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            kernels[e.name] = kernels.get(e.name, 0) + 1
        elif e.name.startswith("cuda") or e.name.startswith("cu"):
            runtime[e.name] = runtime.get(e.name, 0) + 1
    res.update({"measure_wall_ns": wall, "profiler_kernels": kernels, "profiler_kernel_total": sum(kernels.values()),
                "profiler_runtime_calls": runtime})
else:
    rec = []
    t0 = time.perf_counter_ns()
    for i in range(iters):
        one(i, rec)
    wall = time.perf_counter_ns() - t0
    res.update({"measure_wall_ns": wall, "syncs": rec})
json.dump(res, open(out, "w"))
print(f"workload: pid {os.getpid()} done", file=sys.stderr)
