// gpuhandle-formats: prints every pixel format and its name in each API, from the format tables.
#include <gpuhandle/format_mappings.h>

#include "gpuhandle_i18n.h"
#include "gpuhandle_program.h"

#include <cstdio>
#include <cstring>

using namespace gpuhandle;

namespace {

const char *alphaName(AlphaMode alpha)
{
	switch (alpha) {
	case AlphaMode::None: return "none";
	case AlphaMode::Straight: return "straight";
	case AlphaMode::Premultiplied: return "premultiplied";
	case AlphaMode::Padding: return "padding";
	}
	return "?";
}

const char *apiSpelling(FormatApi api, PixelFormat format)
{
	for (const FormatMapping &m : formatMappings(api)) {
		if (m.format == format)
			return m.name;
	}
	return "-";
}

// The spelling without the API's common prefix ("VK_FORMAT_R8_UNORM" -> "R8_UNORM"), for tables.
const char *shortSpelling(FormatApi api, PixelFormat format)
{
	static const char *const kPrefixes[] = {
		"DRM_FORMAT_",  "V4L2_PIX_FMT_",  "VA_FOURCC_",          "VK_FORMAT_",
		"DXGI_FORMAT_", "MTLPixelFormat", "kCVPixelFormatType_", "WGPUTextureFormat_",
	};
	const char *name = apiSpelling(api, format);
	for (const char *prefix : kPrefixes) {
		size_t length = std::strlen(prefix);
		if (std::strncmp(name, prefix, length) == 0)
			return name + length;
	}
	return name;
}

// One Markdown table: the README's format list is this output, checked by a test.
void printMarkdown()
{
	std::printf("API names are shown without their common prefix (`VK_FORMAT_`, `DRM_FORMAT_`, "
		    "`V4L2_PIX_FMT_`, `VA_FOURCC_`, `DXGI_FORMAT_`, `MTLPixelFormat`, "
		    "`kCVPixelFormatType_`, `WGPUTextureFormat_`).\n\n");
	std::printf("| format | planes | bits | alpha | HDR |");
	for (uint32_t a = 0; a < kFormatApiCount; ++a)
		std::printf(" %s |", formatApiName(static_cast<FormatApi>(a)));
	std::printf("\n|---|---|---|---|---|");
	for (uint32_t a = 0; a < kFormatApiCount; ++a)
		std::printf("---|");
	std::printf("\n");
	for (const PixelFormatInfo &info : allPixelFormats()) {
		std::printf("| `%s` | %u | %u | %s | %s |", info.name, info.numPlanes, info.depth,
			    alphaName(info.alpha), info.isHdrCapable() ? "yes" : "no");
		for (uint32_t a = 0; a < kFormatApiCount; ++a)
			std::printf(" %s |", shortSpelling(static_cast<FormatApi>(a), info.format));
		std::printf("\n");
	}
}

int usage(FILE *to)
{
	std::fputs(
		_("Usage: gpuhandle-formats [--markdown | --version | --help]\n"
		  "Lists every pixel format gpuhandle knows: its planes, depth and alpha, and its\n"
		  "name and value in each API that has it (GStreamer, FFmpeg, DRM, V4L2, VA-API,\n"
		  "Vulkan, DXGI, Metal, Core Video, WebGPU).\n"
		  "  --markdown  the same list as the Markdown table of docs/formats.md\n"
		  "  --version   the program's version\n"
		  "  --help      this text\n"),
		to);
	return to == stdout ? 0 : 2;
}

} // namespace

int main(int argc, char **argv)
{
	// Only the usage text is translated: the tables are data (the README's list is one).
	i18n::initProgram();
	if (argc == 2 && std::strcmp(argv[1], "--markdown") == 0) {
		printMarkdown();
		return 0;
	}
	if (argc == 2 && program::isVersion(argv[1]))
		return program::printVersion("gpuhandle-formats");
	if (argc == 2 && program::isHelp(argv[1]))
		return usage(stdout);
	if (argc > 1) {
		if (argv[1][0] == '-' && std::strcmp(argv[1], "--markdown") != 0)
			program::reportUnknownOption("gpuhandle-formats", argv[1]);
		return usage(stderr);
	}
	for (const PixelFormatInfo &info : allPixelFormats()) {
		std::printf("%-14s ordinal %2u, %u plane(s), %2u bits, alpha %s\n", info.name,
			    info.shaderOrdinal, info.numPlanes, info.depth, alphaName(info.alpha));
		for (uint32_t a = 0; a < kFormatApiCount; ++a) {
			auto api = static_cast<FormatApi>(a);
			auto value = toApiFormat(api, info.format);
			if (value.ok())
				std::printf("    %-10s %s (%u, 0x%08x)\n", formatApiName(api),
					    apiSpelling(api, info.format), *value, *value);
		}
	}
	return 0;
}
