# Device-side: torch.profiler around a few steps (the peer the injection library must yield to).
import torch, sys
x = torch.randn(1024, 1024, device="cuda")
for _ in range(3): y = x @ x
torch.cuda.synchronize()
from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
    for _ in range(5): y = x @ x
    torch.cuda.synchronize()
ev = [e for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA]
print("profiler_cuda_events", len(ev))
for _ in range(3): y = x @ x
torch.cuda.synchronize()
print("done")
