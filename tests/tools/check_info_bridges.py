#!/usr/bin/env python3
"""gpuhandle-info's bridge matrix (GStreamer memory types through gpuhandleupload !
gpuhandledownload, measured by running the pipelines): every pair of the memory types listed is
there once, each either ran (a path that agrees with the two elements' counters, every frame
through) or says why not; system memory into system memory runs without a copy; system memory
into a GPU memory is a CPU copy; GL and Vulkan memory into themselves are zero-copy where they
run; the elements' memory budget holds nothing once every pipeline stopped; the text report
lists the same pairs, and, run as on a headless machine with no GL variable set, finds a GL
display itself: its GL rows take the same paths as with GST_GL_WINDOW=egl-device."""
import os
import re
import sys

from info_output import run_tool, split_json

INPUTS = ["SystemMemory", "DMABuf", "GLMemory", "VulkanImage", "CUDAMemory", "VAMemory"]
OUTPUTS = ["SystemMemory", "DMABuf", "GLMemory", "VulkanImage", "CUDAMemory"]
COUNTERS = ["zero-copy", "gpu-copies", "cpu-copies"]


def costliest(bridge):
    counts = [bridge["upload"][c] + bridge["download"][c] for c in COUNTERS]
    if counts[2]:
        return "cpu-copy"
    return "gpu-copy" if counts[1] else "zero-copy"


def main(tool):
    out = run_tool([tool, "--json", "--no-matrix"])
    bridges = split_json(out)[0]["bridges"]
    assert bridges, "no bridge measured: is the gpuhandle plugin on GST_PLUGIN_PATH?"
    froms = [b["from"] for b in bridges]
    intos = [b["into"] for b in bridges]
    assert set(froms) <= set(INPUTS) and set(intos) <= set(OUTPUTS), bridges
    pairs = [(b["from"], b["into"]) for b in bridges]
    assert len(pairs) == len(set(pairs)), "a pair measured twice"
    assert set(pairs) == {(a, b) for a in set(froms) for b in set(intos)}, pairs
    ran = {}
    for b in bridges:
        if b["ran"]:
            assert b["frames"] == 5, b
            assert b["path"] == costliest(b), b
            ran[(b["from"], b["into"])] = b["path"]
        else:
            assert b["why"], b
            print(f"{b['from']} -> {b['into']}: not here: {b['why'][:160]}")
    assert ran.get(("SystemMemory", "SystemMemory")) == "zero-copy", ran
    for (a, b), path in ran.items():
        if a == "SystemMemory" and b not in ("SystemMemory", "DMABuf"):
            assert path == "cpu-copy", (a, b, path)
        if a == b and a in ("GLMemory", "VulkanImage"):
            assert path == "zero-copy", (a, b, path)
    # The elements' shared memory budget: every frame given back once the pipelines stopped,
    # and frames were charged where gpuhandleupload copied into its pool.
    budget = split_json(out)[0]["budget"]
    for use in budget:
        assert use["inUseBytes"] == 0, use
        assert use["peakBytes"] > 0 and use["capBytes"] == 0, use
    if any(b["ran"] and b["upload"]["cpu-copies"] for b in bridges):
        assert budget, "pooled frames were copied into, but the budget saw none"
    assert split_json(out)[0]["glDisplay"]["chosenBy"] == "environment", split_json(out)[0]
    # The text report from a headless machine's environment: no window system, no GL variable.
    headless = {k: v for k, v in os.environ.items()
                if k not in ("GST_GL_WINDOW", "GST_GL_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
    text = run_tool([tool, "--no-matrix"], env=dict(headless, LANGUAGE="C", LC_ALL="C"))
    print(text)  # the report, and any validation layer message for run.sh to count
    assert "gpuhandle-info set GST_GL_WINDOW=egl-device" in text, "no GL display chosen"
    for a, b in pairs:
        assert any(a in line and b in line for line in text.splitlines()), (a, b)
    for (a, b), path in ran.items():
        if "GLMemory" in (a, b):
            row = re.search(rf"^  {a} +-> {b} +(.*)$", text, re.M)
            assert row and row.group(1) == path, (a, b, path, row and row.group(1))
    print(f"{len(bridges)} pairs, {len(ran)} ran: " +
          ", ".join(f"{a}->{b} {p}" for (a, b), p in sorted(ran.items())))


if __name__ == "__main__":
    main(sys.argv[1])
