#!/bin/sh
# What a gst-launch-1.0 user sees of the elements' `stats`: with -m, each gpuhandle element in the
# pipeline posts its totals as an element message when the stream ends, before the pipeline's
# EOS, with the frames it handled counted (upload, download, sink and src, and the FFmpeg
# elements where the gpuhandleav plugin was built).
if ! command -v gst-launch-1.0 >/dev/null 2>&1; then
	echo "SKIP: gst-launch-1.0 (Debian package gstreamer1.0-tools) is not installed"
	exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/launch-stats.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
failed=0

# launch LOG ARGS...: gst-launch-1.0 -m ARGS (bounded), its output in LOG; fails unless it ends
# with EOS.
launch() {
	log=$1
	shift
	if ! timeout 60 gst-launch-1.0 -m "$@" >"$log" 2>&1; then
		cat "$log"
		echo "FAIL: gst-launch-1.0 $* did not end with EOS"
		exit 1
	fi
}

# expect_stats LOG ELEMENT FRAMES-FIELD N: LOG has ELEMENT0's stats message (ELEMENT-stats) with
# FRAMES-FIELD=N, before the pipeline's EOS message.
expect_stats() {
	line=$(grep -n "from element \"${2}0\" (element): $2-stats, " "$1" | head -n 1)
	eos=$(grep -n 'from element "pipeline0" (eos)' "$1" | head -n 1 | cut -d: -f1)
	if [ -z "$line" ]; then
		cat "$1"
		echo "FAIL: $2 posted no stats message"
		failed=1
		return
	fi
	if ! printf '%s\n' "$line" | grep -q "[ ,]$3=(guint64)$4[,;]"; then
		echo "FAIL: $2's stats do not say $3=$4: $line"
		failed=1
		return
	fi
	if [ -z "$eos" ] || [ "${line%%:*}" -gt "$eos" ]; then
		echo "FAIL: $2's stats came after the pipeline's EOS, or there was none"
		failed=1
		return
	fi
	echo "ok: $2 posted its totals before EOS ($3=$4)"
}

launch "$work/updown.txt" videotestsrc num-buffers=7 ! gpuhandleupload ! gpuhandledownload ! fakesink
expect_stats "$work/updown.txt" gpuhandleupload frames 7
expect_stats "$work/updown.txt" gpuhandledownload frames 7

# A producer and a consumer process: the sink counts what it sent, the source what it received.
socket="$work/stats.sock"
timeout 60 gst-launch-1.0 -m videotestsrc num-buffers=5 ! video/x-raw,width=64,height=48 ! \
	gpuhandlesink socket-path="$socket" wait-for-consumers=1 >"$work/sink.txt" 2>&1 &
sink=$!
launch "$work/src.txt" gpuhandlesrc socket-path="$socket" ! fakesink
wait $sink || { cat "$work/sink.txt"; echo "FAIL: the producer did not end with EOS"; exit 1; }
expect_stats "$work/sink.txt" gpuhandlesink frames-sent 5
expect_stats "$work/src.txt" gpuhandlesrc frames 5

if [ "${GPUHANDLE_PLUGIN_HAVE_AV:-0}" = 1 ]; then
	launch "$work/filter.txt" videotestsrc num-buffers=6 ! gpuhandleavfilter graph=null ! fakesink
	expect_stats "$work/filter.txt" gpuhandleavfilter frames-out 6
	if command -v ffmpeg >/dev/null 2>&1; then
		ffmpeg -nostdin -v error -y -f lavfi -i testsrc2=size=64x48:rate=25 -frames:v 4 \
			-c:v ffv1 "$work/clip.mkv" || exit 1
		launch "$work/dec.txt" filesrc location="$work/clip.mkv" ! matroskademux ! \
			gpuhandleavdec ! fakesink
		expect_stats "$work/dec.txt" gpuhandleavdec frames 4
	else
		echo "not checked: gpuhandleavdec (no ffmpeg command to make a clip)"
	fi
fi
[ $failed -eq 0 ] || exit 1
echo "ok: every element's totals reached the bus"
