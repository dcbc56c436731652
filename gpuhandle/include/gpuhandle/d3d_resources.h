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
	// The slice of a texture array; 0 for a single texture
	uint32_t arraySlice = 0;
	uint32_t rowPitch = 0; // bytes per row when known (staging textures); 0 otherwise
	// DXGI_ADAPTER_DESC.AdapterLuid of the adapter it lives on, when known
	std::optional<Luid> adapterLuid{};
	KeepAliveRef anchor{}; // the producer's keep-alive for the texture; may be null
};
// A checked D3D11TextureDesc.
class D3D11Texture : public Validated<D3D11TextureDesc>
{
public:
	// Checks desc: NullHandle for a null texture.
	static Result<D3D11Texture> create(Desc desc);

private:
	using Validated::Validated;
};

// A borrowed ID3D12Resource used as a texture (subresource `subresource`).
struct D3D12ResourceDesc {
	void *resource = nullptr; // ID3D12Resource*
	uint32_t subresource = 0; // subresource index (D3D12CalcSubresource)
	// DXGI_ADAPTER_DESC.AdapterLuid of the adapter it lives on, when known
	std::optional<Luid> adapterLuid{};
	KeepAliveRef anchor{}; // the producer's keep-alive for the resource; may be null
};
// A checked D3D12ResourceDesc.
class D3D12Resource : public Validated<D3D12ResourceDesc>
{
public:
	// Checks desc: NullHandle for a null resource.
	static Result<D3D12Resource> create(Desc desc);

private:
	using Validated::Validated;
};

// A borrowed buffer-dimension ID3D12Resource of `size` bytes.
struct D3D12BufferDesc {
	void *resource = nullptr; // ID3D12Resource*; non-null
	uint64_t size = 0;        // bytes; non-zero
	// DXGI_ADAPTER_DESC.AdapterLuid of the adapter it lives on, when known
	std::optional<Luid> adapterLuid{};
	KeepAliveRef anchor{}; // the producer's keep-alive for the buffer; may be null
};
// A checked D3D12BufferDesc.
class D3D12Buffer : public Validated<D3D12BufferDesc>
{
public:
	// Checks desc: NullHandle for a null resource, ZeroSize for a zero size.
	static Result<D3D12Buffer> create(Desc desc);

private:
	using Validated::Validated;
};

} // namespace gpuhandle
