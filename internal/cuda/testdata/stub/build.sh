#!/bin/sh
# Builds the stub CUDA driver, the stub runtime and the two-thread workload into $1
# (used by internal/cuda's and receiver's tests). STUB_CC picks the compiler (default gcc;
# aarch64-linux-gnu-gcc for the arm64 guest, scripts/test-arm64.sh). The workload finds
# the libraries beside itself (RUNPATH $ORIGIN), so the three files can be copied.
set -eu
cc=${STUB_CC:-gcc}
out=$1
src=$(cd "$(dirname "$0")" && pwd)
"$cc" -O2 -fPIC -shared -o "$out/libcuda.so.1" "$src/libcuda_stub.c"
"$cc" -O2 -fPIC -shared -o "$out/libcudart.so.12" "$src/libcudart_stub.c" -L"$out" -l:libcuda.so.1 -lpthread
"$cc" -O2 -rdynamic -o "$out/app" "$src/app.c" -L"$out" -l:libcudart.so.12 -l:libcuda.so.1 -lpthread -Wl,-rpath,'$ORIGIN'
