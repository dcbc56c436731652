# What the FFmpeg elements' end-to-end tests share (sourced): the commands they need, a work
# directory, pipelines run bounded with their output kept, and byte comparisons.
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

# need_elements ELEMENT...: the tools and the plugin's FFmpeg elements, then a work directory.
need_elements() {
	command -v ffmpeg >/dev/null 2>&1 ||
		skip "the ffmpeg command (Debian package ffmpeg) is not installed"
	command -v gst-inspect-1.0 >/dev/null 2>&1 ||
		skip "gst-inspect-1.0 (Debian package gstreamer1.0-tools) is not installed"
	for element in "$@"; do
		gst-inspect-1.0 "$element" >/dev/null 2>&1 || fail "the plugin has no $element"
	done
	work=$(mktemp -d "${TMPDIR:-/tmp}/avelements.XXXXXX") || fail "mktemp"
	trap 'rm -rf "$work"' EXIT
	cd "$work" || fail "cd $work"
}

# Pipelines run through run_pipeline (the tests' gst-launch-1.0: see run_pipeline.cpp), given as
# RUN_PIPELINE by meson.
run_pipeline="${RUN_PIPELINE:?the tests run pipelines through run_pipeline (RUN_PIPELINE)}"

# The GStreamer objects a pipeline's run left alive, as GStreamer's leaks tracer reports them in
# log.txt (run under GST_TRACERS=leaks): a count.
leaked_objects() {
	grep -c 'object-alive, type-name=(string)[A-Za-z]' log.txt
}

# Runs a pipeline (bounded) under GStreamer's leaks tracer, keeping its output in log.txt, and
# prints it (so that the validation setup's wrapper reads the Vulkan validation layer's messages
# of every pipeline); fails unless it exits with $1 (0: EOS, 1: an error), and when any object
# outlived it, after an error too.
launch_expect() {
	want="$1"
	shift
	GST_TRACERS=leaks GST_DEBUG="${GST_DEBUG:+$GST_DEBUG,}GST_TRACER:7" \
		timeout 120 "$run_pipeline" "$@" >log.txt 2>&1
	status=$?
	if [ $status -ge 124 ] || [ $status -eq 2 ]; then
		cat log.txt
		fail "the pipeline $* hung, crashed or did not parse (status $status)"
	fi
	if { [ "$want" = 0 ] && [ $status -ne 0 ]; } || { [ "$want" != 0 ] && [ $status -eq 0 ]; }; then
		cat log.txt
		fail "the pipeline $* exited with $status (expected $want)"
	fi
	alive=$(leaked_objects)
	if [ "$alive" -ne 0 ] || grep -q 'Leaks detected' log.txt; then
		grep -E 'object-alive, type-name=\(string\)[A-Za-z]' log.txt | cut -c1-300 | head -20
		fail "$alive objects outlived the pipeline $*"
	fi
	grep -v 'GST_TRACER' log.txt
}

expect_text() {
	grep -qF -- "$1" log.txt || { cat log.txt; fail "the output does not say '$1'"; }
}

same_bytes() {
	[ -s "$1" ] || fail "$1 is empty"
	cmp "$1" "$2" || fail "$1 and $2 differ"
	echo "ok: $1 is byte for byte $2 ($(wc -c <"$2") bytes)"
}

# no_leaks ARGS...: the pipeline ARGS under GStreamer's leaks tracer; sets failed=1 when an
# object outlives the pipeline.
no_leaks() {
	GST_TRACERS=leaks GST_DEBUG=GST_TRACER:7 timeout 120 "$run_pipeline" "$@" >log.txt 2>&1
	alive=$(leaked_objects)
	if [ "$alive" -ne 0 ] || grep -q 'Leaks detected' log.txt; then
		grep -E 'object-alive, type-name=\(string\)[A-Za-z]' log.txt | cut -c1-300 | head -20
		echo "FAIL: $alive objects alive after $*"
		failed=1
	else
		echo "ok: no leaks: $*"
	fi
}
