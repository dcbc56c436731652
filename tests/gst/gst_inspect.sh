#!/bin/sh
# gst-inspect-1.0 documents every property and pad template of the gpuhandle elements, and each
# plugin's description names every element it registers: gpuhandle the four that need no FFmpeg,
# gpuhandleav FFmpeg's two; and the gpuhandle plugin loads without FFmpeg's libraries.
if ! command -v gst-inspect-1.0 >/dev/null 2>&1; then
	echo "SKIP: gst-inspect-1.0 (Debian package gstreamer1.0-tools) is not installed"
	exit 77
fi
failed=0
# check ELEMENT TEXT...: every TEXT appears in `gst-inspect-1.0 ELEMENT`.
check() {
	element=$1
	shift
	if ! out=$(gst-inspect-1.0 "$element" 2>&1); then
		echo "FAIL: gst-inspect-1.0 $element: $out"
		exit 1
	fi
	for want in "$@"; do
		if ! printf '%s\n' "$out" | grep -q -e "$want"; then
			echo "FAIL: gst-inspect-1.0 $element does not mention '$want'"
			failed=1
		fi
	done
	echo "ok: $element documents $# items"
}
check gpuhandleupload 'SINK template' 'SRC template' 'memory:GpuHandle' 'memory:DMABuf' \
	'video/x-raw$' 'backend *:' 'storage *:' 'timeout *:' 'stats *:' '(2): memfd' \
	'(3): vulkan' '(4): gl' '(5): opencl' 'optimal-image'
check gpuhandledownload 'SINK template' 'SRC template' 'memory:GpuHandle' 'memory:DMABuf' \
	'allow-copy *:' 'timeout *:' 'stats *:'
check gpuhandlesink 'SINK template' 'memory:GpuHandle' 'socket-path *:' 'socket-mode *:' \
	'max-consumers *:' 'max-in-flight *:' 'allowed-uids *:' 'wait-for-consumers *:' 'stats *:'
check gpuhandlesrc 'SRC template' 'socket-path *:' 'connect-timeout *:' 'allowed-uids *:'
# gpuhandleavdec and gpuhandleavfilter where FFmpeg's libraries were found (GPUHANDLE_PLUGIN_HAVE_AV: meson passes it).
if [ "${GPUHANDLE_PLUGIN_HAVE_AV:-0}" = 1 ]; then
	check gpuhandleavdec 'SINK template' 'SRC template' 'memory:GpuHandle' 'video/x-h264' \
		'video/x-h265' 'video/x-vp9' 'video/x-av1' 'video/x-prores' 'video/x-ffv' 'image/jpeg' \
		'decoder *:' 'hwaccel *:' 'hw-device *:' 'hwaccel-fallback *:' 'threads *:' 'stats *:' \
		'(0): software' '(1): error' 'Rank *none'
	check gpuhandleavfilter 'SINK template' 'SRC template' 'memory:GpuHandle' 'graph *:' \
		'hw-device *:' 'stats *:'
	check gpuhandleav 'Description.*gpuhandleavdec' 'Description.*gpuhandleavfilter' \
		'2 elements'
fi
# The plugins: each description names its elements, and each registers those and no other.
check gpuhandle 'Description.*gpuhandleupload' 'Description.*gpuhandledownload' \
	'Description.*gpuhandlesink' 'Description.*gpuhandlesrc' '4 elements' \
	'License *MIT/X11' 'Binary package *[^ ]' 'Origin URL *[^ ]'
# The licence is one GStreamer knows (MIT/X11, not MIT) and the origin is named.
for plugin in gpuhandle gpuhandleav; do
	[ "$plugin" = gpuhandleav ] && [ "${GPUHANDLE_PLUGIN_HAVE_AV:-0}" != 1 ] && continue
	out=$(GST_DEBUG=GST_PLUGIN_LOADING:2 GST_REGISTRY="${TMPDIR:-/tmp}/gst-inspect-$$.bin" \
		gst-inspect-1.0 "$plugin" 2>&1)
	rm -f "${TMPDIR:-/tmp}/gst-inspect-$$.bin"
	bad=$(printf '%s\n' "$out" | grep -i -e "\"$plugin\" has unknown license" \
		-e 'Unknown package origin')
	if [ -n "$bad" ]; then
		echo "FAIL: $plugin: $bad"
		failed=1
	else
		echo "ok: $plugin has a licence GStreamer knows and an origin"
	fi
done
# The gpuhandle plugin needs none of FFmpeg's libraries (the gpuhandleav plugin does).
plugin=$(gst-inspect-1.0 gpuhandle 2>/dev/null | sed -n 's/^ *Filename *//p')
if [ -n "$plugin" ] && command -v ldd >/dev/null 2>&1; then
	if ldd "$plugin" | grep -q -e libavcodec -e libavformat -e libavfilter; then
		echo "FAIL: $plugin links FFmpeg's libraries"
		failed=1
	else
		echo "ok: $plugin links none of FFmpeg's libraries"
	fi
fi
exit $failed
