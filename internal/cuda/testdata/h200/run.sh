#!/bin/bash
# The NVIDIA H200 validation (VALIDATION.md). Run from the repository root on the device
# machine with the static bin/cudatrace; results go to $OUT.
H=internal/cuda/testdata/h200
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/run.log) 2>&1
set -x
uname -r; nvidia-smi --query-gpu=name,driver_version,mig.mode.current --format=csv,noheader
grep -i nvidia /proc/devices
python3 -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())'
LIBCUDA=$(ldconfig -p | awk '/libcuda.so.1 /{print $NF; exit}'); [ -e "$LIBCUDA" ] || LIBCUDA=/usr/local/nvidia/lib64/libcuda.so.1
CUDART=$(python3 -c 'import glob,os,torch; print(" ".join(glob.glob(os.path.join(os.path.dirname(torch.__file__),"..","nvidia","cuda_runtime","lib","libcudart.so*"))))')
echo "libcuda=$LIBCUDA cudart=$CUDART"
LIBS="-lib $LIBCUDA"; for f in $CUDART; do LIBS="$LIBS -lib $f"; done
T="bin/cudatrace $LIBS"
# 1. independent launch count (CUPTI), no tracer
python3 $H/workload.py $OUT/prof.json --profile
# 2. GPU-bound: traced, then baseline
$T -out $OUT/trace_gpu.json -- python3 $H/workload.py $OUT/wl_gpu_traced.json
python3 $H/workload.py $OUT/wl_gpu_base.json
python3 $H/compare.py $OUT/trace_gpu.json $OUT/wl_gpu_traced.json $OUT/prof.json > $OUT/compare_gpu.json; cat $OUT/compare_gpu.json
# 3. launch-bound (n=256, K=50): baseline / traced / traced without entry points, alternated
for r in 1 2 3; do
  python3 $H/workload.py $OUT/wl_small_base_$r.json --n 256 --k 50
  $T -out $OUT/trace_small_$r.json -- python3 $H/workload.py $OUT/wl_small_traced_$r.json --n 256 --k 50
  $T -no-entry-points -out $OUT/trace_small_noep_$r.json -- python3 $H/workload.py $OUT/wl_small_noep_$r.json --n 256 --k 50
done
python3 $H/workload.py $OUT/prof_small.json --profile --n 256 --k 50
python3 $H/compare.py $OUT/trace_small_1.json $OUT/wl_small_traced_1.json $OUT/prof_small.json > $OUT/compare_small.json; cat $OUT/compare_small.json
python3 - $OUT <<'PY'
import json, sys, statistics
o = sys.argv[1]
def wall(p): return json.load(open(p))["measure_wall_ns"] / 1e6
for tag in ("base", "traced", "noep"):
    ws = [wall(f"{o}/wl_small_{tag}_{r}.json") for r in (1, 2, 3)]
    print("small", tag, [round(w, 1) for w in ws], "median ms", round(statistics.median(ws), 1))
print("gpu base/traced ms", round(wall(f"{o}/wl_gpu_base.json"), 1), round(wall(f"{o}/wl_gpu_traced.json"), 1))
PY
# 4. Xid: a kernel storing to address 0 (MMU fault, Xid 31), traced
$T -out $OUT/trace_xid.json -- timeout 60 python3 $H/xid.py || true
python3 -c "import json; t=json.load(open('$OUT/trace_xid.json')); print('xids', t['xids']); print([e for e in t['report'] if e['stage']=='xid'])"
grep -h '"entry_point"' -A3 $OUT/trace_gpu.json | head -20
