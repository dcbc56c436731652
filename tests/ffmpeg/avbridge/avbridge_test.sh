#!/bin/sh
# gpuhandle-avbridge end to end: to-gst and from-gst bytes against the ffmpeg and gst-launch CLIs
# on clips made at test time, Vulkan frames on lavapipe, and the errors a user sees.
# Usage: avbridge_test.sh PROGRAM CASE (to-gst, to-gst-vulkan, from-gst, from-gst-vulkan, errors,
# leaks)
case "$1" in
/*) avbridge="$1" ;;
*) avbridge="$PWD/$1" ;; # meson passes it relative to the build directory
esac
case_name="$2"
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

command -v ffmpeg >/dev/null 2>&1 || skip "the ffmpeg command (Debian package ffmpeg) is not installed"
work=$(mktemp -d "${TMPDIR:-/tmp}/avbridge.XXXXXX") || fail "mktemp"
trap 'rm -rf "$work"' EXIT
cd "$work" || fail "cd $work"

# A lossless clip, so that decoded bytes are the same whoever decodes them.
make_clip() {
	ffmpeg -v error -y -f lavfi -i testsrc2=size=320x240:rate=25 -frames:v 10 -c:v ffv1 \
		clip.mkv || fail "ffmpeg could not make the test clip"
}

# Runs the program (bounded), keeping stderr in err.txt; prints it when the status is not $1.
run_expect() {
	want="$1"
	shift
	timeout 120 "$avbridge" "$@" 2>err.txt
	status=$?
	if [ "$want" = 0 ] && [ $status -ne 0 ]; then
		cat err.txt
		fail "gpuhandle-avbridge $* exited with $status"
	fi
	if [ "$want" != 0 ] && [ $status -eq 0 ]; then
		cat err.txt
		fail "gpuhandle-avbridge $* succeeded; an error was expected"
	fi
	if [ "$want" != 0 ] && [ $status -ge 124 ]; then
		cat err.txt
		fail "gpuhandle-avbridge $* hung or crashed (status $status)"
	fi
	cat err.txt
}

expect_text() {
	grep -qF -- "$1" err.txt || fail "the message does not say '$1'"
}

same_bytes() {
	[ -s "$1" ] || fail "$1 is empty"
	cmp "$1" "$2" || fail "$1 and $2 differ"
	echo "ok: $1 is byte for byte $2 ($(wc -c <"$2") bytes)"
}

need_vulkan() {
	timeout 60 ffmpeg -v error -init_hw_device vulkan -f lavfi -i nullsrc=size=64x64 \
		-frames:v 1 -f null - >/dev/null 2>&1 ||
		skip "FFmpeg cannot create a Vulkan device here (no Vulkan driver, or FFmpeg without Vulkan)"
}

need_gst_launch() {
	command -v gst-launch-1.0 >/dev/null 2>&1 ||
		skip "gst-launch-1.0 (Debian package gstreamer1.0-tools) is not installed"
}

testsrc='videotestsrc num-buffers=10 ! video/x-raw,width=320,height=240'

case "$case_name" in
to-gst)
	make_clip
	ffmpeg -v error -i clip.mkv -f rawvideo -pix_fmt yuv420p ref.yuv || fail "ffmpeg decode"
	run_expect 0 to-gst clip.mkv gpuhandledownload ! filesink location=out.yuv
	expect_text "pushed 10 frames"
	expect_text "zero-copy: 10"
	same_bytes out.yuv ref.yuv
	# A filter graph on software frames, and --frames.
	ffmpeg -v error -i clip.mkv -vf scale=160:120,format=nv12 -frames:v 4 -f rawvideo ref4.nv12 ||
		fail "ffmpeg decode"
	run_expect 0 to-gst clip.mkv --frames 4 --filter scale=160:120,format=nv12 \
		'gpuhandledownload ! filesink location=out4.nv12'
	same_bytes out4.nv12 ref4.nv12
	;;
to-gst-vulkan)
	need_vulkan
	make_clip
	ffmpeg -v error -i clip.mkv -vf format=nv12 -f rawvideo ref.nv12 || fail "ffmpeg decode"
	run_expect 0 to-gst clip.mkv --hw-device vulkan --filter format=nv12,hwupload \
		gpuhandledownload ! filesink location=out.nv12
	expect_text "pushed 10 frames"
	same_bytes out.nv12 ref.nv12
	;;
from-gst)
	need_gst_launch
	gst-launch-1.0 -q $testsrc,format=I420 ! filesink location=ref.yuv || fail "gst-launch-1.0"
	run_expect 0 from-gst "$testsrc,format=I420" out.yuv
	expect_text "wrote 10 frames"
	same_bytes out.yuv ref.yuv
	# Through gpuhandle memory (memfd) and a lossless encoder in Matroska.
	run_expect 0 from-gst "$testsrc,format=I420 ! gpuhandleupload backend=memfd" --codec ffv1 \
		out.mkv
	ffmpeg -v error -i out.mkv -f rawvideo decoded.yuv || fail "ffmpeg decode of out.mkv"
	same_bytes decoded.yuv ref.yuv
	;;
from-gst-vulkan)
	need_gst_launch
	need_vulkan
	gst-launch-1.0 -q $testsrc,format=NV12 ! filesink location=ref.nv12 || fail "gst-launch-1.0"
	# gpuhandle's Vulkan images (one per plane, as AVVkFrame has them) into frames of FFmpeg's
	# Vulkan device, downloaded by hwdownload.
	run_expect 0 from-gst \
		"$testsrc,format=NV12 ! gpuhandleupload backend=vulkan storage=linear-image" \
		--hw-device vulkan --filter hwdownload,format=nv12 out.nv12
	expect_text "wrote 10 frames"
	same_bytes out.nv12 ref.nv12
	;;
errors)
	make_clip
	run_expect 2 to-gst clip.mkv --no-such-option fakesink
	expect_text "unknown option '--no-such-option'"
	run_expect 2 from-gst --hwaccel vulkan videotestsrc out.yuv
	expect_text "--hwaccel is not an option of from-gst"
	run_expect 2 to-gst clip.mkv
	expect_text "to-gst needs INPUT and PIPELINE"
	run_expect 1 to-gst clip.mkv --hwaccel no-such-device fakesink
	expect_text "unknown --hwaccel type 'no-such-device'"
	run_expect 1 to-gst clip.mkv --hw-device no-such-device fakesink
	expect_text "unknown device type 'no-such-device'"
	run_expect 1 to-gst missing.mkv fakesink
	expect_text "could not open 'missing.mkv': No such file or directory"
	run_expect 1 to-gst clip.mkv 'no-such-element ! fakesink'
	expect_text 'no element "no-such-element"'
	run_expect 1 from-gst 'videotestsrc num-buffers=2 ! no-such-element' out.yuv
	expect_text 'no element "no-such-element"'
	run_expect 1 from-gst 'videotestsrc num-buffers=2' out.no-such-format
	expect_text "cannot tell the output format from the name 'out.no-such-format'"
	run_expect 1 to-gst clip.mkv --filter no_such_filter fakesink
	expect_text "the filter graph 'no_such_filter' does not parse"
	# Cut short in the middle of the frames.
	head -c "$(($(wc -c <clip.mkv) / 2))" clip.mkv >truncated.mkv
	run_expect 1 to-gst truncated.mkv gpuhandledownload ! fakesink
	expect_text "'truncated.mkv' is damaged or truncated"
	# A pipeline that fails while running: the element's error comes back.
	run_expect 1 to-gst clip.mkv gpuhandledownload ! filesink location=no-such-dir/out.yuv
	expect_text "the pipeline failed in"
	;;
leaks)
	# GStreamer's leaks tracer (the program calls gst_deinit): every buffer, memory and caps it
	# made is gone at the end, on success and on a pipeline error.
	make_clip
	no_leaks() {
		want="$1"
		shift
		GST_TRACERS=leaks GST_DEBUG=GST_TRACER:7 run_expect "$want" "$@" >/dev/null
		alive=$(grep -c 'object-alive, type-name=(string)[A-Za-z]' err.txt)
		if [ "$alive" -ne 0 ] || grep -q 'Leaks detected' err.txt; then
			grep -E 'object-alive, type-name=\(string\)[A-Za-z]' err.txt | cut -c1-300 | head -20
			fail "$alive objects alive after gpuhandle-avbridge $*"
		fi
		echo "ok: no leaks: $*"
	}
	no_leaks 0 to-gst clip.mkv gpuhandledownload ! fakesink
	no_leaks 0 from-gst "$testsrc,format=I420 ! gpuhandleupload backend=memfd" out.yuv
	no_leaks 1 to-gst clip.mkv gpuhandledownload ! filesink location=no-such-dir/out.yuv
	;;
*)
	fail "unknown case '$case_name'"
	;;
esac
echo "ok: $case_name"
