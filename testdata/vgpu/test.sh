#!/usr/bin/env bash
# Entry point for `make test-vgpu`: run the virtual GPU rig on every kernel generation and check it.
#   VGPU_KERNELS="6.1 7.3" (default both); other knobs: see run.sh.
set -uo pipefail
dir=$(cd "$(dirname "$0")" && pwd)
rc=0
for k in ${VGPU_KERNELS:-6.1 7.3}; do
	echo "=== vgpu $k"
	out=${VGPU_OUT:-$dir/out/$k}
	if VGPU_OUT=$out "$dir/run.sh" "$k"; then
		# The receiver's spans against the driver's ground truth (e2e/vgpu_test.go).
		(cd "$dir/../.." && GHOSTDRIVER_VGPU_OUT=$out go test -count=1 -v -run 'TestVirtualGPU' ./e2e/) ||
			{ echo "=== vgpu $k: spans do not match the ground truth"; rc=1; }
	else
		echo "=== vgpu $k FAILED"
		rc=1
	fi
done
exit $rc
