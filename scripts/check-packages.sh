#!/bin/bash
# Installs the Debian packages dpkg-buildpackage made into a clean Debian 12 or 13 root (no build
# tree, no variable set) and uses them as a user would: gst-inspect-1.0, a pipeline through the
# elements, the README's C snippet built with pkg-config, and a PyGObject import of the typelib.
# usage: sudo scripts/check-packages.sh [--debian 12|13] DIR_WITH_DEBS [ROOT]
#   (Debian 12 by default; the packages must have been built for that release)
set -euo pipefail
release=12
if [ "${1:-}" = --debian ]; then
	release=${2:?--debian needs 12 or 13}
	shift 2
fi
debs=$(realpath "${1:?usage: check-packages.sh [--debian 12|13] DIR_WITH_DEBS [ROOT]}")
cd "$(dirname "$0")/.."
. scripts/package-root.sh
suite=$(suite_for "$release")

# 1. A minimal root, made once; each run starts from its clean state because the run before
# purged its packages (apt removes them with what they pulled in).
make_root "$suite" "${2:-$HOME/.cache/gpuhandle/debian$release-clean}"
trap leave_root EXIT
enter_root

# 2. The packages (not their debug symbols) with what they depend on, and the tools the checks
# use: GStreamer's own elements and tools, a C compiler, PyGObject.
rm -rf "$root/debs" && mkdir "$root/debs"
packages=()
for deb in "$debs"/*.deb; do
	case $deb in *-dbgsym_*) continue ;; esac
	cp "$deb" "$root/debs/"
	packages+=("/debs/$(basename "$deb")") # as the root sees it: apt takes paths, no shell globs
done
if [ ${#packages[@]} -eq 0 ]; then
	echo "check-packages: no .deb in $debs (scripts/build-packages.sh makes them)" >&2
	exit 1
fi
in_root apt-get update -q >/dev/null
in_root apt-get install -y -q --no-install-recommends \
	"${packages[@]}" gstreamer1.0-plugins-base gstreamer1.0-tools gcc libc6-dev pkgconf python3-gi \
	>"$root/debs/install.log" || { cat "$root/debs/install.log"; exit 1; }

# 3. What a user does with them.
failed=0
check() { # what, then the command run in the root
	local what=$1
	shift
	if out=$(in_root "$@" 2>&1); then
		echo "ok: $what"
	else
		echo "FAIL: $what"
		printf '%s\n' "$out" | tail -20
		failed=$((failed + 1))
	fi
}
check "gst-inspect-1.0 finds gpuhandleupload" gst-inspect-1.0 gpuhandleupload
check "gst-inspect-1.0 finds gpuhandleavdec" gst-inspect-1.0 gpuhandleavdec
check "a pipeline through gpuhandleupload ! gpuhandledownload" gst-launch-1.0 -q \
	videotestsrc num-buffers=10 ! video/x-raw,format=NV12,width=64,height=48 ! \
	gpuhandleupload backend=cpu ! gpuhandledownload ! fakesink
python3 - README.md "$root/debs/readme.c" <<'PY'
import re, sys
readme = open(sys.argv[1]).read()
section = readme[readme.index("## Using it from C\n"):]
open(sys.argv[2], "w").write(re.search(r"```c\n(.*?)```", section, re.S).group(1))
PY
check "the README's C snippet builds with pkg-config and runs" sh -c \
	'cc -std=c99 -Wall -Werror /debs/readme.c $(pkg-config --cflags --libs gpuhandle) -o /debs/readme && /debs/readme'
check "PyGObject imports GstGpuHandle-1.0" python3 -c \
	"import gi; gi.require_version('Gst', '1.0'); gi.require_version('GstGpuHandle', '1.0')
from gi.repository import Gst, GstGpuHandle; Gst.init(None); GstGpuHandle.init()
assert GstGpuHandle.CAPS_FEATURE_MEMORY_GPU_HANDLE == 'memory:GpuHandle'
memory = Gst.Buffer.new_wrapped(b'frame').peek_memory(0)
assert not GstGpuHandle.is_gpu_handle_memory(memory)"
check "every program answers --version" sh -c \
	'for p in gpuhandle-info gpuhandle-formats gpuhandle-avbridge gpuhandle-demo; do $p --version || exit 1; done'
check "man finds the programs' pages" sh -c 'ls /usr/share/man/man1/gpuhandle-info.1*'

# 4. Gone again, so that the next run starts from the clean root.
in_root apt-get purge -y -q --autoremove \
	libgpuhandle0 libgstgpuhandle-1.0-0 >"$root/debs/purge.log" 2>&1 ||
	{ cat "$root/debs/purge.log"; exit 1; }
echo "check-packages: Debian $release: $failed failed"
[ "$failed" -eq 0 ]
