#!/bin/bash
# Prints the address of the Debian archive this machine's own apt sources name (the first source
# of the main archive, not of security updates), so that scripts fetch other Debian releases from
# the same place; no mirror's address is written into the tree.
set -euo pipefail
python3 - /etc/apt/sources.list /etc/apt/sources.list.d/* <<'PY'
import re, sys
uris = []
for path in sys.argv[1:]:
    try:
        text = open(path).read()
    except OSError:
        continue
    if path.endswith(".sources"):  # deb822: stanzas of "Field: value"
        for stanza in re.split(r"\n\s*\n", text):
            fields = {}
            for line in stanza.splitlines():
                if line.startswith("#") or ":" not in line:
                    continue
                key, value = line.split(":", 1)
                fields[key.strip().lower()] = value.split()
            if "deb" in fields.get("types", []):
                for uri in fields.get("uris", []):
                    if not any(s.endswith("-security") for s in fields.get("suites", [])):
                        uris.append(uri)
    elif path.endswith(".list"):  # one-line: deb [options] URI suite components
        for line in text.splitlines():
            words = re.sub(r"\[[^]]*\]", "", line).split()
            if len(words) >= 3 and words[0] == "deb" and not words[2].endswith("-security"):
                uris.append(words[1])
if not uris:
    sys.exit("debian-archive: no Debian archive in this machine's apt sources")
print(uris[0].rstrip("/"))
PY
