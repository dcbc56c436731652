// Factory of OpenClMem: a cl_mem and its producing queue must both be given.
#include <gpuhandle/opencl_resources.h>

#include "validation.h"

namespace gpuhandle {

Result<OpenClMem> OpenClMem::create(Desc desc)
{
	if (auto e = detail::requireHandle("OpenClMem", "mem", desc.mem))
		return std::move(*e);
	if (auto e = detail::requireHandle("OpenClMem", "queue", desc.queue))
		return std::move(*e);
	return OpenClMem(std::move(desc));
}

} // namespace gpuhandle
