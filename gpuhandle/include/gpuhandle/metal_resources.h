// Metal resources as plain values: an MTLTexture and an MTLBuffer with their device's registry id.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/result.h>
#include <gpuhandle/validated.h>

#include <cstdint>
#include <optional>

namespace GPUHANDLE_API gpuhandle {

// A borrowed MTLTexture, with the registry id of its device when known.
struct MetalTextureDesc {
	void *texture = nullptr;              // id<MTLTexture>; non-null
	std::optional<uint64_t> registryId{}; // MTLDevice.registryID
	KeepAliveRef anchor{};                // the producer's keep-alive; may be null
};
// A checked MetalTextureDesc.
class MetalTexture : public Validated<MetalTextureDesc>
{
public:
	// Checks desc: NullHandle for a null texture.
	static Result<MetalTexture> create(Desc desc);

private:
	using Validated::Validated;
};

// A borrowed MTLBuffer of `size` bytes, with the registry id of its device when known.
struct MetalBufferDesc {
	void *buffer = nullptr; // id<MTLBuffer>
	uint64_t size = 0;      // bytes; non-zero
	// MTLDevice.registryID of the buffer's device, when known
	std::optional<uint64_t> registryId{};
	KeepAliveRef anchor{}; // the producer's keep-alive for the buffer; may be null
};
// A checked MetalBufferDesc.
class MetalBuffer : public Validated<MetalBufferDesc>
{
public:
	// Checks desc: NullHandle for a null buffer, ZeroSize for a zero size.
	static Result<MetalBuffer> create(Desc desc);

private:
	using Validated::Validated;
};

} // namespace gpuhandle
