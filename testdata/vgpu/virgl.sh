#!/usr/bin/env bash
# virgl rig: the upstream virtio_gpu driver of a Debian kernel under QEMU (TCG) with QEMU's
# virtio-gpu-gl device (virglrenderer on the host, llvmpipe behind it: no host GPU), driven
# by Debian bookworm's Mesa (virgl) from a GLES client of ours; tracefs, the client's frame
# log and `ghostdriver live` come back for the oracle (e2e/vgpu_virgl_test.go).
#
#   testdata/vgpu/virgl.sh 6.1|7.3
#
# Reuses the vgpu rig's helpers (lib.sh: kernel per generation, module closure, package
# cache); virgl/lib.sh adds the guest's Mesa and the initramfs, virgl/init is the guest.
#
# Environment:
#   VGPU_OUT               artifact directory (default testdata/vgpu/out/virgl-<kernel>)
#   VGPU_CACHE, DEB_CACHE  as for run.sh
#   VIRGL_FRAMES           frames of the draw + glFinish phase (default 200)
#   VIRGL_INFLIGHT_FRAMES  frames of the eight-in-flight phase (default 200)
#   VIRGL_KMSCUBE_FRAMES   frames of Debian's kmscube after them (default 0: not run)
#   GHOSTDRIVER_BIN        static receiver run in the guest (default: built; VGPU_NO_GHOSTDRIVER=1 disables)
#   GHOSTDRIVER_ARGS       its arguments (default: live --verbose --output /out/spans.json ...)
#   GHOSTDRIVER_FILTER_ARGS the second receiver's, beside it (default: live --fence-filter
#                          --output /out/spans-filter.json ...; empty: not run)
#   VGPU_TIMEOUT           QEMU wall-clock limit in seconds (default 600)
set -euo pipefail

K=${1:-}
case $K in
6.1 | 7.3) ;;
*) echo "usage: $0 6.1|7.3" >&2; exit 2 ;;
esac
KERNEL_LABEL=virgl-$K
VGPU_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$VGPU_DIR/../.." && pwd)
# shellcheck source=lib.sh
. "$VGPU_DIR/lib.sh"
# shellcheck source=virgl/lib.sh
. "$VGPU_DIR/virgl/lib.sh"

[ "$(id -u)" = 0 ] || die "run as root (apt-get)"
VGPU_OUT=${VGPU_OUT:-$VGPU_DIR/out/$KERNEL_LABEL}
mkdir -p "$VGPU_CACHE"
t_start=$(date +%s.%N)

# qemu-system-gui: the virtio-gpu-gl device and the egl-headless display are its modules;
# libepoxy dlopens libEGL, whose Mesa vendor and llvmpipe (libgl1-mesa-dri) are only
# recommended, so they are named. The -dev packages link the client.
ensure_pkgs qemu-system-x86 qemu-system-gui libvirglrenderer1 libegl1 libegl-mesa0 libgbm1 libgl1-mesa-dri \
	busybox-static cpio xz-utils zstd gcc libc6-dev libegl-dev libgles-dev libgbm-dev
case $K in
6.1) kernel_6_1 ;;
7.3) kernel_7_3_image ;;
esac
log "kernel $KVER ($KPKGVER)"
mesa_root

BUILD=$VGPU_CACHE/build-$KERNEL_LABEL
mkdir -p "$BUILD"
CLIENT_BIN=$BUILD/virgl_client
build_virgl_client "$CLIENT_BIN"
if [ -z "${GHOSTDRIVER_BIN:-}" ] && [ -z "${VGPU_NO_GHOSTDRIVER:-}" ] && command -v go >/dev/null; then
	GHOSTDRIVER_BIN=$BUILD/ghostdriver
	log "build ghostdriver (CGO_ENABLED=0)"
	(cd "$REPO" && CGO_ENABLED=0 go build -o "$GHOSTDRIVER_BIN" ./cmd/ghostdriver) ||
		{ log "ghostdriver build failed: running without the receiver"; GHOSTDRIVER_BIN=; }
fi
INITRD=$BUILD/initramfs.cpio
build_virgl_initramfs "$BUILD" "$INITRD"
log "initramfs $(du -h "$INITRD" | cut -f1)"
t_prep=$(date +%s.%N)

rm -rf "$VGPU_OUT" && mkdir -p "$VGPU_OUT"
log "boot $KVER under qemu-system-x86_64 ($QEMU_ACCEL) with virtio-gpu-gl"
# egl-headless with rendernode=/dev/null: there is no render node on this host, and Mesa's
# GBM on /dev/null falls back to software (llvmpipe), which renders the guest's virgl stream.
# The host's view (QEMU's trace events, log backend, host wall-clock stamps): each fenced
# command's arrival (virtio_gpu_fence_ctrl: fence id, command type), its response
# (virtio_gpu_fence_resp) and every SUBMIT_3D (virtio_gpu_cmd_ctx_submit) -> qemu-trace.txt.
set +e
timeout "${VGPU_TIMEOUT:-600}" qemu-system-x86_64 -cpu max -accel "$QEMU_ACCEL" -smp 2 -m 2G \
	-nodefaults -no-reboot -serial stdio -monitor none \
	-device virtio-gpu-gl-pci -display egl-headless,rendernode=/dev/null \
	-kernel "$VMLINUZ" -initrd "$INITRD" \
	-append "console=ttyS0 panic=-1 quiet loglevel=4 rdinit=/init" \
	-virtfs "local,path=$VGPU_OUT,mount_tag=out,security_model=none,id=out" \
	-virtfs "local,path=$MESA_ROOT,mount_tag=mesa,security_model=none,readonly=on,id=mesa" \
	-msg timestamp=on -D "$VGPU_OUT/qemu-trace.txt" \
	-trace virtio_gpu_fence_ctrl -trace virtio_gpu_fence_resp -trace virtio_gpu_cmd_ctx_submit \
	${VGPU_QEMU_EXTRA:-} \
	</dev/null >"$VGPU_OUT/console.log" 2>&1
qemu_rc=$?
set -e
t_end=$(date +%s.%N)

{
	echo "kernel_label=$KERNEL_LABEL"
	echo "kver=$KVER"
	echo "kpkgver=$KPKGVER"
	echo "accel=$QEMU_ACCEL"
	echo "qemu=$(qemu-system-x86_64 --version | head -1)"
	echo "virglrenderer=$(dpkg-query -W -f='${Version}' libvirglrenderer1)"
	echo "host_mesa=$(dpkg-query -W -f='${Version}' libgbm1 2>/dev/null)"
	echo "guest_mesa=$MESA_VERSION"
	echo "prepare_s=$(awk "BEGIN{printf \"%.1f\", $t_prep-$t_start}")"
	echo "qemu_s=$(awk "BEGIN{printf \"%.1f\", $t_end-$t_prep}")"
	echo "total_s=$(awk "BEGIN{printf \"%.1f\", $t_end-$t_start}")"
	echo "qemu_rc=$qemu_rc"
	echo "ghostdriver=$([ -n "${GHOSTDRIVER_BIN:-}" ] && echo yes || echo no)"
} >"$VGPU_OUT/host.txt"
cat "$VGPU_OUT/host.txt" >&2
[ -e "$VGPU_OUT/guest.txt" ] && cat "$VGPU_OUT/guest.txt" >&2
if [ ! -s "$VGPU_OUT/tracefs.txt" ] || [ ! -s "$VGPU_OUT/frames.txt" ] || [ ! -s "$VGPU_OUT/qemu-trace.txt" ]; then
	tail -40 "$VGPU_OUT/console.log" >&2
	die "no capture came back (see $VGPU_OUT/console.log)"
fi
