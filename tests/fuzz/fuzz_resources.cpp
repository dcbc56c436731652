// Fuzz harness: the fd-backed and CPU resource factories and Frame::create over what they made,
// with every field from the input. A value that validates must be usable: its sizes hold.
#include <gpuhandle/frame.h>

#include "fuzz_input.h"

#include <vector>

using namespace gpuhandle;

namespace {

// Memory the CPU planes point at: big enough for whatever stride x rows the input names
// (validation does not read it; Frame::create only checks offsets).
uint8_t g_bytes[1 << 16];

Result<Resource> dmaBuf(fuzz::FuzzInput &in)
{
	DmaBufDesc d;
	d.fourcc = in.take<uint32_t>();
	d.modifier = in.take<uint8_t>() & 1 ? in.take<uint64_t>() : kDrmModifierLinear;
	d.width = in.take<uint16_t>();
	d.height = in.take<uint16_t>();
	d.numObjects = in.take<uint8_t>() % 6;
	for (uint32_t i = 0; i < std::min<uint32_t>(d.numObjects, 4); ++i) {
		const auto size = in.take<uint32_t>();
		d.objects[i].fd = SharedFd(fuzz::fuzzFd(false, size % (1u << 20)));
		d.objects[i].size = in.take<uint8_t>() & 1 ? size % (1u << 20)
							   : in.take<uint64_t>();
	}
	d.numPlanes = in.take<uint8_t>() % 6;
	for (auto &p : d.planes)
		p = { in.take<uint8_t>(), in.take<uint32_t>(), in.take<uint32_t>() };
	auto made = DmaBuf::create(std::move(d));
	if (!made.ok())
		return std::move(made).error();
	return Resource(std::move(*made));
}

Result<Resource> shm(fuzz::FuzzInput &in)
{
	const auto fileSize = in.take<uint32_t>() % (1u << 20);
	ShmFdDesc d;
	d.fd = SharedFd(fuzz::fuzzFd(false, fileSize));
	d.offset = in.take<uint32_t>();
	d.size = in.take<uint32_t>();
	auto made = ShmFd::create(std::move(d));
	if (!made.ok())
		return std::move(made).error();
	if (made->desc().offset + made->desc().size > fileSize)
		__builtin_trap(); // validated: the range lies inside the file
	return Resource(std::move(*made));
}

Result<Resource> cpuPlanes(fuzz::FuzzInput &in)
{
	CpuPlanesDesc d;
	d.numPlanes = in.take<uint8_t>() % 6;
	for (auto &p : d.planes) {
		const auto offset = in.take<uint16_t>();
		p.data = in.take<uint8_t>() & 1 ? g_bytes + offset % sizeof g_bytes : nullptr;
		p.stride = in.take<uint16_t>();
		p.rows = in.take<uint16_t>();
	}
	auto made = CpuPlanes::create(std::move(d));
	if (!made.ok())
		return std::move(made).error();
	return Resource(std::move(*made));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz::FuzzInput in(data, size);
	FrameDesc d;
	d.numResources = in.take<uint8_t>() % 6;
	for (uint32_t i = 0; i < std::min<uint32_t>(d.numResources, 4); ++i) {
		Result<Resource> r = Error(ErrorCode::InvalidArgument, "", "");
		switch (in.take<uint8_t>() % 3) {
		case 0: r = dmaBuf(in); break;
		case 1: r = shm(in); break;
		default: r = cpuPlanes(in); break;
		}
		fuzz::report("resource", r);
		if (r.ok())
			d.resources[i] = std::move(*r);
	}
	d.format = static_cast<PixelFormat>(in.take<uint8_t>() % (kPixelFormatCount + 1));
	d.width = in.take<uint16_t>();
	d.height = in.take<uint16_t>();
	d.colorimetry = { static_cast<ColorRange>(in.take<uint8_t>() % 4),
			  static_cast<ColorMatrix>(in.take<uint8_t>() % 16),
			  static_cast<ColorPrimaries>(in.take<uint8_t>() % 24),
			  static_cast<ColorTransfer>(in.take<uint8_t>() % 20) };
	d.numPlanes = in.take<uint8_t>() % 6;
	for (auto &p : d.planes)
		p = { in.take<uint8_t>(), in.take<uint8_t>(), in.take<uint32_t>(),
		      in.take<uint16_t>() };
	auto frame = Frame::create(std::move(d));
	fuzz::report("frame", frame);
	if (frame.ok()) {
		for (uint32_t i = 0; i < frame->numPlanes(); ++i) {
			const PlaneView &p = frame->plane(i);
			const Resource &r = frame->resource(p.resource);
			if (p.subresource >= r.subresourceCount())
				__builtin_trap(); // validated: every view names a part that exists
		}
	}
	return 0;
}
