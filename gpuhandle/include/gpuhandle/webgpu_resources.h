// WebGPU resource: a webgpu.h WGPUTexture on its WGPUDevice.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/result.h>
#include <gpuhandle/validated.h>

#include <cstdint>

namespace GPUHANDLE_API gpuhandle {

// A borrowed WGPUTexture on its WGPUDevice.
struct WebGpuTextureDesc {
	void *texture = nullptr; // WGPUTexture
	void *device = nullptr;  // WGPUDevice
	uint32_t format = 0;     // WGPUTextureFormat; 0 (Undefined) when unknown
	uint32_t width = 0;      // texels; non-zero
	uint32_t height = 0;     // texels; non-zero
	KeepAliveRef anchor{};   // the producer's keep-alive for texture and device; may be null
};
// A checked WebGpuTextureDesc.
class WebGpuTexture : public Validated<WebGpuTextureDesc>
{
public:
	// Checks desc: NullHandle for a null texture or device, ZeroSize for a zero extent.
	static Result<WebGpuTexture> create(Desc desc);

private:
	using Validated::Validated;
};

} // namespace gpuhandle
