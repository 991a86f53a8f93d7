#!/bin/bash
# First device pass of issue 25: facts the injection library's own ABI declarations rest on.
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
exec > >(tee $OUT/probe1.log) 2>&1
D=internal/cupti/testdata/device
C=/usr/local/cuda
INC=$C/targets/x86_64-linux/include; LIB=$C/targets/x86_64-linux/lib
[ -d $C/extras/CUPTI ] && ls $C/extras/CUPTI
echo "== cupti libs"; ls -la $LIB/libcupti* $C/extras/CUPTI/lib64 2>/dev/null
CUPTI_SO=$(ls $LIB/libcupti.so* 2>/dev/null | head -1); echo "cupti_so=$CUPTI_SO"
echo "== exported cupti functions of interest"
nm -D --defined-only $CUPTI_SO | grep -E 'cuptiActivity(GetStructSize|EnableRuntimeApi|EnableDriverApi|RegisterTimestampCallback|EnableAndDump|SetAttribute|FlushAll|FlushPeriod)|cuptiFinalize|cuptiGetVersion|cuptiSubscribe' 
python3 -c "import torch;print('torch', torch.__version__, torch.cuda.get_device_properties(0))"
nvidia-smi --query-gpu=name,driver_version,utilization.gpu --format=csv
echo "== header facts"
grep -n "cuptiActivityGetStructSize\|cuptiActivityEnableRuntimeApi\|cuptiActivityEnableDriverApi\|cuptiActivityRegisterTimestampCallback" $INC/cupti_activity.h | head
grep -n -B2 -A12 "^typedef struct PACKED_ALIGNMENT {" $INC/cupti_activity.h | grep -n "CUpti_ActivityAPI;" 
awk '/typedef struct PACKED_ALIGNMENT/{buf="";f=1} f{buf=buf"\n"$0} /} CUpti_ActivityAPI;/{print buf; f=0}' $INC/cupti_activity.h | grep -v '^\s*\*\|/\*\*' | head -40
awk '/typedef struct PACKED_ALIGNMENT/{buf="";f=1} f{buf=buf"\n"$0} /} CUpti_ActivityKernel10;/{print buf; f=0}' $INC/cupti_activity.h | grep -v '^\s*\*\|/\*\*' | grep -v '^$' | head -120
grep -n "CUPTI_ACTIVITY_KIND_" $INC/cupti_activity.h | head -5
echo "== build and run abi_probe"
$C/bin/nvcc -o /tmp/abi_probe $D/abi_probe.cu -I$INC -L$LIB -lcupti -Xlinker -rpath=$LIB && /tmp/abi_probe
echo "== cuda sleep and sm count"
python3 - <<'PY'
import torch, time
p = torch.cuda.get_device_properties(0); print("sms", p.multi_processor_count, "clock", getattr(p,'clock_rate',None))
torch.cuda._sleep(1000); torch.cuda.synchronize()
s=torch.cuda.Event(enable_timing=True); e=torch.cuda.Event(enable_timing=True)
for cyc in (1_000_000, 10_000_000):
  s.record(); torch.cuda._sleep(cyc); e.record(); torch.cuda.synchronize(); print("sleep", cyc, "ms", s.elapsed_time(e))
PY
echo "== kineto env/teardown facts"
python3 -c "import torch, os; print([k for k in os.environ if 'KINETO' in k or 'TEARDOWN' in k])"
echo "== which CUPTI calls torch.profiler makes"
gcc -shared -fPIC -O1 -o /tmp/shim.so $D/cupti_calls_shim.c -ldl && LD_PRELOAD=/tmp/shim.so python3 $D/torch_profile.py 2>&1 | tail -60
echo "== kineto teardown"
python3 -c "import torch; print(torch.__config__.show())" | grep -i -E "kineto|cupti" | head
