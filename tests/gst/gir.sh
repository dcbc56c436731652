#!/bin/sh
# The GObject Introspection data covers every function of libgstgpuhandle-1.0's C headers, each
# with the version it appeared in (its doc comment's Since:), and the typelib was compiled from it.
gir="$1"
shift
if [ ! -f "$gir" ]; then
	echo "FAIL: $gir was not generated"
	exit 1
fi
typelib="${gir%.gir}.typelib"
[ -s "$typelib" ] || { echo "FAIL: $typelib is missing or empty"; exit 1; }
failed=0
count=0
for header in "$@"; do
	for fn in $(grep -oE '^[A-Za-z_ *]+ \**(gst_[a-z_]+)\(' "$header" | grep -oE 'gst_[a-z_]+'); do
		count=$((count + 1))
		if ! grep -q -e "c:identifier=\"$fn\"" -e "glib:get-type=\"$fn\"" "$gir"; then
			echo "FAIL: $fn ($header) is not in $gir"
			failed=1
		elif grep -q "c:identifier=\"$fn\"" "$gir" &&
			! awk -v id="c:identifier=\"$fn\"" 'index($0, id) { on = 1 }
				on { print } on && />/ { exit }' "$gir" | grep -q 'version="'; then
			# GStreamer's convention: each installed symbol's doc says since when (Since:).
			echo "FAIL: $fn ($header) has no version in $gir (a 'Since:' line in its doc comment)"
			failed=1
		fi
	done
done
[ $count -gt 0 ] || { echo "FAIL: no functions found in the headers"; exit 1; }
echo "ok: $count functions introspected in $(basename "$gir")"
exit $failed
