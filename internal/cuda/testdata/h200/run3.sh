#!/bin/bash
# Third H200 pass: CUDA spans, metrics and application-context linking through the final CLI
# (`ghostdriver cuda`) with the PyTorch workload of run2, the Xid kernel, and the overhead of
# the whole CLI (spans rendered and written) on the launch-bound workload.
# Needs, built on the developer machine (x86-64) and carried:
#   CGO_ENABLED=0 go build -o bin/ghostdriver-cuda ./cmd/ghostdriver
#   gcc -O2 -fPIC -shared -o bin/libotelctx.so internal/cuda/testdata/h200/otelctx.c
H=internal/cuda/testdata/h200
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
W=/tmp/run3; mkdir -p $W
exec > >(tee $OUT/run3.log) 2>&1
GD=bin/ghostdriver-cuda
LIBS="--library /usr/local/nvidia/lib64/libcuda.so.1 --library /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13"
CTX=$PWD/bin/libotelctx.so
set -x
uname -r; nvidia-smi --query-gpu=name,driver_version,mig.mode.current --format=csv,noheader
# 1. GPU-bound workload (n=4096, K=20, 300 iterations) publishing an OTEP 4947 span per iteration
$GD cuda $LIBS --output $W/spans.json --metrics-output $W/metrics.json -- python3 $H/workload.py $OUT/wl.json --ctx $CTX
python3 $H/spans_check.py $W/spans.json $W/metrics.json --workload $OUT/wl.json > $OUT/check.json; head -c 9000 $OUT/check.json
# 2. the independent launch count (torch.profiler / CUPTI), no tracer
python3 $H/workload.py $W/prof.json --profile --ctx $CTX
python3 -c "import json,sys; p=json.load(open(sys.argv[1])); print('profiler kernels', p['profiler_kernel_total'], p['profiler_kernels'])" $W/prof.json
# 3. no thread context: every submission falls back to the process's TRACEPARENT
TPS=00f067aa0ba902b7
$GD cuda $LIBS --output $W/tp_spans.json -- env TRACEPARENT=00-0af7651916cd43dd8448eb211c80319c-$TPS-01 OTEL_SERVICE_NAME=trainer python3 $H/workload.py $W/tp_wl.json --iters 60
python3 $H/spans_check.py $W/tp_spans.json --traceparent $TPS > $OUT/tp_check.json; head -c 4000 $OUT/tp_check.json
# 4. overhead, launch-bound (n=256, K=50, 3000 iterations, a span published per iteration), alternated:
#    none / ghostdriver cuda (spans written); the first traced run's linking is checked too
A="--n 256 --k 50 --iters 3000"
for r in 1 2 3 4; do
  python3 $H/workload.py $W/b_$r.json $A --ctx $CTX
  $GD cuda $LIBS --output $W/g_spans.json -- python3 $H/workload.py $W/g_$r.json $A --ctx $CTX
  [ $r = 1 ] && python3 $H/spans_check.py $W/g_spans.json --workload $W/g_1.json > $OUT/lb_check.json
  rm -f $W/g_spans.json
done
python3 - $W <<'PY' | tee $OUT/overhead.txt
import json, sys, statistics
w = sys.argv[1]
def wall(p): return json.load(open(p))["measure_wall_ns"] / 1e6
for tag, name in (("b", "no tracer"), ("g", "ghostdriver cuda")):
    ws = [wall(f"{w}/{tag}_{r}.json") for r in (1, 2, 3, 4)]
    print(name, [round(x, 1) for x in ws], "median ms", round(statistics.median(ws), 1))
PY
# 5. Xid 31 through the CLI
$GD cuda $LIBS --output $W/xid_spans.json --metrics-output $W/xid_metrics.json -- python3 $H/xid.py
python3 $H/spans_check.py $W/xid_spans.json $W/xid_metrics.json > $OUT/xid_check.json; head -c 5000 $OUT/xid_check.json
gzip -c $W/spans.json > $OUT/spans.json.gz
