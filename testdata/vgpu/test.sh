#!/usr/bin/env bash
# Entry point for `make test-vgpu`: run the virtual GPU rig on every kernel generation and check it.
#   VGPU_KERNELS="6.1 7.3" (default both); other knobs: see run.sh.
set -uo pipefail
dir=$(cd "$(dirname "$0")" && pwd)
rc=0
for k in ${VGPU_KERNELS:-6.1 7.3}; do
	echo "=== vgpu $k"
	"$dir/run.sh" "$k" || { echo "=== vgpu $k FAILED"; rc=1; }
done
exit $rc
