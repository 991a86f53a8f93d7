#!/bin/bash
# Fourth device pass of issue 25: torch.profiler while the timeline is on, now that the
# library uses the process's own libcupti (PyTorch's) and steps aside through its GOT
# wrappers (cuptilib/peer.c); the dormant library's cost on the launch-bound loop.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/run4.log) 2>&1
D=internal/cupti/testdata/device
H=internal/cuda/testdata/h200
W=/tmp/run4; rm -rf $W; mkdir -p $W
LIB=$PWD/build/lib/libghostdriver_cupti.so
LIBCUDA=/usr/local/nvidia/lib64/libcuda.so.1
CUDART=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13
export GHOSTDRIVER_CUPTI_LOG=1
GD="timeout 150 bin/ghostdriver cuda --library $LIBCUDA --library $CUDART"
ls /opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/ | grep -i cupti
python3 $D/timeline_workload.py transformer $W/transformer.prof.json --iters 30 --profile 2>&1 | tail -1
$GD --timeline on --inject $LIB --output $W/coexist.spans.json -- python3 $D/timeline_workload.py coexist $W/coexist.json --iters 30 --wait-on >$W/coexist.summary 2>$W/coexist.err
echo "coexist rc=$?"; grep -E "GPU timeline|^submissions" $W/coexist.summary | cut -c1-300; grep "ghostdriver-cupti" $W/coexist.err | head
python3 $D/timeline_check.py $W/coexist.spans.json $W/coexist.json $W/transformer.prof.json
python3 -c "import json; print('profiler kernels while the timeline was on:', json.load(open('$W/coexist.json')).get('profiler_kernel_total'), 'iters', json.load(open('$W/coexist.json')).get('profiler_iters'))"
echo "== dormant cost: 5 interleaved rounds b/i"
A="--n 256 --k 50 --iters 1500 --pin 3"
WL="taskset -c 2-5 python3 $H/workload.py"
for r in 1 2 3 4 5; do
  for c in b i; do
    case $c in
    b) $WL $W/cost_b_$r.json $A ;;
    i) CUDA_INJECTION64_PATH=$LIB $WL $W/cost_i_$r.json $A ;;
    esac >/dev/null 2>&1
    python3 -c "import json; j=json.load(open('$W/cost_${c}_$r.json')); print('$r', '$c', j['measure_wall_ns']/1e6, 'ms')"
  done
done | tee $W/cost.txt
python3 - $W <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(dict)
for l in open(sys.argv[1] + "/cost.txt"):
    r, c, ms, _ = l.split(); rows[r][c] = float(ms)
rat = [rows[r]["i"] / rows[r]["b"] for r in rows]
print("dormant paired ratio to bare: median %.3f" % statistics.median(rat), ["%.3f" % x for x in rat])
PY
tar -C /tmp -czf $OUT/run4-raw.tar.gz run4
