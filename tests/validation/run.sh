#!/bin/bash
# Runs one test under the other side's checkers (meson test --setup validation): Khronos's Vulkan
# validation layer with synchronization validation, and GL debug output (KHR_debug, synchronous)
# in every GL context gpuhandle works in. The test's own result, and a failure for every
# validation error or warning, and every GL error, it (or a program it started) printed, except
# those in suppressions.txt (each naming the third-party code it is in).
set -u
here=$(cd "$(dirname "$0")" && pwd)
layer_json=
for dir in /usr/share/vulkan/explicit_layer.d /usr/local/share/vulkan/explicit_layer.d \
	/etc/vulkan/explicit_layer.d; do
	[ -f "$dir/VkLayer_khronos_validation.json" ] && layer_json="$dir/VkLayer_khronos_validation.json"
done
if [ -z "$layer_json" ]; then
	echo "SKIP: the Khronos validation layer is not installed (Debian: vulkan-validationlayers)"
	exit 77
fi
export VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation
export VK_LAYER_SETTINGS_PATH="$here/vk_layer_settings.txt"
export GPUHANDLE_UNDER_VKVALIDATION=1
# GL: gpuhandle's GL backend turns debug output on (and prints "gpuhandle-gl-debug: ..." where the
# context has no callback); GStreamer's GL contexts log theirs as gldebug ERROR lines.
export GPUHANDLE_GL_DEBUG=1
export GST_DEBUG="${GST_DEBUG:+$GST_DEBUG,}gldebug:1" GST_DEBUG_NO_COLOR=1

log=$(mktemp)
trap 'rm -f "$log"' EXIT
# stdout and stderr both reach meson's log; the layer writes its messages to stdout. A pipeline,
# not a process substitution: bash waits for tee to end, so the log is complete before it is
# read (with `> >(tee)` and `wait`, a run read a log short of tee's last writes and reported a
# cut message line as unsuppressed).
"$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
	exit "$rc" # a failure or a skip (77) of the test itself
fi
# One line per message: "Validation Error: [ VUID ] ... | MessageID = ... | text".
mapfile -t patterns < <(grep -v '^\s*\(#\|$\)' "$here/suppressions.txt" | cut -f1)
messages=$(grep -a -E 'Validation (Error|Warning|Performance Warning):|^gpuhandle-gl-debug: | ERROR +gldebug ' "$log" || true)
reported=0
suppressed=0
while IFS= read -r line; do
	[ -n "$line" ] || continue
	hit=0
	for p in "${patterns[@]}"; do
		if grep -qF -- "$p" <<<"$line"; then
			hit=1
			break
		fi
	done
	if [ "$hit" -eq 1 ]; then
		suppressed=$((suppressed + 1))
	else
		reported=$((reported + 1))
	fi
done <<<"$messages"
echo "validation: $reported message(s) from the Vulkan validation layer and GL debug output, $suppressed suppressed (tests/validation/suppressions.txt)"
[ "$reported" -eq 0 ] || exit 1
exit 0
