#!/usr/bin/env bash
# Entry point for `make test-vgpu`: run the virtual GPU rig on every kernel generation and check it.
#   VGPU_KERNELS="6.1 7.3" (default both); other knobs: see run.sh.
#   VGPU_OUT: artifacts of one kernel go there; with several kernels, each gets
#   $VGPU_OUT/<kernel> (so one run does not delete the other's). Default testdata/vgpu/out/<kernel>.
set -uo pipefail
dir=$(cd "$(dirname "$0")" && pwd)
rc=0
kernels=(${VGPU_KERNELS:-6.1 7.3})
for k in "${kernels[@]}"; do
	echo "=== vgpu $k"
	if [ -z "${VGPU_OUT:-}" ]; then
		out=$dir/out/$k
	elif [ ${#kernels[@]} -eq 1 ]; then
		out=$VGPU_OUT
	else
		out=$VGPU_OUT/$k
	fi
	if VGPU_OUT=$out "$dir/run.sh" "$k"; then
		# The receiver's spans against the driver's ground truth (e2e/vgpu_test.go).
		(cd "$dir/../.." && GHOSTDRIVER_REQUIRE="${GHOSTDRIVER_REQUIRE:+$GHOSTDRIVER_REQUIRE,}vgpu" GHOSTDRIVER_VGPU_OUT=$out go test -count=1 -v -run 'TestVirtualGPU' ./e2e/) ||
			{ echo "=== vgpu $k: spans do not match the ground truth"; rc=1; }
	else
		echo "=== vgpu $k FAILED"
		rc=1
	fi
done
exit $rc
