// The memory-type table: one row per GStreamer memory type, and the adapters' defaults.
#include "memorytypes_internal.h"

#include <gst/gpuhandle/gstgpuhandleconfig.h>
#include <gst/gpuhandle/gstgpuhandlememory.h>
#if GPUHANDLE_GST_HAVE_GL
#include <gst/gl/gl.h>
#define GPUHANDLE_GL_FORMATS "video/x-raw, format = (string) " GST_GL_MEMORY_VIDEO_FORMATS_STR
#else
#define GPUHANDLE_GL_FORMATS nullptr
#endif

#include <algorithm>

namespace gpuhandle::gst {

namespace {

// The formats GStreamer's Vulkan elements (vulkanupload, vulkansink) take.
constexpr const char *kVulkanFormats =
	"video/x-raw, format = (string) { RGBA, RGBx, BGRA, BGRx, ARGB, xRGB, ABGR, xBGR, RGB, "
	"BGR, GRAY8, GRAY16_LE, NV12, NV21, I420, YV12, Y444, Y42B, Y41B, YUY2, UYVY, AYUV }";

// Input order: system memory first (what most producers offer), then DMA-BUF, then the GPU
// libraries. Output order: system memory first, so that a sink taking anything gets plain
// bytes; GPU memories when downstream asks for them in its caps.
constexpr MemoryTypeInfo kTable[] = {
	{ BufferMemory::System, "SystemMemory", GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY,
	  BackendKind::Cpu, FrameStorage::Buffer, true, 0, 0, OutputCopy::None, false, nullptr,
	  nullptr, "" },
	// No GStreamer element makes DMA-BUFs without hardware (v4l2, VA): the producer is
	// gpuhandle's own export of Vulkan memory.
	{ BufferMemory::DmaBuf, "DMABuf", "memory:DMABuf", BackendKind::Fd, FrameStorage::Buffer,
	  true, 1, 3, OutputCopy::None, true, nullptr, nullptr,
	  "gpuhandleupload backend=vulkan ! gpuhandledownload ! video/x-raw(memory:DMABuf)" },
	{ BufferMemory::GlMemory, "GLMemory", "memory:GLMemory", BackendKind::OpenGL,
	  FrameStorage::OptimalImage, GPUHANDLE_GST_HAVE_GL != 0, 2, 1, OutputCopy::CpuWrite, false,
	  GPUHANDLE_GL_FORMATS, nullptr, "glupload" },
	{ BufferMemory::VulkanImage, "VulkanImage", "memory:VulkanImage", BackendKind::Vulkan,
	  FrameStorage::OptimalImage, GPUHANDLE_GST_HAVE_VULKAN != 0, 3, 2, OutputCopy::None, false,
	  kVulkanFormats, nullptr, "vulkanupload" },
	// Copied on the GPU from a pitched CUDA allocation.
	{ BufferMemory::CudaMemory, "CUDAMemory", "memory:CUDAMemory", BackendKind::Cuda,
	  FrameStorage::Buffer, GPUHANDLE_GST_HAVE_CUDA != 0, 4, 4, OutputCopy::GpuCopy, false,
	  nullptr,
	  "GStreamer 1.22 wraps no foreign device memory as CUDAMemory: frames are copied on the "
	  "GPU into its CUDA pool",
	  "cudaupload" },
	// GStreamer's VA elements allocate their own surfaces: gpuhandle only reads them.
	{ BufferMemory::VaMemory, "VAMemory", "memory:VAMemory", BackendKind::VaApi,
	  FrameStorage::OptimalImage, GPUHANDLE_GST_HAVE_VA != 0, 5, -1, OutputCopy::None, false,
	  nullptr, nullptr, "vapostproc ! video/x-raw(memory:VAMemory)" },
};

using Factory = std::unique_ptr<MemoryAdapter> (*)(const MemoryTypeInfo &, MemoryRole);

// The factory of a type (one that makes none when its library was not found).
Factory factoryOf(BufferMemory memory)
{
	switch (memory) {
	case BufferMemory::System: return detail::systemAdapter;
	case BufferMemory::DmaBuf: return detail::dmaBufAdapter;
	// A type whose library was not found has its stub's factory, which makes none.
	case BufferMemory::GlMemory: return detail::glAdapter;
	case BufferMemory::VulkanImage: return detail::vulkanAdapter;
	case BufferMemory::CudaMemory: return detail::cudaAdapter;
	case BufferMemory::VaMemory: return detail::vaAdapter;
	default: return nullptr;
	}
}

int8_t rankOf(const MemoryTypeInfo &info, MemoryRole role)
{
	return role == MemoryRole::Input ? info.inputRank : info.outputRank;
}

} // namespace

std::span<const MemoryTypeInfo> memoryTypes() noexcept
{
	return kTable;
}

const MemoryTypeInfo *memoryTypeInfo(BufferMemory memory) noexcept
{
	for (const MemoryTypeInfo &info : kTable)
		if (info.memory == memory)
			return &info;
	return nullptr;
}

const MemoryTypeInfo &memoryTypeOfCaps(const GstCaps *caps)
{
	GstCapsFeatures *features =
		caps && !gst_caps_is_empty(caps) ? gst_caps_get_features(caps, 0) : nullptr;
	if (features)
		for (const MemoryTypeInfo &info : kTable)
			if (gst_caps_features_contains(features, info.feature))
				return info;
	return kTable[0];
}

std::vector<const char *> memoryFeatures(MemoryRole role)
{
	std::vector<const MemoryTypeInfo *> rows;
	for (const MemoryTypeInfo &info : kTable)
		if (info.built && rankOf(info, role) >= 0)
			rows.push_back(&info);
	std::sort(rows.begin(), rows.end(), [role](const auto *a, const auto *b) {
		return rankOf(*a, role) < rankOf(*b, role);
	});
	std::vector<const char *> features;
	for (const MemoryTypeInfo *info : rows)
		features.push_back(info->feature);
	return features;
}

MemoryAdapter::MemoryAdapter(const MemoryTypeInfo &info, MemoryRole role) noexcept
	: info_(info), role_(role)
{
}

MemoryAdapter::~MemoryAdapter() = default;

bool MemoryAdapter::answerContextQuery(GstElement *, GstQuery *)
{
	return false;
}

void MemoryAdapter::setContext(GstElement *, GstContext *)
{
}

Result<Frame> MemoryAdapter::frameFromBuffer(GstElement *, const InputBuffer &, BackendRef &)
{
	return detail::notSupported(info_, "input");
}

Result<BackendRef> MemoryAdapter::openOutput(GstElement *, DevicesSlot &)
{
	return detail::notSupported(info_, "output");
}

Result<GstBuffer *> MemoryAdapter::bufferFromFrame(const Frame &, const GstVideoInfo &,
						   WaitDuration, const BackendRef &)
{
	return detail::notSupported(info_, "frames wrapped as its buffers");
}

Result<GstBuffer *> MemoryAdapter::pooledBuffer(const GstVideoInfo &)
{
	return detail::notSupported(info_, "a pool of its own");
}

Result<GstBuffer *> MemoryAdapter::gpuCopyOf(const Frame &, const BackendRef &,
					     const GstVideoInfo &, WaitDuration)
{
	return detail::notSupported(info_, "GPU copies into its pool");
}

void MemoryAdapter::dropPools()
{
}

void MemoryAdapter::release()
{
	dropPools();
}

MemoryAdapters::MemoryAdapters(MemoryRole role)
{
	for (const MemoryTypeInfo &info : kTable)
		if (Factory make = factoryOf(info.memory); make && rankOf(info, role) >= 0)
			if (std::unique_ptr<MemoryAdapter> adapter = make(info, role))
				adapters_.push_back(std::move(adapter));
}

MemoryAdapters::~MemoryAdapters()
{
	release();
}

MemoryAdapter *MemoryAdapters::find(BufferMemory memory) const noexcept
{
	for (const auto &adapter : adapters_)
		if (adapter->info().memory == memory)
			return adapter.get();
	return nullptr;
}

bool MemoryAdapters::answerContextQuery(GstElement *element, GstQuery *query)
{
	if (GST_QUERY_TYPE(query) != GST_QUERY_CONTEXT)
		return false;
	for (const auto &adapter : adapters_)
		if (adapter->answerContextQuery(element, query))
			return true;
	return false;
}

void MemoryAdapters::setContext(GstElement *element, GstContext *context)
{
	for (const auto &adapter : adapters_)
		adapter->setContext(element, context);
}

void MemoryAdapters::dropPools()
{
	for (const auto &adapter : adapters_)
		adapter->dropPools();
}

void MemoryAdapters::release()
{
	for (const auto &adapter : adapters_)
		adapter->release();
}

namespace detail {

Error notSupported(const MemoryTypeInfo &info, const char *what)
{
	if (!info.built)
		return Error::format(ErrorCode::NotSupported, "memory",
				     "%s is not built in (its GStreamer library was not found).",
				     info.name);
	return Error::format(ErrorCode::NotSupported, "memory", "%s has no %s in gpuhandle.",
			     info.name, what);
}

std::optional<Error> incompleteInput(const InputBuffer &in)
{
	if (in.buffer && in.info && in.devices && gst_buffer_n_memory(in.buffer) > 0)
		return std::nullopt;
	return Error(ErrorCode::NullHandle, "buffer",
		     "An input needs a buffer with memory, its video info and the element's "
		     "device slot.");
}

std::optional<Error> wrongMemory(const MemoryTypeInfo &info, GstMemory *mem, bool isType)
{
	if (isType)
		return std::nullopt;
	return Error::format(ErrorCode::WrongKind, "buffer",
			     "The caps say %s, but the buffer holds %s memory.", info.name,
			     mem && mem->allocator && mem->allocator->mem_type
				     ? mem->allocator->mem_type
				     : "unknown");
}

} // namespace detail

} // namespace gpuhandle::gst
