// placeholder: the backend object is being written.
#include "common/backend_internal.h"

namespace gpuhandle {

Result<BackendRef> openVulkanBackend(const BackendOpenOptions &)
{
	return Error(ErrorCode::NotSupported, "", "openVulkanBackend: not written yet.");
}

} // namespace gpuhandle
