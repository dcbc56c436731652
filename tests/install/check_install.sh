#!/bin/bash
# Installs the build into a temporary root and builds C and C++ consumers with pkg-config alone.
# Usage: check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

if ! log=$(meson install -C "$build" --destdir "$root" --no-rebuild 2>&1); then
  printf 'meson install failed:\n%s\n' "$log" >&2
  exit 1
fi
pcdir=$(dirname "$(find "$root" -name gpuhandle.pc | head -n 1)")
if [ ! -f "$pcdir/gpuhandle.pc" ]; then
  echo "gpuhandle.pc was not installed" >&2
  exit 1
fi
export PKG_CONFIG_PATH="$pcdir" PKG_CONFIG_SYSROOT_DIR="$root"
libdir=$(dirname "$(find "$root" -name 'libgpuhandle.so' | head -n 1)")

# Example programs are built and tested, but installed only with -Dinstall-examples=true.
examples_wanted=$(python3 -c 'import json, sys
print(next(str(o["value"]).lower() for o in json.load(open(sys.argv[1]))
	   if o["name"] == "install-examples"))' "$build/meson-info/intro-buildoptions.json")
examples_found=$(find "$root" -path '*/bin/gpuhandle-frame-*')
if [ "$examples_wanted" = false ] && [ -n "$examples_found" ]; then
  echo "example programs installed without -Dinstall-examples=true: $examples_found" >&2
  exit 1
fi

# Every installed program has its man page, with the version filled in.
for program in $(find "$root" -path '*/bin/*' -type f); do
  page=$(find "$root" -path "*/share/man/man1/$(basename "$program").1")
  if [ -z "$page" ]; then
    echo "$(basename "$program") is installed without a man page" >&2
    exit 1
  fi
  if grep -q '@VERSION@' "$page"; then
    echo "$page still has @VERSION@" >&2
    exit 1
  fi
done

# With the reference built (option docs), both halves are installed under share/doc/gpuhandle.
if [ -d "$build/docs/reference/api" ]; then
  for page in api/html/index.html GstGpuHandle-1.0/index.html; do
    if [ -z "$(find "$root" -path "*/share/doc/gpuhandle/$page")" ]; then
      echo "the reference's $page was not installed under share/doc/gpuhandle" >&2
      exit 1
    fi
  done
fi

# Every public header the source tree has must be installed.
for h in "$src"/../../gpuhandle/include/gpuhandle/*.h; do
  if [ -z "$(find "$root" -path "*/include/gpuhandle/$(basename "$h")")" ]; then
    echo "header $(basename "$h") was not installed" >&2
    exit 1
  fi
done

g++ -std=c++20 -Wall -Wextra -Werror "$src/consumer.cpp" $(pkg-config --cflags --libs gpuhandle) -o "$root/consumer-cpp"
gcc -std=c99 -Wall -Wextra -pedantic -Werror "$src/consumer.c" $(pkg-config --cflags --libs gpuhandle) -o "$root/consumer-c"
LD_LIBRARY_PATH="$libdir" "$root/consumer-cpp"
LD_LIBRARY_PATH="$libdir" "$root/consumer-c"
echo "installed library, headers and gpuhandle.pc build and run C and C++ consumers"
