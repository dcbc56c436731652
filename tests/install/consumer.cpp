// A C++ program built against the installed gpuhandle with pkg-config only.
#include <gpuhandle/frame.h>

#include <cstdio>
#include <string>
#include <vector>

int main()
{
	std::vector<uint8_t> pixels(64 * 48 * 4);
	auto bytes = gpuhandle::CpuBytes::create({ .data = pixels.data(), .size = pixels.size() });
	if (!bytes.ok())
		return 1;
	auto frame =
		gpuhandle::Frame::wrap(gpuhandle::PixelFormat::Unknown, 64, 48, {}, bytes.value());
	if (!frame.ok() || frame->numPlanes() != 1)
		return 1;
	auto refused = gpuhandle::CpuBytes::create({ .data = nullptr, .size = 1 });
	if (refused.ok() || std::string(refused.error().field()) != "data")
		return 1;
	std::printf("c++ consumer: %s frame %ux%u\n",
		    gpuhandle::resourceKindName(frame->resource(0).kind()), frame->width(),
		    frame->height());
	return 0;
}
