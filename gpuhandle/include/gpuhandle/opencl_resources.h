// OpenCL resource: a cl_mem (buffer or image) with the queue that produced its contents.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/result.h>
#include <gpuhandle/validated.h>

#include <cstdint>

namespace GPUHANDLE_API gpuhandle {

// A borrowed cl_mem. Work on `queue` (cl_command_queue) wrote it; a consumer on another queue
// orders after that work (a marker event or clFinish) before reading.
struct OpenClMemDesc {
	void *mem = nullptr;   // cl_mem
	void *queue = nullptr; // cl_command_queue
	uint64_t size = 0;     // bytes for a buffer; 0 when unknown (images)
	KeepAliveRef anchor{}; // the producer's keep-alive for mem and queue; may be null
};
// A checked OpenClMemDesc.
class OpenClMem : public Validated<OpenClMemDesc>
{
public:
	// Checks desc: NullHandle for a null mem or queue.
	static Result<OpenClMem> create(Desc desc);

private:
	using Validated::Validated;
};

} // namespace gpuhandle
