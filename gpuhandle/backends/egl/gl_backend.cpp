// placeholder: the backend object is being written.
#include "common/backend_internal.h"

namespace gpuhandle {

Result<BackendRef> openGlBackend(const BackendOpenOptions &)
{
	return Error(ErrorCode::NotSupported, "", "openGlBackend: not written yet.");
}

} // namespace gpuhandle
