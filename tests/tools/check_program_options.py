#!/usr/bin/env python3
"""Every installed program answers --version and --help, names an unknown option, and has a
man page (docs/man/NAME.1) that groff renders without a warning and that documents exactly the
options its --help lists."""
import os
import re
import subprocess
import sys

# Arguments: VERSION, MAN_DIR, then NAME=PATH for each program built.
version = sys.argv[1]
man_dir = sys.argv[2]
failed = 0


def options(text):
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-h)\b", text))


def man_text(name):
    """The man page's source with troff's escaped hyphens plain, and groff's warnings."""
    path = os.path.join(man_dir, name + ".1")
    if not os.path.exists(path):
        return None, "no man page"
    source = open(path).read().replace("@VERSION@", version)
    lint = subprocess.run(["groff", "-man", "-ww", "-z"], input=source, capture_output=True,
                          text=True, timeout=60)
    return source.replace("\\-", "-"), lint.stderr.strip()


for spec in sys.argv[3:]:
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
    page, lint = man_text(name)
    checks.append((f"has a man page groff renders cleanly ({lint or 'ok'})",
                   page is not None and not lint))
    if page is not None:
        documented, listed = options(page), options(h.stdout)
        checks.append((f"the man page documents the options --help lists (only in --help: "
                       f"{sorted(listed - documented)}, only in the page: "
                       f"{sorted(documented - listed)})", documented == listed))
    for what, ok in checks:
        print(f"{'ok' if ok else 'FAIL'}: {name}: {what}")
        failed |= not ok
    if failed:
        print(f"  --version: rc {v.returncode}, {v.stdout!r}; --bogus-option: rc {b.returncode}, "
              f"{b.stderr[:200]!r}")
sys.exit(1 if failed else 0)
