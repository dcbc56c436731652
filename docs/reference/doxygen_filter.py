#!/usr/bin/env python3
"""Doxygen's input filter: the headers' own comments become Doxygen's, so headers keep one style.

- The first line (the file's one-line purpose) documents the file (@file).
- A // line, or a /* comment opening a line with text, documents what follows it.
- A comment ending a line after code (`int w; // pixels`, `x = 1, /* ... */`) documents what
  precedes it (///<, /**<).
- A /* opening a line alone starts prose for a reader of the header (a section's rules), and
  stays a plain comment; gtk-doc's /** blocks are Doxygen's already.
Lines are only rewritten, never added or removed, so Doxygen's line numbers are the header's.
"""
import os
import re
import sys

LINE_DOC = re.compile(r"^(\s*)//(?=\s|$)")
BLOCK_DOC = re.compile(r"^(\s*)/\*(?=\s+\S)(?!\*)")
TRAILING_LINE = re.compile(r"(\S\s*)//\s")
TRAILING_BLOCK = re.compile(r"(\S\s*)/\*(?!\*)(\s.*\*/\s*)$")


def rewrite(number, line, name):
    if number == 0:  # @file takes the file's name first; the purpose is its brief
        if line.startswith("// "):
            return f"/// @file {name} " + line[3:]
        if line.startswith("/* "):
            return f"/** @file {name} " + line[3:]
        return line
    if LINE_DOC.match(line):
        return LINE_DOC.sub(r"\1///", line, count=1)
    if BLOCK_DOC.match(line):
        return BLOCK_DOC.sub(r"\1/**", line, count=1)
    if '"' in line:  # a // or /* inside a string literal is not a comment
        return line
    line = TRAILING_LINE.sub(r"\1///< ", line, count=1)
    return TRAILING_BLOCK.sub(r"\1/**<\2", line, count=1)


with open(sys.argv[1], encoding="utf-8") as header:
    name = os.path.basename(sys.argv[1])
    for number, line in enumerate(header):
        sys.stdout.write(rewrite(number, line, name))
