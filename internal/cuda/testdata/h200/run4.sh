#!/bin/bash
# Fourth H200 pass: where the overhead of `ghostdriver cuda` on the launch-bound workload
# comes from. Alternated rounds of the run3 launch-bound workload (n=256, K=50, 3000
# iterations, a span published per iteration) under: b no tracer; t cudatrace (the source
# alone: uprobes + ring reader, no assembler, no spans); n `ghostdriver cuda --no-tenant`
# (no process reads, so no recipe and no in-kernel context read; spans written); g
# `ghostdriver cuda` (everything; spans written). Then the GPU-bound workload (n=4096) b/g.
# Needs bin/ghostdriver-cuda, bin/cudatrace (CGO_ENABLED=0 go build) and bin/libotelctx.so.
H=internal/cuda/testdata/h200
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
W=/tmp/run4; mkdir -p $W
exec > >(tee $OUT/run4.log) 2>&1
LIBCUDA=/usr/local/nvidia/lib64/libcuda.so.1
CUDART=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13
LIBS="--library $LIBCUDA --library $CUDART"
CTX=$PWD/bin/libotelctx.so
A="--n 256 --k 50 --iters 3000 --ctx $CTX"
set -x
for r in 1 2 3; do
  python3 $H/workload.py $W/b_$r.json $A
  bin/cudatrace -lib $LIBCUDA -lib $CUDART -out $W/t.json -- python3 $H/workload.py $W/t_$r.json $A
  bin/ghostdriver-cuda cuda --no-tenant $LIBS --output $W/s.json -- python3 $H/workload.py $W/n_$r.json $A; rm -f $W/s.json
  bin/ghostdriver-cuda cuda $LIBS --output $W/s.json -- python3 $H/workload.py $W/g_$r.json $A; rm -f $W/s.json
done
for r in 1 2; do
  python3 $H/workload.py $W/B_$r.json --ctx $CTX
  bin/ghostdriver-cuda cuda $LIBS --output $W/s.json -- python3 $H/workload.py $W/G_$r.json --ctx $CTX; rm -f $W/s.json
done
set +x
python3 - $W <<'PY' | tee $OUT/overhead4.txt
import json, sys, statistics
w = sys.argv[1]
def wall(p): return json.load(open(p))["measure_wall_ns"] / 1e6
base = None
for tag, name, n in (("b", "no tracer", 3), ("t", "cudatrace (source only)", 3), ("n", "ghostdriver cuda --no-tenant", 3),
                     ("g", "ghostdriver cuda", 3), ("B", "GPU-bound: no tracer", 2), ("G", "GPU-bound: ghostdriver cuda", 2)):
    ws = [wall(f"{w}/{tag}_{r}.json") for r in range(1, n + 1)]
    m = statistics.median(ws)
    if tag in "bB":
        base = m
    print(f"{name}: {[round(x, 1) for x in ws]} median {m:.1f} ms ({m / base:.3f}x)")
PY
