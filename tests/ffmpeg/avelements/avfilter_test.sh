#!/bin/sh
# gpuhandleavfilter end to end: the same raw frames through `ffmpeg -vf GRAPH` and through the
# element in pipelines (run_pipeline, every one under GStreamer's leaks tracer), compared byte for
# byte: software graphs (including ones that change frame counts), *_vulkan graphs and libplacebo
# on lavapipe, *_opencl graphs on PoCL; the errors a user sees.
# Usage: avfilter_test.sh CASE (software, vulkan, opencl, libplacebo, errors, leaks)
case_name="$1"
. "$(dirname "$0")/avelements_lib.sh"
need_elements gpuhandleavfilter

# 20 frames of testsrc2, 320x240 NV12 at 25 per second, as both sides read them.
ffmpeg -v error -y -f lavfi -i testsrc2=size=320x240:rate=25 -frames:v 20 -pix_fmt nv12 \
	-f rawvideo in.nv12 || fail "ffmpeg could not make the input"
ffin="-f rawvideo -pix_fmt nv12 -s 320x240 -framerate 25 -i in.nv12"
gstin="filesrc location=in.nv12 ! rawvideoparse format=nv12 width=320 height=240 framerate=25/1"

# reference OUT DEVICE GRAPH: ffmpeg's frames of GRAPH (DEVICE: an -init_hw_device, or none),
# every frame the graph gives written (no frame rate conversion by the muxer).
reference() {
	out="$1"
	device="$2"
	graph="$3"
	init=""
	[ "$device" = none ] || init="-init_hw_device $device"
	# shellcheck disable=SC2086
	ffmpeg -nostdin -v error -y $init $ffin -vf "$graph" -fps_mode passthrough -f rawvideo "$out" ||
		fail "ffmpeg -vf '$graph' failed"
}

# stable_reference OUT DEVICE GRAPH: reference of `copy,GRAPH`, made twice; skips when ffmpeg's
# own bytes differ between the two runs, as there is then nothing to compare the element's bytes
# with. `copy` (the same pixels) because the ffmpeg 7.1 program uploads the rawvideo decoder's
# frames racily: `hwupload,hwdownload` alone gave other bytes than its input in 8 of 8 runs on
# Mesa 25's lavapipe (1 to 3 frames of 20 each time), `copy,hwupload,hwdownload` the input in 8 of
# 8, and `copy,hwupload,scale_vulkan` the same bytes in 8 of 8.
# SKIP bytes at the start (a first frame) may differ: see the libplacebo case.
stable_reference() {
	reference "$1" "$2" "copy,$3"
	reference "$1.again" "$2" "copy,$3"
	cmp -s -i "${4:-0}" "$1" "$1.again" ||
		skip "ffmpeg -vf '$3' gives different bytes from run to run here ($(ffmpeg -version | head -1 | cut -d' ' -f1-3)): nothing to compare with"
}

# filtered OUT UPSTREAM ELEMENT-OPTIONS DOWNSTREAM: the element's frames, written by filesink.
filtered() {
	out="$1"
	# shellcheck disable=SC2086
	launch_expect 0 -q $gstin ! $2 gpuhandleavfilter $3 ! $4 filesink location="$out"
}

need_vulkan() {
	timeout 60 ffmpeg -v error -init_hw_device vulkan -f lavfi -i nullsrc=size=64x64 \
		-frames:v 1 -f null - >/dev/null 2>&1 ||
		skip "FFmpeg cannot create a Vulkan device here (no Vulkan driver, or FFmpeg without Vulkan)"
}

case "$case_name" in
software)
	# Software graphs on system memory and on memory:GpuHandle (CPU frames), out as either.
	while read -r name graph; do
		reference "ref_$name" none "$graph"
		filtered "sys_$name" "" "graph=$graph" "video/x-raw !"
		same_bytes "sys_$name" "ref_$name"
		filtered "gh_$name" "gpuhandleupload backend=memfd !" "graph=$graph" \
			"video/x-raw(memory:GpuHandle) ! gpuhandledownload !"
		same_bytes "gh_$name" "ref_$name"
	done <<-GRAPHS
		scale scale=160:120,format=yuv420p
		fps fps=10
		select select='not(mod(n\,3))'
		deinterlace tinterlace=interleave_top,yadif=send_field
		null null
	GRAPHS
	;;
vulkan)
	need_vulkan
	# memory:GpuHandle Vulkan frames into FFmpeg's Vulkan frames on the same device, and out.
	stable_reference ref_scale vulkan "hwupload,scale_vulkan=w=160:h=120,hwdownload,format=nv12"
	filtered out_scale "gpuhandleupload backend=vulkan !" "graph=scale_vulkan=w=160:h=120" \
		"gpuhandledownload ! video/x-raw !"
	same_bytes out_scale ref_scale
	# System memory uploaded by the graph on a device of its own (hw-device), out in system
	# memory (FFmpeg's download).
	filtered out_up "" "hw-device=vulkan graph=hwupload,scale_vulkan=w=160:h=120" "video/x-raw !"
	same_bytes out_up ref_scale
	;;
opencl)
	if ! timeout 60 ffmpeg -v error -init_hw_device opencl -f lavfi -i nullsrc=size=64x64 \
		-frames:v 1 -f null - >/dev/null 2>&1; then
		skip "FFmpeg cannot create an OpenCL device here (no OpenCL platform, or FFmpeg without OpenCL)"
	fi
	# (PoCL downloads no NV12 OpenCL frames, in ffmpeg either: I420.)
	graph="format=yuv420p,hwupload,avgblur_opencl=sizeX=3"
	reference ref_blur opencl "$graph,hwdownload,format=yuv420p"
	filtered out_blur "" "hw-device=opencl graph=$graph" "video/x-raw !"
	same_bytes out_blur ref_blur
	# FFmpeg's OpenCL frames as memory:GpuHandle, mapped by gpuhandledownload through the
	# OpenCL backend over FFmpeg's context.
	filtered gh_blur "" "hw-device=opencl graph=$graph" \
		"video/x-raw(memory:GpuHandle) ! gpuhandledownload ! video/x-raw !"
	same_bytes gh_blur ref_blur
	# gpuhandle's own OpenCL frames into FFmpeg's OpenCL frames on the same context (no
	# hwupload in the graph), and out.
	filtered ocl_blur "videoconvert ! video/x-raw,format=I420 ! gpuhandleupload backend=opencl !" \
		"graph=avgblur_opencl=sizeX=3" "gpuhandledownload ! video/x-raw !"
	same_bytes ocl_blur ref_blur
	;;
libplacebo)
	need_vulkan
	ffmpeg -hide_banner -filters 2>/dev/null | grep -q ' libplacebo ' ||
		skip "this ffmpeg has no libplacebo filter"
	# On FFmpeg's own device (hwupload): libplacebo 7 (FFmpeg 7.1) needs device features that
	# gpuhandle's Vulkan device does not report (hostQueryReset; docs/ffmpeg.md).
	graph="hwupload,libplacebo=w=160:h=120:format=nv12"
	# The first frame is compared only in size: ffmpeg 7.1's libplacebo filter itself gives one
	# of two first frames from run to run (4 of 10 runs one, 6 the other, on Mesa 25's lavapipe;
	# the 19 frames after it the same in all 10).
	first=$((160 * 120 * 3 / 2))
	stable_reference ref_pl vulkan "$graph,hwdownload,format=nv12" $first
	filtered out_pl "" "hw-device=vulkan graph=$graph" "video/x-raw !"
	[ "$(wc -c <out_pl)" -eq "$(wc -c <ref_pl)" ] || fail "out_pl has another frame count than ref_pl"
	cmp -i $first out_pl ref_pl || fail "out_pl and ref_pl differ after the first frame"
	echo "ok: out_pl is byte for byte ref_pl after the first frame ($(wc -c <ref_pl) bytes)"
	;;
errors)
	launch_expect 1 $gstin ! gpuhandleavfilter graph=no_such_filter ! fakesink
	expect_text "the filter graph 'no_such_filter' does not parse"
	launch_expect 1 $gstin ! gpuhandleavfilter graph=scale_vulkan=w=64:h=64 ! fakesink
	expect_text "a filter of hardware frames needs hwupload before it"
	launch_expect 1 $gstin ! gpuhandleavfilter hw-device=no-such graph=null ! fakesink
	expect_text "unknown device type 'no-such'"
	if timeout 60 ffmpeg -v error -init_hw_device vulkan -f lavfi -i nullsrc=size=64x64 \
		-frames:v 1 -f null - >/dev/null 2>&1; then
		launch_expect 1 $gstin ! gpuhandleupload backend=vulkan ! \
			gpuhandleavfilter graph=scale=64:64 ! fakesink
		expect_text "a software filter needs hwdownload before it"
	fi
	;;
leaks)
	failed=0
	no_leaks $gstin ! gpuhandleavfilter graph=scale=160:120 ! video/x-raw ! fakesink
	no_leaks $gstin ! gpuhandleavfilter graph=fps=10 ! gpuhandledownload ! fakesink
	no_leaks $gstin ! gpuhandleavfilter graph=no_such_filter ! fakesink
	if timeout 60 ffmpeg -v error -init_hw_device vulkan -f lavfi -i nullsrc=size=64x64 \
		-frames:v 1 -f null - >/dev/null 2>&1; then
		no_leaks $gstin ! gpuhandleupload backend=vulkan ! \
			gpuhandleavfilter graph=scale_vulkan=w=160:h=120 ! gpuhandledownload ! fakesink
	fi
	[ $failed -eq 0 ] || fail "leaks"
	;;
*)
	fail "unknown case '$case_name'"
	;;
esac
echo "ok: $case_name"
