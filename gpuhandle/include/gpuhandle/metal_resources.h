// Metal resources as plain values: an MTLTexture and an MTLBuffer with their device's registry id.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/result.h>
#include <gpuhandle/validated.h>

#include <cstdint>
#include <optional>

namespace GPUHANDLE_API gpuhandle {

struct MetalTextureDesc {
	void *texture = nullptr;              // id<MTLTexture>
	std::optional<uint64_t> registryId{}; // MTLDevice.registryID
	KeepAliveRef anchor{};
};
class MetalTexture : public Validated<MetalTextureDesc>
{
public:
	static Result<MetalTexture> create(Desc desc);

private:
	using Validated::Validated;
};

struct MetalBufferDesc {
	void *buffer = nullptr; // id<MTLBuffer>
	uint64_t size = 0;
	std::optional<uint64_t> registryId{};
	KeepAliveRef anchor{};
};
class MetalBuffer : public Validated<MetalBufferDesc>
{
public:
	static Result<MetalBuffer> create(Desc desc);

private:
	using Validated::Validated;
};

} // namespace gpuhandle
