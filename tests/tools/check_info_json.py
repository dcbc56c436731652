#!/usr/bin/env python3
"""gpuhandle-info: the JSON parses, lists every backend (available or with its reason), the cpu
and fd backends always open, the matrix covers every ordered pair of opened backends with a
route or an error per format, it names its schema and version, and the text output names the same backends."""
import sys

from info_output import run_tool, split_json

BACKENDS = ["cpu", "fd", "vulkan", "opengl", "opencl", "cuda", "vaapi"]
ROUTES = {"direct", "opaque-fd", "dma-buf", "host-pointer", "gpu-copy", "cpu-copy"}


def main(tool):
    data = split_json(run_tool([tool, "--json"]))[0]
    # Which release wrote it and which schema it follows (a reader checks the schema first).
    assert data["schema"] == 1, data.get("schema")
    version = run_tool([tool, "--version"]).split()[-1]
    assert data["version"] == version and version.count(".") == 2, (data["version"], version)
    names = [b["backend"] for b in data["backends"]]
    assert names == BACKENDS, names
    opened = []
    for backend in data["backends"]:
        if backend["available"]:
            opened.append(backend["backend"])
            assert backend["name"], backend
            assert "nv12" in backend["formats"]["buffer"], backend["backend"]
            assert set(backend["routes"]) <= ROUTES, backend["routes"]
        else:
            assert backend["reason"].endswith("."), backend
            print(f"{backend['backend']}: not available: {backend['reason']}")
    assert "cpu" in opened and "fd" in opened, opened
    pairs = {(p["from"], p["into"]) for p in data["matrix"]}
    expected = {(a, b) for a in opened for b in opened if a != b}
    assert pairs == expected, (pairs, expected)
    for pair in data["matrix"]:
        for path in pair["paths"]:
            assert ("route" in path) != ("error" in path), path
            if "route" in path:
                assert path["route"] in ROUTES, path
                assert (path["path"] == "zero-copy") == (path["route"] in ROUTES - {"gpu-copy", "cpu-copy"}), path
                assert path["path"] == "zero-copy" or path["reason"], path
    # Host memory into host memory is never copied: a memfd reaches the cpu backend in place.
    fd_to_cpu = next(p for p in data["matrix"] if p["from"] == "fd" and p["into"] == "cpu")
    assert all(path["route"] == "host-pointer" for path in fd_to_cpu["paths"]), fd_to_cpu
    text = run_tool([tool])
    print(text)  # the report, and any validation layer message for run.sh to count
    for name in BACKENDS:
        assert name in text, name
    print(f"opened: {', '.join(opened)}; {len(data['matrix'])} pairs measured")


if __name__ == "__main__":
    main(sys.argv[1])
