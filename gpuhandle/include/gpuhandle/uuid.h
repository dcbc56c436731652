// Uuid and Luid: the raw device identities that Vulkan, GL, CUDA and D3D report.
#pragma once

#include <gpuhandle/export.h>

#include <array>
#include <cstdint>

namespace GPUHANDLE_API gpuhandle {

// VkPhysicalDeviceIDProperties::deviceUUID, GL_DEVICE_UUID_EXT, CUuuid: one 16-byte namespace.
using Uuid = std::array<uint8_t, 16>;

// Windows adapter LUID (DXGI_ADAPTER_DESC::AdapterLuid, VkPhysicalDeviceIDProperties::deviceLUID).
struct Luid {
	uint32_t low = 0; // LUID.LowPart
	int32_t high = 0; // LUID.HighPart
	// member-wise
	friend constexpr bool operator==(const Luid &, const Luid &) = default;
};

} // namespace gpuhandle
