#!/bin/bash
# Builds the Debian packages (debian/) from the committed tree and checks them with lintian.
# dpkg-buildpackage writes beside the source, so it builds in a temporary export of HEAD, never
# in the checkout; the .deb files land in OUTDIR. Then `sudo scripts/check-packages.sh OUTDIR`.
# usage: sudo scripts/build-packages.sh [--debian 12|13] [OUTDIR]   (default: build-deb)
#   without --debian: on this machine, for its release; with it: in a minimal root of that
#   release (~/.cache/gpuhandle/debian<N>-build), so Debian 13's packages build on Debian 12.
set -euo pipefail
release=
if [ "${1:-}" = --debian ]; then
	release=${2:?--debian needs 12 or 13}
	shift 2
fi
out=$(realpath -m "${1:-build-deb}")
cd "$(dirname "$0")/.."
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
if ! git diff --quiet HEAD -- debian; then
	echo "build-packages: debian/ has uncommitted changes; they are not in the packages" >&2
fi
export DEBIAN_FRONTEND=noninteractive

# The packaging tools, then what debian/control's Build-Depends names (apt reads it from the
# tree), then the build and lintian: run on this machine or, through in_root, in a root.
build_in() { # DIR (the source's parent, as the builder sees it), runner...
	local dir=$1
	shift
	"$@" apt-get install -y -q --no-install-recommends dpkg-dev debhelper lintian >/dev/null
	"$@" sh -c "cd '$dir/gpuhandle' && apt-get build-dep -y -q ./" >/dev/null
	"$@" sh -c "cd '$dir/gpuhandle' && dpkg-buildpackage -us -uc -b" >"$log" 2>&1 || {
		tail -60 "$log"
		echo "build-packages: dpkg-buildpackage failed" >&2
		return 1
	}
}

start=$(date +%s)
if [ -z "$release" ]; then
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
	mkdir "$work/gpuhandle"
	git archive HEAD | tar -x -C "$work/gpuhandle"
	log=$work/build.log
	build_in "$work" $sudo env
	made=$work
else
	if [ "$(id -u)" -ne 0 ]; then
		echo "build-packages: --debian needs root (debootstrap, chroot): run it with sudo" >&2
		exit 2
	fi
	. scripts/package-root.sh
	make_root "$(suite_for "$release")" "$HOME/.cache/gpuhandle/debian$release-build"
	trap leave_root EXIT
	enter_root
	rm -rf "$root/pkg" && mkdir -p "$root/pkg/gpuhandle"
	git archive HEAD | tar -x -C "$root/pkg/gpuhandle"
	log=$root/pkg/build.log
	in_root apt-get update -q >/dev/null
	build_in /pkg in_root
	made=$root/pkg
fi
echo "build-packages: built in $((($(date +%s) - start) / 60)) min"
mkdir -p "$out"
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
cp "$made"/*.deb "$made"/*.changes "$made"/*.buildinfo "$out/"
ls "$out"/*.deb
# Errors and warnings fail; informational tags are printed for a reader. Lintian of the release
# the packages are for, where they were built.
changes=$(basename "$(ls "$made"/*.changes)")
if [ -z "$release" ]; then
	lintian --fail-on error,warning --info "$made/$changes"
else
	in_root lintian --fail-on error,warning --info "/pkg/$changes"
fi
echo "build-packages: lintian clean; packages in $out"
