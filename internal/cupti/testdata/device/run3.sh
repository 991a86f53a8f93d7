#!/bin/bash
# Third device pass of issue 25: after run2 (no API records with per-callback enabling
# for most PyTorch launches; short processes ended before their channel was found), the
# workloads wait for the timeline (--wait-on), API records come from the whole runtime
# and driver kinds (GHOSTDRIVER_CUPTI_API=all, the default) beside the launch-only mode,
# the sleep kernels are checked against the SM clock and their own CUDA events, and
# torch.profiler runs with the library loaded but dormant, and on.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/run3.log) 2>&1
D=internal/cupti/testdata/device
H=internal/cuda/testdata/h200
W=/tmp/run3; rm -rf $W; mkdir -p $W
LIB=$PWD/build/lib/libghostdriver_cupti.so
LIBCUDA=/usr/local/nvidia/lib64/libcuda.so.1
CUDART=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13
export GHOSTDRIVER_CUPTI_LIBRARY=/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13
GD="timeout 150 bin/ghostdriver cuda --library $LIBCUDA --library $CUDART"
traced() { # traced NAME MODE ITERS TIMELINE [workload flags...]
  local name=$1 mode=$2 iters=$3 tl=$4; shift 4
  $GD --timeline $tl --inject $LIB --output $W/$name.spans.json -- python3 $D/timeline_workload.py $mode $W/$name.json --iters $iters "$@" >$W/$name.summary 2>$W/$name.err
  echo "== $name rc=$?"; grep -E "GPU timeline: (decoded|submissions)|^submissions" $W/$name.summary | cut -c1-300
  python3 $D/timeline_check.py $W/$name.spans.json $W/$name.json $W/$mode.prof.json 2>&1 | tee $W/$name.check
}
for m in transformer graph; do python3 $D/timeline_workload.py $m $W/$m.prof.json --iters 40 --profile 2>&1 | tail -1; done
cp $W/transformer.prof.json $W/coexist.prof.json
traced sleep sleep 60 on --wait-on
traced transformer transformer 40 on --wait-on
GHOSTDRIVER_CUPTI_API=launch traced transformer_launchonly transformer 40 on --wait-on
traced graph graph 40 on --wait-on
echo "== torch.profiler with the library loaded, dormant (timeline off) and on"
traced coexist_dormant coexist 30 off
traced coexist_on coexist 30 on --wait-on
grep -h "profiler_kernel_total" $W/coexist_*.check >/dev/null; python3 -c "import json; [print(n, json.load(open('$W/'+n+'.json')).get('profiler_kernel_total')) for n in ('coexist_dormant','coexist_on')]"
echo "== cost: launch-bound loop, 3 interleaved rounds"
A="--n 256 --k 50 --iters 1500 --pin 3"
WL="taskset -c 2-5 python3 $H/workload.py"
GDC="taskset -c 8-11 timeout 120 bin/ghostdriver cuda --library $LIBCUDA --library $CUDART --output /dev/null --quiet"
for r in 1 2 3; do
  for c in b i G T L; do
    case $c in
    b) $WL $W/cost_b_$r.json $A ;;
    i) CUDA_INJECTION64_PATH=$LIB $WL $W/cost_i_$r.json $A ;;
    G) $GDC -- $WL $W/cost_G_$r.json $A ;;
    T) $GDC --timeline on --inject $LIB -- $WL $W/cost_T_$r.json $A ;;
    L) GHOSTDRIVER_CUPTI_API=launch $GDC --timeline on --inject $LIB -- $WL $W/cost_L_$r.json $A ;;
    esac >/dev/null 2>&1
    python3 -c "import json,sys; j=json.load(open('$W/cost_${c}_$r.json')); print('$r', '$c', j['measure_wall_ns']/1e6, 'ms')"
  done
done | tee $W/cost.txt
python3 - $W <<'PY'
import sys, statistics, collections
rows = collections.defaultdict(dict)
for l in open(sys.argv[1] + "/cost.txt"):
    r, c, ms, _ = l.split(); rows[r][c] = float(ms)
for c in "iGTL":
    rat = [rows[r][c] / rows[r]["b"] for r in rows if c in rows[r] and "b" in rows[r]]
    print(c, "paired ratio to bare: median %.3f" % statistics.median(rat), ["%.3f" % x for x in rat])
PY
tar -C /tmp -czf $OUT/run3-raw.tar.gz run3
