"""GPU timeline workloads on the device (issue 25), each writing OUT.json with its own truth.

  timeline_workload.py MODE OUT.json [--iters N] [--profile]
MODE sleep: torch.cuda._sleep kernels of known length between two CUDA events, a stream
  sync each iteration: the events' elapsed time is the independent timing of each kernel.
MODE transformer: a TransformerEncoderLayer forward + backward step, synced each step.
MODE graph: a CUDA graph of 8 small ops replayed, synced each replay.
MODE addloop: the launch-bound loop (50 in-place adds of 256 floats, one device sync per
  iteration): one-block kernels that keep the GPU "busy" while using few of its SMs.
MODE streams: two side streams, each a chain of 4 matmuls per step, then a device sync:
  8 kernels a step, 4 on each stream.
MODE coexist: the transformer step with torch.profiler on for the middle third: whether
  the user's profiler still sees every kernel while the injection library is loaded.
--blocking makes the process's syncs blocking (the thread sleeps in the kernel until the
nvidia interrupt wakes it) instead of CUDA's default spin/yield.
--profile counts the CUDA kernels with torch.profiler over the measured iterations (the
peer's count: kernel counts are compared between a profiled and a traced run).
"""
import json, sys, time
if "--blocking" in sys.argv:
    # A blocking sync (CU_CTX_SCHED_BLOCKING_SYNC = 4) on the primary context, set through
    # the driver before torch creates it: the syncing thread sleeps until the interrupt.
    import ctypes
    cu = ctypes.CDLL("libcuda.so.1")
    assert cu.cuInit(0) == 0 and cu.cuDevicePrimaryCtxSetFlags(0, 4) == 0, "cuDevicePrimaryCtxSetFlags"
import torch

mode, out = sys.argv[1], sys.argv[2]
iters = int(sys.argv[sys.argv.index("--iters") + 1]) if "--iters" in sys.argv else 50
profile = "--profile" in sys.argv
dev = torch.device("cuda")
res = {"mode": mode, "iters": iters, "pid": __import__("os").getpid()}

if mode == "sleep":
    cycles = [200_000, 1_000_000, 4_000_000]
    s = torch.cuda.current_stream()
    torch.cuda._sleep(1000); torch.cuda.synchronize()
    def step(i, rec):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); torch.cuda._sleep(cycles[i % 3]); b.record()
        t0 = time.perf_counter_ns(); s.synchronize(); t1 = time.perf_counter_ns()
        if rec is not None:
            rec.append({"i": i, "cycles": cycles[i % 3], "event_ms": a.elapsed_time(b), "sync_from": t0, "sync_to": t1})
elif mode in ("transformer", "coexist"):
    layer = torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, batch_first=True).to(dev)
    opt = torch.optim.SGD(layer.parameters(), lr=1e-3)
    x = torch.randn(16, 128, 512, device=dev)
    def step(i, rec):
        opt.zero_grad(set_to_none=True)
        y = layer(x); y.float().pow(2).mean().backward(); opt.step()
        torch.cuda.synchronize()
elif mode == "addloop":
    x = torch.zeros(256, device=dev)
    def step(i, rec):
        for _ in range(50): x.add_(1.0)
        torch.cuda.synchronize()
elif mode == "streams":
    a = torch.randn(512, 512, device=dev); b = torch.randn(512, 512, device=dev)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    def step(i, rec):
        for st in (s1, s2):
            with torch.cuda.stream(st):
                c = a
                for _ in range(4): c = c @ b
        torch.cuda.synchronize()
elif mode == "graph":
    a = torch.randn(256, 256, device=dev); b = torch.randn(256, 256, device=dev)
    st = torch.cuda.Stream()
    with torch.cuda.stream(st):
        for _ in range(3): c = a @ b
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        c = a
        for _ in range(8): c = torch.relu(c @ b)
    def step(i, rec):
        g.replay(); torch.cuda.synchronize()
else:
    sys.exit("unknown mode " + mode)

for i in range(5):
    step(i, None)
torch.cuda.synchronize()

def wait_timeline_on(limit_s=8.0):
    """Waits until this process's injection library says it is on (lib_state, offset 28
    of the channel header, cuptilib/channel.h): the measured loop then runs with the
    timeline on from its first step. Returns the seconds waited, or None without a channel."""
    import mmap, os, struct
    for fd in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink("/proc/self/fd/" + fd).startswith("/memfd:ghostdriver-cupti"):
                continue
        except OSError:
            continue
        m = mmap.mmap(int(fd), 4096, mmap.MAP_SHARED, mmap.PROT_READ)
        t0 = time.time()
        while time.time() - t0 < limit_s:
            if struct.unpack_from("<I", m, 28)[0] == 1:
                return time.time() - t0
            time.sleep(0.01)
        return -1.0
    return None

if "--wait-on" in sys.argv:
    res["waited_for_on_s"] = wait_timeline_on()
res["sm_clock_khz"] = torch.cuda.get_device_properties(0).clock_rate
rec = []
res["loop_start_unix_ns"] = time.time_ns()  # the measured loop on the wall clock (nvidia-smi's)
t0 = time.perf_counter_ns()
if profile:
    from torch.profiler import profile as prof, ProfilerActivity
    with prof(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        for i in range(iters): step(i, rec)
        torch.cuda.synchronize()
    evs = [(e.name(), e.device_type()) for e in p.profiler.kineto_results.events()]
    k = {}
    for n, d in evs:
        if d == torch.autograd.DeviceType.CUDA:
            k[n] = k.get(n, 0) + 1
    res["profiler_kernels"] = k; res["profiler_kernel_total"] = sum(k.values())
elif mode == "coexist":
    from torch.profiler import profile as prof, ProfilerActivity
    third = iters // 3
    for i in range(third): step(i, rec)
    with prof(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        for i in range(third, 2 * third): step(i, rec)
        torch.cuda.synchronize()
    evs = [(e.name(), e.device_type()) for e in p.profiler.kineto_results.events()]
    res["profiler_kernel_total"] = sum(1 for n, d in evs if d == torch.autograd.DeviceType.CUDA)
    res["profiler_iters"] = third
    for i in range(2 * third, iters): step(i, rec)
else:
    for i in range(iters): step(i, rec)
torch.cuda.synchronize()
res["wall_ns"] = time.perf_counter_ns() - t0
res["loop_end_unix_ns"] = time.time_ns()
res["records"] = rec
json.dump(res, open(out, "w"))
print(mode, "done", res.get("profiler_kernel_total", ""), file=sys.stderr)
