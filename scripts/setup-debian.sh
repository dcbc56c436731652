#!/bin/bash
# Installs, with apt, the Debian packages gpuhandle needs to build and test (sudo when not root):
# Debian 12's here, and Debian 13's in scripts/debian13.sh's root (the same list).
set -euo pipefail

packages=(
  # Build
  meson ninja-build pkg-config gcc g++
  # Tests (Check) and scripts; valgrind (--setup valgrind) and clang with its sanitizer and
  # libFuzzer runtimes (the fuzz build, -Dfuzz=enabled)
  check python3 valgrind clang
  # The formatter the style test checks every C and C++ file with (tests/style; Debian 12's is 14)
  clang-format
  # Translations
  gettext
  # groff checks the programs' man pages (docs/man, tests/tools/check_program_options.py)
  groff-base
  # The HTML reference (option docs): Doxygen for the C and C++ headers, gi-docgen for the GIR
  doxygen gi-docgen
  # Headers and libraries the format tables are proved against (tests/formats): GStreamer's
  # GstVideoInfo, FFmpeg's pixdesc, and the format enums of DRM, V4L2, VA-API, Vulkan, GL,
  # OpenCL and CUDA (ffnvcodec's dynlink headers stand in for the CUDA Toolkit's cuda.h).
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev libavutil-dev
  libdrm-dev linux-libc-dev libva-dev libvulkan-dev libgl-dev libegl-dev
  opencl-headers libffmpeg-nvenc-dev
  # Fence waiters on real APIs without a GPU (tests/backends): Vulkan on Mesa's lavapipe, GL/GLES
  # on llvmpipe through surfaceless EGL, OpenCL on PoCL; GLib for main-loop waits.
  mesa-vulkan-drivers libegl-mesa0 libgl1-mesa-dri libgles-dev
  ocl-icd-opencl-dev pocl-opencl-icd libglib2.0-dev
  # GStreamer integration (option gstreamer): the Vulkan and GL helper libraries (gstreamer-vulkan
  # needs xkbcommon's .pc files), and for the element tests the elements they run with:
  # videotestsrc/videoconvert (base), glupload/gldownload (gl), vulkanupload/vulkandownload
  # (bad), gst-inspect-1.0 and gst-launch-1.0 (tools).
  libgstreamer-plugins-bad1.0-dev libxkbcommon-dev libxkbcommon-x11-dev
  gstreamer1.0-plugins-base gstreamer1.0-gl gstreamer1.0-plugins-bad gstreamer1.0-tools
  # GObject Introspection data of libgstgpuhandle-1.0 (option introspection): g-ir-scanner
  gobject-introspection libgirepository1.0-dev
  # FFmpeg bridge (option ffmpeg): gpuhandle-avbridge decodes, filters and encodes with libavcodec,
  # libavformat and libavfilter; its tests make clips with the ffmpeg program (lavfi, nothing
  # downloaded) and compare with its rawvideo output; appsrc/appsink come with plugins-base.
  libavcodec-dev libavformat-dev libavfilter-dev ffmpeg
  # gpuhandle-demo (the README's first command) writes its contact sheet as PNG with zlib.
  zlib1g-dev
  # Khronos's Vulkan validation layer with synchronization validation (meson test --setup
  # validation, tests/validation).
  vulkan-validationlayers
  # The peer suite (tests/peer): gst-libav's decoders (avdec_h264, decodebin), qtdemux and
  # compositor/videoscale (good, base) reading gpuhandle's buffers; ffmpeg's libx264 makes clips.
  gstreamer1.0-libav gstreamer1.0-plugins-good
  # The peer suite's encoder (x264enc) and its PyGObject appsink application (Debian's python3
  # with GStreamer's typelibs; the GstGpuHandle-1.0 typelib comes from the build).
  gstreamer1.0-plugins-ugly python3-gst-1.0
  # libplacebo as a consumer of gpuhandle's Vulkan frames (tests/backends/test_placebo_consumer;
  # libplacebo 7, Debian 13's: Debian 12's 4.208 is too old and the test skips there).
  libplacebo-dev
  # Later parts add their packages here, each with a comment naming the meson option it enables.
)

# --list: the packages, one a line, installed nowhere (scripts/debian13.sh installs them into its
# Debian 13 root).
if [ "${1:-}" = --list ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qx installed; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-debian: all ${#packages[@]} packages already installed"
  exit 0
fi

as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
echo "setup-debian: installing ${missing[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends "${missing[@]}"
