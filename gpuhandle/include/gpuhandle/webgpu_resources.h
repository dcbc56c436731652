// WebGPU resource: a webgpu.h WGPUTexture on its WGPUDevice.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/result.h>
#include <gpuhandle/validated.h>

#include <cstdint>

namespace GPUHANDLE_API gpuhandle {

struct WebGpuTextureDesc {
	void *texture = nullptr; // WGPUTexture
	void *device = nullptr;  // WGPUDevice
	uint32_t format = 0;     // WGPUTextureFormat; 0 (Undefined) when unknown
	uint32_t width = 0;
	uint32_t height = 0;
	KeepAliveRef anchor{};
};
class WebGpuTexture : public Validated<WebGpuTextureDesc>
{
public:
	static Result<WebGpuTexture> create(Desc desc);

private:
	using Validated::Validated;
};

} // namespace gpuhandle
