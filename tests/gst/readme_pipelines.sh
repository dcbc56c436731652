#!/bin/sh
# Runs every gst-launch pipeline the README shows (the code line after each
# <!-- ci:gst-pipeline --> marker), each bounded by a timeout; fails on the first that fails.
readme="$1"
if ! command -v gst-launch-1.0 >/dev/null 2>&1; then
	echo "SKIP: gst-launch-1.0 (Debian package gstreamer1.0-tools) is not installed"
	exit 77
fi
pipelines=$(awk '/<!-- ci:gst-pipeline -->/ { want = 2; next }
	want == 2 && /^```/ { want = 1; next }
	want == 1 { print; want = 0 }' "$readme")
if [ -z "$pipelines" ]; then
	echo "FAIL: no <!-- ci:gst-pipeline --> in $readme"
	exit 1
fi
echo "$pipelines" | while IFS= read -r line; do
	echo "running: $line"
	if ! timeout 120 sh -c "$line" >/tmp/readme-pipeline.$$ 2>&1; then
		cat /tmp/readme-pipeline.$$
		rm -f /tmp/readme-pipeline.$$
		echo "FAIL: $line"
		exit 1
	fi
	rm -f /tmp/readme-pipeline.$$
done || exit 1
echo "ok: $(echo "$pipelines" | wc -l) README pipelines ran"
