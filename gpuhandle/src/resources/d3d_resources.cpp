// Factories of the Direct3D resources; plain values here, checked for what a value can show.
#include <gpuhandle/d3d_resources.h>

#include "validation.h"

namespace gpuhandle {

Result<D3D11Texture> D3D11Texture::create(Desc desc)
{
	if (auto e = detail::requireHandle("D3D11Texture", "texture", desc.texture))
		return std::move(*e);
	return D3D11Texture(std::move(desc));
}

Result<D3D12Resource> D3D12Resource::create(Desc desc)
{
	if (auto e = detail::requireHandle("D3D12Resource", "resource", desc.resource))
		return std::move(*e);
	return D3D12Resource(std::move(desc));
}

Result<D3D12Buffer> D3D12Buffer::create(Desc desc)
{
	if (auto e = detail::requireHandle("D3D12Buffer", "resource", desc.resource))
		return std::move(*e);
	if (auto e = detail::requireNonZero("D3D12Buffer", "size", desc.size))
		return std::move(*e);
	return D3D12Buffer(std::move(desc));
}

} // namespace gpuhandle
