#!/bin/bash
# Builds and runs every test, as CI does: the main build (every suite), the Vulkan tests under
# Khronos's validation layer, valgrind memcheck over the
# core, transport, C API and GStreamer suites, ThreadSanitizer over the threaded suites,
# AddressSanitizer + UndefinedBehaviorSanitizer over every suite, and the libFuzzer harnesses
# (clang). Each build directory is reused when it exists. Stops at the first step that fails.
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
trap 'printf "test-all: %s\n" "${timings[@]}"' EXIT

# The main build: every suite, then memcheck (failing on errors and definite leaks).
test -d build || meson setup build --werror
meson test -C build --print-errorlogs
step_done "main build and every suite"
# Khronos's validation layer with synchronization validation over every suite that touches
# Vulkan (docs/boundaries.md): any error or warning fails the test.
meson test -C build --setup validation --print-errorlogs --suite backends --suite interop \
	--suite gst --suite peer --suite ffmpeg --suite examples --suite demo --suite bench
step_done "Vulkan validation layer"
meson test -C build --setup valgrind --suite core --suite transport --suite capi --suite gst \
	--no-suite gst-gpu --print-errorlogs
step_done "valgrind"

# ThreadSanitizer: fences, waiters, async waits, the transport.
test -d build-tsan || meson setup build-tsan -Db_sanitize=thread -Db_lundef=false
meson test -C build-tsan --setup tsan --suite sync --suite transport --print-errorlogs
step_done "ThreadSanitizer build and tests"

# AddressSanitizer + UndefinedBehaviorSanitizer over every suite (no debug info, -O1: the build
# takes a third of the time; reports still name functions, and UBSan's its source lines). The
# benchmarks are not built with sanitizers (they count allocations by interposing malloc), and
# the install test skips there (users do not install sanitized libraries): both are left out. So
# is the peer suite (it runs in the main build and under the validation layer): its hundreds of
# pipelines in one process end in an AddressSanitizer runtime CHECK (a thread's alternate signal
# stack fails to unmap) until the suite runs one process per case.
test -d build-asan || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false \
	-Dintrospection=disabled -Doptimization=1 -Ddebug=false
meson test -C build-asan --setup asan --print-errorlogs --no-suite install --no-suite peer
step_done "AddressSanitizer build and tests"

# libFuzzer: only the harnesses and what they link are built with clang.
test -d build-fuzz || CC=clang CXX=clang++ meson setup build-fuzz -Dfuzz=enabled \
	-Db_sanitize=address,undefined -Db_lundef=false -Dintrospection=disabled \
	-Dexamples=disabled -Doptimization=1 -Ddebug=false
targets=$(meson introspect --targets build-fuzz | python3 -c '
import json, os, sys
print(" ".join(os.path.relpath(t["filename"][0], "build-fuzz") for t in json.load(sys.stdin)
               if t["type"] == "executable" and t["name"].startswith("fuzz_")))')
ninja -C build-fuzz $targets
meson test -C build-fuzz --no-rebuild --suite fuzz --print-errorlogs
step_done "libFuzzer build and runs"
