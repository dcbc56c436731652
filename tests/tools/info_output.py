"""gpuhandle-info's --json output as the tests read it: the JSON document (from the line "{" to
the end) and the lines before it. Under `meson test --setup validation` the Vulkan validation
layer prints its messages to the program's stdout; the tests print those lines again, so that
tests/validation/run.sh, which reads the test's own output, still sees (and counts) them."""
import json
import subprocess
import sys


def split_json(out):
    lines = out.splitlines()
    starts = [i for i, line in enumerate(lines) if line == "{"]
    assert starts, "no JSON document in gpuhandle-info's output:\n" + out[-2000:]
    first = starts[-1]
    for line in lines[:first]:
        print(line)
    return json.loads("\n".join(lines[first:])), lines[:first]


def run_tool(args, timeout=600, env=None):
    """Runs gpuhandle-info (in `env`, or this environment); its stderr (GL debug output,
    GStreamer's gldebug lines) is passed on as it is, for the same reason."""
    result = subprocess.run(args, check=True, capture_output=True, text=True, timeout=timeout,
                            env=env)
    sys.stderr.write(result.stderr)
    return result.stdout
