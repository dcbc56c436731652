#!/usr/bin/env python3
"""Prints "PASSED FAILED SKIPPED": the results in the meson test logs (testlog*.json, one per
setup) of the build directories given. A result that is not a pass or a skip counts as a failure,
and so does a truncated line."""
import glob
import json
import sys

passed = failed = skipped = 0
paths = [p for d in sys.argv[1:] for p in sorted(glob.glob(d + "/meson-logs/testlog*.json"))]
for path in paths:
    try:
        with open(path) as log:
            for line in log:
                if not line.strip():
                    continue
                try:
                    result = json.loads(line).get("result")
                except ValueError:  # a truncated line: count it against the run
                    result = "ERROR"
                if result in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif result == "SKIP":
                    skipped += 1
                else:  # FAIL, TIMEOUT, ERROR, UNEXPECTEDPASS, anything unknown
                    failed += 1
    except FileNotFoundError:
        pass
print(passed, failed, skipped)
