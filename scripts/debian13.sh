#!/bin/bash
# Builds gpuhandle and runs its test suites on Debian 13 (trixie: GStreamer 1.26, FFmpeg 7.1,
# Mesa 25) beside this machine's Debian 12. Makes a Debian 13 root once (debootstrap, from the
# archive this machine's apt sources name) and reuses it; installs there the packages
# scripts/setup-debian.sh lists; copies the source tree in (git's files, with their times, so the
# build there rebuilds only what changed) and runs `meson test` in it with the arguments given.
# Ends with the line `N passed, N failed, N skipped` and a non-zero status on any failure.
#
# usage: sudo scripts/debian13.sh [options] [meson test arguments, e.g. --suite gst]
#   --prepare      make the root and install its packages, and stop (no build, no test)
#   --quick        a build of its own at -O0 that compiles only what the chosen tests need (CI's),
#                  in a root without the packages only other setups use (see 3.)
#   --results DIR  copy the run's meson-logs/testlog*.json into DIR/meson-logs on this machine,
#                  where .ci/run and scripts/test-results.py count them
# The root lives in $GPUHANDLE_DEBIAN13_ROOT (default ~/.cache/gpuhandle/debian13, 4 GB).
set -euo pipefail
cd "$(dirname "$0")/.."
suite=trixie
root=${GPUHANDLE_DEBIAN13_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/gpuhandle/debian13}
src=/src/gpuhandle  # inside the root
build=/build/gpuhandle
prepare_only=0
quick=0
results=
while [ $# -gt 0 ]; do
	case $1 in
	--prepare) prepare_only=1 ;;
	--quick) quick=1 build=/build/gpuhandle-quick ;;
	--results)
		results=$(realpath -m "${2:?--results needs a directory}")
		shift
		;;
	*) break ;;
	esac
	shift
done

if [ "$(id -u)" -ne 0 ]; then
	echo "debian13: debootstrap and chroot need root: run it with sudo" >&2
	exit 2
fi
archive=$(scripts/debian-archive.sh)

# 1. The root, once (a root whose making was cut short is made again).
if [ ! -f "$root/.gpuhandle-ready" ]; then
	command -v debootstrap >/dev/null || {
		apt-get update -q
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap
	}
	# Never remove through a mount of the machine's /dev or /proc left by a run cut short.
	if findmnt -rn -o TARGET | grep -q "^$root/"; then
		echo "debian13: $root still has mounts (findmnt | grep $root); unmount them first" >&2
		exit 1
	fi
	rm -rf --one-file-system "$root"
	mkdir -p "$root"
	echo "debian13: making a Debian 13 root in $root from $archive"
	debootstrap --variant=minbase "$suite" "$root" "$archive"
	echo "deb $archive $suite main" >"$root/etc/apt/sources.list"
	touch "$root/.gpuhandle-ready"
fi

# 2. What the root's programs need of the machine, unmounted however the script ends.
mounted=()
cleanup() {
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -l "${mounted[i]}" 2>/dev/null || true
	done
}
trap cleanup EXIT
trap 'exit 143' TERM INT # so that the mounts go however it is stopped
for dir in proc sys dev dev/pts dev/shm; do
	mkdir -p "$root/$dir"
	if ! mountpoint -q "$root/$dir"; then
		mount --bind "/$dir" "$root/$dir"
		mounted+=("$root/$dir")
	fi
done
# The caller's GPUHANDLE_* settings (the tests' knobs, such as GPUHANDLE_GL_CONSUMER_RUNS) reach
# the root; nothing else of the host's environment does.
mapfile -t knobs < <(env | grep -E '^GPUHANDLE_[A-Z0-9_]+=' || true)
in_root() {
	chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
		DEBIAN_FRONTEND=noninteractive "${knobs[@]}" "$@"
}

# 3. The packages: the same list as Debian 12's, each that this release has. dpkg in this root
# does not sync each file it writes (a root that is made again if lost needs no more; with it a
# new root for --quick is ready in under 4 minutes here). A quick build leaves out what only
# other setups use: clang (the fuzz build), clang-format (the style suite), Doxygen and gi-docgen
# (the reference, built on Debian 12), valgrind and
# Khronos's validation layer (--setup valgrind, --setup validation) and libplacebo (the backends
# suite's consumer test, which then skips with its reason).
[ -f "$root/etc/dpkg/dpkg.cfg.d/gpuhandle-unsafe-io" ] ||
	echo force-unsafe-io >"$root/etc/dpkg/dpkg.cfg.d/gpuhandle-unsafe-io"
mapfile -t wanted < <(scripts/setup-debian.sh --list)
if [ "$quick" -eq 1 ]; then
	mapfile -t wanted < <(printf '%s\n' "${wanted[@]}" |
		grep -vxE 'clang|clang-format|valgrind|vulkan-validationlayers|libplacebo-dev|doxygen|gi-docgen')
fi
missing=()
for p in "${wanted[@]}"; do
	in_root dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed ||
		missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	in_root apt-get update -q
	available=()
	for p in "${missing[@]}"; do
		if in_root apt-cache show "$p" >/dev/null 2>&1; then
			available+=("$p")
		else
			echo "debian13: Debian 13 has no package $p; the tests that need it skip"
		fi
	done
	[ ${#available[@]} -eq 0 ] ||
		in_root apt-get install -y -q --no-install-recommends "${available[@]}"
fi
# The translation tests need a locale whose messages follow LANGUAGE: glibc 2.41's built-in
# C.UTF-8 does not, so the root gets de_DE.UTF-8 (Debian 12's C.UTF-8 does).
if ! in_root locale -a 2>/dev/null | grep -qix 'de_DE.utf8'; then
	in_root apt-get install -y -q --no-install-recommends locales
	echo 'de_DE.UTF-8 UTF-8' >"$root/etc/locale.gen"
	in_root locale-gen
fi
[ "$prepare_only" -eq 0 ] || { echo "debian13: the root in $root is ready"; exit 0; }
in_root sh -c 'echo "debian13: $(. /etc/os-release; echo "$PRETTY_NAME"), $(gst-launch-1.0 --version | sed -n 2p), \
$(ffmpeg -version | head -n 1 | cut -d" " -f1-3), Mesa $(dpkg-query -W -f="\${Version}" mesa-vulkan-drivers)"'

# 4. The source tree, as git sees it (tracked files and new ones not ignored): a file whose bytes
# differ from the root's copy is written anew (its time is now, so the build there rebuilds
# what depends on it, even when an earlier run compiled an older copy after this one was
# edited); a file that is gone is removed; the others are left as they are.
mkdir -p "$root$src" "$root$build"
git ls-files -z --cached --others --exclude-standard | python3 -c '
import os, shutil, sys
dest = sys.argv[1]
wanted = {p for p in sys.stdin.read().split("\0") if p and os.path.lexists(p)}
for path in sorted(wanted):
    target = os.path.join(dest, path)
    if os.path.islink(path):  # a link stays a link (meson_options.txt -> meson.options)
        link = os.readlink(path)
        if not (os.path.islink(target) and os.readlink(target) == link):
            os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
            if os.path.lexists(target):
                os.remove(target)
            os.symlink(link, target)
        continue
    if not os.path.isfile(path):
        continue
    if os.path.islink(target):
        os.remove(target)
    with open(path, "rb") as f:
        data = f.read()
    try:
        with open(target, "rb") as f:
            same = f.read() == data
    except OSError:
        same = False
    if not same:
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)
    shutil.copymode(path, target)
for top, dirs, files in os.walk(dest):
    for name in files:
        path = os.path.relpath(os.path.join(top, name), dest)
        if path not in wanted:
            os.remove(os.path.join(top, name))
' "$root$src"

# 5. Build and test; the results are counted as .ci/run counts them. --quick configures at -O0
# without debug info (the least compile time) and compiles only what the chosen tests need.
rm -f "$root$build"/meson-logs/testlog*.json
test_args=
[ $# -eq 0 ] || test_args=$(printf ' %q' "$@")
setup_args="--werror -Ddebug=false"
build_cmd=true
if [ "$quick" -eq 1 ]; then
	setup_args="$setup_args -Doptimization=0"
	build_cmd="ninja -C $build \$(python3 scripts/test-targets.py $build$test_args)"
	test_args="--no-rebuild$test_args"
fi
status=0
in_root sh -c "cd $src && { test -f $build/build.ninja || meson setup $build $setup_args; } &&
	$build_cmd && meson test -C $build --print-errorlogs $test_args" || status=$?
if [ -n "$results" ]; then
	mkdir -p "$results/meson-logs"
	rm -f "$results"/meson-logs/testlog*.json
	cp "$root$build"/meson-logs/testlog*.json "$results/meson-logs/" 2>/dev/null || true
fi
read -r passed failed skipped <<<"$(python3 scripts/test-results.py "$root$build")"
[ $((passed + failed)) -gt 0 ] || echo "debian13: no test ran"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$status" -eq 0 ] && [ "$failed" -eq 0 ] && [ $((passed + failed)) -gt 0 ]
