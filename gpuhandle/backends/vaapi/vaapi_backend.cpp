// placeholder: the backend object is being written.
#include "common/backend_internal.h"

namespace gpuhandle {

Result<BackendRef> openVaApiBackend(const BackendOpenOptions &)
{
	return Error(ErrorCode::NotSupported, "", "openVaApiBackend: not written yet.");
}

} // namespace gpuhandle
