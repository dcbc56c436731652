// OpenGL resources: a texture and a buffer object, with the context that owns them.
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/keep_alive.h>
#include <gpuhandle/result.h>
#include <gpuhandle/validated.h>

#include <cstdint>

namespace GPUHANDLE_API gpuhandle {

// The window-system binding a GL context was made with.
enum class GlFlavour : uint32_t { Egl = 0, Glx = 1, Wgl = 2, Cgl = 3 };
// "egl", "glx", "wgl" or "cgl"; "unknown" for a value GlFlavour does not list.
GPUHANDLE_API const char *glFlavourName(GlFlavour flavour) noexcept;

// A borrowed GL texture name. Targets: GL_TEXTURE_2D, GL_TEXTURE_RECTANGLE,
// GL_TEXTURE_EXTERNAL_OES, GL_TEXTURE_2D_ARRAY. `internalFormat` is a sized internal format
// (GL_R8, GL_RG16, GL_RGBA16F, GL_RGB10_A2 ...); for GL_TEXTURE_EXTERNAL_OES it may be 0 (the
// EGLImage decides) and must not be an integer format, which external samplers cannot read.
struct GlTextureDesc {
	uint32_t name = 0;           // texture name, never 0
	uint32_t target = 0;         // GLenum
	uint32_t internalFormat = 0; // GLenum
	uint32_t width = 0;          // pixels; non-zero
	// Height in pixels; non-zero
	uint32_t height = 0;
	void *context = nullptr; // EGLContext / GLXContext / HGLRC / CGLContextObj
	// The window-system binding `context` was made with
	GlFlavour flavour = GlFlavour::Egl;
	KeepAliveRef anchor{}; // the producer's keep-alive for the texture and context; may be null
};
// A checked GlTextureDesc.
class GlTexture : public Validated<GlTextureDesc>
{
public:
	// Checks desc: NullHandle for a zero name or a null context, InvalidArgument for a target,
	// internalFormat or flavour other than those above, ZeroSize for a zero width or height.
	static Result<GlTexture> create(Desc desc);

private:
	using Validated::Validated;
};

// A borrowed GL buffer object of `size` bytes.
struct GlBufferDesc {
	uint32_t name = 0; // buffer name, never 0
	// GL_ARRAY_BUFFER, GL_ELEMENT_ARRAY_BUFFER, GL_PIXEL_PACK/UNPACK_BUFFER,
	// GL_SHADER_STORAGE_BUFFER, GL_COPY_READ/WRITE_BUFFER, GL_TEXTURE_BUFFER,
	// GL_UNIFORM_BUFFER.
	uint32_t target = 0;
	uint64_t size = 0;                  // bytes; non-zero
	void *context = nullptr;            // the GL context that owns it; non-null
	GlFlavour flavour = GlFlavour::Egl; // the window-system binding of `context`
	KeepAliveRef anchor{};              // the producer's keep-alive for the buffer; may be null
};
// A checked GlBufferDesc.
class GlBuffer : public Validated<GlBufferDesc>
{
public:
	// Checks desc: NullHandle for a zero name or a null context, InvalidArgument for a target
	// or flavour other than those above, ZeroSize for a zero size.
	static Result<GlBuffer> create(Desc desc);

private:
	using Validated::Validated;
};

} // namespace gpuhandle
