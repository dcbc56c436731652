// placeholder: the backend object is being written.
#include "common/backend_internal.h"

namespace gpuhandle {

Result<BackendRef> openCudaBackend(const BackendOpenOptions &)
{
	return Error(ErrorCode::NotSupported, "", "openCudaBackend: not written yet.");
}

} // namespace gpuhandle
