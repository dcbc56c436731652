#!/bin/bash
# Builds the Debian packages (debian/) from the committed tree and checks them with lintian.
# dpkg-buildpackage writes beside the source, so it builds in a temporary export of HEAD, never
# in the checkout; the .deb files land in OUTDIR. Then `sudo scripts/check-packages.sh OUTDIR`.
# usage: sudo scripts/build-packages.sh [OUTDIR]   (default: build-deb)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-build-deb}")
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo

# The packaging tools, then what debian/control's Build-Depends names (apt reads it from the tree).
need=()
for tool in dpkg-buildpackage:dpkg-dev dh:debhelper lintian:lintian debootstrap:debootstrap; do
	command -v "${tool%%:*}" >/dev/null || need+=("${tool#*:}")
done
export DEBIAN_FRONTEND=noninteractive
if [ ${#need[@]} -gt 0 ]; then
	$sudo apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi
$sudo apt-get build-dep -y -q ./ >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/gpuhandle"
git archive HEAD | tar -x -C "$work/gpuhandle"
if ! git diff --quiet HEAD -- debian; then
	echo "build-packages: debian/ has uncommitted changes; they are not in the packages" >&2
fi
start=$(date +%s)
(cd "$work/gpuhandle" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 || {
	tail -60 "$work/build.log"
	echo "build-packages: dpkg-buildpackage failed" >&2
	exit 1
}
echo "build-packages: built in $((($(date +%s) - start) / 60)) min"
mkdir -p "$out"
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
cp "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out/"
ls "$out"/*.deb
# Errors and warnings fail; informational tags are printed for a reader.
lintian --fail-on error,warning --info "$out"/*.changes
echo "build-packages: lintian clean; packages in $out"
