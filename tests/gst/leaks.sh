#!/bin/sh
# GStreamer's leaks tracer over gpuhandle pipelines: every GstObject and GstMiniObject made while a
# pipeline ran (buffers, memories, caps, pools, contexts, elements) is gone when it ends.
if ! command -v gst-launch-1.0 >/dev/null 2>&1; then
	echo "SKIP: gst-launch-1.0 (Debian package gstreamer1.0-tools) is not installed"
	exit 77
fi
export GST_GL_WINDOW=egl-device
src="videotestsrc num-buffers=30 ! video/x-raw,format=NV12,width=320,height=240"
failed=0
ran=0
run() {
	out=$(GST_TRACERS=leaks GST_DEBUG=GST_TRACER:7 timeout 120 gst-launch-1.0 -q "$@" 2>&1)
	rc=$?
	alive=$(printf '%s\n' "$out" | grep -c 'object-alive, type-name=(string)[A-Za-z]')
	if [ $rc -ne 0 ] || [ "$alive" -ne 0 ] || printf '%s' "$out" | grep -q 'Leaks detected'; then
		printf '%s\n' "$out" | grep -E 'object-alive, type-name=\(string\)[A-Za-z]|ERROR|rror' | cut -c1-300 | head -20
		echo "FAIL (exit $rc, $alive objects alive): $*"
		failed=1
	else
		echo "ok: no leaks: $*"
	fi
	ran=$((ran + 1))
}
for backend in cpu memfd vulkan gl opencl; do
	run $src ! gpuhandleupload backend=$backend ! gpuhandledownload ! fakesink
done
run $src ! gpuhandleupload backend=vulkan ! gpuhandledownload ! 'video/x-raw(memory:GLMemory)' ! gldownload ! fakesink
run $src ! glupload ! gpuhandleupload ! gpuhandledownload ! 'video/x-raw(memory:GLMemory)' ! gldownload ! fakesink
run $src ! gpuhandleupload backend=memfd ! gpuhandledownload ! videoconvert ! video/x-raw,format=I420 ! fakesink
# Frames across processes: a producer pipeline in the background, the consumer here; both under
# the tracer (the producer's output is checked once it has ended).
sock=${XDG_RUNTIME_DIR:-/tmp}/gpuhandle-leaks-$$.sock
for upstream in "" "! gpuhandleupload backend=memfd"; do
	producer=$(mktemp)
	GST_TRACERS=leaks GST_DEBUG=GST_TRACER:7 timeout 120 gst-launch-1.0 -q $src $upstream \
		! gpuhandlesink sync=false socket-path=$sock wait-for-consumers=1 >"$producer" 2>&1 &
	pid=$!
	run gpuhandlesrc socket-path=$sock ! gpuhandledownload ! videoconvert ! fakesink
	wait $pid
	rc=$?
	alive=$(grep -c 'object-alive, type-name=(string)[A-Za-z]' "$producer")
	if [ $rc -ne 0 ] || [ "$alive" -ne 0 ] || grep -q 'Leaks detected' "$producer"; then
		grep -E 'object-alive|ERROR' "$producer" | cut -c1-300 | head -20
		echo "FAIL (exit $rc, $alive objects alive): producer $src $upstream ! gpuhandlesink"
		failed=1
	else
		echo "ok: no leaks: producer $src $upstream ! gpuhandlesink"
	fi
	rm -f "$producer"
	ran=$((ran + 1))
done

# Faults injected into running pipelines (GPUHANDLE_FAULT_INJECTION): the pipeline stops with an
# error (exit 1, not a hang: timeout's 124) and still leaves nothing behind. gst-launch-1.0 1.22
# itself hangs now and then after an error during preroll (its bus handler's quit comes before
# its main loop runs and is lost: docs/gstreamer.md, "After an error"; 1 in 447 runs of
# GStreamer's own elements): a run that timed out after gst-launch-1.0 had reported that the
# pipeline would not preroll is run once more, and said so. Open finding (GStreamer 1.22 and
# 1.26; 1 run in 60 by hand on Debian 12): after the preroll error of allocate:1:out-of-memory,
# an allocation query with system-memory caps, a GstVideoBufferPool and a caps are still alive at
# exit (docs/gstreamer.md). A run whose only objects alive are of those three kinds is run once
# more, and said so; a leak that comes back fails.
runFault() {
	plan=$1
	shift
	for attempt in 1 2; do
		out=$(GPUHANDLE_FAULT_INJECTION=$plan GST_TRACERS=leaks GST_DEBUG=GST_TRACER:7 \
			timeout 30 gst-launch-1.0 -q "$@" 2>&1)
		rc=$?
		if [ $rc -eq 124 ] && [ $attempt -eq 1 ] &&
			printf '%s' "$out" | grep -q "ERROR: pipeline doesn't want to preroll"; then
			echo "note: gst-launch-1.0 hung after the preroll error (its lost quit): run again"
			continue
		fi
		kinds=$(printf '%s\n' "$out" | grep -o 'object-alive, type-name=(string)[A-Za-z][A-Za-z0-9]*' |
			sed 's/.*(string)//' | sort -u | tr '\n' ' ')
		if [ $rc -eq 1 ] && [ $attempt -eq 1 ] && [ -n "$kinds" ] &&
			[ -z "$(printf '%s' "$kinds" | tr ' ' '\n' |
				grep -vxE 'GstVideoBufferPool|GstQuery|GstCaps|')" ]; then
			echo "note: upstream's allocation objects alive after the preroll error ($kinds): run again"
			continue
		fi
		break
	done
	alive=$(printf '%s\n' "$out" | grep -c 'object-alive, type-name=(string)[A-Za-z]')
	if [ $rc -ne 1 ] || [ "$alive" -ne 0 ] || printf '%s' "$out" | grep -q 'Leaks detected'; then
		printf '%s\n' "$out" | grep -E 'object-alive, type-name=\(string\)[A-Za-z]|ERROR' | cut -c1-300 | head -20
		echo "FAIL (exit $rc, $alive objects alive) with fault $plan: $*"
		failed=1
	else
		echo "ok: fault $plan is an error, no leaks: $*"
	fi
	ran=$((ran + 1))
}
for plan in allocate:1:out-of-memory map:5:device-lost wait:5:timeout; do
	for backend in memfd vulkan; do
		runFault $plan $src ! gpuhandleupload backend=$backend ! gpuhandledownload ! fakesink
	done
done
# Export and import (Vulkan memory into GL by opaque fd) and a device copy (GStreamer's Vulkan
# images into GL memory).
for plan in export:3:device-lost import:3:timeout; do
	runFault $plan $src ! gpuhandleupload backend=vulkan ! gpuhandledownload ! \
		'video/x-raw(memory:GLMemory)' ! gldownload ! fakesink
done
runFault copy:3:device-lost $src ! vulkanupload ! 'video/x-raw(memory:VulkanImage)' ! \
	gpuhandleupload ! gpuhandledownload ! 'video/x-raw(memory:GLMemory)' ! gldownload ! fakesink
echo "$ran pipelines under the leaks tracer"
exit $failed
