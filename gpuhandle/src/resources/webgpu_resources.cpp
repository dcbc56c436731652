// Factory of WebGpuTexture: texture and device handles and a non-empty extent.
#include <gpuhandle/webgpu_resources.h>

#include "validation.h"

namespace gpuhandle {

Result<WebGpuTexture> WebGpuTexture::create(Desc desc)
{
	constexpr const char *kType = "WebGpuTexture";
	if (auto e = detail::requireHandle(kType, "texture", desc.texture))
		return std::move(*e);
	if (auto e = detail::requireHandle(kType, "device", desc.device))
		return std::move(*e);
	if (auto e = detail::requireNonZero(kType, "width", desc.width))
		return std::move(*e);
	if (auto e = detail::requireNonZero(kType, "height", desc.height))
		return std::move(*e);
	return WebGpuTexture(std::move(desc));
}

} // namespace gpuhandle
