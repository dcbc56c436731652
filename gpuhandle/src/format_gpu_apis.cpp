// Vulkan, GL, CUDA and OpenCL tables (placeholder until filled in).
#include "format_tables.h"

namespace gpuhandle::detail {
std::span<const FormatMapping> vulkanFormats() noexcept { return {}; }
std::span<const PlaneMapping> vulkanPlaneFormats() noexcept { return {}; }
std::span<const PlaneMapping> glPlaneFormats() noexcept { return {}; }
std::span<const PlaneMapping> cudaPlaneFormats() noexcept { return {}; }
std::span<const PlaneMapping> openclPlaneFormats() noexcept { return {}; }
} // namespace gpuhandle::detail
