// placeholder: the backend object is being written.
#include "common/backend_internal.h"

namespace gpuhandle {

Result<BackendRef> openOpenClBackend(const BackendOpenOptions &)
{
	return Error(ErrorCode::NotSupported, "", "openOpenClBackend: not written yet.");
}

} // namespace gpuhandle
