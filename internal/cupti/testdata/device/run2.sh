#!/bin/bash
# Second device pass of issue 25: the GPU timeline end to end on real CUDA (PyTorch):
# the injection library loaded through CUDA_INJECTION64_PATH by `ghostdriver cuda
# --inject`, the collector's channel reader and fuser, the spans checked against each
# workload's own truth (timeline_check.py), torch.profiler beside it, a duty cycle, and a
# first cost round on the launch-bound loop. Needs bin/ghostdriver and
# build/lib/libghostdriver_cupti.so carried (make cli cupti-lib).
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/run2.log) 2>&1
D=internal/cupti/testdata/device
H=internal/cuda/testdata/h200
W=/tmp/run2; rm -rf $W; mkdir -p $W
LIB=$PWD/build/lib/libghostdriver_cupti.so
LIBCUDA=/usr/local/nvidia/lib64/libcuda.so.1
CUDART=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13
export GHOSTDRIVER_CUPTI_LIBRARY=/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13
export GHOSTDRIVER_CUPTI_LOG=1
GD="timeout 150 bin/ghostdriver cuda --library $LIBCUDA --library $CUDART"
traced() { # traced NAME MODE ITERS [ghostdriver flags...]
  local name=$1 mode=$2 iters=$3; shift 3
  $GD --timeline on --inject $LIB "$@" --output $W/$name.spans.json -- python3 $D/timeline_workload.py $mode $W/$name.json --iters $iters >$W/$name.summary 2>$W/$name.err
  echo "== $name rc=$?"; grep -E "GPU timeline|submissions:|ghostdriver-cupti" $W/$name.summary $W/$name.err | cut -c1-400 | head -20
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
traced sleep sleep 60
python3 $D/timeline_check.py $W/sleep.spans.json $W/sleep.json | tee $W/sleep.check
for m in transformer graph; do
  python3 $D/timeline_workload.py $m $W/$m.prof.json --iters 20 --profile 2>&1 | tail -1
  traced $m $m 20
  python3 $D/timeline_check.py $W/$m.spans.json $W/$m.json $W/$m.prof.json | tee $W/$m.check
done
traced coexist coexist 30
python3 $D/timeline_check.py $W/coexist.spans.json $W/coexist.json $W/transformer.prof.json | tee $W/coexist.check
echo "== duty cycle: 1 s on every 3 s, 400 transformer steps"
$GD --timeline duty --timeline-on-for 1s --timeline-every 3s --inject $LIB --output $W/duty.spans.json -- python3 $D/timeline_workload.py transformer $W/duty.json --iters 400 >$W/duty.summary 2>$W/duty.err
echo "duty rc=$?"; grep -E "GPU timeline|submissions:" $W/duty.summary | cut -c1-400; grep -c "state" $W/duty.err; grep "state" $W/duty.err | head -8
python3 $D/timeline_check.py $W/duty.spans.json $W/duty.json | tee $W/duty.check
echo "== cost: launch-bound loop (256x256, 50 adds + 1 mm, sync each; 1500 iters), 3 interleaved rounds"
A="--n 256 --k 50 --iters 1500 --pin 3"
WL="taskset -c 2-5 python3 $H/workload.py"
GDC="taskset -c 8-11 timeout 120 bin/ghostdriver cuda --library $LIBCUDA --library $CUDART --output /dev/null --quiet"
for r in 1 2 3; do
  for c in b i G T; do
    case $c in
    b) $WL $W/cost_b_$r.json $A ;;
    i) CUDA_INJECTION64_PATH=$LIB $WL $W/cost_i_$r.json $A 2>/dev/null ;;
    G) $GDC -- $WL $W/cost_G_$r.json $A ;;
    T) $GDC --timeline on --inject $LIB -- $WL $W/cost_T_$r.json $A 2>/dev/null ;;
    esac
    python3 -c "import json,sys; j=json.load(open('$W/cost_${c}_$r.json')); print('$r', '$c', j['measure_wall_ns']/1e6, 'ms')"
  done
done | tee $W/cost.txt
python3 - $W <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(dict)
for l in open(sys.argv[1] + "/cost.txt"):
    r, c, ms, _ = l.split(); rows[r][c] = float(ms)
for c in "iGT":
    rat = [rows[r][c] / rows[r]["b"] for r in rows if c in rows[r] and "b" in rows[r]]
    print(c, "paired ratio to bare: median %.3f" % statistics.median(rat), ["%.3f" % x for x in rat])
PY
tar -C /tmp -czf $OUT/run2-raw.tar.gz run2
ls -la $OUT
