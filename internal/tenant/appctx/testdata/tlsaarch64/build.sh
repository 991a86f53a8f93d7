#!/bin/sh
# Rebuilds the AArch64 TLS fixtures (committed, so that the tests need no cross compiler):
# apt-get install gcc-aarch64-linux-gnu. Executables: local-exec code whose two `add`
# immediates are the linker's own tp offset of the variable (the tests' oracle); shared
# objects: one per TLS relocation kind the loader resolves.
set -eu
cd "$(dirname "$0")"
CC=${CC:-aarch64-linux-gnu-gcc}
# 4 KiB segment alignment keeps the files small (the TLS layout does not depend on it).
SMALL="-Wl,-z,max-page-size=0x1000 -Wl,-z,common-page-size=0x1000 -Wl,-z,noseparate-code"
exe() { out=$1; shift; $CC -O2 $SMALL -ftls-model=local-exec -rdynamic "$@" -o "$out" main.c otel.c; }
lib() { out=$1; shift; $CC -O2 $SMALL -fPIC -shared -nostdlib "$@" -o "$out" otel.c; }
exe exe_pie_align8 -fPIE -pie
exe exe_pie_align64 -fPIE -pie -DALIGN=64 -DPAD=24
exe exe_nopie_pad5000 -fno-pie -no-pie -DPAD=5000 -DALIGN=16
exe exe_pie_align4096 -fPIE -pie -DALIGN=4096 -DPAD=8
lib lib_initial_exec.so -ftls-model=initial-exec
lib lib_global_dynamic_trad.so -ftls-model=global-dynamic -mtls-dialect=trad
lib lib_tlsdesc.so -ftls-model=global-dynamic -mtls-dialect=desc
aarch64-linux-gnu-strip --strip-unneeded exe_* lib_*.so 2>/dev/null || true
