// DRM, V4L2 and VA fourcc tables (placeholder until filled in).
#include "format_tables.h"

namespace gpuhandle::detail {
std::span<const FormatMapping> drmFormats() noexcept { return {}; }
std::span<const FormatMapping> v4l2Formats() noexcept { return {}; }
std::span<const FormatMapping> vaFormats() noexcept { return {}; }
uint32_t vaRtFormatOf(PixelFormat) noexcept { return 0; }
} // namespace gpuhandle::detail
