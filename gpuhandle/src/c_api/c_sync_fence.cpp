// C API: CPU fences, release gates, and frames that carry an acquire point and a release gate.
#include <gpuhandle/gpuhandle_sync.h>

#include "c_sync_internal.h"

using namespace gpuhandle;
using namespace gpuhandle::capi;

extern "C" {

gpuhandle_status gpuhandle_cpu_fence_new(gpuhandle_cpu_fence **out,
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
		auto fence = CpuFence::create();
		if (!fence)
			return fail(error, std::move(fence).error());
		*out = new gpuhandle_cpu_fence(std::move(*fence));
		return GPUHANDLE_OK;
	});
}

gpuhandle_cpu_fence *gpuhandle_cpu_fence_ref(gpuhandle_cpu_fence *fence) noexcept
{
	return ref(fence);
}

void gpuhandle_cpu_fence_unref(gpuhandle_cpu_fence *fence) noexcept
{
	unref(fence);
}

gpuhandle_status gpuhandle_cpu_fence_signal(gpuhandle_cpu_fence *fence) noexcept
{
	if (!fence)
		return GPUHANDLE_ERROR_NULL_HANDLE;
	fence->value->signal();
	return GPUHANDLE_OK;
}

gpuhandle_status gpuhandle_cpu_fence_get_point(gpuhandle_cpu_fence *fence,
					       gpuhandle_sync_point **out,
					       gpuhandle_error **error) noexcept
{
	return newFrom(__func__, fence, "fence", out, error,
		       [](const auto &in) { return newSyncPoint(in.value->point()); });
}

gpuhandle_status gpuhandle_release_gate_new(gpuhandle_release_gate **out,
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
		Result<ReleaseGate> gate = ReleaseGate::create();
		if (!gate)
			return fail(error, std::move(gate).error());
		*out = new gpuhandle_release_gate(std::move(*gate));
		return GPUHANDLE_OK;
	});
}

gpuhandle_release_gate *gpuhandle_release_gate_ref(gpuhandle_release_gate *gate) noexcept
{
	return ref(gate);
}

void gpuhandle_release_gate_unref(gpuhandle_release_gate *gate) noexcept
{
	unref(gate);
}

gpuhandle_status gpuhandle_release_gate_signal(const gpuhandle_release_gate *gate,
					       const gpuhandle_sync_point *consumer_done,
					       gpuhandle_error **error) noexcept
{
	const char *function = __func__;
	if (error)
		*error = nullptr;
	return guard(error, [&]() -> gpuhandle_status {
		if (!gate)
			return failNull(error, function, "gate");
		Status status = gate->value.signal(consumer_done ? consumer_done->value
								 : SyncPoint::noop());
		if (!status)
			return fail(error, std::move(status).error());
		return GPUHANDLE_OK;
	});
}

bool gpuhandle_release_gate_is_signaled(const gpuhandle_release_gate *gate) noexcept
{
	return gate && gate->value.isSignaled();
}

gpuhandle_status gpuhandle_release_gate_get_released(const gpuhandle_release_gate *gate,
						     gpuhandle_sync_point **out,
						     gpuhandle_error **error) noexcept
{
	return newFrom(__func__, gate, "gate", out, error,
		       [](const auto &in) { return newSyncPoint(in.value.released()); });
}

gpuhandle_status gpuhandle_frame_with_sync(const gpuhandle_frame *frame,
					   const gpuhandle_sync_point *acquire,
					   const gpuhandle_release_gate *release,
					   gpuhandle_frame **out, gpuhandle_error **error) noexcept
{
	const char *function = __func__;
	if (out)
		*out = nullptr;
	if (error)
		*error = nullptr;
	return guard(error, [&]() -> gpuhandle_status {
		if (!frame)
			return failNull(error, function, "frame");
		if (!out)
			return failNull(error, function, "out");
		Frame copy = frame->value;
		copy.setAcquire(acquire ? acquire->value : SyncPoint::noop());
		copy.setRelease(release ? release->value : ReleaseGate::none());
		// The same C resource objects, so get_resource() answers the same pointers.
		*out = newFrame(std::move(copy), frame->resources);
		return GPUHANDLE_OK;
	});
}

gpuhandle_status gpuhandle_frame_get_acquire(const gpuhandle_frame *frame,
					     gpuhandle_sync_point **out,
					     gpuhandle_error **error) noexcept
{
	return newFrom(__func__, frame, "frame", out, error,
		       [](const auto &in) { return newSyncPoint(in.value.acquire()); });
}

gpuhandle_status gpuhandle_frame_get_release(const gpuhandle_frame *frame,
					     gpuhandle_release_gate **out,
					     gpuhandle_error **error) noexcept
{
	const char *function = __func__;
	if (out)
		*out = nullptr;
	if (error)
		*error = nullptr;
	return guard(error, [&]() -> gpuhandle_status {
		if (!frame)
			return failNull(error, function, "frame");
		if (!out)
			return failNull(error, function, "out");
		if (!frame->value.release().isNone())
			*out = new gpuhandle_release_gate(frame->value.release());
		return GPUHANDLE_OK;
	});
}

} // extern "C"
