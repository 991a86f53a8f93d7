#!/bin/bash
# Sixth device pass of issue 25 (after run5 found the channel's ring overflowing: the
# library now writes only the launch calls' API records): the utilization table again and
# the cost rounds. Fifth pass's header, kept: torch.profiler while the timeline is on (the library steps
# aside through its GOT wrappers, cuptilib/peer.c); the utilization paradox — kernel and
# SM-weighted coverage against nvidia-smi's utilization.gpu in the same run (util_check.py);
# cost on the launch-bound loop, 5 interleaved rounds: bare, library dormant, collector
# (uprobes), collector + timeline (all API records), collector on the runtime layer only +
# timeline, collector + timeline with launch-only API records.
PART=run6
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/run6.log) 2>&1
export TZ=UTC
D=internal/cupti/testdata/device
H=internal/cuda/testdata/h200
W=/tmp/run6; rm -rf $W; mkdir -p $W
LIB=$PWD/build/lib/libghostdriver_cupti.so
LIBCUDA=/usr/local/nvidia/lib64/libcuda.so.1
TL=/opt/torch/.venv/lib/python3.12/site-packages
CUDART=$TL/nvidia/cu13/lib/libcudart.so.13
export GHOSTDRIVER_CUPTI_LOG=1
GD="timeout 150 bin/ghostdriver cuda --library $LIBCUDA --library $CUDART"
date; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "== utilization: coverage against nvidia-smi"
for m in addloop:6000 transformer:600; do
  mode=${m%%:*}; it=${m##*:}
  nvidia-smi --query-gpu=timestamp,index,utilization.gpu --format=csv,noheader,nounits -lms 100 >$W/$mode.smi.csv &
  SMI=$!
  $GD --timeline on --inject $LIB --output $W/$mode.spans.json --metrics-output $W/$mode.metrics.json -- python3 $D/timeline_workload.py $mode $W/$mode.json --iters $it --wait-on >$W/$mode.summary 2>$W/$mode.err
  echo "$mode rc=$?"; kill $SMI; wait $SMI 2>/dev/null
  python3 $D/util_check.py $W/$mode.spans.json $W/$mode.json $W/$mode.smi.csv
done
for m in addloop transformer; do grep -E "GPU timeline" $W/$m.summary | cut -c1-400; done
cp $W/*.smi.csv $W/addloop.json $W/transformer.json $OUT/ 2>/dev/null
for m in addloop transformer; do bin/ghostdriver report --nvidia-smi $W/$m.smi.csv --nvidia-smi-tz UTC --output $OUT/$m.report.html $W/$m.spans.json | tail -3; done
echo "== cost: launch-bound loop, 5 interleaved rounds"
A="--n 256 --k 50 --iters 1500 --pin 3"
WL="taskset -c 2-5 python3 $H/workload.py"
GDC="taskset -c 8-11 timeout 120 bin/ghostdriver cuda --library $LIBCUDA --library $CUDART --output /dev/null --quiet"
for r in 1 2 3 4 5; do
  for c in b i G T R; do
    case $c in
    b) $WL $W/cost_b_$r.json $A ;;
    i) CUDA_INJECTION64_PATH=$LIB $WL $W/cost_i_$r.json $A ;;
    G) $GDC -- $WL $W/cost_G_$r.json $A ;;
    T) $GDC --timeline on --inject $LIB -- $WL $W/cost_T_$r.json $A ;;
    R) $GDC --layers runtime --timeline on --inject $LIB -- $WL $W/cost_R_$r.json $A ;;
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
for c in "iGTR":
    rat = [rows[r][c] / rows[r]["b"] for r in rows if c in rows[r] and "b" in rows[r]]
    print(c, "paired ratio to bare: median %.3f" % statistics.median(rat), ["%.3f" % x for x in rat])
PY
tar -C /tmp -czf $OUT/run6-raw.tar.gz --exclude='*.spans.json' run6
date
