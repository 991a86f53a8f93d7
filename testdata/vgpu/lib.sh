# shellcheck shell=bash
# Helpers of the virtual GPU rig (sourced by run.sh). Everything downloaded or built lands in
# $VGPU_CACHE (testdata/vgpu/cache/, gitignored) and is reused by later runs on the same machine;
# the Debian packages are downloaded once into $DEB_CACHE (build/debs, shared with
# scripts/test-arm64.sh: scripts/debcache.sh) and linked into $VGPU_CACHE.
#
# Kernel versions are never pinned here:
#   6.1  the version of the host's installed linux-headers-amd64 (Debian bookworm)
#   7.3  whatever linux-image-amd64 of trixie-backports depends on today
# (the two generations of the DRM scheduler's tracepoints: before and after 6.17).

VGPU_DIR=${VGPU_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}
VGPU_CACHE=${VGPU_CACHE:-$VGPU_DIR/cache}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# shellcheck source=../../scripts/debcache.sh
. "$VGPU_DIR/../../scripts/debcache.sh"

log() { printf '[vgpu %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# ensure_pkgs PKG...: apt-get install what is missing on the host (Debian bookworm), idempotently.
ensure_pkgs() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	log "apt-get install ${missing[*]}"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2; then
		apt-get update -q >&2 || true
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >&2 ||
			die "cannot install ${missing[*]}"
	fi
}

# download_deb DIR PKG=VER...: each .deb into DIR unless it is there already, through the shared
# package cache (deb_cached: downloaded once, keyed by name, version and SHA256; bookworm's arm64
# image and busybox are scripts/test-arm64.sh's too).
download_deb() {
	local dir=$1; shift
	local spec name ver f
	mkdir -p "$dir"
	for spec in "$@"; do
		name=${spec%%=*} ver=${spec#*=}
		# NAME may carry an architecture (pkg:arm64); the file name does not.
		if ls "$dir/${name%%:*}_${ver//:/%3a}_"*.deb >/dev/null 2>&1; then continue; fi
		f=$(deb_cached "$name=$ver" "${APT_OPTS[@]}") || { log "apt-get download $name=$ver failed"; return 1; }
		deb_link "$f" "$dir/${f##*/}"
	done
}

# extract_debs DIR ROOT: dpkg-deb -x every .deb of DIR into ROOT once.
extract_debs() {
	local dir=$1 root=$2 deb
	mkdir -p "$root"
	for deb in "$dir"/*.deb; do
		[ -e "$root/.x.$(basename "$deb")" ] && continue
		log "extract $(basename "$deb")"
		dpkg-deb -x "$deb" "$root"
		touch "$root/.x.$(basename "$deb")"
	done
}

# private_apt NAME MULTIARCH SOURCE-LINE...: a private apt state in $VGPU_CACHE/apt-NAME (the
# machine's /etc/apt and dpkg status are never touched) with these sources, updated; sets
# APT_OPTS for apt-get/apt-cache. MULTIARCH=arm64 adds arm64 beside amd64 (cross packages).
# An update that fails with lists already there (offline, mirror hiccup) uses those.
private_apt() {
	local a=$VGPU_CACHE/apt-$1 multi=$2
	shift 2
	mkdir -p "$a/lists/partial" "$a/cache/archives/partial"
	printf '%s\n' "$@" >"$a/sources.list"
	APT_OPTS=(-o "Dir::Etc::sourcelist=$a/sources.list" -o Dir::Etc::sourceparts=/nonexistent
		-o "Dir::State::Lists=$a/lists" -o "Dir::Cache=$a/cache" -o Dir::State::status=/dev/null
		-o APT::Get::List-Cleanup=0)
	if [ "$multi" = arm64 ]; then
		APT_OPTS+=(-o APT::Architecture=amd64 -o APT::Architectures::=amd64 -o APT::Architectures::=arm64)
	fi
	apt-get "${APT_OPTS[@]}" -q update >&2 || [ -n "$(ls "$a/lists" 2>/dev/null | grep Packages)" ] ||
		die "apt-get update ($1) failed"
}

# ---- kernel 6.1 (Debian bookworm, the host's own generation) --------------------------------

kernel_6_1_version() {
	KVER=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 | grep -o 'linux-headers-[^ ,]*' | head -1)
	KVER=${KVER#linux-headers-}
	[ -n "$KVER" ] || die "cannot read the version of linux-headers-amd64"
	KPKGVER=$(dpkg-query -W -f='${Version}' "linux-headers-$KVER")
}

kernel_6_1() {
	ensure_pkgs linux-headers-amd64 gcc make libc6-dev dwarves
	APT_OPTS=()
	kernel_6_1_version
	local c=$VGPU_CACHE/6.1
	if ! download_deb "$c/debs-$KVER" "linux-image-$KVER=$KPKGVER"; then
		# Old ABIs leave the mirror: move the installed headers to today's ABI and retry once.
		log "upgrading linux-headers-amd64 to the mirror's current ABI"
		apt-get update -q >&2 || true
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q linux-headers-amd64 >&2 || die "cannot upgrade linux-headers-amd64"
		kernel_6_1_version
		download_deb "$c/debs-$KVER" "linux-image-$KVER=$KPKGVER" || die "cannot download linux-image-$KVER"
	fi
	extract_debs "$c/debs-$KVER" "$c/root-$KVER"
	VMLINUZ=$c/root-$KVER/boot/vmlinuz-$KVER
	MODDIR=$c/root-$KVER/lib/modules/$KVER
	QEMU_ACCEL=tcg
	OPTIONAL_DRIVERS=${VGPU_OPTIONAL_DRIVERS-amdgpu i915}
}

build_module_6_1() { # SRC OUTDIR
	local b=$2/kmod
	rm -rf "$b" && mkdir -p "$b" && cp "$1"/vgpu.c "$1"/vgpu_drm.h "$1"/Kbuild "$1"/probe.sh "$b"/
	{ make -s -C "/usr/src/linux-headers-$KVER" M="$b" modules 2>&1 || true; } |
		{ grep -v '^Skipping BTF generation' || true; } >&2
	[ -e "$b/vgpu.ko" ] || die "module build (6.1) failed"
	VGPU_KO=$b/vgpu.ko
	log_module_api "$b"
	# Debian 6.1's headers ship no vmlinux, so kbuild skips the module's BTF. Do its step by hand
	# against the vmlinux inside the very image we boot: then fentry/fexit on vgpu's own functions
	# work in the guest. Best effort: without it only core functions and tracepoints are hookable.
	local vml=$VGPU_CACHE/6.1/vmlinux-$KVER
	if [ ! -s "$vml" ]; then
		vmlinux_from_bzimage "$VMLINUZ" >"$vml.tmp" && mv "$vml.tmp" "$vml" || rm -f "$vml.tmp"
	fi
	if [ -s "$vml" ] && LLVM_OBJCOPY=objcopy pahole -J --btf_gen_floats --btf_base "$vml" "$VGPU_KO" >&2; then
		log "vgpu.ko: module BTF added (pahole against the image's vmlinux)"
	else
		log "vgpu.ko: no module BTF (fentry on vgpu functions unavailable on 6.1)"
	fi
}

# vmlinux_from_bzimage IMAGE: the uncompressed vmlinux ELF (what scripts/extract-vmlinux does).
vmlinux_from_bzimage() {
	local off
	off=$(LC_ALL=C grep -aboP '\xfd7zXZ\x00' "$1" | head -1 | cut -d: -f1)
	if [ -n "$off" ]; then
		tail -c +$((off + 1)) "$1" | xz -dc 2>/dev/null
		return 0
	fi
	off=$(LC_ALL=C grep -aboP '\x28\xb5\x2f\xfd' "$1" | head -1 | cut -d: -f1)
	[ -n "$off" ] && tail -c +$((off + 1)) "$1" | zstd -qdc 2>/dev/null
	return 0
}

# ---- kernel 6.1 on arm64 (Debian bookworm's arm64 image, cross-built module) ---------------
#
# The image, busybox and the module's headers come from the mirror through a private apt state
# (multi-arch amd64+arm64; the machine's /etc/apt and dpkg status are not touched):
#   linux-image-<abi>-arm64      whatever linux-image-arm64 (bookworm, -security) depends on today
#   linux-headers-<abi>-arm64 + -common, and linux-kbuild-6.1 (amd64) of the same version: kbuild's
#                                host tools run here; the compiler is gcc-aarch64-linux-gnu (gcc-12,
#                                the compiler Debian built the image with)
#   busybox-static:arm64         the guest's shell
kernel_6_1_arm64() {
	ensure_pkgs gcc-aarch64-linux-gnu libc6-dev-arm64-cross binutils-aarch64-linux-gnu make dwarves xz-utils
	private_apt bookworm-arm64 arm64 "deb $DEBIAN_MIRROR bookworm main" "deb $DEBIAN_MIRROR bookworm-updates main" \
		"deb $DEBIAN_MIRROR-security bookworm-security main"
	KVER=$(apt-cache "${APT_OPTS[@]}" depends linux-image-arm64:arm64 | awk '/Depends: linux-image-[0-9]/{print $2; exit}')
	KVER=${KVER#linux-image-}
	KVER=${KVER%:arm64}
	KPKGVER=$(apt-cache "${APT_OPTS[@]}" policy "linux-image-$KVER:arm64" | awk '/Candidate:/{print $2; exit}')
	[ -n "$KVER" ] && [ -n "$KPKGVER" ] && [ "$KPKGVER" != "(none)" ] || die "cannot find bookworm's arm64 kernel"
	local bb
	bb=$(apt-cache "${APT_OPTS[@]}" policy busybox-static:arm64 | awk '/Candidate:/{print $2; exit}')
	local c=$VGPU_CACHE/6.1-arm64
	download_deb "$c/debs-$KVER" "linux-image-$KVER:arm64=$KPKGVER" "busybox-static:arm64=$bb" ||
		die "cannot download the $KVER kernel"
	download_deb "$c/hdr-debs-$KVER" "linux-headers-$KVER:arm64=$KPKGVER" "linux-headers-${KVER%-arm64}-common=$KPKGVER" \
		"linux-kbuild-6.1:amd64=$KPKGVER" || die "cannot download the $KVER headers"
	extract_debs "$c/debs-$KVER" "$c/root-$KVER"
	extract_debs "$c/hdr-debs-$KVER" "$c/hdr-$KVER"
	# The headers' scripts/ and tools/ are absolute links into /usr/lib/linux-kbuild-6.1: point
	# them at the extracted kbuild of the same version instead.
	KHDR=$c/hdr-$KVER/usr/src/linux-headers-$KVER
	local l
	for l in scripts tools; do
		[ -L "$KHDR/$l" ] && ln -sfn "$c/hdr-$KVER/usr/lib/linux-kbuild-6.1/$l" "$KHDR/$l"
	done
	# Its Makefile includes the -common one by absolute path.
	sed -i "s|^include /usr/src/|include $c/hdr-$KVER/usr/src/|" "$KHDR/Makefile"
	[ -x "$KHDR/scripts/basic/fixdep" ] || die "no kbuild tools under $KHDR/scripts"
	VMLINUZ=$c/root-$KVER/boot/vmlinuz-$KVER
	MODDIR=$c/root-$KVER/lib/modules/$KVER
	BUSYBOX=$c/root-$KVER/bin/busybox
	# One host thread for both vCPUs: under multi-threaded TCG an arm64 vCPU now and then
	# keeps running its old translation of a kernel site the kernel has just patched (a
	# tracepoint's static key), so a receiver's ioctl enter program was never run while its
	# exit was (scripts/test-arm64.sh has the evidence).
	QEMU_ACCEL=tcg,thread=single
	QEMU_ARCH=aarch64
	CC_APP=aarch64-linux-gnu-gcc
	GOARCH_GUEST=arm64
	OPTIONAL_DRIVERS=${VGPU_OPTIONAL_DRIVERS-amdgpu}
}

build_module_6_1_arm64() { # SRC OUTDIR
	local b=$2/kmod
	rm -rf "$b" && mkdir -p "$b" && cp "$1"/vgpu.c "$1"/vgpu_drm.h "$1"/Kbuild "$1"/probe.sh "$b"/
	{ make -s -C "$KHDR" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- M="$b" modules 2>&1 || true; } |
		{ grep -v '^Skipping BTF generation' || true; } >&2
	[ -e "$b/vgpu.ko" ] || die "module build (6.1 arm64) failed"
	[ "$(od -An -tx2 -j18 -N2 "$b/vgpu.ko" | tr -d ' ')" = 00b7 ] || die "$b/vgpu.ko is not an AArch64 module"
	VGPU_KO=$b/vgpu.ko
	log_module_api "$b"
	add_module_btf_from_image "$VGPU_CACHE/6.1-arm64/vmlinux-$KVER.btf" aarch64-linux-gnu-objcopy aarch64-linux-gnu-objdump
}

# add_module_btf_from_image VMLINUX_BTF OBJCOPY OBJDUMP: module BTF for $VGPU_KO (fentry on
# vgpu's own functions needs it), as on x86 6.1, against the arm64 kernel's own BTF. An arm64
# vmlinuz is an Image (no ELF, no section table), so the base is the raw .BTF blob inside the
# Image (cached at VMLINUX_BTF): the same bytes the guest shows as /sys/kernel/btf/vmlinux
# (pahole reads raw BTF).
add_module_btf_from_image() {
	local vbtf=$1 objcopy=$2 objdump=$3
	if [ ! -s "$vbtf" ]; then
		# Debian's arm64 vmlinuz is the plain EFI-stub Image; a gzip'ed one is unpacked first.
		local img=$VMLINUZ
		if [ "$(od -An -tx1 -N2 "$VMLINUZ" | tr -d ' ')" = 1f8b ]; then
			gzip -dc "$VMLINUZ" >"$vbtf.image" && img=$vbtf.image
		fi
		btf_from_image "$img" >"$vbtf.tmp" && mv "$vbtf.tmp" "$vbtf" || rm -f "$vbtf.tmp"
		rm -f "$vbtf.image"
	fi
	if "$objdump" -h "$VGPU_KO" | grep -q ' \.BTF '; then
		log "vgpu.ko: module BTF from the kernel build"
	elif [ -s "$vbtf" ] && LLVM_OBJCOPY=$objcopy pahole -J --btf_gen_floats --btf_base "$vbtf" "$VGPU_KO" >&2 &&
		"$objdump" -h "$VGPU_KO" | grep -q ' \.BTF '; then
		log "vgpu.ko: module BTF added (pahole against the Image's .BTF)"
	else
		log "vgpu.ko: no module BTF (fentry on vgpu functions unavailable on $KERNEL_LABEL)"
	fi
}

# btf_from_image IMAGE: the kernel's raw BTF (.BTF) out of an uncompressed kernel Image on stdout.
# A BTF blob starts with struct btf_header { u16 magic 0xeb9f; u8 version 1; u8 flags 0;
# u32 hdr_len 24; u32 type_off 0; u32 type_len; u32 str_off; u32 str_len } (include/uapi/linux/btf.h),
# strings right after the types, the string section starting and ending with a NUL: the first
# offset where the header holds together is it.
btf_from_image() {
	local off hl to tl so sl n size
	size=$(stat -c %s "$1")
	while IFS=: read -r off _; do
		read -r hl to tl so sl < <(od -An -tu4 -w20 -j $((off + 4)) -N 20 "$1")
		n=$((hl + so + sl))
		[ "$hl" = 24 ] && [ "$to" = 0 ] && [ "$so" = "$tl" ] && [ "$tl" -gt 0 ] && [ "$sl" -gt 0 ] &&
			[ $((off + n)) -le "$size" ] || continue
		[ "$(od -An -tu1 -j $((off + hl + so)) -N 1 "$1" | tr -d ' ')" = 0 ] || continue
		[ "$(od -An -tu1 -j $((off + n - 1)) -N 1 "$1" | tr -d ' ')" = 0 ] || continue
		tail -c +$((off + 1)) "$1" | head -c "$n"
		return 0
	done < <(LC_ALL=C grep -aboP '\x9f\xeb\x01\x00\x18\x00\x00\x00\x00\x00\x00\x00' "$1")
	log "no BTF blob in $1"
	return 1
}

# ---- kernel 7.3 (Debian trixie-backports; 6.17+ scheduler events) ---------------------------

kernel_7_3() {
	kernel_7_3_image
	trixie_chroot
	trixie_headers
}

# kernel_7_3_image: the 7.3 image and its modules only (no chroot: the virgl rig builds no module).
kernel_7_3_image() {
	ensure_pkgs debootstrap xz-utils
	private_apt trixie-bpo amd64 "deb $DEBIAN_MIRROR trixie-backports main"
	local dep
	dep=$(apt-cache "${APT_OPTS[@]}" show linux-image-amd64 | awk '/^Depends:/{print; exit}')
	KVER=$(grep -o 'linux-image-[^ ,]*' <<<"$dep" | head -1)
	KVER=${KVER#linux-image-}
	KPKGVER=$(apt-cache "${APT_OPTS[@]}" show linux-image-amd64 | awk '/^Version:/{print $2; exit}')
	[ -n "$KVER" ] && [ -n "$KPKGVER" ] || die "cannot find the trixie-backports kernel"
	local c=$VGPU_CACHE/7.3
	# linux-image-<ver> is an empty metapackage there: the kernel is linux-binary-<ver>.
	# linux-base-<ver> holds the build configuration (run.sh reads CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS).
	download_deb "$c/debs-$KVER" "linux-binary-$KVER=$KPKGVER" "linux-modules-$KVER=$KPKGVER" \
		"linux-base-$KVER=$KPKGVER" ||
		die "cannot download the $KVER kernel"
	extract_debs "$c/debs-$KVER" "$c/root-$KVER"
	VMLINUZ=$c/root-$KVER/usr/lib/modules/$KVER/vmlinuz
	[ -e "$VMLINUZ" ] || VMLINUZ=$c/root-$KVER/boot/vmlinuz-$KVER
	MODDIR=$c/root-$KVER/usr/lib/modules/$KVER
	[ -d "$MODDIR" ] || MODDIR=$c/root-$KVER/lib/modules/$KVER
	# Default multi-threaded TCG crashed 7.x at boot now and then (ebpf-machines.md).
	QEMU_ACCEL=tcg,thread=single
	OPTIONAL_DRIVERS=${VGPU_OPTIONAL_DRIVERS-amdgpu i915 xe}
}

# The bookworm gcc-12 cannot build modules for 7.3 (-fmin-function-alignment): build in a trixie
# chroot with trixie-backports' headers and gcc-14.
trixie_chroot() {
	CHROOT=$VGPU_CACHE/trixie-root
	if [ ! -e "$CHROOT/.debootstrap-done" ]; then
		log "debootstrap trixie (minbase) into $CHROOT"
		rm -rf "$CHROOT"
		debootstrap --variant=minbase trixie "$CHROOT" "$DEBIAN_MIRROR" >"$VGPU_CACHE/debootstrap.log" 2>&1 ||
			die "debootstrap failed, see $VGPU_CACHE/debootstrap.log"
		touch "$CHROOT/.debootstrap-done"
	fi
	echo "deb $DEBIAN_MIRROR trixie-backports main" >"$CHROOT/etc/apt/sources.list.d/trixie-backports.list"
}

# trixie_headers: the 7.3 (amd64) module's headers in the chroot.
trixie_headers() {
	if [ ! -d "$CHROOT/usr/src/linux-headers-$KVER" ]; then
		log "install linux-headers-$KVER in the chroot"
		chroot "$CHROOT" sh -c "apt-get -q update && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends linux-headers-$KVER=$KPKGVER make binutils" >&2 ||
			die "chroot: cannot install linux-headers-$KVER"
	fi
}

build_module_7_3() { # SRC OUTDIR
	local b=$2/kmod
	rm -rf "$b" && mkdir -p "$b" && cp "$1"/vgpu.c "$1"/vgpu_drm.h "$1"/Kbuild "$1"/probe.sh "$b"/
	mkdir -p "$CHROOT/build"
	# objtool reads /proc; the mounts live in a private namespace and vanish with it.
	unshare -m sh -c "mount --bind '$b' '$CHROOT/build' && mount -t proc proc '$CHROOT/proc' &&
		chroot '$CHROOT' make -s -C /usr/src/linux-headers-$KVER M=/build modules" >&2 ||
		die "module build (7.3) failed"
	VGPU_KO=$b/vgpu.ko
	log_module_api "$b"
}

# ---- kernel 7.3 on arm64 (trixie-backports' arm64 image, module cross-built in the chroot) ----
#
# The kernel Debian ships for Grace-class arm64 servers today, and the arm64 kernel of this rig
# that has ftrace direct calls (CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS, which bookworm's arm64
# 6.1 lacks): fentry/fexit attach here, so the arm64 guest runs every hook the x86 guests run.
# From the mirror through a private apt state (multi-arch amd64+arm64):
#   linux-binary-<abi>-arm64, linux-modules-<abi>-arm64  the image and its modules
#   linux-base-<abi>-arm64                               its build configuration (config)
#   busybox-static:arm64 (trixie)                        the guest's shell
# The module is built in the trixie chroot of the 7.3 rig with gcc-14-aarch64-linux-gnu and the
# arm64 headers (their kbuild tools are the amd64 linux-kbuild of the same version:
# Multi-Arch: foreign).
kernel_7_3_arm64() {
	ensure_pkgs debootstrap xz-utils dwarves
	private_apt trixie-bpo-arm64 arm64 "deb $DEBIAN_MIRROR trixie-backports main" "deb $DEBIAN_MIRROR trixie main"
	KVER=$(apt-cache "${APT_OPTS[@]}" show -a linux-image-arm64:arm64 |
		awk '/^Version:/{v=$2} /^Depends:/ && v ~ /bpo/ {print; exit}' | grep -o 'linux-image-[0-9][^ ,]*' | head -1)
	KVER=${KVER#linux-image-}
	KVER=${KVER%:arm64}
	KPKGVER=$(apt-cache "${APT_OPTS[@]}" policy "linux-binary-$KVER:arm64" | awk '/Candidate:/{print $2; exit}')
	[ -n "$KVER" ] && [ -n "$KPKGVER" ] && [ "$KPKGVER" != "(none)" ] || die "cannot find trixie-backports' arm64 kernel"
	local bb
	bb=$(apt-cache "${APT_OPTS[@]}" policy busybox-static:arm64 | awk '/Candidate:/{print $2; exit}')
	local c=$VGPU_CACHE/7.3-arm64
	download_deb "$c/debs-$KVER" "linux-binary-$KVER:arm64=$KPKGVER" "linux-modules-$KVER:arm64=$KPKGVER" \
		"linux-base-$KVER:arm64=$KPKGVER" "busybox-static:arm64=$bb" || die "cannot download the $KVER kernel"
	extract_debs "$c/debs-$KVER" "$c/root-$KVER"
	VMLINUZ=$c/root-$KVER/usr/lib/modules/$KVER/vmlinuz
	MODDIR=$c/root-$KVER/usr/lib/modules/$KVER
	BUSYBOX=$c/root-$KVER/usr/bin/busybox
	[ -e "$BUSYBOX" ] || BUSYBOX=$c/root-$KVER/bin/busybox
	# Single-threaded TCG, as for 6.1-arm64 (stale translations of patched kernel sites).
	QEMU_ACCEL=tcg,thread=single
	QEMU_ARCH=aarch64
	CC_APP=aarch64-linux-gnu-gcc
	GOARCH_GUEST=arm64
	OPTIONAL_DRIVERS=${VGPU_OPTIONAL_DRIVERS-amdgpu}
	ensure_pkgs gcc-aarch64-linux-gnu libc6-dev-arm64-cross
	trixie_chroot
	if [ ! -d "$CHROOT/usr/src/linux-headers-$KVER" ] || [ ! -x "$CHROOT/usr/bin/aarch64-linux-gnu-gcc-14" ]; then
		log "install linux-headers-$KVER:arm64 and gcc-14-aarch64-linux-gnu in the chroot"
		chroot "$CHROOT" sh -c "dpkg --add-architecture arm64 && apt-get -q update && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -q --no-install-recommends linux-headers-$KVER:arm64=$KPKGVER gcc-14-aarch64-linux-gnu make" >&2 ||
			die "chroot: cannot install linux-headers-$KVER:arm64"
	fi
}

build_module_7_3_arm64() { # SRC OUTDIR
	local b=$2/kmod
	rm -rf "$b" && mkdir -p "$b" && cp "$1"/vgpu.c "$1"/vgpu_drm.h "$1"/Kbuild "$1"/probe.sh "$b"/
	mkdir -p "$CHROOT/build"
	unshare -m sh -c "mount --bind '$b' '$CHROOT/build' && mount -t proc proc '$CHROOT/proc' &&
		chroot '$CHROOT' make -s -C /usr/src/linux-headers-$KVER ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- \
		CC=aarch64-linux-gnu-gcc-14 M=/build modules" >&2 ||
		die "module build (7.3 arm64) failed"
	[ "$(od -An -tx2 -j18 -N2 "$b/vgpu.ko" | tr -d ' ')" = 00b7 ] || die "$b/vgpu.ko is not an AArch64 module"
	VGPU_KO=$b/vgpu.ko
	log_module_api "$b"
	add_module_btf_from_image "$VGPU_CACHE/7.3-arm64/vmlinux-$KVER.btf" aarch64-linux-gnu-objcopy aarch64-linux-gnu-objdump
}

# log_module_api BUILDDIR: the kernel APIs probe.sh found in the headers (kmod/probe.sh).
log_module_api() {
	log "vgpu.ko API (probe.sh): $(sed -n 's/^#define HAVE_\([A-Z0-9_]*\) 1$/\1/p' "$1/vgpu_config.h" | tr '\n' ' ')"
}

# ---- initramfs ----------------------------------------------------------------------------

# Module index: name (dashes as underscores) -> path, for every .ko / .ko.xz / .ko.zst of MODDIR.
declare -A MOD_PATH
index_modules() {
	local f n
	MOD_PATH=()
	while IFS= read -r f; do
		n=${f##*/}; n=${n%%.ko*}; n=${n//-/_}
		MOD_PATH[$n]=$f
	done < <(find "$MODDIR/kernel" -name '*.ko*' 2>/dev/null)
}

mod_cat() { # PATH: the module's ELF on stdout
	case $1 in
	*.xz) xz -dc "$1" ;;
	*.zst) zstd -qdc "$1" ;;
	*) cat "$1" ;;
	esac
}

# mod_depends NAME: the depends= of the module's .modinfo (no modules.dep needed: 7.3 ships none).
mod_depends() {
	mod_cat "${MOD_PATH[$1]}" | tr '\0' '\n' | sed -n 's/^depends=//p' | head -1 | tr ',' ' '
}

# mod_order NAME...: load order (dependencies first), one name per line.
mod_order() {
	declare -A seen=()
	local out=()
	_visit() {
		local n=${1//-/_} d
		[ -n "${seen[$n]:-}" ] && return 0
		seen[$n]=1
		[ -n "${MOD_PATH[$n]:-}" ] || { log "module $n not found (built in?)"; return 0; }
		for d in $(mod_depends "$n"); do _visit "$d"; done
		out+=("$n")
	}
	local m
	for m in "$@"; do _visit "$m"; done
	printf '%s\n' "${out[@]}"
}

# build_initramfs OUTDIR IMAGE: busybox, modules (decompressed), the app, the guest script.
build_initramfs() {
	local w=$1/initramfs img=$2 m
	rm -rf "$w" && mkdir -p "$w"/{bin,dev,proc,sys,out,tmp,etc,lib/modules}
	cp "${BUSYBOX:-/bin/busybox}" "$w/bin/busybox"
	cp "$VGPU_DIR/guest/init" "$w/init" && chmod +x "$w/init"
	cp "$APP_BIN" "$w/bin/vgpu_app"
	if [ -n "${GHOSTDRIVER_BIN:-}" ] && [ -x "$GHOSTDRIVER_BIN" ]; then
		cp "$GHOSTDRIVER_BIN" "$w/bin/ghostdriver"
	fi
	# Overhead benchmark (scripts/bench.sh): the guest runs bench/guest/vgpu-bench.sh instead.
	if [ "${VGPU_BENCH:-}" = 1 ]; then
		"$VGPU_DIR/../../bench/guest/add-to-initramfs.sh" "$w"
	fi
	index_modules
	declare -A copied=()
	_copy() {
		local n
		for n in "$@"; do
			[ -n "${copied[$n]:-}" ] && continue
			copied[$n]=1
			mod_cat "${MOD_PATH[$n]}" >"$w/lib/modules/$n.ko"
		done
	}
	# base: 9p share for the results, then the DRM core the vgpu module needs.
	mod_order virtio_pci 9pnet_virtio 9p >"$w/etc/modules.9p"
	mod_order drm gpu_sched drm_shmem_helper >"$w/etc/modules.drm"
	_copy $(cat "$w/etc/modules.9p" "$w/etc/modules.drm")
	for m in $OPTIONAL_DRIVERS; do
		mod_order "$m" >"$w/etc/modules.opt.$m"
		_copy $(cat "$w/etc/modules.opt.$m")
	done
	cp "$VGPU_KO" "$w/lib/modules/vgpu.ko"
	cat >"$w/etc/vgpu.conf" <<-EOF
		KERNEL_LABEL=$KERNEL_LABEL
		KVER=$KVER
		JOBS_PER_THREAD=${VGPU_JOBS:-16}
		OPTIONAL_DRIVERS="$OPTIONAL_DRIVERS"
		GHOSTDRIVER_ARGS="${GHOSTDRIVER_ARGS:-live --verbose --records events --output /out/spans.json --clock-out /out/clock.txt --ready-file /tmp/gd.ready --bo-func vgpu_validate_bos --run-job-func vgpu_run_job}"
		GHOSTDRIVER_CLASSIC_ARGS="${GHOSTDRIVER_CLASSIC_ARGS-live --verbose --classic-tracepoints --output /out/spans-classic.json --clock-out /out/clock-classic.txt --ready-file /tmp/gd-classic.ready --bo-func vgpu_validate_bos --run-job-func vgpu_run_job}"
		GHOSTDRIVER_JOBS_ARGS="${GHOSTDRIVER_JOBS_ARGS-live --verbose --records jobs --output /out/spans-jobs.json --clock-out /out/clock-jobs.txt --ready-file /tmp/gd-jobs.ready --bo-func vgpu_validate_bos --run-job-func vgpu_run_job}"
		CLASSIC_JOBS_PER_THREAD=${VGPU_CLASSIC_JOBS:-16}
		CREDIT_LIMIT=${VGPU_CREDIT_LIMIT:-2}
		VGPU_BENCH=${VGPU_BENCH:-}
		VGPU_BENCH_RUNS=${VGPU_BENCH_RUNS:-3}
	EOF
	(cd "$w" && find . -print0 | cpio --null -o -H newc --quiet) >"$img"
}
