// Helpers the backends share: request checks, frames over one buffer, frames over new resources.
#include "common/backend_internal.h"

#include <bit>
#include <unistd.h>

namespace gpuhandle {

Result<FrameLayout> layoutForRequest(const AllocateRequest &request, uint32_t preferredAlign,
				     const char *backendName)
{
	if (!request.width || !request.height)
		return Error::format(ErrorCode::ZeroSize, request.width ? "height" : "width",
				     "%s: cannot allocate a %ux%u frame.", backendName,
				     request.width, request.height);
	if (request.storage != FrameStorage::Buffer &&
	    request.storage != FrameStorage::LinearImage &&
	    request.storage != FrameStorage::OptimalImage)
		return Error::format(ErrorCode::InvalidArgument, "storage",
				     "%s: storage %u is not a FrameStorage.", backendName,
				     static_cast<unsigned>(request.storage));
	uint32_t align = request.strideAlign ? request.strideAlign : preferredAlign;
	if (!std::has_single_bit(align) || align > 4096)
		return Error::format(ErrorCode::InvalidArgument, "strideAlign",
				     "%s: stride alignment %u is not a power of two up to 4096.",
				     backendName, request.strideAlign);
	Result<const PixelFormatInfo *> info = pixelFormatInfo(request.format);
	if (!info.ok())
		return Error::format(ErrorCode::NotSupported, "format", "%s: %s", backendName,
				     info.error().message().c_str());
	return computeLayout(request.format, request.width, request.height,
			     LayoutPolicy::StrideAlign, align);
}

Result<Frame> frameOverBuffer(const AllocateRequest &request, const FrameLayout &layout,
			      Resource buffer)
{
	FrameDesc desc;
	desc.format = request.format;
	desc.width = request.width;
	desc.height = request.height;
	desc.colorimetry = request.colorimetry;
	desc.numResources = 1;
	desc.resources[0] = std::move(buffer);
	desc.numPlanes = layout.numPlanes;
	for (uint32_t i = 0; i < layout.numPlanes; ++i)
		desc.planes[i] =
			PlaneView{ 0, 0, layout.planes[i].offset, layout.planes[i].stride };
	return Frame::create(std::move(desc));
}

Result<Frame> frameLike(const Frame &like, std::span<const Resource> resources)
{
	FrameDesc desc = like.desc();
	if (resources.size() > desc.resources.size())
		return Error::format(ErrorCode::OutOfRange, "resources",
				     "A frame holds at most 4 resources, not %zu.",
				     resources.size());
	desc.numResources = static_cast<uint32_t>(resources.size());
	desc.resources = {};
	for (size_t i = 0; i < resources.size(); ++i)
		desc.resources[i] = resources[i];
	return Frame::create(std::move(desc));
}

Error notThisBackendsFrame(const char *backendName, const char *operation)
{
	return Error::format(
		ErrorCode::WrongKind, "frame",
		"%s: %s takes frames the %s backend allocated or imported; this one is not.",
		backendName, operation, backendName);
}

Error routeNotSupported(const char *backendName, ImportRoute route, const char *why)
{
	return Error::format(ErrorCode::NotSupported, "route", "%s: no %s import: %s", backendName,
			     importRouteName(route), why);
}

Status checkPlaneStrides(const Frame &frame, const char *backendName)
{
	Result<const PixelFormatInfo *> info = pixelFormatInfo(frame.format());
	if (!info.ok())
		return Error::format(ErrorCode::NotSupported, "format", "%s: %s", backendName,
				     info.error().message().c_str());
	if (frame.numPlanes() != (*info)->numPlanes)
		return Error::format(ErrorCode::FormatMismatch, "planes",
				     "%s: a %s frame has %u planes, not %u.", backendName,
				     pixelFormatName(frame.format()), (*info)->numPlanes,
				     frame.numPlanes());
	for (uint32_t i = 0; i < frame.numPlanes(); ++i) {
		uint64_t rowBytes = (*info)->planes[i].rowBytes(frame.width());
		if (frame.plane(i).stride < rowBytes)
			return Error::format(
				ErrorCode::FormatMismatch, "planes",
				"%s: plane %u has a stride of %u bytes, less than a %s row of %u pixels "
				"(%llu bytes).",
				backendName, i, frame.plane(i).stride,
				pixelFormatName(frame.format()), frame.width(),
				static_cast<unsigned long long>(rowBytes));
	}
	return {};
}

bool isCpuMemory(const Resource &resource) noexcept
{
	return resource.kind() == ResourceKind::CpuBytes ||
	       resource.kind() == ResourceKind::CpuPlanes;
}

bool isFdMemory(const Resource &resource) noexcept
{
	return resource.kind() == ResourceKind::ShmFd || resource.kind() == ResourceKind::DmaBuf;
}

bool isHostMemory(const Resource &resource) noexcept
{
	return isCpuMemory(resource) || isFdMemory(resource);
}

bool allResources(const Frame &frame, bool (*test)(const Resource &) noexcept) noexcept
{
	for (uint32_t i = 0; i < frame.numResources(); ++i)
		if (!test(frame.resource(i)))
			return false;
	return frame.numResources() > 0;
}

bool HostMemoryBackend::supportsFormat(PixelFormat format, FrameStorage storage) const
{
	return storage == FrameStorage::Buffer && pixelFormatInfo(format).ok();
}

Status HostMemoryBackend::copyFrame(const Frame &, const Frame &, WaitDuration)
{
	return Error::format(ErrorCode::NotSupported, "",
			     "%s: host memory has no device copy; the planner copies it "
			     "through the CPU.",
			     backendKindName(kind()));
}

Result<FrameLayout> hostBufferLayout(const AllocateRequest &request, const char *backendName,
				     uint64_t &pagedSize)
{
	Result<FrameLayout> layout = layoutForRequest(request, 64, backendName);
	if (!layout.ok())
		return layout;
	if (request.storage != FrameStorage::Buffer)
		return Error::format(ErrorCode::NotSupported, "storage",
				     "%s: host memory has no %s storage; ask for a buffer.",
				     backendName, frameStorageName(request.storage));
	const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
	pagedSize = (layout->size + page - 1) / page * page;
	return layout;
}

} // namespace gpuhandle
