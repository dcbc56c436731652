// VAMemory in the memory-type table: GStreamer's VA surfaces to frames of the display's VA-API
// backend (input only: GStreamer's VA elements allocate their own surfaces). Built with
// gstreamer-va-1.0.
#include "memorytypes_internal.h"

#include <gst/gpuhandle/gstgpuhandleva.hpp>

namespace gpuhandle::gst::detail {

namespace {

class VaAdapter final : public MemoryAdapter
{
public:
	using MemoryAdapter::MemoryAdapter;

	Result<Frame> frameFromBuffer(GstElement *, const InputBuffer &in,
				      BackendRef &backend) override
	{
		if (auto bad = incompleteInput(in))
			return *bad;
		return frameOnDevice(
			vaBackendForBuffer(in.buffer), backend,
			[&] { return frameFromVaBuffer(in.buffer, *in.info); }, true);
	}
};

} // namespace

std::unique_ptr<MemoryAdapter> vaAdapter(const MemoryTypeInfo &info, MemoryRole role)
{
	return std::make_unique<VaAdapter>(info, role);
}

} // namespace gpuhandle::gst::detail
