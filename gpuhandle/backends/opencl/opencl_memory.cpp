// Host memory used in place by OpenCL: a CL_MEM_USE_HOST_PTR buffer that keeps the bytes alive.
#include <gpuhandle/backends/opencl_memory.h>

#include "validation.h"

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <cinttypes>

#include <CL/cl.h>

namespace gpuhandle {

namespace {

// Releases the cl_mem once, when the last copy of the OpenClMem goes; the host memory's anchor
// and the owner are members, so they are released after it, while no command can use the bytes.
class OpenClMemAnchor final : public KeepAlive
{
public:
	OpenClMemAnchor(cl_mem mem, KeepAliveRef bytes, KeepAliveRef owner)
		: mem_(mem), bytes_(std::move(bytes)), owner_(std::move(owner))
	{
	}

	~OpenClMemAnchor() override { clReleaseMemObject(mem_); }

	void markConsumed() noexcept override
	{
		if (bytes_)
			bytes_->markConsumed();
		if (owner_)
			owner_->markConsumed();
	}

private:
	cl_mem mem_;
	KeepAliveRef bytes_;
	KeepAliveRef owner_;
};

} // namespace

Result<Resource> importHostMemoryIntoOpenCl(const CpuBytes &bytes, void *clContext, void *clQueue,
					    MapAccess access, KeepAliveRef owner)
{
	if (!clContext)
		return detail::nullHandle("cl_context", "clContext");
	if (!clQueue)
		return detail::nullHandle("cl_command_queue", "clQueue");
	cl_mem_flags flags = CL_MEM_USE_HOST_PTR;
	switch (access) {
	case MapAccess::Read: flags |= CL_MEM_READ_ONLY; break;
	case MapAccess::Write: flags |= CL_MEM_WRITE_ONLY; break;
	case MapAccess::ReadWrite: flags |= CL_MEM_READ_WRITE; break;
	default:
		return Error::format(ErrorCode::InvalidArgument, "access",
				     "MapAccess %u is not Read (1), Write (2) or ReadWrite (3).",
				     static_cast<unsigned>(access));
	}
	// The queue must belong to the context: a buffer recorded with another context's queue
	// would be used where it is not valid.
	cl_context queueContext = nullptr;
	cl_int error = clGetCommandQueueInfo(static_cast<cl_command_queue>(clQueue),
					     CL_QUEUE_CONTEXT, sizeof(queueContext), &queueContext,
					     nullptr);
	if (error != CL_SUCCESS)
		return Error::format(
			ErrorCode::Backend, "clQueue",
			"%p is not a cl_command_queue (clGetCommandQueueInfo returned %d).",
			clQueue, error);
	if (queueContext != static_cast<cl_context>(clContext))
		return Error::format(
			ErrorCode::InvalidArgument, "clQueue",
			"cl_command_queue %p belongs to context %p, not to clContext %p.", clQueue,
			static_cast<void *>(queueContext), clContext);

	const CpuBytesDesc &desc = bytes.desc();
	cl_mem mem = clCreateBuffer(static_cast<cl_context>(clContext), flags,
				    static_cast<size_t>(desc.size), desc.data, &error);
	if (!mem)
		return Error::format(ErrorCode::Backend, "bytes",
				     "clCreateBuffer(CL_MEM_USE_HOST_PTR) of %" PRIu64
				     " bytes at %p failed with %d.",
				     desc.size, desc.data, error);
	auto anchor = std::make_shared<OpenClMemAnchor>(mem, desc.anchor, std::move(owner));
	auto made = OpenClMem::create({ mem, clQueue, desc.size, std::move(anchor) });
	if (!made.ok())
		return std::move(made).error(); // the anchor releases the cl_mem
	return Resource(std::move(made).value());
}

} // namespace gpuhandle
