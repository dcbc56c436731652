#!/bin/sh
# ASan builds only: runs the real program named like this link (gst-launch-1.0, gst-inspect-1.0,
# ffmpeg ...), found on PATH after this directory, with the sanitizer runtime preloaded, so that
# it can load gpuhandle's instrumented plugin and libraries. Leak checking stays with gpuhandle's
# own programs: GStreamer and FFmpeg keep their caches until exit.
dir=$(cd "$(dirname "$0")" && pwd)
# This directory leaves PATH wherever it is (scripts prepend their own): else the link would
# find itself again, and again.
rest=
IFS=:
for entry in $PATH; do
	[ "$entry" = "$dir" ] || [ "$entry" = "$(dirname "$0")" ] || rest=${rest:+$rest:}$entry
done
unset IFS
PATH=$rest
export PATH
name=$(basename "$0")
real=$(command -v "$name") || { echo "asan_exec.sh: no $name on PATH" >&2; exit 127; }
LD_PRELOAD=$GPUHANDLE_ASAN_PRELOAD ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" exec "$real" "$@"
