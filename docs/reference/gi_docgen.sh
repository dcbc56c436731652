#!/bin/sh
# Builds the GIR reference: fails when gi-docgen check finds an undocumented symbol, then
# generates the HTML with warnings fatal. Usage: gi_docgen.sh CONFIG GIR OUTPUT_DIR
set -eu
config=$1 gir=$2 out=$3
report=$(gi-docgen check --add-include-path=/usr/share/gir-1.0 "$gir" 2>&1) || {
	printf '%s\n' "$report" | grep -i warning >&2
	echo "gi-docgen: $(basename "$gir") has undocumented symbols (above)" >&2
	exit 1
}
rm -rf "$out"
gi-docgen generate --quiet --fatal-warnings --config "$config" --output-dir "$out" \
	--no-namespace-dir --add-include-path=/usr/share/gir-1.0 "$gir"
