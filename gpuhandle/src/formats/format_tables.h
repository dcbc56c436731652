// Private: the per-API tables behind format_mappings.h, one source file per API.
#pragma once

#include <gpuhandle/format_mappings.h>

#include <span>

namespace gpuhandle::detail {

std::span<const FormatMapping> gstreamerFormats() noexcept; // format_gstreamer.cpp
std::span<const FormatMapping> ffmpegFormats() noexcept;    // format_ffmpeg.cpp
std::span<const FormatMapping> drmFormats() noexcept;       // format_drm_v4l2_va.cpp
std::span<const FormatMapping> v4l2Formats() noexcept;      // format_drm_v4l2_va.cpp
std::span<const FormatMapping> vaFormats() noexcept;        // format_drm_v4l2_va.cpp
std::span<const FormatMapping> vulkanFormats() noexcept;    // format_gpu_apis.cpp
std::span<const FormatMapping> dxgiFormats() noexcept;      // format_platform_apis.cpp
std::span<const FormatMapping> metalFormats() noexcept;     // format_platform_apis.cpp
std::span<const FormatMapping> coreVideoFormats() noexcept; // format_platform_apis.cpp
std::span<const FormatMapping> webgpuFormats() noexcept;    // format_platform_apis.cpp

std::span<const PlaneMapping> vulkanPlaneFormats() noexcept; // format_gpu_apis.cpp
std::span<const PlaneMapping> glPlaneFormats() noexcept;     // format_gpu_apis.cpp
std::span<const PlaneMapping> cudaPlaneFormats() noexcept;   // format_gpu_apis.cpp
std::span<const PlaneMapping> openclPlaneFormats() noexcept; // format_gpu_apis.cpp

// VA_RT_FORMAT_* per format, 0 when VA has none (format_drm_v4l2_va.cpp).
uint32_t vaRtFormatOf(PixelFormat format) noexcept;

} // namespace gpuhandle::detail
