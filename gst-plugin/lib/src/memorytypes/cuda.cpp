// CUDAMemory in the memory-type table: GStreamer's CUDA buffers to frames of the context's CUDA
// backend, and frames copied on the GPU into GStreamer's CUDA pool (1.22 wraps no foreign device
// memory). Built with gstreamer-cuda-1.0.
#include "memorytypes_internal.h"

#include <mutex>

#include <gst/gpuhandle/gstgpuhandlecuda.hpp>

namespace gpuhandle::gst::detail {

namespace {

class CudaAdapter final : public MemoryAdapter
{
public:
	using MemoryAdapter::MemoryAdapter;
	~CudaAdapter() override { release(); }

	// Only gpuhandledownload shares its CUDA context: gpuhandleupload takes the context each
	// input buffer names.
	bool answerContextQuery(GstElement *element, GstQuery *query) override
	{
		if (role() != MemoryRole::Output)
			return false;
		GstCudaContext *held = nullptr;
		{
			std::lock_guard<std::recursive_mutex> lock(mutex_);
			held = refOrNull(context_);
		}
		const bool answered = cudaHandleContextQuery(element, query, held);
		gst_clear_object(&held);
		return answered;
	}

	void setContext(GstElement *element, GstContext *context) override
	{
		if (role() != MemoryRole::Output)
			return;
		std::lock_guard<std::recursive_mutex> lock(mutex_);
		cudaHandleSetContext(element, context, &context_);
	}

	Result<Frame> frameFromBuffer(GstElement *, const InputBuffer &in,
				      BackendRef &backend) override
	{
		if (auto bad = incompleteInput(in))
			return *bad;
		return frameOnDevice(
			cudaBackendForBuffer(in.buffer), backend,
			[&] { return frameFromCudaBuffer(in.buffer, *in.info); }, true);
	}

	Result<BackendRef> openOutput(GstElement *element, DevicesSlot &) override
	{
		std::lock_guard<std::recursive_mutex> lock(mutex_);
		Status found = ensureCudaContext(element, &context_);
		if (!found.ok())
			return found.error();
		return cudaBackendFor(context_);
	}

	Result<GstBuffer *> gpuCopyOf(const Frame &frame, const BackendRef &backend,
				      const GstVideoInfo &info, WaitDuration timeout) override
	{
		if (!pool_) {
			Result<GstBufferPool *> pool = cudaBufferPoolFor(context_, info);
			if (!pool.ok())
				return std::move(pool).error();
			pool_ = *pool;
		}
		return cudaBufferCopyOf(frame, backend, pool_, info, timeout);
	}

	void dropPools() override { dropPool(pool_); }

	void release() override
	{
		dropPools();
		std::lock_guard<std::recursive_mutex> lock(mutex_);
		gst_clear_object(&context_);
	}

private:
	std::recursive_mutex mutex_{}; // guards context_ against other threads' queries
	GstCudaContext *context_ = nullptr;
	GstBufferPool *pool_ = nullptr; // GStreamer's CUDA pool for the caps, made on first use
};

} // namespace

std::unique_ptr<MemoryAdapter> cudaAdapter(const MemoryTypeInfo &info, MemoryRole role)
{
	return std::make_unique<CudaAdapter>(info, role);
}

} // namespace gpuhandle::gst::detail
