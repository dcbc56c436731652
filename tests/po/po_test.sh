#!/bin/bash
# Translations: complete, msgfmt-clean .po files, and German element and program errors.
# Usage: po_test.sh SRCDIR PO_BUILDDIR enabled|disabled GPUHANDLE_FORMATS [GPUHANDLE_AVBRIDGE]
set -u
src=$1 mo_dir=$2 nls=$3 formats=$4 avbridge=${5:-}
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
skip() { echo "SKIP: $*"; }

if [ "$nls" != enabled ]; then
	skip "translations are off (-Dnls=disabled, or msgfmt or libintl was not found)"
	exit 77
fi
for lang in $(grep -v '^#' "$src/po/LINGUAS"); do
	if [ ! -f "$mo_dir/$lang/LC_MESSAGES/gpuhandle-1.0.mo" ]; then
		skip "$mo_dir/$lang/LC_MESSAGES/gpuhandle-1.0.mo was not built"
		exit 77
	fi
done
# A German locale honours LANGUAGE; so does C.UTF-8 in Debian 12's glibc 2.36 (not C or POSIX,
# and not Debian 13's glibc 2.41, whose C.UTF-8 is built in and translates nothing).
locale=
for candidate in de_DE.UTF-8 C.UTF-8; do
	if locale -a 2>/dev/null | tr '[:upper:]' '[:lower:]' | sed 's/utf-8/utf8/' |
		grep -qx "$(echo "$candidate" | tr '[:upper:]' '[:lower:]' | sed 's/utf-8/utf8/')"; then
		locale=$candidate
		break
	fi
done
if [ -z "$locale" ]; then
	skip "neither the C.UTF-8 nor the de_DE.UTF-8 locale is installed"
	exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
in_lang() { local lang=$1; shift; env LANGUAGE="$lang" LC_ALL="$locale" "$@"; }

# 1. Every .po file passes msgfmt --check, and every message is translated, none fuzzy.
for lang in $(grep -v '^#' "$src/po/LINGUAS"); do
	po="$src/po/$lang.po"
	if ! msgfmt --check --statistics -o /dev/null "$po" 2>"$work/stats"; then
		fail "msgfmt --check $lang.po: $(cat "$work/stats")"
	elif grep -q "untranslated\|fuzzy" "$work/stats"; then
		fail "$lang.po is incomplete: $(cat "$work/stats")"
	elif ! grep -q "charset=UTF-8" "$po"; then
		fail "$lang.po is not UTF-8"
	else
		pass "msgfmt --check $lang.po: $(cat "$work/stats")"
	fi
done

# 2. Every source that calls _() is in POTFILES, and the .po files translate every message the
# sources have now (a template made here, not the committed one, which may be stale).
while read -r file; do
	grep -qx "$file" "$src/po/POTFILES" || fail "$file uses _() but is not in po/POTFILES"
done < <(cd "$src" && grep -l '\b[NP]\?_("' gst-plugin/elements/*.cpp tools/*.cpp \
	ffmpeg-bridge/tools/*.cpp demo/*.cpp 2>/dev/null)
if command -v xgettext >/dev/null && command -v msgcmp >/dev/null; then
	(cd "$src" && grep -v '^#' po/POTFILES | xgettext --from-code=UTF-8 --keyword=_ \
		--keyword=N_ --keyword=P_:1,2 -f - -o "$work/now.pot") ||
		fail "xgettext could not read the sources in po/POTFILES"
	for lang in $(grep -v '^#' "$src/po/LINGUAS"); do
		if msgcmp "$src/po/$lang.po" "$work/now.pot" 2>"$work/cmp"; then
			pass "$lang.po translates every message of the sources"
		else
			fail "$lang.po lacks messages of the sources: $(head -5 "$work/cmp")"
		fi
	done
else
	skip "xgettext or msgcmp missing: the .po files were not compared with the sources"
fi

# 3. A program's usage error, in German, in French, and in English without LANGUAGE.
in_lang de "$formats" --no-such-option >/dev/null 2>"$work/formats.de"
rc=$?
if [ $rc -eq 2 ] && grep -q "^Aufruf: gpuhandle-formats \[--markdown" "$work/formats.de" &&
	grep -q "unbekannte Option „--no-such-option“" "$work/formats.de"; then
	pass "gpuhandle-formats usage in German"
else
	fail "gpuhandle-formats (LANGUAGE=de) exited $rc with: $(cat "$work/formats.de")"
fi
in_lang fr "$formats" --no-such-option >/dev/null 2>"$work/formats.fr"
grep -q "^Utilisation : " "$work/formats.fr" && pass "gpuhandle-formats usage in French" ||
	fail "gpuhandle-formats (LANGUAGE=fr): $(cat "$work/formats.fr")"
env -u LANGUAGE LC_ALL=C "$formats" --no-such-option >/dev/null 2>"$work/formats.c"
grep -q "^Usage: " "$work/formats.c" && pass "gpuhandle-formats usage in English under LC_ALL=C" ||
	fail "gpuhandle-formats (LC_ALL=C): $(cat "$work/formats.c")"

# 4. An element error: gpuhandledownload allow-copy=false where the frame needs a CPU copy (memfd
# frames with padded rows into fakesink, which takes no GstVideoMeta). async=false: an error while
# prerolling sometimes leaves gst-launch-1.0 1.22 waiting after it printed the error.
if [ -z "${GPUHANDLE_GST_PLUGIN_BUILT:-}" ]; then
	skip "the GStreamer plugin was not built: no element error checked"
elif ! command -v gst-launch-1.0 >/dev/null; then
	skip "gst-launch-1.0 (Debian package gstreamer1.0-tools) is not installed"
else
	pipeline=(videotestsrc num-buffers=2 '!' video/x-raw,format=I420,width=66,height=34 '!'
		gpuhandleupload backend=memfd '!' gpuhandledownload allow-copy=false '!' fakesink async=false)
	in_lang de timeout 60 gst-launch-1.0 "${pipeline[@]}" >"$work/gst.de" 2>&1
	if grep -q "Kein Weg ohne Kopie nach .*, und allow-copy ist false\." "$work/gst.de"; then
		pass "gpuhandledownload's error in German"
	else
		fail "gpuhandledownload (LANGUAGE=de) said: $(grep -i "error\|fehler" "$work/gst.de")"
	fi
	in_lang fr timeout 60 gst-launch-1.0 "${pipeline[@]}" >"$work/gst.fr" 2>&1
	grep -q "Aucun chemin sans copie vers .*, et allow-copy vaut false\." "$work/gst.fr" &&
		pass "gpuhandledownload's error in French" ||
		fail "gpuhandledownload (LANGUAGE=fr) said: $(grep -i "error\|erreur" "$work/gst.fr")"
	env -u LANGUAGE LC_ALL=C timeout 60 gst-launch-1.0 "${pipeline[@]}" >"$work/gst.c" 2>&1
	grep -q "No zero-copy path into .*, and allow-copy is false\." "$work/gst.c" &&
		pass "gpuhandledownload's error in English under LC_ALL=C" ||
		fail "gpuhandledownload (LC_ALL=C) said: $(grep -i "error" "$work/gst.c")"
fi

# 5. A program error: gpuhandle-avbridge on a file that does not exist.
if [ -z "$avbridge" ]; then
	skip "gpuhandle-avbridge was not built: no avbridge error checked"
else
	in_lang de "$avbridge" to-gst "$work/missing.mkv" fakesink >/dev/null 2>"$work/av.de"
	rc=$?
	german="gpuhandle-avbridge: Fehler: „$work/missing.mkv“ konnte nicht geöffnet werden: "
	if [ $rc -eq 1 ] && grep -qF "$german" "$work/av.de"; then
		pass "gpuhandle-avbridge's error in German"
	else
		fail "gpuhandle-avbridge (LANGUAGE=de) exited $rc with: $(cat "$work/av.de")"
	fi
	in_lang de "$avbridge" to-gst >/dev/null 2>"$work/args.de"
	grep -q "to-gst braucht INPUT und PIPELINE" "$work/args.de" &&
		pass "gpuhandle-avbridge's usage error in German" ||
		fail "gpuhandle-avbridge to-gst (LANGUAGE=de): $(cat "$work/args.de")"
fi

[ $failures -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
