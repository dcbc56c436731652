// placeholder: the backend object is being written.
#include "common/backend_internal.h"

namespace gpuhandle {

Result<BackendRef> openFdBackend(const BackendOpenOptions &)
{
	return Error(ErrorCode::NotSupported, "", "openFdBackend: not written yet.");
}

} // namespace gpuhandle
