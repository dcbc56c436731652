#!/usr/bin/env python3
"""Checks that the README says what the tree does: the files it names exist, each snippet it
calls a program's whole is in that program, and its benchmark targets are defined where used.

Usage: check_readme.py SOURCE_ROOT
"""
import re
import sys
from pathlib import Path

root = Path(sys.argv[1])
readme = (root / "README.md").read_text()
failures = []

# 1. Every tree path (or public header) the README names in backticks exists.
tree_dirs = ("examples", "docs", "bench", "scripts", "tests", "gpuhandle", "gst-plugin",
             "ffmpeg-bridge", "demo", "po", "debian", ".ci")
for path in sorted(set(re.findall(r"`((?:%s)/[\w./+-]*\w)`" % "|".join(map(re.escape, tree_dirs)),
                                  readme))):
    # gpuhandle/x.h is also how a program includes a public header.
    if not (root / path).exists() and not (root / "gpuhandle/include" / path).exists():
        failures.append(f"README names {path}, which is not in the tree")

# 2. A snippet introduced as "`FILE` is the whole program" uses only names FILE uses: every
# qualified name (A::B), member set (.x =) and call (f( or ->f() in its code, comments removed.
blocks = list(re.finditer(r"\n```(c|cpp)\n(.*?)\n```\n", readme, re.S))
for block in blocks:
    before = readme[:block.start()].rsplit("\n\n", 1)[-1]
    named = re.search(r"`([\w/.-]+\.(?:c|cpp))` is the whole program", before)
    if not named:
        continue
    program = root / named.group(1)
    if not program.exists():
        continue  # reported above
    source = program.read_text()
    code = re.sub(r"//[^\n]*|/\*.*?\*/", "", block.group(2), flags=re.S)
    names = set(re.findall(r"\b[A-Z]\w*::\w+", code))
    names |= set(re.findall(r"\.(\w+)\s*=(?!=)", code))
    names |= set(re.findall(r"(?:->|\.|\b)(\w+)\(", code)) - {"if", "for", "while", "return",
                                                              "sizeof", "value"}
    missing = sorted(n for n in names if not re.search(r"\b" + re.escape(n) + r"\b", source))
    if missing:
        failures.append(f"the snippet README says is {named.group(1)} uses names that program "
                        f"does not: {', '.join(missing)}")

# 3. The Benchmarks section is a table whose rows each define a target, and every target the
# README refers to by number is a row of it.
section = re.search(r"\n## Benchmarks\n(.*?)\n## ", readme, re.S)
if not section:
    failures.append("README has no Benchmarks section")
else:
    header = re.search(r"^\| # \| Job \| Baseline \| Target \| Latest \| Met \|$", section.group(1),
                       re.M)
    rows = re.findall(r"^\| ([^|]+?) \| [^|]+ \| [^|]+ \| ([^|]*) \| [^|]+ \| [^|]+ \|$",
                      section.group(1), re.M)
    rows = [(key, target) for key, target in rows if key not in ("#", "---")]
    if not header or not rows:
        failures.append("README's Benchmarks section has no table of jobs, baselines and targets")
    for key, target in rows:
        if not re.search(r"[≤≥<>]\s*[\d.]+", target):
            failures.append(f"benchmark row {key} has no target ({target!r})")
    if len(section.group(1)) > 6000 or re.search(r"[^\n|]{600,}", section.group(1)):
        failures.append("README's Benchmarks section reads as a run log; figures belong in "
                        "docs/benchmarks.md")
    defined = {key for key, _ in rows}
    for ref in re.findall(r"\((\d+)[,)]", readme[section.end():]):
        if ref not in defined:
            failures.append(f"README refers to target {ref}, which its Benchmarks table does "
                            "not define")

for failure in failures:
    print(failure, file=sys.stderr)
print(f"README: {len(failures)} problem(s)")
sys.exit(1 if failures else 0)
