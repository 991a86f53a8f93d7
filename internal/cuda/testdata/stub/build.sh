#!/bin/sh
# Builds the stub CUDA driver, the stub runtime and the two-thread workload into $1
# (used by internal/cuda's and receiver's tests).
set -eu
out=$1
src=$(cd "$(dirname "$0")" && pwd)
gcc -O2 -fPIC -shared -o "$out/libcuda.so.1" "$src/libcuda_stub.c"
gcc -O2 -fPIC -shared -o "$out/libcudart.so.12" "$src/libcudart_stub.c" -L"$out" -l:libcuda.so.1 -lpthread
gcc -O2 -rdynamic -o "$out/app" "$src/app.c" -L"$out" -l:libcudart.so.12 -l:libcuda.so.1 -lpthread -Wl,-rpath,"$out"
