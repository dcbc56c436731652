#!/bin/bash
# Builds and runs every test, as CI does: the main build (the suites without Vulkan), the Vulkan
# suites under Khronos's validation layer, valgrind memcheck over the
# core, transport, C API and GStreamer suites, ThreadSanitizer over the threaded suites,
# AddressSanitizer + UndefinedBehaviorSanitizer over every suite, the libFuzzer harnesses
# (clang), and the suites with version-dependent code (gst, ffmpeg) on Debian 13 (GStreamer 1.26,
# FFmpeg 7.1, Mesa 25) in a root of its own (scripts/debian13.sh). Each build directory is reused
# when it exists. Stops at the first step that fails.
set -euo pipefail
cd "$(dirname "$0")/.."

# Minutes per step, printed as each ends and all together at the end (CI's budget is 60).
timings=()
step_start=$SECONDS
step_done() {
	local minutes
	minutes=$(awk -v s=$((SECONDS - step_start)) 'BEGIN { printf "%.1f", s / 60 }')
	timings+=("$1: $minutes min")
	echo "test-all: $1 took $minutes min"
	step_start=$SECONDS
}

# The Debian 13 root (debootstrap and apt: mostly waiting on the network) is made or brought up
# to date in the background while the builds below compile; its build and tests run last.
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
mkdir -p build-debian13
debian13_log=build-debian13/prepare.log
# At low CPU and I/O priority, so that it slows the builds and tests beside it as little as it can.
$sudo nice -n 15 ionice -c 3 scripts/debian13.sh --prepare --quick >"$debian13_log" 2>&1 &
debian13_prepare=$!
# A step that fails ends the script: the root's making (which cleans up after itself) ends too.
trap 'printf "test-all: %s\n" "${timings[@]}"; kill "$debian13_prepare" 2>/dev/null || true' EXIT

# The main build: every suite that does not touch Vulkan, then those that do under Khronos's
# validation layer with synchronization validation (docs/boundaries.md; any error or warning
# fails the test), each test once: a test runs the same code with and without the layer, which
# only checks it, so running those suites plain as well repeated five minutes of work. The tests
# that leave a case out under the layer (suite `unvalidated`) run plain too. The build is the
# default (debugoptimized: -O2) without debug info, which changes no code and takes 40% of the
# compile time; reports still name functions. Where it exists already (the README's first
# command made it), it is used as it is. To debug a failure: meson configure build -Ddebug=true.
vulkan_suites=(backends interop gst peer ffmpeg examples demo bench)
test -d build || meson setup build --werror -Ddebug=false
# Everything is built first: meson test builds only what the selected tests name, and the
# install test installs every target.
meson compile -C build
meson test -C build --no-rebuild --print-errorlogs "${vulkan_suites[@]/#/--no-suite=}"
meson test -C build --no-rebuild --print-errorlogs --suite unvalidated
step_done "main build and the suites without Vulkan"
meson test -C build --no-rebuild --setup validation --print-errorlogs "${vulkan_suites[@]/#/--suite=}"
step_done "Vulkan validation layer"
# FFmpeg's elements load libavcodec, and with it libjxl's libhwy, whose start-up executes
# RDTSCP: valgrind 3.19 stops it with SIGILL on some CPUs (AMD EPYC here). Where a probe of
# that start-up fails under memcheck, that suite is left out here, and the line below says so.
valgrind_suites=(--suite core --suite transport --suite capi --suite gst)
if valgrind -q --error-exitcode=1 ffprobe -loglevel quiet -version >/dev/null 2>&1; then
	valgrind_suites+=(--suite ffmpeg-elements)
else
	echo "test-all: valgrind: suite ffmpeg-elements not run (SKIP): valgrind cannot run" \
		"libavcodec's start-up on this CPU (SIGILL in libhwy's RDTSCP)"
fi
meson test -C build --setup valgrind "${valgrind_suites[@]}" --no-suite gst-gpu --print-errorlogs
step_done "valgrind"

# The sanitizer and fuzz builds compile at -Og (ASan, TSan; GCC) or -O0 (libFuzzer; clang): a
# third less compile time than -O1/-O2 (half for clang), on code that only these checks run.
# Each compiles only what its suites need (scripts/test-targets.py), not every target.
build_for() { # build directory, then meson test's suite selection
	local dir=$1
	shift
	# shellcheck disable=SC2046 # one word per target
	ninja -C "$dir" $(python3 scripts/test-targets.py "$dir" "$@")
}

# ThreadSanitizer: fences, waiters, async waits, the transport.
test -d build-tsan || meson setup build-tsan -Db_sanitize=thread -Db_lundef=false -Doptimization=g
build_for build-tsan --suite sync --suite transport
meson test -C build-tsan --no-rebuild --setup tsan --suite sync --suite transport --print-errorlogs
step_done "ThreadSanitizer build and tests"

# AddressSanitizer + UndefinedBehaviorSanitizer over every suite (no debug info: the build
# takes a third of the time; reports still name functions, and UBSan's its source lines). The
# benchmarks are not built with sanitizers (they count allocations by interposing malloc), and
# the install test skips there (users do not install sanitized libraries): both are left out. So
# is the peer suite (it runs in the main build and under the validation layer): its hundreds of
# pipelines in one process end in an AddressSanitizer runtime CHECK (a thread's alternate signal
# stack fails to unmap) until the suite runs one process per case. And the headers suite, which
# only compiles each public header on its own (the main build does), the style suite (the
# formatter reads the sources, whatever the build), and the docs suite (a document checked
# against the registered elements, through a python3 that cannot load sanitized plugins).
test -d build-asan || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false \
	-Dintrospection=disabled -Doptimization=g -Ddebug=false
asan_suites=(--no-suite install --no-suite peer --no-suite headers --no-suite style --no-suite docs)
build_for build-asan "${asan_suites[@]}"
meson test -C build-asan --no-rebuild --setup asan --print-errorlogs "${asan_suites[@]}"
step_done "AddressSanitizer build and tests"

# libFuzzer: only the harnesses and what they link are built with clang.
test -d build-fuzz || CC=clang CXX=clang++ meson setup build-fuzz -Dfuzz=enabled \
	-Db_sanitize=address,undefined -Db_lundef=false -Dintrospection=disabled \
	-Dexamples=disabled -Doptimization=0 -Ddebug=false
build_for build-fuzz --suite fuzz
meson test -C build-fuzz --no-rebuild --suite fuzz --print-errorlogs
step_done "libFuzzer build and runs"

# Debian 13: GStreamer 1.26, FFmpeg 7.1 and Mesa 25 under the suites whose code differs by
# version, in a quick build of their own (-O0, only what those suites need). The GL consumer
# pipelines, run in 200 processes to catch a crash at exit in the main build, run in 40 here (one
# in 15 crashed when the crash was there): a quarter of the step's test time otherwise.
if ! wait "$debian13_prepare"; then
	cat "$debian13_log"
	echo "test-all: making the Debian 13 root failed (its log is above)"
	exit 1
fi
$sudo env GPUHANDLE_GL_CONSUMER_RUNS=8 scripts/debian13.sh --quick --results build-debian13 \
	--suite gst --suite ffmpeg
step_done "Debian 13 build and the gst and ffmpeg suites"
