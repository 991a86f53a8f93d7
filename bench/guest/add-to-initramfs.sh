#!/usr/bin/env bash
# Adds the overhead benchmark to the virtual GPU rig's initramfs tree (called by
# testdata/vgpu/lib.sh build_initramfs when VGPU_BENCH=1):
#   /bin/vgpu-bench   bench/guest/vgpu-bench.sh (run by the guest's /init instead of the workload)
#   /bin/bpfcost      $VGPU_BENCH_BIN (static, CGO_ENABLED=0 go build ./bench/bpfcost)
#   /etc/bench/vgpu.bt, and /bin/bpftrace with every shared library ldd names (≈ 200 MB:
#   LLVM and clang) unless VGPU_BENCH_BPFTRACE=0.
set -euo pipefail
w=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cp "$here/vgpu-bench.sh" "$w/bin/vgpu-bench" && chmod +x "$w/bin/vgpu-bench"
mkdir -p "$w/etc/bench"
cp "$here/../bpftrace/vgpu.bt" "$w/etc/bench/vgpu.bt"
if [ -n "${VGPU_BENCH_BIN:-}" ] && [ -x "$VGPU_BENCH_BIN" ]; then
	cp "$VGPU_BENCH_BIN" "$w/bin/bpfcost"
fi
if [ "${VGPU_BENCH_BPFTRACE:-1}" != 0 ] && command -v bpftrace >/dev/null; then
	bt=$(command -v bpftrace)
	cp "$bt" "$w/bin/bpftrace"
	for lib in $(ldd "$bt" | awk '/=> \// {print $3} /^\t\/.*ld-linux/ {print $1}'); do
		mkdir -p "$w$(dirname "$lib")"
		cp -L "$lib" "$w$lib"
	done
	# bpftrace resolves /lib64/ld-linux through the path it was linked with
	[ -e "$w/lib64/ld-linux-x86-64.so.2" ] || { mkdir -p "$w/lib64"; cp -L /lib64/ld-linux-x86-64.so.2 "$w/lib64/"; }
fi
