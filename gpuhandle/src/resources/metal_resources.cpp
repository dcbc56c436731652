// Factories of the Metal resources; plain values here, checked for what a value can show.
#include <gpuhandle/metal_resources.h>

#include "validation.h"

namespace gpuhandle {

Result<MetalTexture> MetalTexture::create(Desc desc)
{
	if (auto e = detail::requireHandle("MetalTexture", "texture", desc.texture))
		return std::move(*e);
	return MetalTexture(std::move(desc));
}

Result<MetalBuffer> MetalBuffer::create(Desc desc)
{
	if (auto e = detail::requireHandle("MetalBuffer", "buffer", desc.buffer))
		return std::move(*e);
	if (auto e = detail::requireNonZero("MetalBuffer", "size", desc.size))
		return std::move(*e);
	return MetalBuffer(std::move(desc));
}

} // namespace gpuhandle
