// Fuzz harness: layouts and format tables with arbitrary formats, sizes, policies, alignments,
// strides and API values. Every answer is a value or an error; a layout's planes fit its size.
#include <gpuhandle/format_mappings.h>
#include <gpuhandle/layout.h>

#include "fuzz_input.h"

using namespace gpuhandle;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz::FuzzInput in(data, size);
	const auto format = static_cast<PixelFormat>(in.take<uint32_t>() % (kPixelFormatCount + 2));
	const auto width = in.take<uint32_t>();
	const auto height = in.take<uint32_t>();
	const auto policy = static_cast<LayoutPolicy>(in.take<uint8_t>() % 5);
	const auto align = in.take<uint32_t>();
	auto layout = computeLayout(format, width, height, policy, align);
	if (layout.ok()) {
		for (uint32_t p = 0; p < layout->numPlanes; ++p) {
			const PlaneLayout &plane = layout->planes[p];
			if (plane.offset + plane.size > layout->size)
				__builtin_trap();
		}
	}
	uint32_t strides[4];
	const size_t numStrides = in.take<uint8_t>() % 5;
	for (auto &s : strides)
		s = in.take<uint32_t>();
	(void)layoutWithStrides(format, width, height,
				std::span<const uint32_t>(strides, numStrides));
	(void)estimateTextureBytes(format, width, height, in.take<uint16_t>(), in.take<uint8_t>());
	const auto api = static_cast<FormatApi>(in.take<uint8_t>() % (kFormatApiCount + 1));
	const auto value = in.take<uint32_t>();
	auto from = fromApiFormat(api, value);
	if (from.ok() && !toApiFormat(api, *from).ok())
		__builtin_trap(); // a format read from an API maps back to it
	(void)toApiFormat(api, format);
	(void)canRepresent(api, format);
	const auto planeApi = static_cast<PlaneApi>(in.take<uint8_t>() % (kPlaneApiCount + 1));
	(void)planeApiFormats(planeApi, format);
	(void)fromPlaneApiFormat(planeApi, value, in.take<uint32_t>());
	(void)vaRtFormat(format);
	(void)findPixelFormatInfo(format);
	return 0;
}
