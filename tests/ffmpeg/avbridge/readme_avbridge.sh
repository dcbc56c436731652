#!/bin/sh
# Runs every command block the README marks <!-- ci:avbridge --> (the ```sh block after the
# marker, as one `sh -e` script) in a new folder, with gpuhandle-avbridge on PATH; fails on the
# first block that fails (the blocks end with `cmp` of gpuhandle's output against FFmpeg's or
# GStreamer's own).
readme="$1"
avbridge_dir=$(cd "$(dirname "$2")" && pwd)
for tool in ffmpeg gst-launch-1.0; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "SKIP: $tool is not installed"
		exit 77
	fi
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
awk -v dir="$work" '/<!-- ci:avbridge -->/ { want = 1; next }
	want == 1 && /^```/ { n++; file = dir "/block" n ".sh"; want = 2; next }
	want == 2 && /^```/ { want = 0; close(file); next }
	want == 2 { print > file }' "$readme"
blocks=$(ls "$work"/block*.sh 2>/dev/null | wc -l)
if [ "$blocks" -eq 0 ]; then
	echo "FAIL: no <!-- ci:avbridge --> block in $readme"
	exit 1
fi
export PATH="$avbridge_dir:$PATH"
for block in "$work"/block*.sh; do
	echo "running:"
	cat "$block"
	if ! (cd "$work" && timeout 180 sh -e "$block"); then
		echo "FAIL: $block"
		exit 1
	fi
done
echo "ok: $blocks README command blocks ran"
