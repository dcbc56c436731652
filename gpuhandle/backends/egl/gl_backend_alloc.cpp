// The OpenGL backend's allocation (buffers, per-plane textures) and its export/import dispatch.
#include <gpuhandle/backends/gl_memory.h>

#include "egl/gl_backend_internal.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <future>
#include <set>
#include <system_error>

#include <EGL/egl.h>
#include <EGL/eglext.h>

namespace gpuhandle {

namespace {

constexpr const char *kName = "opengl";
// Buffer rows aligned to a cache line: what llvmpipe aligns its own rows to.
constexpr uint32_t kPreferredAlign = 64;

} // namespace

namespace gl {

bool GlBackend::supportsFormat(PixelFormat format, FrameStorage storage) const
{
	Result<const PixelFormatInfo *> info = pixelFormatInfo(format);
	if (!info.ok())
		return false;
	if (storage == FrameStorage::Buffer)
		return true;
	// LinearImage is not offered: see allocate().
	if (storage != FrameStorage::OptimalImage)
		return false;
	for (uint32_t i = 0; i < (*info)->numPlanes; ++i)
		if (!transferFor(device_->features, (*info)->planes[i].format).ok())
			return false;
	return true;
}

Result<Frame> GlBackend::allocate(const AllocateRequest &request)
{
	auto layout = layoutForRequest(request, kPreferredAlign, kName);
	if (!layout.ok())
		return std::move(layout).error();
	if (request.storage == FrameStorage::LinearImage)
		return Error::format(
			ErrorCode::NotSupported, "storage",
			"opengl: GL has no %s storage for a %ux%u %s frame: its textures are opaque, "
			"with no CPU-visible linear layout or row pitch; ask for a buffer or an "
			"optimal image.",
			frameStorageName(request.storage), request.width, request.height,
			pixelFormatName(request.format));
	// The frame's charge, held by its (first) GL object.
	Result<BudgetReservation> charged = charge(request);
	if (!charged.ok())
		return std::move(charged).error();
	if (request.storage != FrameStorage::Buffer)
		return allocateTextures(request, std::move(*charged));
	// GL memory is never exportable here (exportFrame says why), so request.exportable changes
	// nothing: refusing it would refuse every default request.
	auto object = std::make_shared<GlAllocation>();
	object->device = device_;
	object->type = GlAllocation::Type::Buffer;
	object->size = layout->size;
	object->charge = std::move(*charged);
	GLenum error = kNoError;
	Status ran = device_->run([&] {
		const Functions &gl = device_->gl;
		BindingGuard guard(gl);
		takeError(gl);
		gl.genBuffers(1, &object->name);
		gl.bindBuffer(kCopyWriteBuffer, object->name);
		auto size = static_cast<GLsizeiptr>(layout->size);
		if (gl.bufferStorage) {
			// Persistent and coherent: the CPU pointer stays valid while GL copies.
			gl.bufferStorage(kCopyWriteBuffer, size, nullptr,
					 kMapReadBit | kMapWriteBit | kMapPersistentBit |
						 kMapCoherentBit | kDynamicStorageBit);
			object->mappable = true;
		} else {
			gl.bufferData(kCopyWriteBuffer, size, nullptr, kDynamicCopy);
		}
		error = takeError(gl);
	});
	if (!ran.ok())
		return std::move(ran).error();
	if (error != kNoError)
		return Error::format(
			error == kOutOfMemory ? ErrorCode::OutOfMemory : ErrorCode::Backend, "size",
			"opengl: a %" PRIu64
			"-byte buffer for a %ux%u %s frame failed with GL error 0x%x.",
			layout->size, request.width, request.height,
			pixelFormatName(request.format), error);
	auto resource = resourceOf(object);
	if (!resource.ok())
		return std::move(resource).error();
	return frameOverBuffer(request, *layout, std::move(*resource));
}

Result<Frame> GlBackend::allocateTextures(const AllocateRequest &request, BudgetReservation charged)
{
	const PixelFormatInfo *info = *pixelFormatInfo(request.format);
	FrameDesc desc;
	desc.format = request.format;
	desc.width = request.width;
	desc.height = request.height;
	desc.colorimetry = request.colorimetry;
	desc.numResources = info->numPlanes;
	desc.numPlanes = info->numPlanes;
	for (uint32_t i = 0; i < info->numPlanes; ++i) {
		const PlaneInfo &plane = info->planes[i];
		auto transfer = transferFor(device_->features, plane.format);
		if (!transfer.ok())
			return std::move(transfer).error();
		auto object = std::make_shared<GlAllocation>();
		object->device = device_;
		object->type = GlAllocation::Type::Texture;
		object->width = plane.rowTexels(request.width);
		object->height = plane.rows(request.height);
		object->transfer = *transfer;
		if (i == 0)
			object->charge = std::move(charged);
		GLenum error = kNoError;
		Status ran = device_->run([&] {
			const Functions &gl = device_->gl;
			BindingGuard guard(gl);
			takeError(gl);
			gl.genTextures(1, &object->name);
			gl.bindTexture(kTexture2D, object->name);
			gl.texStorage2D(kTexture2D, 1, transfer->internalFormat,
					static_cast<GLsizei>(object->width),
					static_cast<GLsizei>(object->height));
			gl.texParameteri(kTexture2D, kTextureMinFilter, kNearest);
			gl.texParameteri(kTexture2D, kTextureMagFilter, kNearest);
			error = takeError(gl);
		});
		if (!ran.ok())
			return std::move(ran).error();
		if (error != kNoError)
			return Error::format(
				error == kOutOfMemory ? ErrorCode::OutOfMemory : ErrorCode::Backend,
				"format",
				"opengl: a %ux%u %s texture for plane %u of a %ux%u %s frame failed with GL "
				"error 0x%x.",
				object->width, object->height, planeFormatName(plane.format), i,
				request.width, request.height, pixelFormatName(request.format),
				error);
		auto resource = resourceOf(object);
		if (!resource.ok())
			return std::move(resource).error();
		desc.resources[i] = std::move(*resource);
		desc.planes[i] = PlaneView{ i, 0, 0, 0 }; // a texture has no CPU-visible stride
	}
	return Frame::create(std::move(desc));
}

Result<Frame> GlBackend::exportFrame(const Frame &frame, ResourceKind kind)
{
	if (!holds(frame))
		return notThisBackendsFrame(kName, "exportFrame");
	return Error::format(
		ErrorCode::NotSupported, "kind",
		"opengl: GL cannot export its memory as %s here: GL has no memory export, and the EGL "
		"display offers no EGL_MESA_image_dma_buf_export.",
		resourceKindName(kind));
}

Result<Frame> GlBackend::importFrame(const Frame &frame, ImportRoute route)
{
	switch (route) {
	case ImportRoute::Direct:
		if (holds(frame))
			return frame;
		return routeNotSupported(
			kName, route,
			"the frame's resources are not GL objects this backend made or imported.");
	case ImportRoute::OpaqueFd:
		if (!device_->features.memoryObjectFd)
			return routeNotSupported(
				kName, route,
				"the GL context does not offer GL_EXT_memory_object_fd.");
		return importOpaqueFd(frame);
	case ImportRoute::DmaBuf:
		if (!device_->features.dmaBufImport)
			return routeNotSupported(
				kName, route,
				"the EGL display does not offer EGL_EXT_image_dma_buf_import (or the "
				"context GL_OES_EGL_image).");
		return importDmaBuf(frame);
	default:
		return routeNotSupported(
			kName, route,
			"GL imports frames directly, through an opaque fd or a DMA-BUF; the planner "
			"copies otherwise.");
	}
}

} // namespace gl

} // namespace gpuhandle
