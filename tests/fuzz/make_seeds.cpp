// Writes the fuzz harnesses' seed corpora: valid inputs in each harness's byte layout, which the
// fuzzers and replays then mutate. usage: gpuhandle-fuzz-seeds tests/fuzz/corpus
#include <gpuhandle/fd_resources.h>
#include <gpuhandle/frame.h>
#include <gpuhandle/wire_format.h>

#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <initializer_list>
#include <string>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace gpuhandle;

namespace {

constexpr uint32_t kNv12Fourcc = 0x3231564e, kR8 = 0x20203852, kGR88 = 0x38385247;
constexpr uint32_t kSize = 64 * 48 * 3 / 2;

struct Bytes {
	std::vector<uint8_t> v;
	template<typename T>
	Bytes &put(T value)
	{
		const auto *p = reinterpret_cast<const uint8_t *>(&value);
		v.insert(v.end(), p, p + sizeof value);
		return *this;
	}
	Bytes &text(const std::string &s)
	{
		v.insert(v.end(), s.begin(), s.end());
		return *this;
	}
};

void write(const std::string &dir, const char *name, const Bytes &b)
{
	mkdir(dir.c_str(), 0755);
	const std::string path = dir + "/" + name;
	FILE *f = std::fopen(path.c_str(), "wb");
	if (!f || std::fwrite(b.v.data(), 1, b.v.size(), f) != b.v.size())
		std::fprintf(stderr, "cannot write %s\n", path.c_str());
	if (f)
		std::fclose(f);
}

SharedFd memfd(uint64_t size)
{
	UniqueFd fd(memfd_create("seed", MFD_CLOEXEC | MFD_ALLOW_SEALING));
	if (ftruncate(fd.get(), static_cast<off_t>(size)) != 0 ||
	    fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0)
		return {};
	return SharedFd(std::move(fd));
}

Frame nv12Shm(SyncPoint acquire)
{
	FrameDesc d;
	d.format = PixelFormat::NV12;
	d.width = 64;
	d.height = 48;
	d.numResources = 1;
	d.resources[0] = ShmFd::create({ .fd = memfd(kSize), .size = kSize }).value();
	d.numPlanes = 2;
	d.planes[0] = { 0, 0, 0, 64 };
	d.planes[1] = { 0, 0, 64 * 48, 64 };
	d.acquire = std::move(acquire);
	return Frame::create(std::move(d)).value();
}

Frame nv12DmaBuf()
{
	DmaBufDesc b;
	b.fourcc = kNv12Fourcc;
	b.modifier = kDrmModifierLinear;
	b.width = 64;
	b.height = 48;
	b.numObjects = 2;
	b.objects[0] = { memfd(kSize), 64 * 48 };
	b.objects[1] = { memfd(kSize), 64 * 24 };
	b.numPlanes = 2;
	b.planes[0] = { 0, 0, 64 };
	b.planes[1] = { 1, 0, 64 };
	return Frame::wrap(PixelFormat::NV12, 64, 48, {}, DmaBuf::create(b).value()).value();
}

Bytes wire(uint8_t spec, const WireMessage &m)
{
	Bytes b;
	b.put(spec).put(kSize);
	b.v.insert(b.v.end(), reinterpret_cast<const uint8_t *>(m.bytes.data()),
		   reinterpret_cast<const uint8_t *>(m.bytes.data()) + m.size);
	return b;
}

void wireSeeds(const std::string &dir)
{
	WireMessage m;
	(void)encodeFrame(nv12Shm(SyncPoint::noop()), 1, true, m);
	write(dir, "nv12-shm", wire(1, m));
	auto fence = SyncPoint::fromFenceFd(SharedFd(UniqueFd(eventfd(0, EFD_CLOEXEC)))).value();
	(void)encodeFrame(nv12Shm(fence), 2, false, m);
	write(dir, "nv12-shm-fence", wire(2 | 1 << 4, m));
	(void)encodeFrame(nv12DmaBuf(), 3, true, m);
	write(dir, "nv12-dmabuf", wire(2, m));
	(void)encodeHello("video/x-raw,format=NV12,width=64,height=48", 4, m);
	write(dir, "hello", wire(0, m));
	(void)encodeCaps("video/x-raw,format=NV12,width=64,height=48", m);
	write(dir, "caps", wire(0, m));
	encodeRelease(1, m);
	write(dir, "release", wire(0, m));
	encodeBye(m);
	write(dir, "bye", wire(0, m));
	// The file cache: a frame naming slot 0 (the harness keeps a memfd there), its messages.
	const std::array<int32_t, 1> slot{ 0 };
	const Frame pooled = nv12Shm(SyncPoint::noop());
	(void)encodeFrame(pooled, 4, true, slot, m);
	write(dir, "nv12-shm-cached", wire(0, m));
	(void)encodeRemember(0, pooled.resource(0).get<ShmFd>()->desc().fd.get(), m);
	write(dir, "remember", wire(1, m));
	(void)encodeFeatures(kWireMaxCachedFiles, m);
	write(dir, "features", wire(0, m));
	(void)encodeForget(0, m);
	write(dir, "forget", wire(0, m));
	// Timing: a timed frame (over slot 0 too), the longer Features, a timeline.
	FrameTiming times;
	times.pts = 40'000'000;
	times.duration = 40'000'000;
	times.clockTime = 1'000'000'000;
	(void)encodeFrame(nv12Shm(SyncPoint::noop()), 5, true, {}, &times, m);
	write(dir, "nv12-shm-timed", wire(1, m));
	(void)encodeFrame(pooled, 6, true, slot, &times, m);
	write(dir, "nv12-shm-cached-timed", wire(0, m));
	(void)encodeFeatures(WireFeatures{ kWireMaxCachedFiles, true, true }, m);
	write(dir, "features-timing", wire(0, m));
	StreamTiming line;
	line.rate = 2.0;
	line.latency = 33'000'000;
	(void)encodeTimeline(line, m);
	write(dir, "timeline", wire(0, m));
}

Bytes formats(PixelFormat f, uint32_t w, uint32_t h, uint8_t policy, uint32_t align)
{
	Bytes b;
	b.put(static_cast<uint32_t>(f)).put(w).put(h).put(policy).put(align);
	b.put(uint8_t(2)).put(w).put(w).put(uint32_t(0)).put(uint32_t(0));
	b.put(uint16_t(1)).put(uint8_t(1)).put(uint8_t(1)).put(kNv12Fourcc).put(uint8_t(0));
	return b.put(uint32_t(0));
}

void formatSeeds(const std::string &dir)
{
	write(dir, "nv12-1080p-gstreamer", formats(PixelFormat::NV12, 1920, 1080, 1, 1));
	write(dir, "yuv420p-odd-ffmpeg", formats(PixelFormat::YUV420P, 1279, 719, 2, 32));
	write(dir, "v210-1080p-gstreamer", formats(PixelFormat::V210, 1920, 1080, 1, 1));
	write(dir, "rgba-4k-stride256", formats(PixelFormat::RGBA, 3840, 2160, 3, 256));
}

// The frame part of a fuzz_resources input: NV12 64x48, BT.709, two planes on resource 0.
Bytes &nv12Planes(Bytes &b, uint32_t uvOffset, uint8_t uvSub)
{
	b.put(uint8_t(1)).put(uint16_t(64)).put(uint16_t(48));
	b.put(uint8_t(1)).put(uint8_t(1)).put(uint8_t(1)).put(uint8_t(1)).put(uint8_t(2));
	b.put(uint8_t(0)).put(uint8_t(0)).put(uint32_t(0)).put(uint16_t(64));
	b.put(uint8_t(0)).put(uvSub).put(uvOffset).put(uint16_t(64));
	for (int i = 0; i < 2; ++i)
		b.put(uint8_t(0)).put(uint8_t(0)).put(uint32_t(0)).put(uint16_t(0));
	return b;
}

void resourceSeeds(const std::string &dir)
{
	Bytes shm;
	shm.put(uint8_t(1)).put(uint8_t(1)).put(kSize).put(uint32_t(0)).put(kSize);
	write(dir, "nv12-shm", nv12Planes(shm, 64 * 48, 0));
	Bytes dma;
	dma.put(uint8_t(1)).put(uint8_t(0)).put(kNv12Fourcc).put(uint8_t(0));
	dma.put(uint16_t(64)).put(uint16_t(48)).put(uint8_t(1)).put(kSize).put(uint8_t(1));
	dma.put(uint8_t(2));
	dma.put(uint8_t(0)).put(uint32_t(0)).put(uint32_t(64));
	dma.put(uint8_t(0)).put(uint32_t(64 * 48)).put(uint32_t(64));
	for (int i = 0; i < 2; ++i)
		dma.put(uint8_t(0)).put(uint32_t(0)).put(uint32_t(0));
	write(dir, "nv12-dmabuf", nv12Planes(dma, 64 * 48, 0));
	Bytes cpu;
	cpu.put(uint8_t(1)).put(uint8_t(2)).put(uint8_t(2));
	cpu.put(uint16_t(0)).put(uint8_t(1)).put(uint16_t(64)).put(uint16_t(48));
	cpu.put(uint16_t(8192)).put(uint8_t(1)).put(uint16_t(64)).put(uint16_t(24));
	for (int i = 0; i < 2; ++i)
		cpu.put(uint16_t(0)).put(uint8_t(0)).put(uint16_t(0)).put(uint16_t(0));
	write(dir, "nv12-cpu-planes", nv12Planes(cpu, 0, 1));
}

// The frame part of a fuzz_native_resources input (BT.709): plane views taken from the resource
// (wrap) or the ones given (create, over resource 0).
Bytes &wrapped(Bytes &b, PixelFormat format, uint16_t width, uint16_t height)
{
	b.put(uint8_t(1)).put(static_cast<uint8_t>(format)).put(width).put(height);
	return b.put(uint8_t(1)).put(uint8_t(1)).put(uint8_t(1)).put(uint8_t(1));
}

Bytes &viewed(Bytes &b, PixelFormat format, uint16_t width, uint16_t height,
	      std::initializer_list<PlaneView> views)
{
	b.put(uint8_t(0)).put(static_cast<uint8_t>(format)).put(width).put(height);
	b.put(uint8_t(1)).put(uint8_t(1)).put(uint8_t(1)).put(uint8_t(1));
	b.put(static_cast<uint8_t>(views.size()));
	for (size_t i = 0; i < 4; ++i) {
		const PlaneView p = i < views.size() ? views.begin()[i] : PlaneView{};
		b.put(static_cast<uint8_t>(p.resource)).put(static_cast<uint8_t>(p.subresource));
		b.put(p.offset).put(p.stride);
	}
	return b;
}

// NV12 64x48 in one allocation: luma then chroma, `stride` bytes a row (0: opaque).
Bytes &nv12Viewed(Bytes &b, uint32_t stride)
{
	return viewed(b, PixelFormat::NV12, 64, 48,
		      { { 0, 0, 0, stride }, { 0, 0, 64 * 48, stride } });
}

// A seed or two per handle-based factory (the first byte picks it, in the harness's order), made
// and framed successfully. Handles are arbitrary non-zero values; "1" bytes ask for an anchor.
void nativeSeeds(const std::string &dir)
{
	constexpr uint32_t kRgbaSize = 64 * 48 * 4;
	const Uuid uuid = { 0x67, 0x70, 0x75, 0x68, 0x61, 0x6e, 0x64, 0x6c,
			    0x65, 1,    2,    3,    4,    5,    6,    7 };
	auto factory = [](uint8_t index) {
		Bytes b;
		b.put(index);
		return b;
	};
	Bytes b = factory(0); // CpuBytes
	b.put(uint32_t(0x1000)).put(uint64_t(kSize)).put(uint8_t(1));
	write(dir, "nv12-cpu-bytes", nv12Viewed(b, 64));
	b = factory(1); // CpuSharedSlot
	b.put(uint64_t(7)).put(uint64_t(kSize)).put(uint32_t(64)).put(uint8_t(1));
	write(dir, "gray8-cpu-shared-slot", wrapped(b, PixelFormat::GRAY8, 64, 48));
	b = factory(2); // VulkanImage, optimal tiling
	b.put(uint64_t(0x10)).put(uint32_t(0x20)).put(uint8_t(1)).put(uuid).put(uint32_t(0));
	write(dir, "rgba-vulkan-image", wrapped(b.put(uint8_t(1)), PixelFormat::RGBA, 64, 48));
	b = factory(3); // VulkanBuffer
	b.put(uint64_t(0x11)).put(uint32_t(0x20)).put(uint64_t(kSize));
	b.put(uint8_t(0)).put(uint8_t(1));
	write(dir, "nv12-vulkan-buffer", nv12Viewed(b, 64));
	b = factory(4); // VulkanMemoryFd: an R8G8B8A8_UNORM image in a 64 KiB memfd
	b.put(uint8_t(0)).put(uint32_t(65536)).put(uint64_t(65536)).put(uint8_t(1)).put(uint8_t(1));
	b.put(uint32_t(37)).put(uint32_t(64)).put(uint32_t(48)).put(uint32_t(1)).put(uint32_t(1));
	b.put(uint32_t(0x7)).put(uint8_t(0)).put(uint8_t(1)).put(uuid).put(uint8_t(1)).put(uuid);
	write(dir, "rgba-vulkan-memory-fd",
	      viewed(b, PixelFormat::RGBA, 64, 48, { { 0, 0, 0, 256 } }));
	b = factory(4); // VulkanMemoryFd: a buffer export waiting on a timeline value
	b.put(uint8_t(0)).put(kSize).put(uint64_t(kSize)).put(uint8_t(2)).put(uint8_t(0));
	b.put(uint32_t(0)).put(uint32_t(0)).put(uint32_t(0)).put(uint32_t(0)).put(uint32_t(0));
	b.put(uint32_t(0x3)).put(uint8_t(1)).put(uint64_t(5)).put(uint8_t(0)).put(uint8_t(0));
	write(dir, "nv12-vulkan-memory-fd-buffer", nv12Viewed(b, 64));
	b = factory(5); // GlTexture: GL_TEXTURE_2D, GL_RGBA8, EGL
	b.put(uint32_t(3)).put(uint32_t(0x0DE1)).put(uint32_t(0x8058)).put(uint32_t(64));
	b.put(uint32_t(48)).put(uint32_t(0x30)).put(uint8_t(0)).put(uint8_t(1));
	write(dir, "rgba-gl-texture", wrapped(b, PixelFormat::RGBA, 64, 48));
	b = factory(5); // GlTexture: GL_TEXTURE_EXTERNAL_OES, the EGLImage decides the format
	b.put(uint32_t(4)).put(uint32_t(0x8D65)).put(uint32_t(0)).put(uint32_t(64));
	b.put(uint32_t(48)).put(uint32_t(0x30)).put(uint8_t(0)).put(uint8_t(0));
	write(dir, "nv12-gl-texture-external", nv12Viewed(b, 0));
	b = factory(6); // GlBuffer: GL_PIXEL_UNPACK_BUFFER, GLX
	b.put(uint32_t(5)).put(uint32_t(0x88EC)).put(uint64_t(kSize)).put(uint32_t(0x30));
	write(dir, "nv12-gl-buffer", nv12Viewed(b.put(uint8_t(1)).put(uint8_t(1)), 64));
	b = factory(7); // CudaPitched2D: NVDEC-style NV12
	b.put(uint64_t(0x7f0000000000)).put(uint32_t(64)).put(uint8_t(2)).put(uint64_t(0));
	b.put(uint64_t(64 * 48)).put(uint64_t(0)).put(uint64_t(0)).put(uint64_t(kSize));
	b.put(uint32_t(0)).put(uint8_t(1)).put(uuid).put(uint8_t(1));
	write(dir, "nv12-cuda-pitched-2d", wrapped(b, PixelFormat::NV12, 64, 48));
	b = factory(8); // CudaBuffer
	b.put(uint64_t(0x7f0000100000)).put(uint64_t(kSize)).put(uint32_t(0x60)).put(uint8_t(0));
	write(dir, "nv12-cuda-buffer", nv12Viewed(b.put(uint8_t(1)), 64));
	b = factory(9); // CudaSurface
	b.put(uint64_t(9)).put(uint32_t(0x40)).put(uint32_t(64)).put(uint32_t(48));
	b.put(uint32_t(0x60)).put(uint8_t(0)).put(uint8_t(1));
	write(dir, "rgba-cuda-surface", wrapped(b, PixelFormat::RGBA, 64, 48));
	b = factory(10); // OpenClMem: a buffer
	b.put(uint32_t(0x70)).put(uint32_t(0x71)).put(uint64_t(kSize)).put(uint8_t(1));
	write(dir, "nv12-opencl-mem", nv12Viewed(b, 64));
	b = factory(11); // VaSurface: id 0 is legal
	b.put(uint32_t(0)).put(uint32_t(0x80)).put(uint8_t(1));
	write(dir, "nv12-va-surface", nv12Viewed(b, 0));
	b = factory(12); // D3D11Texture: a staging texture with its row pitch
	b.put(uint32_t(0x90)).put(uint32_t(3)).put(uint32_t(256)).put(uint8_t(1));
	b.put(uint32_t(0x1234)).put(int32_t(-1)).put(uint8_t(1));
	write(dir, "rgba-d3d11-texture", wrapped(b, PixelFormat::RGBA, 64, 48));
	b = factory(13); // D3D12Resource
	b.put(uint32_t(0x91)).put(uint32_t(1));
	b.put(uint8_t(1)).put(uint32_t(0x1234)).put(int32_t(0));
	write(dir, "nv12-d3d12-resource", nv12Viewed(b.put(uint8_t(1)), 0));
	b = factory(14); // D3D12Buffer
	b.put(uint32_t(0x92)).put(uint64_t(kSize)).put(uint8_t(0)).put(uint8_t(1));
	write(dir, "nv12-d3d12-buffer", nv12Viewed(b, 64));
	b = factory(15); // MetalTexture
	b.put(uint32_t(0xa0)).put(uint8_t(1)).put(uint64_t(0x100000abc)).put(uint8_t(1));
	write(dir, "bgra-metal-texture", wrapped(b, PixelFormat::BGRA, 64, 48));
	b = factory(16); // MetalBuffer
	b.put(uint32_t(0xa1)).put(uint64_t(kRgbaSize)).put(uint8_t(0)).put(uint8_t(1));
	write(dir, "rgba-metal-buffer", viewed(b, PixelFormat::RGBA, 64, 48, { { 0, 0, 0, 256 } }));
	b = factory(17); // WebGpuTexture: WGPUTextureFormat_RGBA8Unorm
	b.put(uint32_t(0xb0)).put(uint32_t(0xb1)).put(uint32_t(0x12)).put(uint32_t(64));
	b.put(uint32_t(48)).put(uint8_t(1));
	write(dir, "rgba-webgpu-texture", wrapped(b, PixelFormat::RGBA, 64, 48));
}

Bytes drm(bool layerPerPlane)
{
	Bytes b;
	b.put(uint8_t(0)).put(int8_t(1));
	b.put(uint16_t(kSize)).put(uint8_t(1)).put(uint8_t(1)).put(uint8_t(0));
	for (int i = 1; i < 4; ++i)
		b.put(uint16_t(0)).put(uint8_t(1)).put(uint8_t(1)).put(uint8_t(0));
	b.put(int8_t(layerPerPlane ? 2 : 1));
	for (int l = 0; l < 4; ++l) {
		const bool used = l == 0 || (layerPerPlane && l == 1);
		const uint32_t format = !used            ? 0
					: !layerPerPlane ? kNv12Fourcc
					: l == 0         ? kR8
							 : kGR88;
		b.put(format).put(int8_t(!used ? 0 : layerPerPlane ? 1 : 2));
		for (int p = 0; p < 4; ++p) {
			const bool uv = (layerPerPlane && l == 1 && p == 0) ||
					(!layerPerPlane && l == 0 && p == 1);
			const bool y = l == 0 && p == 0;
			b.put(int8_t(0))
				.put(int32_t(uv ? 64 * 48 : 0))
				.put(int32_t(uv || y ? 64 : 0));
		}
	}
	return b.put(uint8_t(64)).put(uint8_t(48));
}

void capsSeeds(const std::string &dir)
{
	const char *caps[] = {
		"video/x-raw,format=NV12,width=320,height=240,framerate=30/1",
		"video/x-raw,format=I420,width=1279,height=719,colorimetry=bt709,framerate=0/1",
		"video/x-raw,format=P010_10LE,width=3840,height=2160,colorimetry=bt2100-pq",
		"video/x-raw(memory:DMABuf),format=NV12,width=64,height=48,framerate=30/1",
		"video/x-raw(memory:DMABuf),format=DMA_DRM,drm-format=NV12:0x0100000000000002,width=64,height=48",
		"video/x-raw(memory:GpuHandle),format=RGBA,width=16,height=16,interlace-mode=progressive",
	};
	int i = 0;
	for (const char *c : caps) {
		Bytes b;
		b.text(c);
		write(dir, ("caps-" + std::to_string(i++)).c_str(), b);
	}
}

} // namespace

int main(int argc, char **argv)
{
	if (argc != 2) {
		std::fprintf(stderr, "usage: %s CORPUS-ROOT\n", argv[0]);
		return 2;
	}
	const std::string root = argv[1];
	mkdir(root.c_str(), 0755);
	wireSeeds(root + "/fuzz_wire");
	formatSeeds(root + "/fuzz_formats");
	resourceSeeds(root + "/fuzz_resources");
	nativeSeeds(root + "/fuzz_native_resources");
	write(root + "/fuzz_drm_descriptor", "nv12-one-layer", drm(false));
	write(root + "/fuzz_drm_descriptor", "nv12-layer-per-plane", drm(true));
	capsSeeds(root + "/fuzz_caps");
	return 0;
}
