#!/bin/sh
# Fails when a C or C++ file of the tree differs from what the project's .clang-format makes of
# it, and lists those files with the start of the first one's diff.
#
# The tree is formatted by Debian 12's clang-format 14. Other major versions lay out some
# constructs differently (each release changes a few defaults), so there the test skips and says
# which version it found. To format a file: clang-format -i FILE (clang-format-14 where several
# are installed).
set -u
root=$1
want=14

formatter=
for candidate in clang-format-$want clang-format; do
	command -v "$candidate" >/dev/null 2>&1 || continue
	version=$("$candidate" --version | sed -n 's/.*clang-format version \([0-9]*\).*/\1/p')
	if [ "$version" = "$want" ]; then
		formatter=$candidate
		break
	fi
done
if [ -z "$formatter" ]; then
	found=$(clang-format --version 2>/dev/null || echo "none")
	echo "SKIP: the tree is formatted by clang-format $want (Debian 12's clang-format package); found: $found"
	exit 77
fi

cd "$root" || exit 1
list=$(mktemp)
trap 'rm -f "$list"' EXIT
# Every C and C++ source and header, whatever the build directories (build*/) hold.
find . \( -path './build*' -o -path './.git' -o -path './subprojects' \) -prune -o \
	-type f \( -name '*.c' -o -name '*.cpp' -o -name '*.h' -o -name '*.hpp' \) -print | sort >"$list"
files=$(wc -l <"$list")
[ "$files" -gt 0 ] || { echo "no C or C++ files under $root"; exit 1; }

# In batches (one process per file took a minute): --dry-run -Werror names each file that
# differs ("FILE:LINE:COL: error: code should be clang-formatted").
bad=$(xargs -n 50 "$formatter" --dry-run -Werror <"$list" 2>&1 |
	sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u)
differ=0
first=
for file in $bad; do
	differ=$((differ + 1))
	echo "not formatted: $file"
	[ -n "$first" ] || first=$file
done

if [ "$differ" -gt 0 ]; then
	echo "---- $first: what $formatter makes of it (first 40 lines of the diff) ----"
	"$formatter" "$first" | diff -u "$first" - | head -n 40
	echo "$differ of $files files differ from .clang-format; fix with: $formatter -i FILE"
	exit 1
fi
echo "$files files, all formatted as .clang-format says ($formatter)"
