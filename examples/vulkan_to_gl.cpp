// Example: a picture Vulkan allocated and wrote, read by OpenGL from the same memory (no copy).
//
// What it shows: gpuhandle opens a Vulkan backend and an OpenGL (EGL) backend, allocates an
// exportable RGBA image on the Vulkan device, writes a gradient into it, and asks the path
// planner to bring that Frame into GL. On one device and driver (lavapipe + llvmpipe here, or a
// real GPU's Vulkan and GL drivers) the planner exports the Vulkan memory as an opaque fd and
// GL imports it as a texture: ExecutionPath zero-copy, route opaque-fd. GL then reads a few
// pixels back, which must be the ones Vulkan wrote.
// Why: allowCopies = false makes the planner fail (naming each route's reason) instead of
// silently copying, which is what a renderer wants to know about.
// What to look at: the importFrame() call and the lines it prints (route, path, fence, and every
// route the planner tried). Exits 77 when this machine has no Vulkan or no GL.
#include <gpuhandle/backends/planner.h>

#include <chrono>
#include <cstdio>

using namespace gpuhandle;
using namespace std::chrono_literals;

namespace {

constexpr uint32_t kWidth = 1920, kHeight = 1080;

// The gradient: red grows left to right, green top to bottom, blue and alpha fixed.
uint32_t expectedPixel(uint32_t x, uint32_t y)
{
	const uint32_t r = x * 255 / (kWidth - 1), g = y * 255 / (kHeight - 1);
	return r | g << 8 | 0x80u << 16 | 0xffu << 24; // RGBA bytes, little-endian word
}

uint32_t pixelAt(const CpuMapping &mapped, uint32_t x, uint32_t y)
{
	const uint8_t *p = mapped.data(0) + size_t(y) * mapped.stride(0) + size_t(x) * 4;
	return p[0] | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

} // namespace

int main()
{
	// 1. One backend per API, each on its own default device (a host program would pass its
	//    own VkDevice / EGLContext in BackendOpenOptions::context instead).
	Result<BackendRef> vulkan = openBackend(BackendKind::Vulkan);
	Result<BackendRef> gl = openBackend(BackendKind::OpenGL);
	if (!vulkan || !gl) {
		std::printf("SKIP: %s\n", (!vulkan ? vulkan : gl).error().message().c_str());
		return 77;
	}
	std::printf("Vulkan device: %s\nGL device:     %s\nsame device: %s\n",
		    (*vulkan)->deviceInfo().name.c_str(), (*gl)->deviceInfo().name.c_str(),
		    deviceMatchName(sameDevice((*vulkan)->deviceId(), (*gl)->deviceId())));

	// 2. Allocate on Vulkan: exportable (the default), a linear image so the CPU can fill it.
	AllocateRequest request;
	request.format = PixelFormat::RGBA;
	request.width = kWidth;
	request.height = kHeight;
	request.storage = FrameStorage::LinearImage;
	Result<Frame> frame = (*vulkan)->allocate(request);
	if (!frame) {
		std::fprintf(stderr, "allocate: %s\n", frame.error().message().c_str());
		return 1;
	}
	{
		// "Render": a CPU write through Vulkan's mapping stands in for a compute shader.
		Result<CpuMapping> mapped = (*vulkan)->map(*frame, MapAccess::Write, 5s);
		if (!mapped) {
			std::fprintf(stderr, "map: %s\n", mapped.error().message().c_str());
			return 1;
		}
		for (uint32_t y = 0; y < kHeight; ++y)
			for (uint32_t x = 0; x < kWidth; ++x) {
				uint8_t *p =
					mapped->data(0) + size_t(y) * mapped->stride(0) + x * 4;
				const uint32_t v = expectedPixel(x, y);
				for (int c = 0; c < 4; ++c)
					p[c] = static_cast<uint8_t>(v >> (8 * c));
			}
	} // the mapping ends here: the bytes are in the Vulkan allocation

	// 3. Into GL, zero-copy only. `source` is who can export the frame.
	ImportOptions options;
	options.source = *vulkan;
	options.allowCopies = false;
	Result<ImportResult> in = importFrame(*frame, **gl, options);
	if (!in) {
		// On a machine whose Vulkan and GL are different drivers no zero-copy route exists:
		// the error names each route's reason.
		std::printf("SKIP: no zero-copy route from Vulkan to GL here: %s\n",
			    in.error().message().c_str());
		return 77;
	}
	std::printf("into GL as %s: route %s, ExecutionPath %s%s%s, fence %s\n",
		    resourceKindName(in->frame.resource(0).kind()), importRouteName(in->route),
		    executionPathKindName(in->path.kind()), *in->path.reason() ? ": " : "",
		    in->path.reason(), fenceTransferName(in->fence));
	for (const RouteAttempt &attempt : in->tried)
		std::printf("  tried %-12s %s\n", importRouteName(attempt.route),
			    attempt.why ? attempt.why->message().c_str() : "(taken)");

	// 4. GL reads the texture back (glGetTexImage on the backend's GL thread).
	Result<CpuMapping> seen = (*gl)->map(in->frame, MapAccess::Read, 5s);
	if (!seen) {
		std::fprintf(stderr, "GL map: %s\n", seen.error().message().c_str());
		return 1;
	}
	int wrong = 0;
	const uint32_t points[][2] = {
		{ 0, 0 }, { kWidth - 1, 0 }, { 960, 540 }, { kWidth - 1, kHeight - 1 }
	};
	for (const auto &pt : points) {
		const uint32_t got = pixelAt(*seen, pt[0], pt[1]),
			       want = expectedPixel(pt[0], pt[1]);
		std::printf("  pixel (%4u,%4u): GL sees 0x%08x, Vulkan wrote 0x%08x\n", pt[0],
			    pt[1], got, want);
		wrong += got != want;
	}
	const bool ok = wrong == 0 && in->path == ExecutionPath::zeroCopy();
	std::printf("%s\n", ok ? "OK: GL read Vulkan's memory without a copy" : "FAILED");
	return ok ? 0 : 1;
}
