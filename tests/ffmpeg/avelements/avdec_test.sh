#!/bin/sh
# gpuhandleavdec end to end: clips the ffmpeg program encodes at test time, decoded in
# pipelines (run_pipeline, the tests' gst-launch-1.0, every one under GStreamer's leaks tracer)
# and compared byte for byte with `ffmpeg -i CLIP -f rawvideo`; hardware decoding, GPU memories,
# the errors a user sees, damaged streams.
# Usage: avdec_test.sh CASE (codecs, hwaccel, hw-decode, memories, errors, damaged, leaks)
case_name="$1"
. "$(dirname "$0")/avelements_lib.sh"
need_elements gpuhandleavdec

frames=12
lavfi="testsrc2=size=320x240:rate=25"

# make_clip FILE ENCODER [OPTIONS...]: $frames frames of $lavfi (B-frames where the codec has them).
make_clip() {
	file="$1"
	shift
	ffmpeg -nostdin -v error -y -f lavfi -i "$lavfi" -frames:v $frames -c:v "$@" "$file" ||
		fail "ffmpeg could not encode $file with $*"
}

# damage FILE FIRST STEP: five bytes overwritten every STEP bytes from FIRST to 2000 short of
# FILE's end.
damage() {
	size=$(wc -c <"$1")
	offset=$2
	while [ "$offset" -lt $((size - 2000)) ]; do
		printf '\377\000\377\000\377' | dd of="$1" bs=1 seek="$offset" conv=notrunc 2>/dev/null
		offset=$((offset + $3))
	done
}

has_encoder() {
	ffmpeg -hide_banner -encoders 2>/dev/null | grep -q " $1 "
}

# decode_both CLIP: system memory to filesink, and memory:GpuHandle through gpuhandledownload,
# each the bytes ffmpeg decodes (filesink reads no GstVideoMeta: GStreamer's default layout,
# which at 320x240 is ffmpeg's rawvideo layout).
decode_both() {
	ffmpeg -nostdin -v error -y -i "$1" -f rawvideo "$1.ref" || fail "ffmpeg could not decode $1"
	launch_expect 0 -q filesrc location="$1" ! parsebin ! gpuhandleavdec ! video/x-raw ! \
		filesink location="$1.sys"
	same_bytes "$1.sys" "$1.ref"
	launch_expect 0 -q filesrc location="$1" ! parsebin ! gpuhandleavdec ! \
		'video/x-raw(memory:GpuHandle)' ! gpuhandledownload ! filesink location="$1.gh"
	same_bytes "$1.gh" "$1.ref"
}

case "$case_name" in
codecs)
	compared=0
	# name, file, encoder and its options: lossy codecs with B-frames (reordering), intra-only
	# and lossless ones.
	while read -r name file encoder options; do
		if ! has_encoder "$encoder"; then
			echo "not compared: $name (this ffmpeg has no $encoder encoder)"
			continue
		fi
		# shellcheck disable=SC2086
		make_clip "$file" "$encoder" $options
		decode_both "$file"
		compared=$((compared + 1))
	done <<-CODECS
		H.264 h264.mkv libx264 -bf 2 -g 6
		HEVC hevc.mkv libx265 -x265-params log-level=none:bframes=2
		VP9 vp9.webm libvpx-vp9 -b:v 400k
		AV1 av1.mkv libaom-av1 -cpu-used 8
		ProRes prores.mkv prores_ks
		FFV1 ffv1.mkv ffv1
		MJPEG mjpeg.mkv mjpeg
		MPEG-2 mpeg2.mkv mpeg2video -bf 2
	CODECS
	[ $compared -ge 5 ] || fail "only $compared codecs could be compared"
	echo "ok: $compared codecs decoded byte for byte as ffmpeg decodes them"
	;;
hwaccel)
	# This machine's FFmpeg devices that cannot decode H.264: the fallback to software says so
	# and decodes the same bytes; hwaccel-fallback=error fails naming the device.
	make_clip h264.mkv libx264 -bf 2
	ffmpeg -v error -y -i h264.mkv -f rawvideo ref.yuv || fail "ffmpeg decode"
	for hw in vulkan vaapi cuda; do
		# (ffmpeg decodes in software where the device cannot: only hwdownload tells.)
		if ffmpeg -v error -hwaccel $hw -hwaccel_output_format $hw -i h264.mkv \
			-vf hwdownload,format=nv12 -f null - >/dev/null 2>&1; then
			echo "not checked: $hw decodes H.264 here (see hw-decode)"
			continue
		fi
		launch_expect 0 filesrc location=h264.mkv ! parsebin ! gpuhandleavdec hwaccel=$hw ! \
			video/x-raw ! filesink location=out.yuv
		# The fallback is said where it happens: the device (FFmpeg 5.1: the decoder has
		# no $hw configuration, or no device) or the first frame (FFmpeg 7.1 offers Vulkan
		# decoding, then fails to set it up on a device without video queues).
		expect_text "in software."
		grep -qi -- "$hw" log.txt || { cat log.txt; fail "the fallback does not name $hw"; }
		same_bytes out.yuv ref.yuv
		launch_expect 1 filesrc location=h264.mkv ! parsebin ! \
			gpuhandleavdec hwaccel=$hw hwaccel-fallback=error ! fakesink
		grep -qi -- "ERROR: .*$hw" log.txt || { cat log.txt; fail "the error does not name $hw"; }
	done
	;;
hw-decode)
	# Decoding on a hardware device: frames stay on it (memory:GpuHandle), and gpuhandledownload
	# reads them back as ffmpeg's hwdownload does.
	make_clip h264.mkv libx264 -bf 2
	decoded=0
	for hw in vaapi cuda vulkan; do
		ffmpeg -v error -y -hwaccel $hw -hwaccel_output_format $hw -i h264.mkv \
			-vf hwdownload,format=nv12 -f rawvideo ref_$hw.nv12 >/dev/null 2>&1 || continue
		launch_expect 0 -q filesrc location=h264.mkv ! parsebin ! \
			gpuhandleavdec hwaccel=$hw hwaccel-fallback=error ! \
			'video/x-raw(memory:GpuHandle)' ! gpuhandledownload ! video/x-raw,format=NV12 ! \
			filesink location=out_$hw.nv12
		same_bytes out_$hw.nv12 ref_$hw.nv12
		# Straight into GStreamer's GL and Vulkan memories, read back by their own elements.
		launch_expect 0 -q filesrc location=h264.mkv ! parsebin ! \
			gpuhandleavdec hwaccel=$hw hwaccel-fallback=error ! \
			'video/x-raw(memory:GLMemory),format=NV12' ! gldownload ! \
			video/x-raw,format=NV12 ! filesink location=gl_$hw.nv12
		same_bytes gl_$hw.nv12 ref_$hw.nv12
		launch_expect 0 -q filesrc location=h264.mkv ! parsebin ! \
			gpuhandleavdec hwaccel=$hw hwaccel-fallback=error ! \
			'video/x-raw(memory:VulkanImage),format=NV12' ! vulkandownload ! \
			video/x-raw,format=NV12 ! filesink location=vk_$hw.nv12
		same_bytes vk_$hw.nv12 ref_$hw.nv12
		decoded=$((decoded + 1))
	done
	[ $decoded -gt 0 ] ||
		skip "no FFmpeg hardware decoder of H.264 works here (vaapi, cuda, vulkan: no device, or FFmpeg without their decoding)"
	;;
memories)
	# GPU memories whose device a machine may lack (no /dev/udmabuf to make DMA-BUFs of memfds,
	# no CUDA driver): where it has one, every frame reaches EOS in it; where not, the element
	# error names the memory. (GL and Vulkan memory: test_gst_avdec.)
	make_clip h264.mkv libx264
	for memory in DMABuf CUDAMemory; do
		if ! gst-inspect-1.0 gpuhandleavdec | grep -q "memory:$memory"; then
			echo "not checked: the plugin was built without $memory"
			continue
		fi
		GST_TRACERS=leaks GST_DEBUG=GST_TRACER:7 timeout 120 "$run_pipeline" \
			filesrc location=h264.mkv ! parsebin ! gpuhandleavdec ! \
			"video/x-raw(memory:$memory)" ! fakesink >log.txt 2>&1
		status=$?
		grep -v GST_TRACER log.txt
		[ "$(leaked_objects)" -eq 0 ] || fail "objects outlived decoding into $memory"
		if [ $status -eq 0 ]; then
			echo "ok: decoded into $memory"
		elif [ $status -eq 1 ]; then
			grep -qE "ERROR: .*(No device to download frames into|Could not move a frame into) $memory" log.txt ||
				fail "the error does not name $memory"
			echo "ok: no $memory here, and the error says so"
		else
			fail "decoding into $memory hung or crashed (status $status)"
		fi
	done
	;;
errors)
	make_clip h264.mkv libx264
	launch_expect 1 filesrc location=h264.mkv ! parsebin ! gpuhandleavdec decoder=no-such ! fakesink
	expect_text "This FFmpeg has no video decoder named 'no-such'."
	launch_expect 1 filesrc location=h264.mkv ! parsebin ! gpuhandleavdec decoder=hevc ! fakesink
	expect_text "The decoder 'hevc' does not decode h264."
	launch_expect 1 filesrc location=h264.mkv ! parsebin ! gpuhandleavdec hwaccel=no-such ! fakesink
	expect_text "unknown device type 'no-such'"
	# A forced decoder of the same codec works.
	ffmpeg -v error -y -i h264.mkv -f rawvideo ref.yuv || fail "ffmpeg decode"
	launch_expect 0 -q filesrc location=h264.mkv ! parsebin ! gpuhandleavdec decoder=h264 \
		threads=1 ! video/x-raw ! filesink location=out.yuv
	same_bytes out.yuv ref.yuv
	;;
damaged)
	# Bytes overwritten in the middle of an H.264 stream and its end cut off: FFmpeg conceals
	# and carries on, the element with it, with one warning (not one per damaged frame: the
	# stream has dozens) and the count in its stats.
	make_clip h264.mkv libx264 -bf 2
	ffmpeg -v error -y -i h264.mkv -c copy -bsf:v h264_mp4toannexb clip.h264 || fail "ffmpeg remux"
	size=$(wc -c <clip.h264)
	cp clip.h264 damaged.h264
	damage damaged.h264 2000 997
	head -c $((size - 1500)) damaged.h264 >cut.h264
	launch_expect 0 filesrc location=cut.h264 ! h264parse ! gpuhandleavdec ! video/x-raw ! \
		fakesink
	expect_text "The stream has errors; FFmpeg conceals them"
	warnings=$(grep -c '^WARNING: from element' log.txt)
	[ "$warnings" -eq 1 ] || fail "$warnings warnings for one damaged stream (one expected)"
	# Frames the decoder refuses (a damaged MJPEG stream), as GstVideoDecoder's decoders count
	# them: by default (max-errors=-1) decoding goes on, with no warning per frame; with
	# max-errors=0 the first ends the stream with an error that names the property.
	ffmpeg -nostdin -v error -y -f lavfi -i "$lavfi" -frames:v 30 -c:v mjpeg mjpeg.mkv ||
		fail "ffmpeg could not encode MJPEG"
	damage mjpeg.mkv 3000 1499
	launch_expect 0 filesrc location=mjpeg.mkv ! matroskademux ! gpuhandleavdec ! fakesink
	warnings=$(grep -c '^WARNING: from element' log.txt)
	[ "$warnings" -le 1 ] || fail "$warnings warnings for one damaged MJPEG stream"
	launch_expect 1 filesrc location=mjpeg.mkv ! matroskademux ! gpuhandleavdec max-errors=0 ! \
		fakesink
	expect_text "more frames in a row than max-errors allows"
	# Only noise: no frame, no crash, an error or EOS.
	head -c 20000 /dev/urandom >noise.h264
	GST_TRACERS=leaks GST_DEBUG=GST_TRACER:7 timeout 120 "$run_pipeline" \
		filesrc location=noise.h264 ! h264parse ! gpuhandleavdec ! fakesink >log.txt 2>&1
	status=$?
	{ [ $status -lt 124 ] && [ $status -ne 2 ]; } || { cat log.txt; fail "noise hung or crashed the decoder"; }
	[ "$(leaked_objects)" -eq 0 ] || { cat log.txt; fail "objects outlived the noise"; }
	;;
leaks)
	make_clip h264.mkv libx264 -bf 2
	failed=0
	no_leaks filesrc location=h264.mkv ! parsebin ! gpuhandleavdec ! video/x-raw ! fakesink
	no_leaks filesrc location=h264.mkv ! parsebin ! gpuhandleavdec ! gpuhandledownload ! fakesink
	no_leaks filesrc location=h264.mkv ! parsebin ! gpuhandleavdec ! \
		'video/x-raw(memory:GLMemory)' ! gldownload ! fakesink
	no_leaks filesrc location=h264.mkv ! parsebin ! gpuhandleavdec ! \
		'video/x-raw(memory:VulkanImage)' ! vulkandownload ! fakesink
	no_leaks filesrc location=h264.mkv ! parsebin ! gpuhandleavdec decoder=no-such ! fakesink
	[ $failed -eq 0 ] || fail "leaks"
	;;
*)
	fail "unknown case '$case_name'"
	;;
esac
echo "ok: $case_name"
