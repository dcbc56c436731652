#!/bin/sh
# gpuhandle-demo end to end: a short run makes a PNG of the expected size and a table that names
# every path; --direct crosses into GL without a copy; bad options and outputs fail clearly.
# Usage: demo_test.sh PROGRAM
case "$1" in
/*) demo="$1" ;;
*) demo="$PWD/$1" ;; # meson passes it relative to the build directory
esac
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

# Under AddressSanitizer (the asan test setup): memory errors are caught, leaks are not. LSan
# needs the slow unwinder to see through Debian's libraries (and match tests/lsan.supp), and with
# GCC 12's libgcc that deadlocks once llvmpipe's JIT has registered its frames (_Unwind_Find_FDE
# mallocs under its lock, the malloc unwinds again). The demo's GStreamer objects are counted by
# the leaks tracer below; the bridge's allocations by LSan in the ffmpeg suite.
if [ -n "$ASAN_OPTIONS" ]; then
	ASAN_OPTIONS="$ASAN_OPTIONS:fast_unwind_on_malloc=1:detect_leaks=0"
	export ASAN_OPTIONS
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/gpuhandle-demo.XXXXXX") || fail "mktemp"
trap 'rm -rf "$work"' EXIT
cd "$work" || fail "cd $work"

# Runs the demo (bounded); out.txt has stdout, err.txt stderr; fails unless the status is $1.
run_expect() {
	want="$1"
	shift
	timeout 120 "$demo" "$@" >out.txt 2>err.txt
	status=$?
	cat out.txt err.txt
	if [ "$want" = 0 ] && [ $status -ne 0 ]; then
		if grep -qE 'no element "gl|could not make the GStreamer pipeline' err.txt; then
			skip "GStreamer's GL elements are missing (Debian package gstreamer1.0-gl)"
		fi
		fail "gpuhandle-demo $* exited with $status"
	fi
	if [ "$want" != 0 ] && [ "$status" != "$want" ]; then
		fail "gpuhandle-demo $* exited with $status, not $want"
	fi
}

expect_text() {
	grep -qF -- "$2" "$1" || fail "$1 does not say '$2'"
}

# The PNG's signature and the width and height of its IHDR chunk (bytes 16..23, big-endian).
png_size() {
	[ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
		fail "$1 is not a PNG"
	set -- $(od -An -j16 -N8 -tu1 "$1")
	width=$(($1 * 16777216 + $2 * 65536 + $3 * 256 + $4))
	echo "${width}x$(($5 * 16777216 + $6 * 65536 + $7 * 256 + $8))"
}

# 6 frames of 320x240: 80x60 thumbnails, 4 columns and 2 rows, 4 pixels apart.
run_expect 0 --frames 6 --size 320x240 --output sheet.png
[ -s sheet.png ] || fail "no sheet.png"
size=$(png_size sheet.png)
[ "$size" = 340x132 ] || fail "sheet.png is $size, not 340x132"
echo "ok: sheet.png is a $size PNG"
expect_text out.txt "gpuhandle-demo: 6 frames of 320x240"
expect_text out.txt "contact sheet of 6 frames (340x132)"
for step in "bridge" "into-vulkan" "from-vulkan" "into-gl" "total"; do
	grep -qE "^  $step +.* 6 " out.txt || fail "the table has no row '$step' with 6 frames"
done
expect_text out.txt "paths taken:"
expect_text out.txt "into VulkanImage: "
expect_text out.txt "into GLMemory: "
expect_text out.txt "fences: "
# Every frame crossed into GStreamer without a copy.
grep -qE '^  bridge +AVFrame -> Frame -> GstBuffer +6 +6 +0 +0 ' out.txt ||
	fail "the bridge row does not say 6 zero-copy frames"
# Nothing went through system memory inside gpuhandle when FFmpeg had a Vulkan device.
if grep -q "FFmpeg Vulkan device: none" out.txt; then
	echo "note: FFmpeg opened no Vulkan device here; frames started in host memory"
else
	grep -qE '^  total +gpuhandle hand-offs +[0-9]+ +[0-9]+ +[0-9]+ +0 ' out.txt ||
		fail "a frame was copied through the CPU inside gpuhandle"
	# FFmpeg's Vulkan frames straight into GL: imported, not copied.
	run_expect 0 --frames 3 --size 320x240 --output direct.png --direct --quiet
	[ ! -s out.txt ] || fail "--quiet printed a table"
	[ "$(png_size direct.png)" = 256x68 ] || fail "direct.png is $(png_size direct.png)"
	run_expect 0 --frames 3 --size 320x240 --output direct.png --direct
	expect_text out.txt "into GLMemory: zero-copy"
fi

# GStreamer's leaks tracer over a whole run: no GStreamer object outlives gst_deinit().
GST_TRACERS=leaks GST_DEBUG=GST_TRACER:7 run_expect 0 --frames 3 --size 320x240 --output leaks.png \
	--quiet
alive=$(grep -c 'object-alive, type-name=(string)[A-Za-z]' err.txt)
[ "$alive" = 0 ] && ! grep -q 'Leaks detected' err.txt ||
	fail "GStreamer's leaks tracer found $alive objects alive after the demo"
echo "ok: the leaks tracer found no GStreamer object alive"

# Errors a user sees.
run_expect 2 --size 31x17
expect_text err.txt "--size wants WxH with even numbers from 16 to 7680, not '31x17'"
run_expect 2 --frames 0
expect_text err.txt "--frames wants a number from 1 to 100000, not '0'"
run_expect 2 --no-such-option
expect_text err.txt "unknown option '--no-such-option'"
run_expect 1 --frames 2 --size 64x64 --output no-such-dir/sheet.png
expect_text err.txt "gpuhandle-demo: error: could not create 'no-such-dir/sheet.png'"
run_expect 0 --help
expect_text out.txt "Usage: gpuhandle-demo"
echo "ok: gpuhandle-demo"
