// C API: gpuhandle_sync_point's lifetime, fence fds, composites, accessors and blocking waits.
#include <gpuhandle/gpuhandle_sync.h>

#include "c_sync_internal.h"

#include <string>
#include <vector>

using namespace gpuhandle;
using namespace gpuhandle::capi;

// The C numbers are the C++ ones: checked here, so that a renumbering fails the build.
static_assert(GPUHANDLE_SYNC_KIND_NOOP == int(SyncKind::Noop));
static_assert(GPUHANDLE_SYNC_KIND_CPU == int(SyncKind::Cpu));
static_assert(GPUHANDLE_SYNC_KIND_FENCE_FD == int(SyncKind::FenceFd));
static_assert(GPUHANDLE_SYNC_KIND_VULKAN_SEMAPHORE == int(SyncKind::VulkanSemaphore));
static_assert(GPUHANDLE_SYNC_KIND_D3D12_FENCE == int(SyncKind::D3D12Fence));
static_assert(GPUHANDLE_SYNC_KIND_D3D11_KEYED_MUTEX == int(SyncKind::D3D11KeyedMutex));
static_assert(GPUHANDLE_SYNC_KIND_CUDA_EXTERNAL_SEMAPHORE == int(SyncKind::CudaExternalSemaphore));
static_assert(GPUHANDLE_SYNC_KIND_CUDA_EVENT == int(SyncKind::CudaEvent));
static_assert(GPUHANDLE_SYNC_KIND_OPENCL_EVENT == int(SyncKind::OpenClEvent));
static_assert(GPUHANDLE_SYNC_KIND_METAL_SHARED_EVENT == int(SyncKind::MetalSharedEvent));
static_assert(GPUHANDLE_SYNC_KIND_GL_SEMAPHORE == int(SyncKind::GlSemaphore));
static_assert(GPUHANDLE_SYNC_KIND_GL_SYNC == int(SyncKind::GlSync));
static_assert(GPUHANDLE_SYNC_KIND_WEBGPU_SUBMISSION == int(SyncKind::WebGpuSubmission));
static_assert(GPUHANDLE_SYNC_KIND_COMPOSITE == int(SyncKind::Composite));
static_assert(GPUHANDLE_VULKAN_SEMAPHORE_BINARY == int(VulkanSemaphoreKind::Binary));
static_assert(GPUHANDLE_VULKAN_SEMAPHORE_TIMELINE == int(VulkanSemaphoreKind::Timeline));
// INT64_MAX nanoseconds is exactly C++'s one "forever" value.
static_assert(GPUHANDLE_WAIT_FOREVER == kWaitForever.count());
static_assert(GPUHANDLE_DEFAULT_WAIT_TIMEOUT_NS == kDefaultWaitTimeout.count());

namespace gpuhandle::capi {

Result<WaitDuration> timeoutOf(int64_t timeoutNs, const char *function)
{
	if (timeoutNs == GPUHANDLE_WAIT_FOREVER)
		return kWaitForever;
	if (timeoutNs < 0)
		return Error::format(
			ErrorCode::InvalidArgument, "timeout_ns",
			"%s: timeout_ns %lld is negative; pass GPUHANDLE_WAIT_FOREVER to wait "
			"without limit, or 0 to poll.",
			function, static_cast<long long>(timeoutNs));
	return WaitDuration(timeoutNs);
}

} // namespace gpuhandle::capi

namespace {

using Combine = Result<SyncPoint> (*)(std::span<const SyncPoint>);

gpuhandle_status composite(const char *function, Combine combine,
			   gpuhandle_sync_point *const *points, size_t count,
			   gpuhandle_sync_point **out, gpuhandle_error **error) noexcept
{
	if (out)
		*out = nullptr;
	if (error)
		*error = nullptr;
	return guard(error, [&]() -> gpuhandle_status {
		if (!points && count > 0)
			return failNull(error, function, "points");
		if (!out)
			return failNull(error, function, "out");
		std::vector<SyncPoint> native;
		native.reserve(count);
		for (size_t i = 0; i < count; ++i) {
			if (!points[i])
				return fail(error,
					    Error::format(ErrorCode::NullHandle,
							  "points[" + std::to_string(i) + "]",
							  "%s: points[%zu] is NULL.", function, i));
			native.push_back(points[i]->value);
		}
		Result<SyncPoint> point = combine(native);
		if (!point)
			return fail(error, std::move(point).error());
		*out = newSyncPoint(std::move(*point));
		return GPUHANDLE_OK;
	});
}

} // namespace

extern "C" {

const char *gpuhandle_sync_kind_name(gpuhandle_sync_kind kind) noexcept
{
	return syncKindName(static_cast<SyncKind>(kind));
}

gpuhandle_backend_kind gpuhandle_sync_kind_backend(gpuhandle_sync_kind kind) noexcept
{
	return static_cast<gpuhandle_backend_kind>(backendOf(static_cast<SyncKind>(kind)));
}

gpuhandle_status gpuhandle_sync_point_new_noop(gpuhandle_sync_point **out,
					       gpuhandle_error **error) noexcept
{
	const char *function = __func__;
	if (out)
		*out = nullptr;
	if (error)
		*error = nullptr;
	return guard(error, [&]() -> gpuhandle_status {
		if (!out)
			return failNull(error, function, "out");
		*out = newSyncPoint(SyncPoint::noop());
		return GPUHANDLE_OK;
	});
}

gpuhandle_status gpuhandle_sync_point_new_fence_fd(int fd, gpuhandle_sync_point **out,
						   gpuhandle_error **error) noexcept
{
	const char *function = __func__;
	if (out)
		*out = nullptr;
	if (error)
		*error = nullptr;
	// Owned before anything can fail, so that it is closed on every failure path. A negative or
	// closed fd is not owned: closing a number nobody holds could close someone else's fd.
	UniqueFd owned(isOpenFd(fd) ? fd : -1);
	return guard(error, [&]() -> gpuhandle_status {
		if (!out)
			return failNull(error, function, "out");
		if (!owned.isValid())
			return fail(error,
				    Error::format(ErrorCode::BadFd, "fd",
						  "%s: fd %d is not an open file descriptor.",
						  function, fd));
		Result<SyncPoint> point = SyncPoint::fromFenceFd(SharedFd(std::move(owned)));
		if (!point)
			return fail(error, std::move(point).error());
		*out = newSyncPoint(std::move(*point));
		return GPUHANDLE_OK;
	});
}

gpuhandle_status gpuhandle_sync_point_all(gpuhandle_sync_point *const *points, size_t count,
					  gpuhandle_sync_point **out,
					  gpuhandle_error **error) noexcept
{
	return composite(__func__, &SyncPoint::all, points, count, out, error);
}

gpuhandle_status gpuhandle_sync_point_any(gpuhandle_sync_point *const *points, size_t count,
					  gpuhandle_sync_point **out,
					  gpuhandle_error **error) noexcept
{
	return composite(__func__, &SyncPoint::any, points, count, out, error);
}

gpuhandle_status gpuhandle_sync_point_chain(gpuhandle_sync_point *const *points, size_t count,
					    gpuhandle_sync_point **out,
					    gpuhandle_error **error) noexcept
{
	return composite(__func__, &SyncPoint::chain, points, count, out, error);
}

gpuhandle_sync_point *gpuhandle_sync_point_ref(gpuhandle_sync_point *point) noexcept
{
	return ref(point);
}

void gpuhandle_sync_point_unref(gpuhandle_sync_point *point) noexcept
{
	unref(point);
}

gpuhandle_sync_kind gpuhandle_sync_point_get_kind(const gpuhandle_sync_point *point) noexcept
{
	return point ? static_cast<gpuhandle_sync_kind>(point->value.kind())
		     : GPUHANDLE_SYNC_KIND_NOOP;
}

gpuhandle_backend_kind gpuhandle_sync_point_get_backend(const gpuhandle_sync_point *point) noexcept
{
	return point ? static_cast<gpuhandle_backend_kind>(point->value.backend())
		     : GPUHANDLE_BACKEND_CPU;
}

bool gpuhandle_sync_point_is_raw_carrier(const gpuhandle_sync_point *point) noexcept
{
	return point && point->value.isRawCarrier();
}

int gpuhandle_sync_point_get_poll_fd(const gpuhandle_sync_point *point) noexcept
{
	if (!point || !point->value.waiter())
		return -1;
	return point->value.waiter()->pollFd();
}

gpuhandle_status gpuhandle_sync_point_get_fence_fd(const gpuhandle_sync_point *point,
						   int *out) noexcept
{
	if (out)
		*out = -1;
	if (!point || !out)
		return GPUHANDLE_ERROR_NULL_HANDLE;
	const FenceFdSync *raw = point->value.raw<FenceFdSync>();
	if (!raw)
		return GPUHANDLE_ERROR_WRONG_KIND;
	*out = raw->fd.get();
	return GPUHANDLE_OK;
}

gpuhandle_status gpuhandle_sync_point_wait(const gpuhandle_sync_point *point, int64_t timeout_ns,
					   gpuhandle_error **error) noexcept
{
	const char *function = __func__;
	if (error)
		*error = nullptr;
	return guard(error, [&]() -> gpuhandle_status {
		if (!point)
			return failNull(error, function, "point");
		Result<WaitDuration> timeout = timeoutOf(timeout_ns, function);
		if (!timeout)
			return fail(error, std::move(timeout).error());
		Status status = point->value.wait(*timeout);
		if (!status)
			return fail(error, std::move(status).error());
		return GPUHANDLE_OK;
	});
}

gpuhandle_status gpuhandle_sync_point_is_signaled(const gpuhandle_sync_point *point, bool *out,
						  gpuhandle_error **error) noexcept
{
	const char *function = __func__;
	if (out)
		*out = false;
	if (error)
		*error = nullptr;
	return guard(error, [&]() -> gpuhandle_status {
		if (!point)
			return failNull(error, function, "point");
		if (!out)
			return failNull(error, function, "out");
		Result<bool> done = point->value.isSignaled();
		if (!done)
			return fail(error, std::move(done).error());
		*out = *done;
		return GPUHANDLE_OK;
	});
}

} // extern "C"
