// Resource: the closed sum type over every validated native handle type.
#pragma once

#include <gpuhandle/backend_kind.h>
#include <gpuhandle/cpu_resources.h>
#include <gpuhandle/cuda_resources.h>
#include <gpuhandle/d3d_resources.h>
#include <gpuhandle/export.h>
#include <gpuhandle/fd_resources.h>
#include <gpuhandle/gl_resources.h>
#include <gpuhandle/metal_resources.h>
#include <gpuhandle/opencl_resources.h>
#include <gpuhandle/vaapi_resources.h>
#include <gpuhandle/vulkan_resources.h>
#include <gpuhandle/webgpu_resources.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <variant>

namespace GPUHANDLE_API gpuhandle {

// Stable numbers (C API, wire format). New kinds are appended.
enum class ResourceKind : uint32_t {
	None = 0, // an empty Resource (default-constructed); no factory makes one
	VulkanImage = 1,
	VulkanBuffer = 2,
	VulkanMemoryFd = 3,
	GlTexture = 4,
	GlBuffer = 5,
	CudaPitched2D = 6,
	CudaBuffer = 7,
	CudaSurface = 8,
	OpenClMem = 9,
	DmaBuf = 10,
	ShmFd = 11,
	VaSurface = 12,
	D3D11Texture = 13,
	D3D12Resource = 14,
	D3D12Buffer = 15,
	MetalTexture = 16,
	MetalBuffer = 17,
	WebGpuTexture = 18,
	CpuBytes = 19,
	CpuPlanes = 20,
	CpuSharedSlot = 21,
};
// Number of ResourceKind values, None included (one past the largest).
inline constexpr uint32_t kResourceKindCount = 22;

// A kind's stable lowercase name for logs ("vulkan-image", "dmabuf"); "unknown" for a value
// outside ResourceKind. Static storage: never freed.
GPUHANDLE_API const char *resourceKindName(ResourceKind kind) noexcept;
// The API a kind belongs to (DmaBuf and ShmFd: Fd; None: Cpu).
GPUHANDLE_API BackendKind backendOf(ResourceKind kind) noexcept;

namespace detail {
template<typename T, typename V>
struct VariantIndex;
// Implementation of Resource::kindOf: the index of T among a std::variant's alternatives.
template<typename T, typename... Ts>
struct VariantIndex<T, std::variant<Ts...>> {
	// The index of the first alternative that is T; the alternative count when none is.
	static constexpr std::size_t value()
	{
		std::size_t i = 0;
		(void)((std::is_same_v<T, Ts> ? false : (++i, true)) && ...);
		return i;
	}
};
} // namespace detail

// A value holding exactly one validated handle (or nothing, when default-constructed).
// Copying allocates nothing and costs one atomic increment per fd or anchor it holds.
// Thread safety: a Resource may be copied and read from any thread; it is never edited.
class Resource
{
public:
	// Every handle type, in ResourceKind order (std::monostate is None).
	using Variant = std::variant<std::monostate, VulkanImage, VulkanBuffer, VulkanMemoryFd,
				     GlTexture, GlBuffer, CudaPitched2D, CudaBuffer, CudaSurface,
				     OpenClMem, DmaBuf, ShmFd, VaSurface, D3D11Texture,
				     D3D12Resource, D3D12Buffer, MetalTexture, MetalBuffer,
				     WebGpuTexture, CpuBytes, CpuPlanes, CpuSharedSlot>;

	// The ResourceKind of handle type T (ResourceKind::VulkanImage for VulkanImage, ...).
	template<typename T>
	static constexpr ResourceKind
		kindOf = static_cast<ResourceKind>(detail::VariantIndex<T, Variant>::value());

	Resource() = default;
	// Holds `handle` (copied or moved in), one of the validated handle types of Variant.
	template<typename T,
		 typename = std::enable_if_t<std::is_constructible_v<Variant, T &&> &&
					     !std::is_same_v<std::decay_t<T>, Resource> &&
					     !std::is_same_v<std::decay_t<T>, std::monostate>>>
	Resource(T &&handle) : v_(std::forward<T>(handle))
	{
	}

	// Variant alternatives are declared in ResourceKind order.
	ResourceKind kind() const noexcept { return static_cast<ResourceKind>(v_.index()); }
	BackendKind backend() const noexcept { return backendOf(kind()); } // backendOf(kind())
	bool empty() const noexcept { return v_.index() == 0; }            // kind() is None

	// The handle when it is a T, else null.
	template<typename T>
	const T *get() const noexcept
	{
		return std::get_if<T>(&v_);
	}
	// The handle when it is a T, else a WrongKind error naming both kinds.
	template<typename T>
	Result<const T *> as() const;

	// Calls `f` with the held handle (const T &, or std::monostate when empty) as std::visit
	// does, and returns what `f` returns.
	template<typename F>
	decltype(auto) visit(F &&f) const
	{
		return std::visit(std::forward<F>(f), v_);
	}

	// Bytes addressable through the handle when it says (buffers, CPU memory, fds, DMA-BUF
	// object `subresource`); 0 when the handle carries no size (images, textures, surfaces).
	uint64_t byteSize(uint32_t subresource = 0) const noexcept;
	// How many parts a plane view may name as its subresource: DmaBuf objects, CpuPlanes
	// planes; 1 for every other kind (CudaPitched2D planes are offsets into one allocation), 0
	// when empty.
	uint32_t subresourceCount() const noexcept;
	// Tells every anchor and borrowed fd of the handle that the consumer's sync succeeded.
	void markConsumed() const noexcept;

private:
	Error wrongKind(ResourceKind wanted) const;
	Variant v_;
};

template<typename T>
Result<const T *> Resource::as() const
{
	if (const T *p = std::get_if<T>(&v_))
		return p;
	return wrongKind(kindOf<T>);
}

} // namespace gpuhandle
