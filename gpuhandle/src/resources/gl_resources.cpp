// Factories of the OpenGL resources: GlTexture (target/format consistency) and GlBuffer.
#include <gpuhandle/gl_resources.h>

#include "validation.h"

#include <algorithm>
#include <cinttypes>

namespace gpuhandle {

namespace {

// GLenum values from glext.h / gl2ext.h, so that no GL header is needed.
constexpr uint32_t kTexture2D = 0x0DE1;
constexpr uint32_t kTextureRectangle = 0x84F5;
constexpr uint32_t kTextureExternalOes = 0x8D65;
constexpr uint32_t kTexture2DArray = 0x8C1A;

struct GlFormatInfo {
	uint32_t value;
	bool integer; // *UI formats: need usampler, which external samplers cannot be
};

constexpr GlFormatInfo kInternalFormats[] = {
	// sized normalised and float formats
	{ 0x8229, false },
	{ 0x822B, false },
	{ 0x8051, false },
	{ 0x8058, false }, // R8 RG8 RGB8 RGBA8
	{ 0x8C41, false },
	{ 0x8C43, false }, // SRGB8 SRGB8_ALPHA8
	{ 0x822A, false },
	{ 0x822C, false },
	{ 0x8054, false },
	{ 0x805B, false }, // R16 RG16 RGB16 RGBA16
	{ 0x822D, false },
	{ 0x822F, false },
	{ 0x881B, false },
	{ 0x881A, false }, // R16F RG16F RGB16F RGBA16F
	{ 0x822E, false },
	{ 0x8230, false },
	{ 0x8815, false },
	{ 0x8814, false }, // R32F RG32F RGB32F RGBA32F
	{ 0x8059, false },
	{ 0x8D62, false },
	{ 0x93A1, false },
	{ 0x8C3A, false }, // RGB10_A2 RGB565 BGRA8 R11G11B10F
	// unsized base formats (GLES 2 and GStreamer's upload paths still pass these)
	{ 0x1903, false },
	{ 0x8227, false },
	{ 0x1907, false },
	{ 0x1908, false }, // RED RG RGB RGBA
	{ 0x1909, false },
	{ 0x190A, false },
	{ 0x1906, false },
	{ 0x80E1, false }, // LUMINANCE(_ALPHA) ALPHA BGRA
	// integer formats
	{ 0x8232, true },
	{ 0x8234, true },
	{ 0x8236, true }, // R8UI R16UI R32UI
	{ 0x8238, true },
	{ 0x823A, true },
	{ 0x823C, true }, // RG8UI RG16UI RG32UI
	{ 0x8D7C, true },
	{ 0x8D76, true },
	{ 0x8D70, true },
	{ 0x906F, true }, // RGBA8UI RGBA16UI RGBA32UI RGB10_A2UI
};

const GlFormatInfo *findFormat(uint32_t value)
{
	auto it = std::find_if(std::begin(kInternalFormats), std::end(kInternalFormats),
			       [value](const GlFormatInfo &f) { return f.value == value; });
	return it == std::end(kInternalFormats) ? nullptr : &*it;
}

constexpr uint32_t kBufferTargets[] = {
	0x8892, 0x8893, 0x88EB, 0x88EC, 0x90D2, 0x8F36, 0x8F37, 0x8C2A, 0x8A11,
};

std::optional<Error> checkFlavour(const char *type, GlFlavour flavour)
{
	if (static_cast<uint32_t>(flavour) > static_cast<uint32_t>(GlFlavour::Cgl))
		return Error::format(ErrorCode::InvalidArgument, "flavour",
				     "%s: flavour %u is not one of EGL, GLX, WGL, CGL.", type,
				     static_cast<uint32_t>(flavour));
	return std::nullopt;
}

std::optional<Error> checkTargetAndFormat(const GlTextureDesc &d)
{
	bool external = d.target == kTextureExternalOes;
	if (!external && d.target != kTexture2D && d.target != kTextureRectangle &&
	    d.target != kTexture2DArray)
		return Error::format(
			ErrorCode::InvalidArgument, "target",
			"GlTexture: target 0x%04x is not GL_TEXTURE_2D, GL_TEXTURE_RECTANGLE, "
			"GL_TEXTURE_EXTERNAL_OES or GL_TEXTURE_2D_ARRAY.",
			d.target);
	if (external && d.internalFormat == 0)
		return std::nullopt; // the EGLImage behind it decides
	const GlFormatInfo *format = findFormat(d.internalFormat);
	if (!format)
		return Error::format(
			ErrorCode::InvalidArgument, "internalFormat",
			"GlTexture: internalFormat 0x%04x is not a colour format gpuhandle knows%s.",
			d.internalFormat,
			d.internalFormat ? "" : " (0 is only allowed for GL_TEXTURE_EXTERNAL_OES)");
	if (external && format->integer)
		return Error::format(
			ErrorCode::InvalidArgument, "internalFormat",
			"GlTexture: integer internalFormat 0x%04x cannot back GL_TEXTURE_EXTERNAL_OES, "
			"which samples as normalised colour.",
			d.internalFormat);
	return std::nullopt;
}

} // namespace

const char *glFlavourName(GlFlavour flavour) noexcept
{
	switch (flavour) {
	case GlFlavour::Egl: return "egl";
	case GlFlavour::Glx: return "glx";
	case GlFlavour::Wgl: return "wgl";
	case GlFlavour::Cgl: return "cgl";
	}
	return "unknown";
}

Result<GlTexture> GlTexture::create(Desc desc)
{
	constexpr const char *kType = "GlTexture";
	if (auto e = detail::requireHandle(kType, "name", uint64_t(desc.name)))
		return std::move(*e);
	if (auto e = checkTargetAndFormat(desc))
		return std::move(*e);
	if (auto e = detail::requireNonZero(kType, "width", desc.width))
		return std::move(*e);
	if (auto e = detail::requireNonZero(kType, "height", desc.height))
		return std::move(*e);
	if (auto e = detail::requireHandle(kType, "context", desc.context))
		return std::move(*e);
	if (auto e = checkFlavour(kType, desc.flavour))
		return std::move(*e);
	return GlTexture(std::move(desc));
}

Result<GlBuffer> GlBuffer::create(Desc desc)
{
	constexpr const char *kType = "GlBuffer";
	if (auto e = detail::requireHandle(kType, "name", uint64_t(desc.name)))
		return std::move(*e);
	if (std::find(std::begin(kBufferTargets), std::end(kBufferTargets), desc.target) ==
	    std::end(kBufferTargets))
		return Error::format(ErrorCode::InvalidArgument, "target",
				     "GlBuffer: target 0x%04x is not a GL buffer binding point.",
				     desc.target);
	if (auto e = detail::requireNonZero(kType, "size", desc.size))
		return std::move(*e);
	if (auto e = detail::requireHandle(kType, "context", desc.context))
		return std::move(*e);
	if (auto e = checkFlavour(kType, desc.flavour))
		return std::move(*e);
	return GlBuffer(std::move(desc));
}

} // namespace gpuhandle
