#!/usr/bin/env python3
"""Every installed program answers --version and --help, and names an unknown option."""
import os
import subprocess
import sys

# Arguments: VERSION, then NAME=PATH for each program built.
version = sys.argv[1]
failed = 0
for spec in sys.argv[2:]:
    name, path = spec.split("=", 1)

    def run(*args):
        return subprocess.run([path, *args], capture_output=True, text=True, timeout=60,
                              env={**os.environ, "LC_ALL": "C", "LANGUAGE": ""})

    checks = []
    v = run("--version")
    checks.append(("--version exits 0 with 'NAME (gpuhandle) VERSION'",
                   v.returncode == 0 and v.stdout.strip() == f"{name} (gpuhandle) {version}"))
    h = run("--help")
    checks.append(("--help exits 0 with a usage text naming --version",
                   h.returncode == 0 and "sage" in h.stdout and "--version" in h.stdout))
    b = run("--bogus-option")
    checks.append(("an unknown option exits non-zero and is named on stderr",
                   b.returncode not in (0, None) and "--bogus-option" in b.stderr))
    for what, ok in checks:
        print(f"{'ok' if ok else 'FAIL'}: {name}: {what}")
        failed |= not ok
    if failed:
        print(f"  --version: rc {v.returncode}, {v.stdout!r}; --bogus-option: rc {b.returncode}, "
              f"{b.stderr[:200]!r}")
sys.exit(1 if failed else 0)
