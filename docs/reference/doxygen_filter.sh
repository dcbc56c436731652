#!/bin/sh
# Doxygen's input filter: the headers' // comments become Doxygen's (a comment line documents
# what follows it, a trailing comment what precedes it), so the headers keep one comment style.
exec sed -e 's|^\([[:space:]]*\)// |\1/// |' -e 's|^\([[:space:]]*\)//$|\1///|' \
	-e 's|\([;,{]\)[[:space:]]*// |\1 ///< |' "$1"
