// Device identity: PCI bus id parsing, DRM nodes, matching one physical device across APIs.
#include <gpuhandle/device_id.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#ifdef __linux__
#include <sys/stat.h>
#include <sys/sysmacros.h>
#endif

namespace gpuhandle {

namespace {

// Parses 1..maxDigits hex digits making up all of `text`.
bool parseHex(std::string_view text, size_t maxDigits, uint32_t &out)
{
	if (text.empty() || text.size() > maxDigits)
		return false;
	uint32_t value = 0;
	for (char c : text) {
		uint32_t digit;
		if (c >= '0' && c <= '9')
			digit = static_cast<uint32_t>(c - '0');
		else if (c >= 'a' && c <= 'f')
			digit = static_cast<uint32_t>(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			digit = static_cast<uint32_t>(c - 'A' + 10);
		else
			return false;
		value = value << 4 | digit;
	}
	out = value;
	return true;
}

bool usable(const std::optional<Uuid> &uuid)
{
	return uuid && std::any_of(uuid->begin(), uuid->end(), [](uint8_t b) { return b != 0; });
}
bool usable(const std::optional<Luid> &luid)
{
	return luid && (luid->low != 0 || luid->high != 0);
}
bool usable(const std::optional<PciBusId> &pci)
{
	return pci.has_value();
}
bool usable(const std::optional<DrmNode> &node)
{
	return node && (node->major != 0 || node->minor != 0);
}
bool usable(const std::optional<uint64_t> &registryId)
{
	return registryId && *registryId != 0;
}

// The verdict of one identity kind, or nullopt when one side lacks it.
template<typename T>
std::optional<DeviceMatch> compare(const std::optional<T> &a, const std::optional<T> &b)
{
	if (!usable(a) || !usable(b))
		return std::nullopt;
	return *a == *b ? DeviceMatch::Same : DeviceMatch::Different;
}

void hashCombine(std::size_t &seed, std::size_t value)
{
	seed ^= value + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
}

} // namespace

/**
 * \brief Formats a UUID in the canonical 8-4-4-4-12 lower-case form
 * \param uuid The 16 bytes, in the order the API reports them
 * \return "01234567-89ab-cdef-0123-456789abcdef"
 */
std::string formatUuid(const Uuid &uuid)
{
	std::string text;
	text.reserve(36);
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < uuid.size(); i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			text += '-';
		text += digits[uuid[i] >> 4];
		text += digits[uuid[i] & 0xf];
	}
	return text;
}

/**
 * \class PciBusId
 * \brief A PCI address, checked to lie in range when built
 *
 * Vulkan (VK_EXT_pci_bus_info), CUDA (cuDeviceGetPCIBusId), OpenCL (cl_khr_pci_bus_info), DRM
 * and sysfs all report it, so it matches a device across APIs that have no common UUID.
 */

/**
 * \brief Builds a PCI bus id from its four numbers
 * \return The id, or OutOfRange naming the field when bus > 255, device > 31 or function > 7
 */
Result<PciBusId> PciBusId::create(uint32_t domain, uint32_t bus, uint32_t device, uint32_t function)
{
	if (bus > 0xff)
		return Error::format(ErrorCode::OutOfRange, "bus",
				     "PciBusId: bus is %u; it must be at most 255.", bus);
	if (device > 31)
		return Error::format(ErrorCode::OutOfRange, "device",
				     "PciBusId: device is %u; it must be at most 31.", device);
	if (function > 7)
		return Error::format(ErrorCode::OutOfRange, "function",
				     "PciBusId: function is %u; it must be at most 7.", function);
	return PciBusId(domain, bus, device, function);
}

/**
 * \brief Parses "domain:bus:device.function" in hex, the domain being optional
 *
 * The domain has 1 to 8 hex digits (sysfs prints 4, nvidia-smi 8), bus and device 1 or 2,
 * function 1. Upper and lower case are accepted.
 *
 * \return The id; InvalidArgument (field "pciBusId") when the text is not of that form, or the
 * OutOfRange error of create() when a number is too large
 */
Result<PciBusId> PciBusId::parse(std::string_view text)
{
	auto malformed = [text]() {
		return Error::format(
			ErrorCode::InvalidArgument, "pciBusId",
			"PciBusId: \"%.*s\" is not a PCI bus id of the form 0000:01:00.0.",
			static_cast<int>(std::min<size_t>(text.size(), 64)), text.data());
	};

	size_t dot = text.rfind('.');
	if (dot == std::string_view::npos)
		return malformed();
	std::string_view head = text.substr(0, dot);
	uint32_t domain = 0, bus = 0, device = 0, function = 0;
	if (!parseHex(text.substr(dot + 1), 1, function))
		return malformed();

	size_t lastColon = head.rfind(':');
	if (lastColon == std::string_view::npos || !parseHex(head.substr(lastColon + 1), 2, device))
		return malformed();
	head = head.substr(0, lastColon);
	size_t firstColon = head.rfind(':');
	if (firstColon == std::string_view::npos) {
		// lspci's short form: no domain, which then is 0.
		if (!parseHex(head, 2, bus))
			return malformed();
	} else if (!parseHex(head.substr(firstColon + 1), 2, bus) ||
		   !parseHex(head.substr(0, firstColon), 8, domain)) {
		return malformed();
	}
	return create(domain, bus, device, function);
}

std::string PciBusId::toString() const
{
	char buffer[32];
	std::snprintf(buffer, sizeof(buffer), "%04x:%02x:%02x.%x", domain_, bus_, device_,
		      function_);
	return buffer;
}

/**
 * \struct DrmNode
 * \brief A DRM device node by its device numbers
 */

/**
 * \brief Reads the device numbers of a DRM node from the file system
 * \param path A device path such as "/dev/dri/renderD128"
 * \return The node; NullHandle when path is null, Io when stat() fails, InvalidArgument when the
 * path is not a character device, NotSupported where the platform has no DRM
 */
Result<DrmNode> DrmNode::fromPath(const char *path)
{
	if (!path)
		return Error(ErrorCode::NullHandle, "path",
			     "DrmNode: path is null; a device path is required.");
#ifdef __linux__
	struct stat st;
	if (::stat(path, &st) != 0)
		return Error::format(ErrorCode::Io, "path", "DrmNode: stat(\"%s\") failed: %s.",
				     path, std::strerror(errno));
	if (!S_ISCHR(st.st_mode))
		return Error::format(ErrorCode::InvalidArgument, "path",
				     "DrmNode: \"%s\" is not a character device.", path);
	return DrmNode{ major(st.st_rdev), minor(st.st_rdev) };
#else
	return Error::format(
		ErrorCode::NotSupported, "path",
		"DrmNode: \"%s\" cannot be read; DRM device nodes exist only on Linux.", path);
#endif
}

std::string DrmNode::toString() const
{
	return std::to_string(major) + ":" + std::to_string(minor);
}

/**
 * \struct DeviceId
 * \brief The identities of one physical device that an API reported
 *
 * A backend fills what its API tells (Vulkan: uuid, luid on Windows, PCI bus id, DRM nodes;
 * CUDA: uuid and PCI bus id; D3D: luid; Metal: registry id; VA-API: the render node). Equality
 * compares every field, for use as a cache key; sameDevice() answers the physical question.
 */

/**
 * \brief The identity of the host CPU, which matches only itself
 */
DeviceId DeviceId::cpu()
{
	DeviceId id;
	id.isCpu = true;
	return id;
}

bool DeviceId::isEmpty() const noexcept
{
	return !isCpu && !usable(uuid) && !usable(luid) && !usable(pciBusId) &&
	       !usable(drmRenderNode) && !usable(drmPrimaryNode) && !usable(metalRegistryId);
}

std::string DeviceId::toString() const
{
	if (isCpu)
		return "cpu";
	std::string text;
	auto add = [&text](const char *key, const std::string &value) {
		if (!text.empty())
			text += ' ';
		text += key;
		text += '=';
		text += value;
	};
	if (uuid)
		add("uuid", formatUuid(*uuid));
	if (luid) {
		char buffer[32];
		std::snprintf(buffer, sizeof(buffer), "%08x:%08x",
			      static_cast<uint32_t>(luid->high), luid->low);
		add("luid", buffer);
	}
	if (pciBusId)
		add("pci", pciBusId->toString());
	if (drmRenderNode)
		add("render", drmRenderNode->toString());
	if (drmPrimaryNode)
		add("primary", drmPrimaryNode->toString());
	if (metalRegistryId) {
		char buffer[32];
		std::snprintf(buffer, sizeof(buffer), "0x%" PRIx64, *metalRegistryId);
		add("registry", buffer);
	}
	return text.empty() ? "unknown" : text;
}

/**
 * \brief A hash consistent with operator==, so a DeviceId can key an unordered map
 */
std::size_t DeviceId::hash() const noexcept
{
	std::size_t seed = isCpu ? 1 : 0;
	if (uuid)
		for (uint8_t b : *uuid)
			hashCombine(seed, b);
	if (luid) {
		hashCombine(seed, static_cast<uint32_t>(luid->high));
		hashCombine(seed, luid->low);
	}
	if (pciBusId) {
		hashCombine(seed, pciBusId->domain());
		hashCombine(seed,
			    pciBusId->bus() << 8 | pciBusId->device() << 3 | pciBusId->function());
	}
	for (const auto &node : { drmRenderNode, drmPrimaryNode }) {
		hashCombine(seed, node.has_value());
		if (node) {
			hashCombine(seed, node->major);
			hashCombine(seed, node->minor);
		}
	}
	if (metalRegistryId)
		hashCombine(seed, static_cast<std::size_t>(*metalRegistryId));
	return seed;
}

const char *deviceMatchName(DeviceMatch match) noexcept
{
	switch (match) {
	case DeviceMatch::Same: return "same";
	case DeviceMatch::Different: return "different";
	case DeviceMatch::Unknown: return "unknown";
	}
	return "invalid";
}

/**
 * \brief Tells whether two identities name the same physical device
 *
 * The CPU matches only the CPU: against a GPU identity it is Different, against an empty one
 * Unknown. Otherwise the strongest identity kind both sides carry decides alone, in the order
 * uuid, luid, PCI bus id, DRM render node, DRM primary node, Metal registry id. A UUID is what
 * external-memory imports check (VkPhysicalDeviceIDProperties, GL_EXT_memory_object), so two
 * driver stacks that give one card different UUIDs (amdvlk and radv, say) are reported Different
 * even when their PCI bus ids are equal: memory shared by UUID would not import between them.
 *
 * \return Same, Different, or Unknown when the two share no identity kind
 */
DeviceMatch sameDevice(const DeviceId &a, const DeviceId &b) noexcept
{
	if (a.isCpu || b.isCpu) {
		if (a.isCpu && b.isCpu)
			return DeviceMatch::Same;
		return (a.isCpu ? b : a).isEmpty() ? DeviceMatch::Unknown : DeviceMatch::Different;
	}
	for (auto verdict :
	     { compare(a.uuid, b.uuid), compare(a.luid, b.luid), compare(a.pciBusId, b.pciBusId),
	       compare(a.drmRenderNode, b.drmRenderNode),
	       compare(a.drmPrimaryNode, b.drmPrimaryNode),
	       compare(a.metalRegistryId, b.metalRegistryId) }) {
		if (verdict)
			return *verdict;
	}
	return DeviceMatch::Unknown;
}

/**
 * \struct DeviceInfo
 * \brief A backend's description of a device it opened, for logs, tools and device selection
 */

std::string DeviceInfo::toString() const
{
	std::string text = backendKindName(backend);
	text += ": ";
	text += name.empty() ? "(unnamed)" : name;
	if (isSoftware)
		text += " [software]";
	if (isIntegrated)
		text += " [integrated]";
	char buffer[64];
	if (vendorId) {
		std::snprintf(buffer, sizeof(buffer), " vendor=0x%04x", *vendorId);
		text += buffer;
	}
	if (pciDeviceId) {
		std::snprintf(buffer, sizeof(buffer), " device=0x%04x", *pciDeviceId);
		text += buffer;
	}
	if (dedicatedMemoryBytes) {
		std::snprintf(buffer, sizeof(buffer), " memory=%" PRIu64 "MiB",
			      dedicatedMemoryBytes >> 20);
		text += buffer;
	}
	text += " id=[" + id.toString() + "]";
	if (!driverVersion.empty())
		text += " driver " + driverVersion;
	return text;
}

/**
 * \brief Recognises the names software rasterisers give themselves
 *
 * Mesa's lavapipe reports itself to Vulkan as "llvmpipe (LLVM ...)", so the check is on name
 * fragments, case-insensitively: llvmpipe, lavapipe, softpipe, swrast, SwiftShader and
 * "Microsoft Basic Render Driver" (WARP).
 */
bool isSoftwareRendererName(std::string_view name) noexcept
{
	static constexpr std::string_view fragments[] = {
		"llvmpipe", "lavapipe",    "softpipe",
		"swrast",   "swiftshader", "microsoft basic render driver",
	};
	auto lower = [](char c) {
		return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
	};
	for (std::string_view fragment : fragments) {
		auto it = std::search(name.begin(), name.end(), fragment.begin(), fragment.end(),
				      [&lower](char x, char y) { return lower(x) == y; });
		if (it != name.end())
			return true;
	}
	return false;
}

} // namespace gpuhandle
