#!/bin/bash
# Compiles (syntax only, with the build's own flags and -Werror) every FFmpeg-bridge source and
# test against a newer FFmpeg's headers than the machine has: Debian 13's FFmpeg 7.1 -dev packages
# are downloaded (not installed) into a scratch folder. Usage: scripts/check-ffmpeg-headers.sh
# [BUILD_DIR] [SUITE]  (defaults: build, trixie). Needs a configured build dir (compile_commands).
set -euo pipefail
build=${1:-build}
suite=${2:-trixie}
scratch=${TMPDIR:-/tmp}/gpuhandle-ffmpeg-$suite
mkdir -p "$scratch/lists/partial" "$scratch/cache/archives/partial" "$scratch/root"
# The archive this machine's apt sources name (no mirror is written into the tree).
archive=$("$(dirname "$0")/debian-archive.sh")
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $archive $suite main" \
	>"$scratch/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$scratch/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$scratch/lists" -o "Dir::Cache=$scratch/cache")
if ! ls "$scratch"/libavutil-dev_*.deb >/dev/null 2>&1; then
	apt-get "${apt_opts[@]}" -q update
	(cd "$scratch" && apt-get "${apt_opts[@]}" -q download libavutil-dev libavcodec-dev \
		libavformat-dev libavfilter-dev libswscale-dev libswresample-dev)
	for deb in "$scratch"/*.deb; do dpkg -x "$deb" "$scratch/root"; done
fi
include="$scratch/root/usr/include/$(dpkg-architecture -qDEB_HOST_MULTIARCH)"
grep -h "define LIBAVUTIL_VERSION_M" "$include/libavutil/version.h"
python3 - "$build" "$include" <<'PY'
import json, shlex, subprocess, sys
build, include = sys.argv[1], sys.argv[2]
commands = json.load(open(f"{build}/compile_commands.json"))
chosen = [c for c in commands if "ffmpeg-bridge" in c["file"] or "tests/ffmpeg" in c["file"]]
failed = 0
for c in chosen:
    args, out, skip = shlex.split(c["command"]), [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MQ"):
            skip = True
            continue
        if a != "-MD":
            out.append(a)
    # The newer headers first, ahead of the system's own libav* headers.
    out = [out[0], "-isystem", include] + out[1:] + ["-fsyntax-only", "-Werror"]
    r = subprocess.run(out, cwd=c["directory"], capture_output=True, text=True)
    if r.returncode:
        failed += 1
        print("FAIL", c["file"])
        print(r.stderr[:4000])
print(f"{len(chosen)} files, {failed} failed")
sys.exit(1 if failed else 0)
PY
