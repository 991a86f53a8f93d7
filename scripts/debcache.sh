# shellcheck shell=bash
# Debian packages downloaded once for every rig that boots the same kernel (sourced):
# scripts/test-arm64.sh and testdata/vgpu/lib.sh (6.1-arm64) both take bookworm's arm64
# linux-image and busybox-static, and `make test-arm64` runs one after the other. A package
# is downloaded into $DEB_CACHE (default build/debs) and linked (a copy across file systems)
# into the rig's own directory.
#
# An entry is keyed by the package's name, version and SHA256 as the caller's apt index gives
# them (the index apt-get download checks the file against):
# $DEB_CACHE/<sha256>/<name>_<version>_<arch>.deb, and its SHA256 is checked again each time it
# is handed out, so a file of another build, or one cut short, is never used: it is fetched again.

DEB_CACHE=${DEB_CACHE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build/debs}
case $DEB_CACHE in /*) ;; *) DEB_CACHE=$PWD/$DEB_CACHE ;; esac

deb_cache_log() { echo "[deb-cache] $*" >&2; }

# deb_cached SPEC APT-OPTION...: the .deb of SPEC (name[:arch]=version) in $DEB_CACHE, its path on
# stdout; downloaded first unless there. APT-OPTIONs select the caller's (private) apt state.
deb_cached() {
	local spec=$1 name ver sha f got tmp
	shift
	name=${spec%%=*} ver=${spec#*=}
	sha=$(apt-cache "$@" show "$spec" 2>/dev/null | awk '/^SHA256:/{print $2; exit}')
	[ -n "$sha" ] || { deb_cache_log "no SHA256 for $spec in the apt index"; return 1; }
	# The file name is apt-get download's: no architecture qualifier, the epoch's colon as %3a.
	for f in "$DEB_CACHE/$sha/${name%%:*}_${ver//:/%3a}_"*.deb; do
		[ -f "$f" ] || continue
		got=$(sha256sum "$f" | cut -d' ' -f1)
		if [ "$got" = "$sha" ]; then
			deb_cache_log "reuse $spec: $f (SHA256 $sha checked)"
			echo "$f"
			return 0
		fi
		deb_cache_log "$f has SHA256 $got, the index says $sha: fetching it again"
		rm -f "$f"
	done
	mkdir -p "$DEB_CACHE/$sha"
	tmp=$(mktemp -d "$DEB_CACHE/.download.XXXXXX")
	deb_cache_log "download $spec"
	if ! (cd "$tmp" && apt-get "$@" -o APT::Sandbox::User=root -q download "$spec" >&2); then
		rm -rf "$tmp"
		return 1
	fi
	for f in "$tmp"/*.deb; do
		got=$(sha256sum "$f" | cut -d' ' -f1)
		if [ "$got" != "$sha" ]; then
			deb_cache_log "downloaded $spec has SHA256 $got, the index says $sha"
			rm -rf "$tmp"
			return 1
		fi
		mv "$f" "$DEB_CACHE/$sha/"
		echo "$DEB_CACHE/$sha/${f##*/}"
	done
	rm -rf "$tmp"
}

# deb_link FILE DEST: DEST is FILE (a hard link; a copy where they are on different file systems).
deb_link() {
	ln -f "$1" "$2" 2>/dev/null || cp -f "$1" "$2"
}
