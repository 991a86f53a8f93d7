#!/usr/bin/env bash
# Entry point for `make test-virgl`: the virgl rig (virgl.sh) on each kernel generation, then its
# oracle on the run's artifacts (e2e/vgpu_virgl_test.go, TestVirglRig*).
#   VIRGL_KERNELS="6.1 7.3" (default both); VGPU_OUT: as test.sh (one kernel: there; several:
#   $VGPU_OUT/virgl-<kernel>). Other knobs: see virgl.sh.
set -uo pipefail
dir=$(cd "$(dirname "$0")" && pwd)
rc=0
kernels=(${VIRGL_KERNELS:-6.1 7.3})
for k in "${kernels[@]}"; do
	echo "=== virgl $k"
	if [ -z "${VGPU_OUT:-}" ]; then
		out=$dir/out/virgl-$k
	elif [ ${#kernels[@]} -eq 1 ]; then
		out=$VGPU_OUT
	else
		out=$VGPU_OUT/virgl-$k
	fi
	t0=$(date +%s)
	if VGPU_OUT=$out "$dir/virgl.sh" "$k"; then
		(cd "$dir/../.." && GHOSTDRIVER_REQUIRE="${GHOSTDRIVER_REQUIRE:+$GHOSTDRIVER_REQUIRE,}virgl" GHOSTDRIVER_VIRGL_OUT=$out \
			go test -count=1 -v -run 'TestVirglRig' ./e2e/) ||
			{ echo "=== virgl $k: the run's ground truth does not hold"; rc=1; }
	else
		echo "=== virgl $k FAILED"
		rc=1
	fi
	echo "=== virgl $k took $(($(date +%s) - t0))s"
done
exit $rc
