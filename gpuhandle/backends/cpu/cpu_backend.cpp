// placeholder: the backend object is being written.
#include "common/backend_internal.h"

namespace gpuhandle {

Result<BackendRef> openCpuBackend(const BackendOpenOptions &)
{
	return Error(ErrorCode::NotSupported, "", "openCpuBackend: not written yet.");
}

} // namespace gpuhandle
