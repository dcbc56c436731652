// Example: a CPU frame moved into every GPU backend that opens here, by the best route, and back.
#include <gpuhandle/backends/planner.h>

#include <cstdio>
#include <cstring>

using namespace gpuhandle;

int main()
{
	Result<BackendRef> cpu = openBackend(BackendKind::Cpu);
	if (!cpu.ok())
		return 1;
	AllocateRequest request;
	request.format = PixelFormat::NV12;
	request.width = 1920;
	request.height = 1080;
	Result<Frame> frame = (*cpu)->allocate(request);
	if (!frame.ok()) {
		std::fprintf(stderr, "%s\n", frame.error().message().c_str());
		return 1;
	}
	// Fill the luma plane through a CPU mapping, so the round trip has something to carry.
	{
		Result<CpuMapping> mapped =
			(*cpu)->map(*frame, MapAccess::Write, std::chrono::seconds(1));
		if (!mapped.ok())
			return 1;
		for (uint32_t y = 0; y < request.height; ++y)
			std::memset(mapped->data(0) + static_cast<size_t>(y) * mapped->stride(0),
				    static_cast<int>(y & 0xff), request.width);
	}

	int failures = 0;
	for (BackendKind kind : { BackendKind::Vulkan, BackendKind::OpenGL, BackendKind::OpenCl,
				  BackendKind::Cuda, BackendKind::VaApi }) {
		Result<BackendRef> gpu = openBackend(kind);
		if (!gpu.ok()) {
			std::printf("%-7s not here: %s\n", backendKindName(kind),
				    gpu.error().message().c_str());
			continue;
		}
		ImportOptions there;
		there.source = *cpu;
		Result<ImportResult> in = importFrame(*frame, **gpu, there);
		if (!in.ok()) {
			std::printf("%-7s import failed: %s\n", backendKindName(kind),
				    in.error().message().c_str());
			++failures;
			continue;
		}
		ImportOptions back;
		back.source = *gpu;
		Result<ImportResult> out = importFrame(in->frame, **cpu, back);
		bool same = false;
		if (out.ok()) {
			Result<CpuMapping> mapped =
				(*cpu)->map(out->frame, MapAccess::Read, std::chrono::seconds(1));
			same = mapped.ok() &&
			       mapped->data(0)[static_cast<size_t>(200) * mapped->stride(0)] == 200;
		}
		std::printf("%-7s %s: in by %s (%s%s%s), back by %s, luma %s\n",
			    backendKindName(kind), (*gpu)->deviceInfo().name.c_str(),
			    importRouteName(in->route), executionPathKindName(in->path.kind()),
			    *in->path.reason() ? ": " : "", in->path.reason(),
			    out.ok() ? importRouteName(out->route) : "failed",
			    same ? "identical" : "DIFFERENT");
		failures += same ? 0 : 1;
	}
	return failures ? 1 : 0;
}
