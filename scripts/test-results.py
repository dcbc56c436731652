#!/usr/bin/env python3
"""Prints "PASSED FAILED SKIPPED": the results in the meson test logs (testlog*.json, one per
setup) of the build directories given. A result that is not a pass or a skip counts as a failure,
and so does a truncated line. With --failures first: prints each failed test's name, log and the
last lines of its output instead (what CI shows last, where a reader of its tail sees it)."""
import glob
import json
import sys

TAIL_LINES = 60


def print_failure(path, entry):
    name = entry.get("name", "?")
    print(f"ci: ---- {name}: {entry.get('result')} ({path}) ----")
    output = (entry.get("stdout") or "") + (entry.get("stderr") or "")
    lines = output.splitlines()
    if len(lines) > TAIL_LINES:
        print(f"[... {len(lines) - TAIL_LINES} earlier lines in the log ...]")
    for line in lines[-TAIL_LINES:]:
        print(line[:400])


args = sys.argv[1:]
failures_only = bool(args) and args[0] == "--failures"
if failures_only:
    args = args[1:]
passed = failed = skipped = 0
paths = [p for d in args for p in sorted(glob.glob(d + "/meson-logs/testlog*.json"))]
for path in paths:
    try:
        with open(path) as log:
            for line in log:
                if not line.strip():
                    continue
                try:
                    entry = json.loads(line)
                except ValueError:  # a truncated line: count it against the run
                    entry = {"result": "ERROR", "name": "a truncated log line"}
                result = entry.get("result")
                if result in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif result == "SKIP":
                    skipped += 1
                else:  # FAIL, TIMEOUT, ERROR, UNEXPECTEDPASS, anything unknown
                    failed += 1
                    if failures_only:
                        print_failure(path, entry)
    except FileNotFoundError:
        pass
if not failures_only:
    print(passed, failed, skipped)
