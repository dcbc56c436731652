// PixelFormat: the frame's format slot. For now an opaque number; the format issue fills it in.
#pragma once

#include <cstdint>

namespace gpuhandle {

// Opaque until the pixel-format tables land: producers and consumers agree on the numbers
// between themselves. Unknown (0) is always legal and means "described elsewhere".
enum class PixelFormat : uint32_t { Unknown = 0 };

} // namespace gpuhandle
