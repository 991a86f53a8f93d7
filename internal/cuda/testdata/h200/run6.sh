#!/bin/bash
# Sixth H200 pass (issue 15): the CUDA hook-cost levers against torch.profiler (CUPTI) on
# the run4 launch-bound loop (n=256, K=50, 3000 iterations). Three alternated rounds of:
#   b  no tracer
#   p  torch.profiler (CPU + CUDA activities) around the measured loop: the peer
#   t  cudatrace, both layers, entry + return probes (today's default)
#   d  cudatrace -layers driver
#   e  cudatrace -layers driver -launches-at-entry
#   a  cudatrace -launches-at-entry (both layers: runtime pair, driver launch at entry)
#   r  cudatrace -layers runtime -launches-at-entry (direct driver launches are not seen)
#   m  cudatrace -uprobe-multi (both layers, entry + return, uprobe_multi links)
#   x  cudatrace -layers driver -launches-at-entry -uprobe-multi
# cudatrace is the CUDA source alone (uprobes + ring reader + assembler), where the levers
# live. Prints the measured loop's median wall time per condition, the ratio to no tracer,
# and the counts that must stay exact: top-level and nested launches, lost records, stale
# frames, returns without a frame (the profiler's kernel count covers the measured loop
# only; the tracer's counts cover the whole process, warm-up included, so compare the
# tracer rows with each other). About 4-6 minutes (ROUNDS=2 for less).
# CONDS picks the conditions by letter (default all), NAME the run's name (default run6:
# /tmp/run6, $OUT/run6.log, $OUT/levers6.txt); run7.sh is run6.sh with fewer conditions.
# Needs bin/cudatrace: CGO_ENABLED=0 go build -o bin/cudatrace ./bench/cudatrace
H=internal/cuda/testdata/h200
CONDS=${CONDS:-b p t d e a r m x}
NAME=${NAME:-run6}
want() { case " $CONDS " in *" $1 "*) return 0 ;; esac; return 1; }
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
W=/tmp/$NAME; rm -rf $W; mkdir -p $W
exec > >(tee $OUT/$NAME.log) 2>&1
LIBCUDA=/usr/local/nvidia/lib64/libcuda.so.1
CUDART=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13
T="bin/cudatrace -lib $LIBCUDA -lib $CUDART"
A="--n 256 --k 50 --iters 3000"
TO="timeout 90"
set -x
ROUNDS=${ROUNDS:-3}
for r in $(seq 1 $ROUNDS); do
  want b && $TO python3 $H/workload.py $W/b_$r.json $A
  want p && $TO python3 $H/workload.py $W/p_$r.json $A --profile
  want t && $TO $T -out $W/t_$r.trace.json -- python3 $H/workload.py $W/t_$r.json $A
  want d && $TO $T -layers driver -out $W/d_$r.trace.json -- python3 $H/workload.py $W/d_$r.json $A
  want e && $TO $T -layers driver -launches-at-entry -out $W/e_$r.trace.json -- python3 $H/workload.py $W/e_$r.json $A
  want a && $TO $T -launches-at-entry -out $W/a_$r.trace.json -- python3 $H/workload.py $W/a_$r.json $A
  want r && $TO $T -layers runtime -launches-at-entry -out $W/r_$r.trace.json -- python3 $H/workload.py $W/r_$r.json $A
  want m && $TO $T -uprobe-multi -out $W/m_$r.trace.json -- python3 $H/workload.py $W/m_$r.json $A
  want x && $TO $T -layers driver -launches-at-entry -uprobe-multi -out $W/x_$r.trace.json -- python3 $H/workload.py $W/x_$r.json $A
done
set +x
python3 - $W <<'PY' | tee $OUT/levers${NAME#run}.txt
import json, os, statistics, sys
w = sys.argv[1]
rows = (("b", "no tracer"), ("p", "torch.profiler (CUPTI), the peer"),
        ("t", "cudatrace both layers, entry+return"), ("d", "cudatrace driver only"),
        ("e", "cudatrace driver only, launches at entry"), ("a", "cudatrace both, driver launch at entry"),
        ("r", "cudatrace runtime only, launches at entry"), ("m", "cudatrace both layers, uprobe_multi"),
        ("x", "cudatrace driver, at entry, uprobe_multi"))
def load(p):
    return json.load(open(p)) if os.path.exists(p) else None
base = None
print(f"{'condition':44} {'runs (ms)':28} {'median':>8} {'x none':>7}  counts")
for tag, name in rows:
    ws, counts = [], ""
    for r in range(1, 10):
        j = load(f"{w}/{tag}_{r}.json")
        if j and "measure_wall_ns" in j:
            ws.append(j["measure_wall_ns"] / 1e6)
        t = load(f"{w}/{tag}_{r}.trace.json")
        if t:
            st = t["stats"]
            counts = (f"launches top {t['top_level_counts']['launch']} nested {t['nested_counts']['launch']}, "
                      f"syncs {t['top_level_counts']['sync']}, lost {st['Lost']}, stale {st['StaleFrames']}, "
                      f"no_frame {st.get('ReturnsWithoutFrame', '?')}, entry_points {st['EntryPointHooks']}")
            for e in t.get("report") or []:
                if e["stage"] == "uprobe_multi" and e["status"] != "attached":
                    counts += f"; uprobe_multi refused ({e['reason']}): classic uprobes"
        elif j and "profiler_kernel_total" in j:
            counts = f"profiler kernels {j['profiler_kernel_total']} (measured loop only)"
    if not ws:
        print(f"{name:44} no run finished"); continue
    m = statistics.median(ws)
    if tag == "b":
        base = m
    print(f"{name:44} {str([round(x, 1) for x in ws]):28} {m:8.1f} {m / base:7.3f}  {counts}")
PY
