// The one answer of an API gpuhandle was configured without (every backend's stub gives it).
#include "common/backend_internal.h"

namespace gpuhandle {

Error notBuilt(const MissingApi &api, const char *call, const char *field)
{
	return Error::format(ErrorCode::NotSupported, field,
			     "%s: gpuhandle was built without %s: its development files (%s) were "
			     "not found when gpuhandle was configured.",
			     call, api.name, api.files);
}

} // namespace gpuhandle
