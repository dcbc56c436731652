#!/bin/sh
# ASan builds only: runs the real program named like this link (gst-launch-1.0, gst-inspect-1.0,
# ffmpeg ...), found on PATH after this directory, with the sanitizer runtime preloaded, so that
# it can load gpuhandle's instrumented plugin and libraries. Leak checking stays with gpuhandle's
# own programs: GStreamer and FFmpeg keep their caches until exit.
dir=$(cd "$(dirname "$0")" && pwd)
PATH=$(printf '%s' "$PATH" | sed "s|^$dir:||")
export PATH
LD_PRELOAD=$GPUHANDLE_ASAN_PRELOAD ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
	exec "$(basename "$0")" "$@"
