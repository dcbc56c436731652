// VA-API in a build without libva: openVaApiBackend answers notBuilt().
#include "common/backend_internal.h"

namespace gpuhandle {

Result<BackendRef> openVaApiBackend(const BackendOpenOptions &)
{
	return notBuilt({ "VA-API", "va/va.h and va/va_drm.h, libva-dev" }, "openBackend", "kind");
}

} // namespace gpuhandle
