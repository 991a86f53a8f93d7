#!/bin/bash
# Second H200 pass: event-record fix re-check and a longer overhead measurement.
H=internal/cuda/testdata/h200
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/run2.log) 2>&1
set -x
T="bin/cudatrace -lib /usr/local/nvidia/lib64/libcuda.so.1 -lib /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13"
$T -out $OUT/trace_gpu.json -- python3 $H/workload.py $OUT/wl_gpu_traced.json
python3 $H/workload.py $OUT/prof.json --profile
python3 $H/compare.py $OUT/trace_gpu.json $OUT/wl_gpu_traced.json $OUT/prof.json > $OUT/compare_gpu.json; cat $OUT/compare_gpu.json | head -22
A="--n 256 --k 50 --iters 3000"
for r in 1 2 3 4; do
  python3 $H/workload.py $OUT/b_$r.json $A
  $T -out $OUT/t_$r.json -- python3 $H/workload.py $OUT/w_$r.json $A
  $T -no-entry-points -out $OUT/tn_$r.json -- python3 $H/workload.py $OUT/n_$r.json $A
done
python3 - $OUT <<'PY'
import json, sys, statistics
o = sys.argv[1]
def wall(p): return json.load(open(p))["measure_wall_ns"] / 1e6
for tag in ("b", "w", "n"):
    ws = [wall(f"{o}/{tag}_{r}.json") for r in (1, 2, 3, 4)]
    print(tag, [round(w, 1) for w in ws], "median ms", round(statistics.median(ws), 1))
t = json.load(open(f"{o}/t_1.json"))
print("launches", t["top_level_counts"], t["nested_counts"], "lost", t["stats"]["Lost"], "open_ms", t["open_ns"] / 1e6)
PY
rm -f $OUT/t_*.json $OUT/tn_*.json
