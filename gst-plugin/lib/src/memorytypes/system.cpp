// System memory in the memory-type table: input buffers wrapped in place for the element's chosen
// backend; gpuhandledownload writes system memory itself (its own pool, downstream's layout).
#include "memorytypes_internal.h"

namespace gpuhandle::gst::detail {

namespace {

class SystemAdapter final : public MemoryAdapter
{
public:
	using MemoryAdapter::MemoryAdapter;

	Result<Frame> frameFromBuffer(GstElement *, const InputBuffer &in, BackendRef &) override
	{
		if (auto bad = incompleteInput(in))
			return *bad;
		return frameFromSystemBuffer(in.buffer, *in.info, MapAccess::Read);
	}

	// No device: the element copies into system memory itself.
	Result<BackendRef> openOutput(GstElement *, DevicesSlot &) override { return BackendRef{}; }
};

} // namespace

std::unique_ptr<MemoryAdapter> systemAdapter(const MemoryTypeInfo &info, MemoryRole role)
{
	return std::make_unique<SystemAdapter>(info, role);
}

} // namespace gpuhandle::gst::detail
