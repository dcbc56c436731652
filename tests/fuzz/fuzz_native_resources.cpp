// Fuzz harness: every handle-based Resource factory (CPU, Vulkan, GL, CUDA, OpenCL, VA-API, D3D,
// Metal, WebGPU) and a one-resource Frame over what it made. A value that validates keeps what
// its factory's rules promise, a Frame over it stays inside it, and every anchor goes exactly once.
#include <gpuhandle/frame.h>

#include "fuzz_input.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <optional>

using namespace gpuhandle;

// Aborts with the broken promise, so that a libFuzzer crash report names it.
#define PROMISE(cond)                                                                              \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			std::fprintf(stderr, "%s:%d: broken promise: %s\n", __FILE__, __LINE__,    \
				     #cond);                                                       \
			std::abort();                                                              \
		}                                                                                  \
	} while (0)

namespace {

// The anchors one input made: each must be destroyed exactly once, once nothing holds it.
struct Anchors {
	int made = 0;
	int destroyed = 0;
	int consumed = 0;
};

void anchorDestroyed(void *data)
{
	++static_cast<Anchors *>(data)->destroyed;
}
void anchorConsumed(void *data)
{
	++static_cast<Anchors *>(data)->consumed;
}

// Handles are fake values: the core stores them and never dereferences them.
void *handle(fuzz::FuzzInput &in)
{
	return reinterpret_cast<void *>(static_cast<uintptr_t>(in.take<uint32_t>()));
}

KeepAliveRef anchor(fuzz::FuzzInput &in, Anchors &anchors)
{
	if (!(in.take<uint8_t>() & 1))
		return nullptr;
	++anchors.made;
	return makeKeepAlive(anchorDestroyed, &anchors, anchorConsumed);
}

std::optional<Uuid> uuid(fuzz::FuzzInput &in)
{
	if (!(in.take<uint8_t>() & 1))
		return std::nullopt;
	return in.take<Uuid>();
}

std::optional<Luid> luid(fuzz::FuzzInput &in)
{
	if (!(in.take<uint8_t>() & 1))
		return std::nullopt;
	const auto low = in.take<uint32_t>();
	return Luid{ low, in.take<int32_t>() };
}

std::optional<uint64_t> optional64(fuzz::FuzzInput &in)
{
	if (!(in.take<uint8_t>() & 1))
		return std::nullopt;
	return in.take<uint64_t>();
}

// A made handle as a Resource, once `promises` held for its description; `promises` returns the
// byte size the Resource must then report (0 for handles that carry none). None of these kinds
// has more than one part.
template<typename T, typename F>
Result<Resource> keep(Result<T> made, F &&promises)
{
	if (!made.ok())
		return std::move(made).error();
	const uint64_t size = promises(made->desc());
	Resource r(std::move(*made));
	PROMISE(r.kind() == Resource::kindOf<T>);
	PROMISE(!r.empty() && r.subresourceCount() == 1);
	PROMISE(r.byteSize() == size);
	return r;
}

Result<Resource> cpuBytes(fuzz::FuzzInput &in, Anchors &a)
{
	CpuBytesDesc d;
	d.data = handle(in);
	d.size = in.take<uint64_t>();
	d.anchor = anchor(in, a);
	return keep(CpuBytes::create(std::move(d)), [](const CpuBytesDesc &x) {
		PROMISE(x.data && x.size);
		return x.size;
	});
}

Result<Resource> cpuSharedSlot(fuzz::FuzzInput &in, Anchors &a)
{
	CpuSharedSlotDesc d;
	d.slot = in.take<uint64_t>();
	d.size = in.take<uint64_t>();
	d.rowPitch = in.take<uint32_t>();
	d.anchor = anchor(in, a);
	return keep(CpuSharedSlot::create(std::move(d)), [](const CpuSharedSlotDesc &x) {
		PROMISE(x.size && x.rowPitch <= x.size && x.anchor);
		return x.size;
	});
}

Result<Resource> vulkanImage(fuzz::FuzzInput &in, Anchors &a)
{
	VulkanImageDesc d;
	d.image = in.take<uint64_t>();
	d.device = handle(in);
	d.deviceUuid = uuid(in);
	d.rowPitch = in.take<uint32_t>();
	d.anchor = anchor(in, a);
	return keep(VulkanImage::create(std::move(d)), [](const VulkanImageDesc &x) {
		PROMISE(x.image && x.device);
		return uint64_t(0);
	});
}

Result<Resource> vulkanBuffer(fuzz::FuzzInput &in, Anchors &a)
{
	VulkanBufferDesc d;
	d.buffer = in.take<uint64_t>();
	d.device = handle(in);
	d.size = in.take<uint64_t>();
	d.deviceUuid = uuid(in);
	d.anchor = anchor(in, a);
	return keep(VulkanBuffer::create(std::move(d)), [](const VulkanBufferDesc &x) {
		PROMISE(x.buffer && x.device && x.size);
		return x.size;
	});
}

// The export's fd is a sealed memfd of a known size, an eventfd (not a file: no size to check)
// or none.
Result<Resource> vulkanMemoryFd(fuzz::FuzzInput &in, Anchors &)
{
	const auto kind = in.take<uint8_t>();
	const bool fence = kind & 1, none = kind & 2;
	const uint32_t fileSize = in.take<uint32_t>() % (1u << 22);
	VulkanMemoryFdDesc d;
	if (!none)
		d.fd = SharedFd(fuzz::fuzzFd(fence, fileSize));
	VulkanExportDesc &x = d.exportDesc;
	x.allocationSize = in.take<uint64_t>();
	x.memoryTypeIndex = in.take<uint8_t>();
	x.dedicated = in.take<uint8_t>() & 1;
	x.format = in.take<uint32_t>();
	x.width = in.take<uint32_t>();
	x.height = in.take<uint32_t>();
	x.depth = in.take<uint32_t>();
	x.tiling = in.take<uint32_t>();
	x.usage = in.take<uint32_t>();
	x.acquireTimelineValue = optional64(in);
	d.deviceUuid = uuid(in);
	d.driverUuid = uuid(in);
	auto made = VulkanMemoryFd::create(std::move(d));
	if (made.ok())
		PROMISE(made->isImage() == (made->desc().exportDesc.format != 0));
	return keep(std::move(made), [&](const VulkanMemoryFdDesc &m) {
		const VulkanExportDesc &e = m.exportDesc;
		PROMISE(!none && isOpenFd(m.fd.get()));
		PROMISE(e.allocationSize && e.memoryTypeIndex < 32 && e.usage);
		PROMISE(e.tiling == 0 || e.tiling == 1 || e.tiling == 1000158000);
		if (e.format)
			PROMISE(e.width && e.height);
		else
			PROMISE(!e.width && !e.height && !e.depth);
		if (!fence && fileSize)
			PROMISE(e.allocationSize <= fileSize);
		return e.allocationSize;
	});
}

bool knownFlavour(GlFlavour flavour)
{
	return static_cast<uint32_t>(flavour) <= 3 &&
	       std::strcmp(glFlavourName(flavour), "unknown") != 0;
}

Result<Resource> glTexture(fuzz::FuzzInput &in, Anchors &a)
{
	GlTextureDesc d;
	d.name = in.take<uint32_t>();
	d.target = in.take<uint32_t>();
	d.internalFormat = in.take<uint32_t>();
	d.width = in.take<uint32_t>();
	d.height = in.take<uint32_t>();
	d.context = handle(in);
	d.flavour = static_cast<GlFlavour>(in.take<uint8_t>());
	d.anchor = anchor(in, a);
	return keep(GlTexture::create(std::move(d)), [](const GlTextureDesc &x) {
		// GL_TEXTURE_2D, _RECTANGLE, _EXTERNAL_OES, _2D_ARRAY; the *UI formats.
		constexpr uint32_t kTargets[] = { 0x0DE1, 0x84F5, 0x8D65, 0x8C1A };
		constexpr uint32_t kExternal = 0x8D65;
		constexpr uint32_t kInteger[] = { 0x8232, 0x8234, 0x8236, 0x8238, 0x823A,
						  0x823C, 0x8D7C, 0x8D76, 0x8D70, 0x906F };
		PROMISE(x.name && x.width && x.height && x.context && knownFlavour(x.flavour));
		PROMISE(std::ranges::count(kTargets, x.target) == 1);
		PROMISE(x.internalFormat || x.target == kExternal);
		if (x.target == kExternal)
			PROMISE(std::ranges::count(kInteger, x.internalFormat) == 0);
		return uint64_t(0);
	});
}

Result<Resource> glBuffer(fuzz::FuzzInput &in, Anchors &a)
{
	GlBufferDesc d;
	d.name = in.take<uint32_t>();
	d.target = in.take<uint32_t>();
	d.size = in.take<uint64_t>();
	d.context = handle(in);
	d.flavour = static_cast<GlFlavour>(in.take<uint8_t>());
	d.anchor = anchor(in, a);
	return keep(GlBuffer::create(std::move(d)), [](const GlBufferDesc &x) {
		// ARRAY, ELEMENT_ARRAY, PIXEL_PACK, PIXEL_UNPACK, SHADER_STORAGE, COPY_READ,
		// COPY_WRITE, TEXTURE, UNIFORM: the binding points a buffer is read through.
		constexpr uint32_t kTargets[] = { 0x8892, 0x8893, 0x88EB, 0x88EC, 0x90D2,
						  0x8F36, 0x8F37, 0x8C2A, 0x8A11 };
		PROMISE(x.name && x.size && x.context && knownFlavour(x.flavour));
		PROMISE(std::ranges::count(kTargets, x.target) == 1);
		return x.size;
	});
}

Result<Resource> cudaPitched2D(fuzz::FuzzInput &in, Anchors &a)
{
	CudaPitched2DDesc d;
	d.pointer = in.take<uint64_t>();
	d.pitch = in.take<uint32_t>();
	d.numPlanes = in.take<uint8_t>();
	for (auto &offset : d.planeOffsets)
		offset = in.take<uint64_t>();
	d.size = in.take<uint64_t>();
	d.context = handle(in);
	d.deviceUuid = uuid(in);
	d.anchor = anchor(in, a);
	return keep(CudaPitched2D::create(std::move(d)), [](const CudaPitched2DDesc &x) {
		PROMISE(x.pointer && x.pitch && x.size && x.pitch <= x.size);
		PROMISE(x.numPlanes >= 1 && x.numPlanes <= 4);
		for (uint32_t i = 0; i < x.numPlanes; ++i)
			PROMISE(x.planeOffsets[i] < x.size &&
				(i == 0 || x.planeOffsets[i] > x.planeOffsets[i - 1]));
		return x.size;
	});
}

Result<Resource> cudaBuffer(fuzz::FuzzInput &in, Anchors &a)
{
	CudaBufferDesc d;
	d.pointer = in.take<uint64_t>();
	d.size = in.take<uint64_t>();
	d.context = handle(in);
	d.deviceUuid = uuid(in);
	d.anchor = anchor(in, a);
	return keep(CudaBuffer::create(std::move(d)), [](const CudaBufferDesc &x) {
		PROMISE(x.pointer && x.size);
		return x.size;
	});
}

Result<Resource> cudaSurface(fuzz::FuzzInput &in, Anchors &a)
{
	CudaSurfaceDesc d;
	d.surface = in.take<uint64_t>();
	d.array = handle(in);
	d.width = in.take<uint32_t>();
	d.height = in.take<uint32_t>();
	d.context = handle(in);
	d.deviceUuid = uuid(in);
	d.anchor = anchor(in, a);
	return keep(CudaSurface::create(std::move(d)), [](const CudaSurfaceDesc &x) {
		PROMISE(x.surface && x.width && x.height);
		return uint64_t(0);
	});
}

Result<Resource> openClMem(fuzz::FuzzInput &in, Anchors &a)
{
	OpenClMemDesc d;
	d.mem = handle(in);
	d.queue = handle(in);
	d.size = in.take<uint64_t>();
	d.anchor = anchor(in, a);
	return keep(OpenClMem::create(std::move(d)), [](const OpenClMemDesc &x) {
		PROMISE(x.mem && x.queue);
		return x.size;
	});
}

Result<Resource> vaSurface(fuzz::FuzzInput &in, Anchors &a)
{
	VaSurfaceDesc d;
	d.surface = in.take<uint32_t>();
	d.display = handle(in);
	d.anchor = anchor(in, a);
	return keep(VaSurface::create(std::move(d)), [](const VaSurfaceDesc &x) {
		PROMISE(x.surface != 0xffffffff && x.display);
		return uint64_t(0);
	});
}

Result<Resource> d3d11Texture(fuzz::FuzzInput &in, Anchors &a)
{
	D3D11TextureDesc d;
	d.texture = handle(in);
	d.arraySlice = in.take<uint32_t>();
	d.rowPitch = in.take<uint32_t>();
	d.adapterLuid = luid(in);
	d.anchor = anchor(in, a);
	return keep(D3D11Texture::create(std::move(d)), [](const D3D11TextureDesc &x) {
		PROMISE(x.texture);
		return uint64_t(0);
	});
}

Result<Resource> d3d12Resource(fuzz::FuzzInput &in, Anchors &a)
{
	D3D12ResourceDesc d;
	d.resource = handle(in);
	d.subresource = in.take<uint32_t>();
	d.adapterLuid = luid(in);
	d.anchor = anchor(in, a);
	return keep(D3D12Resource::create(std::move(d)), [](const D3D12ResourceDesc &x) {
		PROMISE(x.resource);
		return uint64_t(0);
	});
}

Result<Resource> d3d12Buffer(fuzz::FuzzInput &in, Anchors &a)
{
	D3D12BufferDesc d;
	d.resource = handle(in);
	d.size = in.take<uint64_t>();
	d.adapterLuid = luid(in);
	d.anchor = anchor(in, a);
	return keep(D3D12Buffer::create(std::move(d)), [](const D3D12BufferDesc &x) {
		PROMISE(x.resource && x.size);
		return x.size;
	});
}

Result<Resource> metalTexture(fuzz::FuzzInput &in, Anchors &a)
{
	MetalTextureDesc d;
	d.texture = handle(in);
	d.registryId = optional64(in);
	d.anchor = anchor(in, a);
	return keep(MetalTexture::create(std::move(d)), [](const MetalTextureDesc &x) {
		PROMISE(x.texture);
		return uint64_t(0);
	});
}

Result<Resource> metalBuffer(fuzz::FuzzInput &in, Anchors &a)
{
	MetalBufferDesc d;
	d.buffer = handle(in);
	d.size = in.take<uint64_t>();
	d.registryId = optional64(in);
	d.anchor = anchor(in, a);
	return keep(MetalBuffer::create(std::move(d)), [](const MetalBufferDesc &x) {
		PROMISE(x.buffer && x.size);
		return x.size;
	});
}

Result<Resource> webGpuTexture(fuzz::FuzzInput &in, Anchors &a)
{
	WebGpuTextureDesc d;
	d.texture = handle(in);
	d.device = handle(in);
	d.format = in.take<uint32_t>();
	d.width = in.take<uint32_t>();
	d.height = in.take<uint32_t>();
	d.anchor = anchor(in, a);
	return keep(WebGpuTexture::create(std::move(d)), [](const WebGpuTextureDesc &x) {
		PROMISE(x.texture && x.device && x.width && x.height);
		return uint64_t(0);
	});
}

// The first input byte picks one (modulo their number).
using Factory = Result<Resource> (*)(fuzz::FuzzInput &, Anchors &);
constexpr Factory kFactories[] = {
	cpuBytes,     cpuSharedSlot, vulkanImage, vulkanBuffer, vulkanMemoryFd, glTexture,
	glBuffer,     cudaPitched2D, cudaBuffer,  cudaSurface,  openClMem,      vaSurface,
	d3d11Texture, d3d12Resource, d3d12Buffer, metalTexture, metalBuffer,    webGpuTexture,
};

// What Frame::create promises of a frame it accepted: each plane names a part that exists and,
// where the part has a size, lies inside it (computed here without wrapping around).
void checkFrame(const Frame &f)
{
	PROMISE(f.width() && f.height() && f.colorimetry().isValid());
	PROMISE(f.numResources() == 1 && f.numPlanes() >= 1 && f.numPlanes() <= 4);
	const PixelFormatInfo *info = findPixelFormatInfo(f.format());
	PROMISE(info || f.format() == PixelFormat::Unknown);
	if (info)
		PROMISE(f.numPlanes() == info->numPlanes);
	for (uint32_t i = 0; i < f.numPlanes(); ++i) {
		const PlaneView &p = f.plane(i);
		PROMISE(p.resource < f.numResources());
		const Resource &r = f.resource(p.resource);
		PROMISE(p.subresource < r.subresourceCount());
		const uint64_t size = r.byteSize(p.subresource);
		if (size)
			PROMISE(p.offset < size && p.stride <= size - p.offset);
		if (!info || !p.stride)
			continue;
		const uint64_t row = info->planes[i].rowBytes(f.width());
		const uint32_t rows = info->planes[i].rows(f.height());
		PROMISE(rows >= 1 && p.stride >= row);
		if (!size)
			continue;
		uint64_t end = 0;
		const bool wraps =
			__builtin_mul_overflow(uint64_t(p.stride), uint64_t(rows - 1), &end) ||
			__builtin_add_overflow(end, p.offset, &end) ||
			__builtin_add_overflow(end, row, &end);
		PROMISE(!wraps && end <= size);
	}
}

// A Frame over the resource: its own plane layout (wrap) or plane views from the input (create).
void frameOver(Resource resource, fuzz::FuzzInput &in, const Anchors &anchors)
{
	const bool wrap = in.take<uint8_t>() & 1;
	const auto format = static_cast<PixelFormat>(in.take<uint8_t>() % (kPixelFormatCount + 1));
	const uint32_t width = in.take<uint16_t>();
	const uint32_t height = in.take<uint16_t>();
	const Colorimetry colorimetry = { static_cast<ColorRange>(in.take<uint8_t>() % 4),
					  static_cast<ColorMatrix>(in.take<uint8_t>() % 16),
					  static_cast<ColorPrimaries>(in.take<uint8_t>() % 24),
					  static_cast<ColorTransfer>(in.take<uint8_t>() % 20) };
	Result<Frame> frame = Error(ErrorCode::InvalidArgument, "", "");
	if (wrap) {
		frame = Frame::wrap(format, width, height, colorimetry, std::move(resource));
	} else {
		FrameDesc d;
		d.format = format;
		d.width = width;
		d.height = height;
		d.colorimetry = colorimetry;
		d.numResources = 1;
		d.resources[0] = std::move(resource);
		d.numPlanes = in.take<uint8_t>() % 6;
		for (auto &p : d.planes) {
			p.resource = in.take<uint8_t>();
			p.subresource = in.take<uint8_t>();
			p.offset = in.take<uint64_t>();
			p.stride = in.take<uint32_t>();
		}
		frame = Frame::create(std::move(d));
	}
	fuzz::report("frame", frame);
	if (!frame.ok())
		return;
	checkFrame(*frame);
	// The frame's copy of the resource still reaches the producer's anchor.
	const int before = anchors.consumed;
	frame->resource(0).markConsumed();
	PROMISE(anchors.consumed == before + (anchors.made - anchors.destroyed));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz::FuzzInput in(data, size);
	Anchors anchors;
	{
		const Factory factory = kFactories[in.take<uint8_t>() % std::size(kFactories)];
		Result<Resource> r = factory(in, anchors);
		fuzz::report("resource", r);
		if (r.ok())
			frameOver(std::move(*r), in, anchors);
	}
	// Whatever was refused or built, the producer's anchor went exactly once.
	PROMISE(anchors.made <= 1 && anchors.destroyed == anchors.made);
	return 0;
}
