// C API: raw-carrier sync points over each API's fence fields, and their getters.
#include <gpuhandle/gpuhandle_sync.h>

#include "c_sync_internal.h"

using namespace gpuhandle;
using namespace gpuhandle::capi;

namespace {

constexpr const char *kType = "SyncPoint";

// Takes desc's anchor first (so that it is released exactly once whatever fails), converts the
// raw fields with `convert` (C desc -> Result<R>) and makes a raw carrier owned by the anchor.
template<typename R, typename CDesc, typename Convert>
gpuhandle_status createRaw(const char *function, const CDesc *desc, gpuhandle_sync_point **out,
			   gpuhandle_error **error, Convert convert) noexcept
{
	if (out)
		*out = nullptr;
	if (error)
		*error = nullptr;
	return guard(error, [&]() -> gpuhandle_status {
		if (!desc)
			return failNull(error, function, "desc");
		Result<KeepAliveRef> anchor = anchorOf(desc->anchor, kType);
		if (!anchor)
			return fail(error, std::move(anchor).error());
		if (!out)
			return failNull(error, function, "out"); // the anchor is released here
		Result<R> raw = convert(*desc);
		if (!raw)
			return fail(error, std::move(raw).error());
		Result<SyncPoint> point =
			SyncPoint::create(std::move(*raw), nullptr, std::move(*anchor));
		if (!point)
			return fail(error, std::move(point).error());
		*out = newSyncPoint(std::move(*point));
		return GPUHANDLE_OK;
	});
}

// Fills *out from the point's R with `fill` (plain copies), or zeroes it.
template<typename R, typename CDesc, typename Fill>
gpuhandle_status getRaw(const gpuhandle_sync_point *point, CDesc *out, Fill fill) noexcept
{
	static_assert(std::is_trivially_copyable_v<CDesc>);
	if (out)
		std::memset(static_cast<void *>(out), 0, sizeof(*out));
	if (!point || !out)
		return GPUHANDLE_ERROR_NULL_HANDLE;
	const R *raw = point->value.raw<R>();
	if (!raw)
		return GPUHANDLE_ERROR_WRONG_KIND;
	fill(*raw, *out);
	return GPUHANDLE_OK;
}

// C enums are 32-bit while the C++ ones may be narrower: checked here, before a cast could wrap
// an invalid number into a valid one.
std::optional<Error> checkEnum(const char *field, uint32_t value, uint32_t max)
{
	if (value <= max)
		return std::nullopt;
	return Error::format(ErrorCode::InvalidArgument, field,
			     "SyncPoint: %s %u is not a known value (0..%u).", field, value, max);
}

} // namespace

extern "C" {

gpuhandle_status
gpuhandle_sync_point_new_vulkan_semaphore(const gpuhandle_vulkan_semaphore_sync_desc *desc,
					  gpuhandle_sync_point **out,
					  gpuhandle_error **error) noexcept
{
	return createRaw<VulkanSemaphoreSync>(
		__func__, desc, out, error, [](const auto &c) -> Result<VulkanSemaphoreSync> {
			if (auto e = checkEnum("kind", static_cast<uint32_t>(c.kind),
					       GPUHANDLE_VULKAN_SEMAPHORE_TIMELINE))
				return std::move(*e);
			return VulkanSemaphoreSync{ c.semaphore,
						    static_cast<VulkanSemaphoreKind>(c.kind),
						    c.value, c.device };
		});
}

gpuhandle_status gpuhandle_sync_point_new_d3d12_fence(const gpuhandle_d3d12_fence_sync_desc *desc,
						      gpuhandle_sync_point **out,
						      gpuhandle_error **error) noexcept
{
	return createRaw<D3D12FenceSync>(__func__, desc, out, error,
					 [](const auto &c) -> Result<D3D12FenceSync> {
						 return D3D12FenceSync{ c.fence, c.value };
					 });
}

gpuhandle_status
gpuhandle_sync_point_new_d3d11_keyed_mutex(const gpuhandle_d3d11_keyed_mutex_sync_desc *desc,
					   gpuhandle_sync_point **out,
					   gpuhandle_error **error) noexcept
{
	return createRaw<D3D11KeyedMutexSync>(
		__func__, desc, out, error, [](const auto &c) -> Result<D3D11KeyedMutexSync> {
			return D3D11KeyedMutexSync{ c.keyedMutex, c.key };
		});
}

gpuhandle_status gpuhandle_sync_point_new_cuda_external_semaphore(
	const gpuhandle_cuda_external_semaphore_sync_desc *desc, gpuhandle_sync_point **out,
	gpuhandle_error **error) noexcept
{
	return createRaw<CudaExternalSemaphoreSync>(
		__func__, desc, out, error, [](const auto &c) -> Result<CudaExternalSemaphoreSync> {
			return CudaExternalSemaphoreSync{ c.semaphore,
							  optionalOf(c.hasValue, c.value) };
		});
}

gpuhandle_status gpuhandle_sync_point_new_cuda_event(const gpuhandle_cuda_event_sync_desc *desc,
						     gpuhandle_sync_point **out,
						     gpuhandle_error **error) noexcept
{
	return createRaw<CudaEventSync>(
		__func__, desc, out, error, [](const auto &c) -> Result<CudaEventSync> {
			return CudaEventSync{ c.event, c.context, c.ordinal };
		});
}

gpuhandle_status gpuhandle_sync_point_new_opencl_event(const gpuhandle_opencl_event_sync_desc *desc,
						       gpuhandle_sync_point **out,
						       gpuhandle_error **error) noexcept
{
	return createRaw<OpenClEventSync>(__func__, desc, out, error,
					  [](const auto &c) -> Result<OpenClEventSync> {
						  return OpenClEventSync{ c.event };
					  });
}

gpuhandle_status
gpuhandle_sync_point_new_metal_shared_event(const gpuhandle_metal_shared_event_sync_desc *desc,
					    gpuhandle_sync_point **out,
					    gpuhandle_error **error) noexcept
{
	return createRaw<MetalSharedEventSync>(
		__func__, desc, out, error, [](const auto &c) -> Result<MetalSharedEventSync> {
			return MetalSharedEventSync{ c.event, c.value };
		});
}

gpuhandle_status gpuhandle_sync_point_new_gl_semaphore(const gpuhandle_gl_semaphore_sync_desc *desc,
						       gpuhandle_sync_point **out,
						       gpuhandle_error **error) noexcept
{
	return createRaw<GlSemaphoreSync>(__func__, desc, out, error,
					  [](const auto &c) -> Result<GlSemaphoreSync> {
						  return GlSemaphoreSync{ c.semaphore, c.context };
					  });
}

gpuhandle_status gpuhandle_sync_point_new_gl_sync(const gpuhandle_gl_sync_sync_desc *desc,
						  gpuhandle_sync_point **out,
						  gpuhandle_error **error) noexcept
{
	// GlFlavour is 32-bit like the C enum: the C++ check sees the caller's number unchanged.
	return createRaw<GlSyncSync>(
		__func__, desc, out, error, [](const auto &c) -> Result<GlSyncSync> {
			return GlSyncSync{ c.sync, c.context, static_cast<GlFlavour>(c.flavour) };
		});
}

gpuhandle_status
gpuhandle_sync_point_new_webgpu_submission(const gpuhandle_webgpu_submission_sync_desc *desc,
					   gpuhandle_sync_point **out,
					   gpuhandle_error **error) noexcept
{
	return createRaw<WebGpuSubmissionSync>(
		__func__, desc, out, error, [](const auto &c) -> Result<WebGpuSubmissionSync> {
			return WebGpuSubmissionSync{ c.queue, c.submission };
		});
}

gpuhandle_status
gpuhandle_sync_point_get_vulkan_semaphore(const gpuhandle_sync_point *point,
					  gpuhandle_vulkan_semaphore_sync_desc *out) noexcept
{
	return getRaw<VulkanSemaphoreSync>(point, out, [](const auto &r, auto &c) {
		c.semaphore = r.semaphore;
		c.kind = static_cast<gpuhandle_vulkan_semaphore_kind>(r.kind);
		c.value = r.value;
		c.device = r.device;
	});
}

gpuhandle_status gpuhandle_sync_point_get_d3d12_fence(const gpuhandle_sync_point *point,
						      gpuhandle_d3d12_fence_sync_desc *out) noexcept
{
	return getRaw<D3D12FenceSync>(point, out, [](const auto &r, auto &c) {
		c.fence = r.fence;
		c.value = r.value;
	});
}

gpuhandle_status
gpuhandle_sync_point_get_d3d11_keyed_mutex(const gpuhandle_sync_point *point,
					   gpuhandle_d3d11_keyed_mutex_sync_desc *out) noexcept
{
	return getRaw<D3D11KeyedMutexSync>(point, out, [](const auto &r, auto &c) {
		c.keyedMutex = r.keyedMutex;
		c.key = r.key;
	});
}

gpuhandle_status gpuhandle_sync_point_get_cuda_external_semaphore(
	const gpuhandle_sync_point *point,
	gpuhandle_cuda_external_semaphore_sync_desc *out) noexcept
{
	return getRaw<CudaExternalSemaphoreSync>(point, out, [](const auto &r, auto &c) {
		c.semaphore = r.semaphore;
		putOptional(r.value, c.hasValue, c.value);
	});
}

gpuhandle_status gpuhandle_sync_point_get_cuda_event(const gpuhandle_sync_point *point,
						     gpuhandle_cuda_event_sync_desc *out) noexcept
{
	return getRaw<CudaEventSync>(point, out, [](const auto &r, auto &c) {
		c.event = r.event;
		c.context = r.context;
		c.ordinal = r.ordinal;
	});
}

gpuhandle_status
gpuhandle_sync_point_get_opencl_event(const gpuhandle_sync_point *point,
				      gpuhandle_opencl_event_sync_desc *out) noexcept
{
	return getRaw<OpenClEventSync>(point, out,
				       [](const auto &r, auto &c) { c.event = r.event; });
}

gpuhandle_status
gpuhandle_sync_point_get_metal_shared_event(const gpuhandle_sync_point *point,
					    gpuhandle_metal_shared_event_sync_desc *out) noexcept
{
	return getRaw<MetalSharedEventSync>(point, out, [](const auto &r, auto &c) {
		c.event = r.event;
		c.value = r.value;
	});
}

gpuhandle_status
gpuhandle_sync_point_get_gl_semaphore(const gpuhandle_sync_point *point,
				      gpuhandle_gl_semaphore_sync_desc *out) noexcept
{
	return getRaw<GlSemaphoreSync>(point, out, [](const auto &r, auto &c) {
		c.semaphore = r.semaphore;
		c.context = r.context;
	});
}

gpuhandle_status gpuhandle_sync_point_get_gl_sync(const gpuhandle_sync_point *point,
						  gpuhandle_gl_sync_sync_desc *out) noexcept
{
	return getRaw<GlSyncSync>(point, out, [](const auto &r, auto &c) {
		c.sync = r.sync;
		c.context = r.context;
		c.flavour = static_cast<gpuhandle_gl_flavour>(r.flavour);
	});
}

gpuhandle_status
gpuhandle_sync_point_get_webgpu_submission(const gpuhandle_sync_point *point,
					   gpuhandle_webgpu_submission_sync_desc *out) noexcept
{
	return getRaw<WebGpuSubmissionSync>(point, out, [](const auto &r, auto &c) {
		c.queue = r.queue;
		c.submission = r.submission;
	});
}

} // extern "C"
