// AVPixelFormat table (placeholder until filled in).
#include "format_tables.h"

namespace gpuhandle::detail {
std::span<const FormatMapping> ffmpegFormats() noexcept { return {}; }
} // namespace gpuhandle::detail
