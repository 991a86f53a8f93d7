#!/bin/sh
# Builds the stub CUDA driver, the stub runtime, the two-thread workload and the stub
# libcupti (libcupti.so.13, from cuptilib/stub) into $1 (used by internal/cuda's and
# receiver's tests). STUB_CC picks the compiler (default gcc;
# aarch64-linux-gnu-gcc for the arm64 guest, scripts/test-arm64.sh). The workload finds
# the libraries beside itself (RUNPATH $ORIGIN), so the files can be copied.
set -eu
cc=${STUB_CC:-gcc}
out=$1
src=$(cd "$(dirname "$0")" && pwd)
"$cc" -O2 -fPIC -shared -o "$out/libcuda.so.1" "$src/libcuda_stub.c" -ldl -lpthread
"$cc" -O2 -fPIC -shared -o "$out/libcudart.so.12" "$src/libcudart_stub.c" -L"$out" -l:libcuda.so.1 -lpthread
"$cc" -O2 -rdynamic -o "$out/app" "$src/app.c" -L"$out" -l:libcudart.so.12 -l:libcuda.so.1 -lpthread -Wl,-rpath,'$ORIGIN'
"$cc" -O2 -fPIC -shared -Wl,-soname,libcupti.so.13 -o "$out/libcupti.so.13" "$src/../../../../cuptilib/stub/libcupti_stub.c" -ldl -lpthread
