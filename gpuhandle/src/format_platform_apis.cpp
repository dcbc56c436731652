// DXGI, Metal, CoreVideo and WebGPU tables (placeholder until filled in).
#include "format_tables.h"

namespace gpuhandle::detail {
std::span<const FormatMapping> dxgiFormats() noexcept { return {}; }
std::span<const FormatMapping> metalFormats() noexcept { return {}; }
std::span<const FormatMapping> coreVideoFormats() noexcept { return {}; }
std::span<const FormatMapping> webgpuFormats() noexcept { return {}; }
} // namespace gpuhandle::detail
