// DeviceId and DeviceInfo: which physical device an API names, so two APIs can tell they share one.
#pragma once

#include <gpuhandle/backend_kind.h>
#include <gpuhandle/export.h>
#include <gpuhandle/result.h>
#include <gpuhandle/uuid.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace GPUHANDLE_API gpuhandle {

// "01234567-89ab-cdef-0123-456789abcdef", the form nvidia-smi and vulkaninfo print.
GPUHANDLE_API std::string formatUuid(const Uuid &uuid);

// A PCI address domain:bus:device.function. Built only by create() or parse(), so it is in range.
class PciBusId
{
public:
	// OutOfRange, naming the field, when bus > 255, device > 31 or function > 7; any domain is
	// accepted.
	static Result<PciBusId> create(uint32_t domain, uint32_t bus, uint32_t device,
				       uint32_t function);
	// "0000:01:00.0" (sysfs, CUDA), "00000000:01:00.0" (nvidia-smi) or "01:00.0" (lspci).
	static Result<PciBusId> parse(std::string_view text);

	uint32_t domain() const noexcept { return domain_; }     // any 32-bit value; usually 0
	uint32_t bus() const noexcept { return bus_; }           // 0..255
	uint32_t device() const noexcept { return device_; }     // 0..31
	uint32_t function() const noexcept { return function_; } // 0..7
	// "0000:01:00.0": the sysfs spelling, which parse() reads back.
	std::string toString() const;

	friend bool operator==(const PciBusId &, const PciBusId &) = default; // member-wise

private:
	PciBusId(uint32_t domain, uint32_t bus, uint32_t device, uint32_t function)
		: domain_(domain), bus_(bus), device_(device), function_(function)
	{
	}

	uint32_t domain_;
	uint32_t bus_;      // 0..255
	uint32_t device_;   // 0..31
	uint32_t function_; // 0..7
};

// A DRM device node as stat() reports it (st_rdev), and as VkPhysicalDeviceDrmPropertiesEXT and
// EGL_EXT_device_drm_render_node name it. Numbers, not a path: a path is not an identity
// (/dev/dri/by-path links, containers that renumber, different mount namespaces).
struct DrmNode {
	uint32_t major = 0; // major(st_rdev): 226 for DRM on Linux
	uint32_t minor = 0; // minor(st_rdev): 0.. for card*, 128.. for renderD*

	// stat()s a device path ("/dev/dri/renderD128"). Linux only; elsewhere NotSupported.
	static Result<DrmNode> fromPath(const char *path);
	// "226:128"
	std::string toString() const;
	friend bool operator==(const DrmNode &, const DrmNode &) = default; // member-wise
};

// Everything known about the identity of one physical device; every field is optional.
// Vulkan deviceUUID, GL_DEVICE_UUID_EXT, CL_DEVICE_UUID_KHR and CUDA's CUuuid share one namespace
// on a given driver stack, so `uuid` alone matches one GPU across those APIs. Values that identify
// nothing (an all-zero UUID or LUID, registry id 0, DRM node 0:0) are ignored when matching.
struct DeviceId {
	// The host itself (BackendKind::Cpu); when set, the other fields are ignored.
	bool isCpu = false;
	std::optional<Uuid> uuid{};              // Vulkan, GL, OpenCL or CUDA device UUID
	std::optional<Luid> luid{};              // Windows adapter LUID (D3D; Vulkan on Windows)
	std::optional<PciBusId> pciBusId{};      // where the device sits on the PCI bus
	std::optional<DrmNode> drmRenderNode{};  // /dev/dri/renderD*
	std::optional<DrmNode> drmPrimaryNode{}; // /dev/dri/card*
	// MTLDevice.registryID, the id Metal devices are told apart by.
	std::optional<uint64_t> metalRegistryId{};

	// The identity of the host CPU (isCpu set), which matches only itself.
	static DeviceId cpu();
	// True when the value carries no usable identity (not CPU, every field absent or null).
	bool isEmpty() const noexcept;
	// "uuid=... pci=0000:01:00.0 render=226:128", "cpu" or "unknown", for logs.
	std::string toString() const;
	// Consistent with operator== (equal ids hash equal), for unordered maps keyed by DeviceId.
	std::size_t hash() const noexcept;

	// Member-wise, for cache keys; whether two ids name one device is sameDevice()'s question.
	friend bool operator==(const DeviceId &, const DeviceId &) = default;
};

// The answer of sameDevice().
enum class DeviceMatch : uint32_t {
	Same = 0,      // the strongest identity both sides carry is equal
	Different = 1, // the strongest identity both sides carry differs, or only one is the CPU
	Unknown = 2,   // the two share no identity kind: nothing can be concluded
};
// "same", "different", "unknown"; "invalid" for a value outside the enum.
GPUHANDLE_API const char *deviceMatchName(DeviceMatch match) noexcept;

// Whether `a` and `b` name the same physical device. The strongest identity both carry decides
// (uuid, then luid, PCI bus id, DRM render node, DRM primary node, Metal registry id); weaker
// ones are not consulted, even when they disagree.
GPUHANDLE_API DeviceMatch sameDevice(const DeviceId &a, const DeviceId &b) noexcept;

// What a backend reports about a device it opened (gpuhandle-info prints these).
struct DeviceInfo {
	BackendKind backend = BackendKind::Cpu; // the backend that opened the device
	// "AMD Radeon RX 7600 (RADV NAVI33)", "llvmpipe (LLVM 15.0.6, 256 bits)".
	std::string name{};
	DeviceId id{}; // the identities the backend's API reports for it
	// PCI vendor (0x1002, 0x10de, 0x8086), or a Khronos vendor id (0x10005 Mesa) for non-PCI.
	std::optional<uint32_t> vendorId{};
	std::optional<uint32_t> pciDeviceId{}; // PCI device id
	// As the driver spells it ("Mesa 22.3.6", "535.104.05"); empty when unknown.
	std::string driverVersion{};
	uint64_t dedicatedMemoryBytes = 0; // device-local, not shared with the host; 0 when none
	bool isIntegrated = false;         // shares memory with the host
	bool isSoftware = false;           // a CPU rasteriser behind a GPU API (lavapipe, WARP)

	// One line for logs: "vulkan: llvmpipe (...) [software] uuid=... driver Mesa 22.3.6".
	std::string toString() const;
};

// Whether a device or renderer name is a known software implementation (llvmpipe, lavapipe,
// softpipe, SwiftShader, WARP / Microsoft Basic Render Driver), for backends filling isSoftware.
GPUHANDLE_API bool isSoftwareRendererName(std::string_view name) noexcept;

} // namespace gpuhandle

// So that a DeviceId can key std::unordered_map (device caches).
namespace std {
// DeviceId::hash(), for std::unordered_map and std::unordered_set.
template<>
struct hash<gpuhandle::DeviceId> {
	// id.hash()
	size_t operator()(const gpuhandle::DeviceId &id) const noexcept { return id.hash(); }
};
} // namespace std
