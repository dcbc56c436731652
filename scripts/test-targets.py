#!/usr/bin/env python3
"""Prints the ninja targets that the tests of a build need, less those of the suites named with
--no-suite (what `meson test --no-suite ...` would run), so that a build can compile only them."""
import argparse
import json
import os
import subprocess
import sys


def introspect(builddir, what):
    out = subprocess.run(["meson", "introspect", what, builddir], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("builddir")
    parser.add_argument("--suite", action="append", default=[],
                        help="only tests in this suite (may repeat)")
    parser.add_argument("--no-suite", action="append", default=[],
                        help="leave out the tests of this suite (may repeat)")
    # Other `meson test` arguments (--num-processes 2, --print-errorlogs) may come along: they
    # select no tests and are left alone.
    args, _ = parser.parse_known_args()

    def suites_of(test):  # "project:suite" -> "suite"
        return {s.split(":", 1)[-1] for s in test["suite"]}

    # A build directory kept from an earlier run (the Debian 13 root's) may predate the
    # meson.build files: ninja regenerates it first, so that tests added since are listed.
    subprocess.run(["ninja", "-C", args.builddir, "build.ninja"], check=True,
                   stdout=subprocess.DEVNULL)
    files = {}
    for target in introspect(args.builddir, "--targets"):
        files[target["id"]] = [os.path.relpath(f, args.builddir) for f in target["filename"]]
    wanted = set()
    for test in introspect(args.builddir, "--tests"):
        suites = suites_of(test)
        if args.suite and not suites & set(args.suite):
            continue
        if suites & set(args.no_suite):
            continue
        for target_id in test.get("depends", []):
            wanted.update(files.get(target_id, []))
    if not wanted:
        sys.exit(f"test-targets: no test of {args.builddir} is left to build for")
    print(" ".join(sorted(wanted)))


if __name__ == "__main__":
    main()
