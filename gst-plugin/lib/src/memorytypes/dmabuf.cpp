// DMA-BUF memory in the memory-type table: GstDmaBufMemory (and plain GstFdMemory) to and from
// frames of fd resources, served by the fd backend of the element's device set.
#include "memorytypes_internal.h"

namespace gpuhandle::gst::detail {

namespace {

class DmaBufAdapter final : public MemoryAdapter
{
public:
	using MemoryAdapter::MemoryAdapter;

	Result<Frame> frameFromBuffer(GstElement *element, const InputBuffer &in,
				      BackendRef &backend) override
	{
		if (auto bad = incompleteInput(in))
			return *bad;
		if (!element)
			return Error(ErrorCode::NullHandle, "element",
				     "DMA-BUF input needs the element (its device set).");
		return frameOnDevice(
			ensureDevices(element, *in.devices)->backend(BackendKind::Fd), backend,
			[&] { return frameFromFdBuffer(in.buffer, *in.info, in.modifier); });
	}

	Result<BackendRef> openOutput(GstElement *element, DevicesSlot &devices) override
	{
		if (!element)
			return Error(ErrorCode::NullHandle, "element",
				     "DMA-BUF output needs the element (its device set).");
		return ensureDevices(element, devices)->backend(BackendKind::Fd);
	}

	Result<GstBuffer *> bufferFromFrame(const Frame &frame, const GstVideoInfo &, WaitDuration,
					    const BackendRef &exporter) override
	{
		Result<GstBuffer *> out = fdBufferFromFrame(frame);
		if (out.ok() || !exporter)
			return out;
		// memfd frames leave as DMA-BUFs where the kernel can make them (udmabuf).
		Result<Frame> exported = exporter->exportFrame(frame, ResourceKind::DmaBuf);
		return exported.ok() ? fdBufferFromFrame(*exported)
				     : Result<GstBuffer *>(exported.error());
	}
};

} // namespace

std::unique_ptr<MemoryAdapter> dmaBufAdapter(const MemoryTypeInfo &info, MemoryRole role)
{
	return std::make_unique<DmaBufAdapter>(info, role);
}

} // namespace gpuhandle::gst::detail
