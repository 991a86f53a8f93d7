"""CUDA graph workload (VALIDATION.md, H200): K in-place adds and a matmul captured once into a
CUDA graph, then N replays, each followed by torch.cuda.synchronize(). Prints what it did, so
the cudaGraphLaunch spans can be counted against it.

  graph.py [--n N] [--k K] [--size S]
"""
import json, os, sys
import torch

N = int(sys.argv[sys.argv.index("--n") + 1]) if "--n" in sys.argv else 200
K = int(sys.argv[sys.argv.index("--k") + 1]) if "--k" in sys.argv else 20
S = int(sys.argv[sys.argv.index("--size") + 1]) if "--size" in sys.argv else 1024

x = torch.randn(S, S, device="cuda")
w = torch.randn(S, S, device="cuda")
y = torch.empty(S, S, device="cuda")
side = torch.cuda.Stream()
side.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(side):  # warm-up on a side stream, as torch's docs require before capture
    for _ in range(3):
        x.add_(1e-6)
        torch.mm(x, w, out=y)
torch.cuda.current_stream().wait_stream(side)
torch.cuda.synchronize()
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    for _ in range(K):
        x.add_(1e-6)
    torch.mm(x, w, out=y)
torch.cuda.synchronize()
for _ in range(N):
    g.replay()
    torch.cuda.synchronize()
print(json.dumps({"pid": os.getpid(), "replays": N, "captured_kernels_per_graph": K + 1}), file=sys.stderr)
