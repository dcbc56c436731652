// Direct3D resources as plain values: a D3D11 texture, a D3D12 resource and a D3D12 buffer.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/result.h>
#include <gpuhandle/uuid.h>
#include <gpuhandle/validated.h>

#include <cstdint>
#include <optional>

namespace GPUHANDLE_API gpuhandle {

// A borrowed ID3D11Texture2D (slice `arraySlice` of a decoder's texture array).
struct D3D11TextureDesc {
	void *texture = nullptr; // ID3D11Texture2D*
	uint32_t arraySlice = 0;
	uint32_t rowPitch = 0; // bytes per row when known (staging textures); 0 otherwise
	std::optional<Luid> adapterLuid{};
	KeepAliveRef anchor{};
};
class D3D11Texture : public Validated<D3D11TextureDesc>
{
public:
	static Result<D3D11Texture> create(Desc desc);

private:
	using Validated::Validated;
};

// A borrowed ID3D12Resource used as a texture (subresource `subresource`).
struct D3D12ResourceDesc {
	void *resource = nullptr; // ID3D12Resource*
	uint32_t subresource = 0;
	std::optional<Luid> adapterLuid{};
	KeepAliveRef anchor{};
};
class D3D12Resource : public Validated<D3D12ResourceDesc>
{
public:
	static Result<D3D12Resource> create(Desc desc);

private:
	using Validated::Validated;
};

// A borrowed buffer-dimension ID3D12Resource of `size` bytes.
struct D3D12BufferDesc {
	void *resource = nullptr;
	uint64_t size = 0;
	std::optional<Luid> adapterLuid{};
	KeepAliveRef anchor{};
};
class D3D12Buffer : public Validated<D3D12BufferDesc>
{
public:
	static Result<D3D12Buffer> create(Desc desc);

private:
	using Validated::Validated;
};

} // namespace gpuhandle
