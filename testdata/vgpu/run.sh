#!/usr/bin/env bash
# Virtual GPU rig: boot a Debian kernel under QEMU (TCG), load the vgpu DRM driver, run the
# workload, bring the artifacts back and check them.
#
#   testdata/vgpu/run.sh 6.1|7.3|6.1-arm64|7.3-arm64
#
# 6.1 and 7.3 boot Debian's amd64 kernels under qemu-system-x86_64; 6.1-arm64 and 7.3-arm64
# boot Debian's arm64 kernels of the same generations (bookworm's, trixie-backports') under
# qemu-system-aarch64 (virt machine) with the module, the workload, busybox and ghostdriver
# built for arm64 (lib.sh: kernel_6_1_arm64, kernel_7_3_arm64). The guest side and the checks
# are the same; the replay of the guest's tracefs capture runs on the host.
#
# Environment:
#   VGPU_OUT         artifact directory (default testdata/vgpu/out/<kernel>)
#   VGPU_CACHE       downloads and build cache (default testdata/vgpu/cache, gitignored)
#   DEB_CACHE        the Debian packages, downloaded once for this rig and scripts/test-arm64.sh and
#                    linked into VGPU_CACHE (default build/debs; scripts/debcache.sh)
#   VGPU_JOBS        jobs per thread of the workload (default 16)
#   VGPU_CREDIT_LIMIT  the vgpu schedulers' credit limit (jobs on the hardware per ring, default 2:
#                    the rings fill and jobs wait for credits)
#   GHOSTDRIVER_BIN  static ghostdriver binary to run in the guest (default: built from ./cmd/ghostdriver
#                    when that exists and go is installed; VGPU_NO_GHOSTDRIVER=1 disables)
#   GHOSTDRIVER_ARGS its arguments (default: live --verbose --records events --output /out/spans.json --clock-out /out/clock.txt --ready-file /tmp/gd.ready --bo-func vgpu_validate_bos --run-job-func vgpu_run_job; stopped with SIGTERM after the app). Keep --verbose in all three: the workload waits for its debug line saying a process is in the kernel table
#   GHOSTDRIVER_JOBS_ARGS  a second receiver beside it in the per-job record mode (default: live --verbose --records jobs
#                    --output /out/spans-jobs.json --clock-out /out/clock-jobs.txt ...; "" skips it)
#   GHOSTDRIVER_CLASSIC_ARGS  a second phase after the first: the receiver forced onto its
#                    classic-tracepoint rung (default: live --verbose --classic-tracepoints --output /out/spans-classic.json
#                    --clock-out /out/clock-classic.txt ...; "" skips the phase); VGPU_CLASSIC_JOBS jobs per
#                    thread (default 16). Artifacts: spans-classic.json, clock-classic.txt,
#                    ghostdriver-classic.log, app-classic.txt, groundtruth-classic.txt (that phase's jobs only)
#   VGPU_TIMEOUT     QEMU wall-clock limit in seconds (default 900)
#   VGPU_NO_CHECK=1  skip check.sh
set -euo pipefail

KERNEL_LABEL=${1:-}
case $KERNEL_LABEL in
6.1 | 7.3 | 6.1-arm64 | 7.3-arm64) ;;
*) echo "usage: $0 6.1|7.3|6.1-arm64|7.3-arm64" >&2; exit 2 ;;
esac

VGPU_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$VGPU_DIR/../.." && pwd)
# shellcheck source=lib.sh
. "$VGPU_DIR/lib.sh"

[ "$(id -u)" = 0 ] || die "run as root (apt-get, debootstrap, chroot)"
VGPU_OUT=${VGPU_OUT:-$VGPU_DIR/out/$KERNEL_LABEL}
mkdir -p "$VGPU_CACHE"
t_start=$(date +%s.%N)
cache_before=$(du -sb "$VGPU_CACHE" 2>/dev/null | cut -f1) || true # du fails when another run changes the cache meanwhile

QEMU_ARCH=x86_64 CC_APP=gcc GOARCH_GUEST=amd64 BUSYBOX=/bin/busybox
case $KERNEL_LABEL in
*-arm64) ensure_pkgs qemu-system-arm cpio xz-utils zstd gcc libc6-dev make ;;
*) ensure_pkgs qemu-system-x86 busybox-static cpio xz-utils zstd gcc libc6-dev make ;;
esac

case $KERNEL_LABEL in
6.1) kernel_6_1 ;;
7.3) kernel_7_3 ;;
6.1-arm64) kernel_6_1_arm64 ;;
7.3-arm64) kernel_7_3_arm64 ;;
esac
log "kernel $KVER ($KPKGVER)"
[ -e "$VMLINUZ" ] || die "no kernel image at $VMLINUZ"

BUILD=$VGPU_CACHE/build-$KERNEL_LABEL
mkdir -p "$BUILD"
case $KERNEL_LABEL in
6.1) build_module_6_1 "$VGPU_DIR/kmod" "$BUILD" ;;
7.3) build_module_7_3 "$VGPU_DIR/kmod" "$BUILD" ;;
6.1-arm64) build_module_6_1_arm64 "$VGPU_DIR/kmod" "$BUILD" ;;
7.3-arm64) build_module_7_3_arm64 "$VGPU_DIR/kmod" "$BUILD" ;;
esac
APP_BIN=$BUILD/vgpu_app
"$CC_APP" -static -O2 -Wall -pthread -o "$APP_BIN" "$VGPU_DIR/app/vgpu_app.c" || die "app build failed"

if [ -z "${GHOSTDRIVER_BIN:-}" ] && [ -z "${VGPU_NO_GHOSTDRIVER:-}" ] && [ -d "$REPO/cmd/ghostdriver" ] &&
	command -v go >/dev/null; then
	GHOSTDRIVER_BIN=$BUILD/ghostdriver
	log "build ghostdriver (CGO_ENABLED=0 GOARCH=$GOARCH_GUEST)"
	if ! (cd "$REPO" && CGO_ENABLED=0 GOOS=linux GOARCH=$GOARCH_GUEST go build -o "$GHOSTDRIVER_BIN" ./cmd/ghostdriver); then
		log "ghostdriver build failed: running without the receiver"
		GHOSTDRIVER_BIN=
	fi
fi
if [ -n "${GHOSTDRIVER_BIN:-}" ]; then
	want_machine=$([ "$GOARCH_GUEST" = arm64 ] && echo 00b7 || echo 003e) # ELF e_machine: AArch64, x86-64
	[ "$(od -An -tx2 -j18 -N2 "$GHOSTDRIVER_BIN" | tr -d ' ')" = "$want_machine" ] ||
		die "$GHOSTDRIVER_BIN is not a $GOARCH_GUEST executable (the guest's receiver)"
	log "guest receiver: $GHOSTDRIVER_BIN"
fi
# The replay of the guest's capture runs here: with a guest of another architecture, a
# ghostdriver built for this machine (HOST_GHOSTDRIVER_BIN, else built).
HOST_GHOSTDRIVER_BIN=${HOST_GHOSTDRIVER_BIN:-}
if [ -n "${GHOSTDRIVER_BIN:-}" ] && [ -z "$HOST_GHOSTDRIVER_BIN" ]; then
	if [ "$GOARCH_GUEST" = "$(go env GOARCH 2>/dev/null || echo amd64)" ]; then
		HOST_GHOSTDRIVER_BIN=$GHOSTDRIVER_BIN
	else
		HOST_GHOSTDRIVER_BIN=$BUILD/ghostdriver-host
		(cd "$REPO" && CGO_ENABLED=0 go build -o "$HOST_GHOSTDRIVER_BIN" ./cmd/ghostdriver) ||
			{ log "host ghostdriver build failed: no replay"; HOST_GHOSTDRIVER_BIN=; }
	fi
fi

INITRD=$BUILD/initramfs.cpio
build_initramfs "$BUILD" "$INITRD"
log "initramfs $(du -h "$INITRD" | cut -f1)"
t_prep=$(date +%s.%N)

rm -rf "$VGPU_OUT" && mkdir -p "$VGPU_OUT"
cp "$BUILD/kmod/vgpu_config.h" "$VGPU_OUT/vgpu_config.h" # the APIs probe.sh found
log "boot $KVER under qemu-system-$QEMU_ARCH ($QEMU_ACCEL)"
case $QEMU_ARCH in
# virt: PL011 console, the 9p share on virtio-pci. -cpu max with QEMU's own pointer-auth
# algorithm (pauth-impdef): the architected QARMA one costs TCG much time, and no check here
# depends on it.
aarch64) qemu_machine=(-M virt -cpu max,pauth-impdef=on) console=ttyAMA0 ;;
*) qemu_machine=(-cpu max) console=ttyS0 ;;
esac
set +e
timeout "${VGPU_TIMEOUT:-900}" "qemu-system-$QEMU_ARCH" "${qemu_machine[@]}" \
	-accel "$QEMU_ACCEL" -smp 2 -m 1G \
	-nodefaults -no-reboot -display none -serial stdio -monitor none \
	-kernel "$VMLINUZ" -initrd "$INITRD" \
	-append "console=$console panic=-1 quiet loglevel=4 rdinit=/init" \
	-virtfs "local,path=$VGPU_OUT,mount_tag=out,security_model=none,id=out" \
	${VGPU_QEMU_EXTRA:-} \
	</dev/null >"$VGPU_OUT/console.log" 2>&1
qemu_rc=$?
set -e
t_end=$(date +%s.%N)
[ $qemu_rc = 0 ] || log "qemu exited with $qemu_rc"

# Console fallback: artifacts between markers when the 9p share was unavailable.
for f in $(sed -n 's/^=====VGPU-BEGIN \(.*\)=====\r\?$/\1/p' "$VGPU_OUT/console.log"); do
	[ -e "$VGPU_OUT/$f" ] && continue
	awk -v f="$f" '$0 ~ "^=====VGPU-END "f"=====" {p=0} p {sub(/\r$/, ""); print} $0 ~ "^=====VGPU-BEGIN "f"=====" {p=1}' \
		"$VGPU_OUT/console.log" >"$VGPU_OUT/$f"
done

# The same run through the replay source: the guest's tracefs capture replayed on the host
# (--epoch 0: span times are the capture's CLOCK_MONOTONIC), checked like the live spans.
if [ -n "${HOST_GHOSTDRIVER_BIN:-}" ] && [ -s "$VGPU_OUT/tracefs.txt" ]; then
	"$HOST_GHOSTDRIVER_BIN" replay --epoch 0 --quiet --output "$VGPU_OUT/spans-replay.json" "$VGPU_OUT/tracefs.txt" \
		>"$VGPU_OUT/replay.log" 2>&1 || log "ghostdriver replay of tracefs.txt failed (replay.log)"
fi

# Whether the guest kernel can attach fentry/fexit to a traced function: BPF trampolines
# need ftrace direct calls (kernel/bpf/trampoline.c: register_fentry -> -ENOTSUPP without
# them). Read from the kernel's own build configuration: boot/config-<ver> of the image
# package (bookworm), or the modules directory's config (trixie-backports ships it in
# linux-base-<ver>); "unknown" where none was found. e2e/vgpu_fentry_test.go holds the
# receiver's report to it.
# (Only files that exist are taken: find exits 1 on a missing directory, which pipefail
# would turn into the end of the run, as it was for 7.3, whose root has no boot/.)
kconfig=
for f in "$(dirname "$VMLINUZ")/config-$KVER" "$MODDIR/../../../boot/config-$KVER" "$MODDIR/config"; do
	if [ -z "$kconfig" ] && [ -f "$f" ]; then kconfig=$f; fi
done
if [ -z "$kconfig" ]; then
	direct_calls=unknown
elif grep -qx 'CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS=y' "$kconfig"; then
	direct_calls=yes
else
	direct_calls=no
fi

cache_after=$(du -sb "$VGPU_CACHE" 2>/dev/null | cut -f1) || true
{
	echo "kernel_label=$KERNEL_LABEL"
	echo "kver=$KVER"
	echo "kpkgver=$KPKGVER"
	echo "accel=$QEMU_ACCEL"
	echo "qemu=qemu-system-$QEMU_ARCH"
	echo "optional_drivers=$OPTIONAL_DRIVERS"
	echo "ftrace_direct_calls=$direct_calls${kconfig:+ (${kconfig#"$VGPU_CACHE"/})}"
	echo "prepare_s=$(awk "BEGIN{printf \"%.1f\", $t_prep-$t_start}")"
	echo "qemu_s=$(awk "BEGIN{printf \"%.1f\", $t_end-$t_prep}")"
	echo "total_s=$(awk "BEGIN{printf \"%.1f\", $t_end-$t_start}")"
	echo "cache_growth_bytes=$((${cache_after:-0} - ${cache_before:-0}))"
	echo "initramfs_bytes=$(stat -c %s "$INITRD")"
	echo "qemu_rc=$qemu_rc"
	echo "ghostdriver=$([ -n "${GHOSTDRIVER_BIN:-}" ] && echo yes || echo no)"
} >"$VGPU_OUT/host.txt"
cat "$VGPU_OUT/host.txt" >&2
[ -e "$VGPU_OUT/guest.txt" ] && cat "$VGPU_OUT/guest.txt" >&2

if [ ! -s "$VGPU_OUT/groundtruth.txt" ]; then
	tail -40 "$VGPU_OUT/console.log" >&2
	die "no ground truth came back (see $VGPU_OUT/console.log)"
fi
if [ -z "${VGPU_NO_CHECK:-}" ]; then
	"$VGPU_DIR/check.sh" "$KERNEL_LABEL" "$VGPU_OUT"
fi
