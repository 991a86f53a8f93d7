#!/bin/bash
# Fifth device pass of issue 25: torch.profiler while the timeline is on (the library steps
# aside through its GOT wrappers, cuptilib/peer.c); the utilization paradox — kernel and
# SM-weighted coverage against nvidia-smi's utilization.gpu in the same run (util_check.py);
# (the cost rounds: run6.sh).
# usage: run5.sh func (the cost rounds moved to run6.sh, which ran them after the API filter)
PART=${1:-func}
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/run5-$PART.log) 2>&1
export TZ=UTC
D=internal/cupti/testdata/device
H=internal/cuda/testdata/h200
W=/tmp/run5-$PART; rm -rf $W; mkdir -p $W
LIB=$PWD/build/lib/libghostdriver_cupti.so
LIBCUDA=/usr/local/nvidia/lib64/libcuda.so.1
TL=/opt/torch/.venv/lib/python3.12/site-packages
CUDART=$TL/nvidia/cu13/lib/libcudart.so.13
export GHOSTDRIVER_CUPTI_LOG=1
GD="timeout 150 bin/ghostdriver cuda --library $LIBCUDA --library $CUDART"
date; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
if [ $PART = func ]; then
echo "== how PyTorch reaches CUPTI"
ls $TL/nvidia/cu13/lib/ | grep -i cupti
TC=$(python3 -c "import torch,os;print(os.path.join(os.path.dirname(torch.__file__),'lib'))")
for f in $TC/libtorch_cuda.so $TC/libtorch_cpu.so $TC/libkineto.so; do [ -f $f ] || continue
  echo "$f: NEEDED $(readelf -d $f | grep -o 'libcupti[^]]*' | tr '\n' ' ') JUMP_SLOT/GLOB_DAT cupti relocs: $(readelf -W -r $f | grep -c 'cupti')"
  readelf -W -r $f | grep -E 'cupti(Subscribe|ActivityEnable|Finalize|Unsubscribe)' | awk '{print $3, $5}' | head -8
done
echo "== torch.profiler beside the timeline"
python3 $D/timeline_workload.py transformer $W/transformer.prof.json --iters 30 --profile 2>&1 | tail -1
$GD --timeline on --inject $LIB --output $W/coexist.spans.json -- python3 $D/timeline_workload.py coexist $W/coexist.json --iters 30 --wait-on >$W/coexist.summary 2>$W/coexist.err
echo "coexist rc=$?"; grep -E "GPU timeline|^submissions" $W/coexist.summary | cut -c1-300; grep "ghostdriver-cupti" $W/coexist.err | head
python3 $D/timeline_check.py $W/coexist.spans.json $W/coexist.json $W/transformer.prof.json
python3 -c "import json; j=json.load(open('$W/coexist.json')); print('profiler kernels while the timeline was on:', j.get('profiler_kernel_total'), 'over', j.get('profiler_iters'), 'iterations')"
echo "== utilization: coverage against nvidia-smi"
for m in addloop:6000 transformer:600; do
  mode=${m%%:*}; it=${m##*:}
  nvidia-smi --query-gpu=timestamp,index,utilization.gpu --format=csv,noheader,nounits -lms 100 >$W/$mode.smi.csv &
  SMI=$!
  $GD --timeline on --inject $LIB --output $W/$mode.spans.json --metrics-output $W/$mode.metrics.json -- python3 $D/timeline_workload.py $mode $W/$mode.json --iters $it --wait-on >$W/$mode.summary 2>$W/$mode.err
  echo "$mode rc=$?"; kill $SMI; wait $SMI 2>/dev/null
  python3 $D/util_check.py $W/$mode.spans.json $W/$mode.json $W/$mode.smi.csv
done
cp $W/*.smi.csv $W/addloop.spans.json $W/transformer.spans.json $W/addloop.json $W/transformer.json $OUT/ 2>/dev/null
echo "== two processes at once, two streams, on -> off -> on (duty 1 s every 2 s)"
$GD --timeline on --inject $LIB --output $W/two.spans.json -- bash -c "python3 $D/timeline_workload.py transformer $W/two_a.json --iters 40 --wait-on & python3 $D/timeline_workload.py streams $W/two_b.json --iters 40 --wait-on & wait" >$W/two.summary 2>$W/two.err
echo "two rc=$?"; grep -E "GPU timeline" $W/two.summary | cut -c1-300
python3 $D/timeline_check.py $W/two.spans.json $W/two_a.json $W/transformer.prof.json
python3 $D/timeline_check.py $W/two.spans.json $W/two_b.json
$GD --timeline duty --timeline-on-for 1s --timeline-every 2s --inject $LIB --output $W/duty.spans.json -- python3 $D/timeline_workload.py streams $W/duty.json --iters 4000 >$W/duty.summary 2>$W/duty.err
echo "duty rc=$?"; grep -E "GPU timeline" $W/duty.summary | cut -c1-300; grep -c "ghostdriver-cupti" $W/duty.err; grep "ghostdriver-cupti" $W/duty.err | head -6
python3 $D/timeline_check.py $W/duty.spans.json $W/duty.json
echo "== blocking-sync split: sleep kernels with a blocking sync, and with CUDA's default (spin)"
grep -i nvidia /proc/interrupts | awk '{print $1, $(NF-1), $NF}' | head -4
for b in blocking spin; do
  FL=""; [ $b = blocking ] && FL=--blocking
  $GD --sync-wakeups --timeline on --inject $LIB --output $W/wake_$b.spans.json -- python3 $D/timeline_workload.py sleep $W/wake_$b.json --iters 60 --wait-on $FL >$W/wake_$b.summary 2>$W/wake_$b.err
  echo "wake_$b rc=$?"; grep -E "sync_wakeup|irq_handler|sched_waking" $W/wake_$b.summary $W/wake_$b.err | head -4
  python3 - $W/wake_$b.spans.json <<'PY'
import json, sys, statistics, collections
names = collections.Counter(); slept = collections.Counter(); w2r = []; i2w = []; parts = collections.defaultdict(list)
for line in open(sys.argv[1]):
    for rs in json.loads(line).get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for s in ss.get("spans", []):
                names[s["name"]] += 1
                a = {x["key"]: x["value"] for x in s.get("attributes", [])}
                d = int(s["endTimeUnixNano"]) - int(s["startTimeUnixNano"])
                if s["name"] == "cuda.sync" and "ghostdriver.cuda.sync.slept" in a:
                    slept[a["ghostdriver.cuda.sync.slept"]["boolValue"]] += 1
                    if "ghostdriver.cuda.sync.wakeup_to_return_ns" in a: w2r.append(int(a["ghostdriver.cuda.sync.wakeup_to_return_ns"]["intValue"]))
                    if "ghostdriver.cuda.sync.interrupt_to_wakeup_ns" in a: i2w.append(int(a["ghostdriver.cuda.sync.interrupt_to_wakeup_ns"]["intValue"]))
                if s["name"].startswith("cuda.gpu_completion"): parts[s["name"]].append(d)
med = lambda v: statistics.median(v) if v else None
print(json.dumps({"slept": dict(slept), "wakeup_to_return_ns_p50": med(w2r), "interrupt_to_wakeup_ns_p50": med(i2w),
                  "completion_parts_p50_ns": {k: med(v) for k, v in parts.items()}, "counts": {k: len(v) for k, v in parts.items()}}))
PY
done
echo "== memcpy/memset record layouts (CUPTI 13.0 headers, for the copy frames)"
C=/usr/local/cuda; INC=$C/targets/x86_64-linux/include; CL=$C/targets/x86_64-linux/lib
MC=$(grep -o "} CUpti_ActivityMemcpy[0-9]*;" $INC/cupti_activity.h | tail -1 | tr -d '}; ')
MS=$(grep -o "} CUpti_ActivityMemset[0-9]*;" $INC/cupti_activity.h | tail -1 | tr -d '}; ')
echo "newest: $MC $MS"
{ echo '#include <cupti.h>'; echo '#include <stdio.h>'; echo '#include <stddef.h>'; echo 'int main(){'
  for T in $MC $MS; do
    echo "printf(\"size.$T=%zu\\n\", sizeof($T));"
    awk "/typedef struct PACKED_ALIGNMENT/{buf=\"\";f=1} f{buf=buf\"\\n\"\$0} /} $T;/{print buf; f=0}" $INC/cupti_activity.h \
      | grep -v '^\s*\*\|/\*\*' | grep -oE '^\s+[A-Za-z_0-9 ]+\s+\**([A-Za-z_0-9]+)(\[[0-9]+\])?;' | sed -E 's/.*[ *]([A-Za-z_0-9]+)(\[[0-9]+\])?;/\1/' \
      | while read f; do echo "printf(\"off.$T.$f=%zu\\n\", offsetof($T, $f));"; done
  done; echo 'return 0;}'; } > /tmp/mprobe.c
for T in $MC $MS; do awk "/typedef struct PACKED_ALIGNMENT/{buf=\"\";f=1} f{buf=buf\"\\n\"\$0} /} $T;/{print buf; f=0}" $INC/cupti_activity.h | grep -v '^\s*\*\|/\*\*' | grep -v '^$'; done
gcc -I$INC -I$C/include -o /tmp/mprobe /tmp/mprobe.c && /tmp/mprobe | tee $OUT/memcpy_layout.txt
fi
tar -C /tmp -czf $OUT/run5-$PART-raw.tar.gz --exclude='*.spans.json' run5-$PART
date
