#!/bin/bash
# Facts about the H200 machine that the CUDA source depends on (read-only).
set -x
uname -r; nvidia-smi --query-gpu=name,driver_version,mig.mode.current --format=csv
grep -i nvidia /proc/devices
ls -l /dev/nvidia* /dev/nvidia-caps 2>&1 | head
ldconfig -p | grep -E 'libcuda|libcudart'
ls -l /usr/local/nvidia/lib64/ 2>&1 | grep -E 'libcuda|libnvidia-ptx' | head
cat /sys/kernel/tracing/events/nvidia/nvidia_dev_xid/format 2>&1 || cat /sys/kernel/debug/tracing/events/nvidia/nvidia_dev_xid/format
ls /sys/kernel/tracing/events/nvidia/ 2>&1
grep -i nvidia /proc/interrupts | head -5
which python3 gcc go bpftrace nm objdump readelf
python3 - <<'PY'
import ctypes, os, time, sys
import torch
print("torch", torch.__version__, torch.version.cuda, torch.cuda.is_available())
x = torch.randn(256, 256, device="cuda"); torch.cuda.synchronize()
libs = sorted({l.split()[-1] for l in open("/proc/self/maps") if "cuda" in l.split()[-1] or "torch" in l.split()[-1] or "nvrtc" in l.split()[-1]})
print("\n".join(libs))
cu = ctypes.CDLL("libcuda.so.1")
for name in ["cuLaunchKernel","cuLaunchKernelEx","cuStreamSynchronize","cuEventSynchronize","cuCtxSynchronize","cuMemcpyAsync","cuMemcpyHtoDAsync","cuMemcpyDtoHAsync","cuMemAlloc","cuMemFree","cuMemsetD8Async","cuGraphLaunch","cuLaunchCooperativeKernel","cuMemAllocAsync","cuMemFreeAsync","cuMemcpyHtoD","cuMemcpyDtoH","cuMemcpy"]:
    for flags in (0, 1, 2):  # DEFAULT, LEGACY_STREAM, PER_THREAD_DEFAULT_STREAM
        pfn = ctypes.c_void_p(); st = ctypes.c_int()
        r = cu.cuGetProcAddress_v2(name.encode(), ctypes.byref(pfn), 12080, ctypes.c_uint64(flags), ctypes.byref(st))
        exp = {}
        for suf in ("", "_v2", "_v3", "_ptsz", "_ptds", "_v2_ptsz", "_v2_ptds"):
            try: exp[suf or "base"] = ctypes.cast(getattr(cu, name+suf), ctypes.c_void_p).value
            except AttributeError: pass
        match = [k for k,v in exp.items() if v == pfn.value]
        print(f"{name} flags={flags} r={r} st={st.value} pfn={pfn.value and hex(pfn.value)} matches_exported={match}")
PY
L=$(ldconfig -p | awk '/libcuda.so.1 /{print $NF; exit}'); [ -z "$L" ] && L=/usr/local/nvidia/lib64/libcuda.so.1
ls -lL $L; nm -D --defined-only $L | wc -l; nm -D --defined-only $L | grep -cE ' cu[A-Z]'
nm -D --defined-only $L | grep -E 'cuGetProcAddress|cuGetExportTable|cuLaunchKernel'
R=$(python3 -c 'import glob,site,os; import torch; print(" ".join(glob.glob(os.path.join(os.path.dirname(torch.__file__),"..","nvidia","cuda_runtime","lib","libcudart.so*"))))')
echo "cudart: $R"; for f in $R; do nm -D --defined-only $f | grep -E ' (cudaLaunchKernel|cudaLaunchKernelExC|cudaGraphLaunch|cudaStreamSynchronize|cudaMemcpyAsync)'; done
readelf -d $(python3 -c 'import torch,os; print(os.path.join(os.path.dirname(torch.__file__),"lib","libtorch_cuda.so"))') | grep NEEDED
nproc; free -g | head -2; df -h / | tail -1
