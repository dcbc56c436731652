// GstVideoFormat table (placeholder until filled in).
#include "format_tables.h"

namespace gpuhandle::detail {
std::span<const FormatMapping> gstreamerFormats() noexcept { return {}; }
} // namespace gpuhandle::detail
