# shellcheck shell=bash
# Helpers of the virgl rig (sourced by testdata/vgpu/virgl.sh after ../lib.sh): the guest's
# Mesa (Debian bookworm's packages, extracted, served read-only over 9p) and the initramfs.

# The guest's userspace stack: Mesa's EGL/GLES/GBM and its DRI megadriver (virtio_gpu_dri.so
# is virgl), plus kmscube as a second client. Resolved, with every dependency, against an
# empty dpkg status (so the host's installed packages do not shorten the list).
VIRGL_PKGS=${VIRGL_PKGS:-libegl1 libgles2 libgbm1 libegl-mesa0 libgl1-mesa-dri kmscube}

# mesa_root: MESA_ROOT = $VGPU_CACHE/virgl-mesa/root, bookworm's VIRGL_PKGS and their
# dependencies extracted there (each .deb through DEB_CACHE, scripts/debcache.sh).
mesa_root() {
	private_apt bookworm amd64 "deb $DEBIAN_MIRROR bookworm main" "deb $DEBIAN_MIRROR bookworm-updates main" \
		"deb $DEBIAN_MIRROR-security bookworm-security main"
	local a=$VGPU_CACHE/apt-bookworm c=$VGPU_CACHE/virgl-mesa specs
	: >"$a/status.empty"
	# private_apt's status (/dev/null) is ignored by apt-get install's resolver, which then
	# reads the host's; an empty file is honoured.
	APT_OPTS+=(-o "Dir::State::status=$a/status.empty")
	# shellcheck disable=SC2086
	specs=$(apt-get "${APT_OPTS[@]}" -s -q install --no-install-recommends $VIRGL_PKGS |
		awk '/^Inst /{v=$3; gsub(/[()]/, "", v); print $2 "=" v}')
	[ -n "$specs" ] || die "cannot resolve $VIRGL_PKGS against bookworm"
	# A new resolution (a point release) starts a new root.
	local key
	key=$(sha256sum <<<"$specs" | cut -c1-16)
	MESA_ROOT=$c/root-$key
	# shellcheck disable=SC2086
	download_deb "$c/debs" $specs || die "cannot download the guest's Mesa"
	if [ ! -e "$MESA_ROOT/.done" ]; then
		rm -rf "$MESA_ROOT" && mkdir -p "$MESA_ROOT"
		local s n v
		for s in $specs; do
			n=${s%%=*} v=${s#*=}
			dpkg-deb -x "$(ls "$c/debs/${n}_${v//:/%3a}_"*.deb | head -1)" "$MESA_ROOT"
		done
		printf '%s\n' $specs >"$MESA_ROOT/.packages"
		touch "$MESA_ROOT/.done"
	fi
	MESA_VERSION=$(grep '^libgl1-mesa-dri=' "$MESA_ROOT/.packages" | cut -d= -f2)
	log "guest Mesa $MESA_VERSION: $(wc -l <"$MESA_ROOT/.packages") packages, $(du -sh "$MESA_ROOT" | cut -f1) in $MESA_ROOT"
}

# build_virgl_client OUT: the GLES client, linked on the host (bookworm's libegl-dev,
# libgles-dev, libgbm-dev) and run in the guest against MESA_ROOT mounted at /mesa: its
# interpreter and run path point there, so /proc/<pid>/exe is the client itself.
build_virgl_client() {
	local lib=/mesa/lib/x86_64-linux-gnu ulib=/mesa/usr/lib/x86_64-linux-gnu
	gcc -O2 -Wall -o "$1" "$VGPU_DIR/virgl/virgl_client.c" -lEGL -lGLESv2 -lgbm \
		-Wl,--dynamic-linker=$lib/ld-linux-x86-64.so.2 -Wl,-rpath,$ulib:$lib -Wl,--disable-new-dtags ||
		die "virgl client build failed"
}

# build_virgl_initramfs OUTDIR IMAGE: busybox, the 9p and virtio_gpu modules, the client, the
# receiver and the guest script (virgl/init).
build_virgl_initramfs() {
	local w=$1/initramfs img=$2
	rm -rf "$w" && mkdir -p "$w"/{bin,dev,proc,sys,out,mesa,tmp,etc,lib/modules}
	cp /bin/busybox "$w/bin/busybox"
	cp "$VGPU_DIR/virgl/init" "$w/init" && chmod +x "$w/init"
	cp "$CLIENT_BIN" "$w/bin/virgl_client"
	if [ -n "${GHOSTDRIVER_BIN:-}" ] && [ -x "$GHOSTDRIVER_BIN" ]; then
		cp "$GHOSTDRIVER_BIN" "$w/bin/ghostdriver"
	fi
	index_modules
	mod_order virtio_pci 9pnet_virtio 9p >"$w/etc/modules.9p"
	mod_order virtio_gpu >"$w/etc/modules.gpu"
	local n
	for n in $(cat "$w/etc/modules.9p" "$w/etc/modules.gpu" | sort -u); do
		mod_cat "${MOD_PATH[$n]}" >"$w/lib/modules/$n.ko"
	done
	cat >"$w/etc/virgl.conf" <<-EOF
		KERNEL_LABEL=$KERNEL_LABEL
		KVER=$KVER
		VIRGL_FRAMES=${VIRGL_FRAMES:-200}
		VIRGL_INFLIGHT_FRAMES=${VIRGL_INFLIGHT_FRAMES:-200}
		VIRGL_KMSCUBE_FRAMES=${VIRGL_KMSCUBE_FRAMES:-0}
		GHOSTDRIVER_ARGS="${GHOSTDRIVER_ARGS:-live --verbose --output /out/spans.json --clock-out /out/clock.txt --ready-file /tmp/gd.ready}"
		GHOSTDRIVER_FILTER_ARGS="${GHOSTDRIVER_FILTER_ARGS-live --fence-filter --output /out/spans-filter.json --clock-out /out/clock-filter.txt --ready-file /tmp/gdf.ready}"
		TRACEPARENT=${VIRGL_TRACEPARENT:-00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01}
	EOF
	(cd "$w" && find . -print0 | cpio --null -o -H newc --quiet) >"$img"
}
