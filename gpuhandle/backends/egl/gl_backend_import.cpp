// The OpenGL backend's imports: Vulkan opaque fds as buffers and textures, DMA-BUFs as EGLImages.
#include <gpuhandle/backends/gl_memory.h>

#include "egl/gl_backend_internal.h"
#include "egl/gl_import_cache.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <vector>

#include <EGL/egl.h>
#include <EGL/eglext.h>

namespace gpuhandle::gl {

namespace {

constexpr const char *kName = "opengl";

// Keeps an import's source frame (its memory, fds and acquire point) alive.
struct SourceAnchor final : KeepAlive {
	explicit SourceAnchor(Frame f) : frame(std::move(f)) {}
	Frame frame;
};

constexpr uint32_t fourcc(char a, char b, char c, char d)
{
	return uint32_t(uint8_t(a)) | uint32_t(uint8_t(b)) << 8 | uint32_t(uint8_t(c)) << 16 |
	       uint32_t(uint8_t(d)) << 24;
}

} // namespace

// R in the low bytes where the plane format says so.
uint32_t planeFourcc(PlaneFormat plane)
{
	switch (plane) {
	case PlaneFormat::R8: return fourcc('R', '8', ' ', ' ');
	case PlaneFormat::RG8: return fourcc('G', 'R', '8', '8');
	case PlaneFormat::RGBA8: return fourcc('A', 'B', '2', '4');
	case PlaneFormat::BGRA8: return fourcc('A', 'R', '2', '4');
	case PlaneFormat::R16: return fourcc('R', '1', '6', ' ');
	case PlaneFormat::RG16: return fourcc('G', 'R', '3', '2');
	case PlaneFormat::RGBA16: return fourcc('A', 'B', '4', '8');
	case PlaneFormat::RGBA16F: return fourcc('A', 'B', '4', 'H');
	case PlaneFormat::RGB10A2: return fourcc('A', 'B', '3', '0');
	case PlaneFormat::RGB565: return fourcc('R', 'G', '1', '6');
	default: return 0;
	}
}

std::vector<std::pair<PlaneFormat, std::vector<uint64_t>>> queryPlaneModifiers(void *display)
{
	auto query = reinterpret_cast<PFNEGLQUERYDMABUFMODIFIERSEXTPROC>(
		eglGetProcAddress("eglQueryDmaBufModifiersEXT"));
	std::vector<std::pair<PlaneFormat, std::vector<uint64_t>>> out;
	if (!query)
		return out;
	for (PlaneFormat plane :
	     { PlaneFormat::R8, PlaneFormat::RG8, PlaneFormat::RGBA8, PlaneFormat::BGRA8,
	       PlaneFormat::R16, PlaneFormat::RG16, PlaneFormat::RGBA16, PlaneFormat::RGBA16F,
	       PlaneFormat::RGB10A2, PlaneFormat::RGB565 }) {
		const auto code = static_cast<EGLint>(planeFourcc(plane));
		EGLint count = 0;
		if (!query(display, code, 0, nullptr, nullptr, &count) || count <= 0)
			continue;
		std::vector<EGLuint64KHR> modifiers(static_cast<size_t>(count));
		std::vector<EGLBoolean> externalOnly(static_cast<size_t>(count));
		if (!query(display, code, count, modifiers.data(), externalOnly.data(), &count))
			continue;
		std::vector<uint64_t> usable;
		for (EGLint i = 0; i < count; i++)
			if (!externalOnly[static_cast<size_t>(i)]) // a 2D texture, not EXTERNAL_OES
				usable.push_back(modifiers[static_cast<size_t>(i)]);
		out.emplace_back(plane, std::move(usable));
	}
	return out;
}

// Linear for every format whose planes have a single-plane fourcc and a transfer; tiled: the
// modifiers EGL takes for each of its planes' fourccs (one EGLImage per plane).
std::vector<uint64_t> GlBackend::dmaBufImportModifiers(PixelFormat format) const
{
	const Features &f = device_->features;
	Result<const PixelFormatInfo *> info = pixelFormatInfo(format);
	if (!f.dmaBufImport || !info)
		return {};
	std::vector<uint64_t> tiled;
	for (uint32_t p = 0; p < (*info)->numPlanes; ++p) {
		const PlaneFormat plane = (*info)->planes[p].format;
		if (!planeFourcc(plane) || !transferFor(f, plane).ok())
			return {};
		const std::vector<uint64_t> *offered = nullptr;
		for (const auto &entry : f.planeModifiers)
			if (entry.first == plane)
				offered = &entry.second;
		if (!offered) {
			tiled.clear();
			continue;
		}
		if (p == 0)
			tiled = *offered;
		else
			tiled.erase(std::remove_if(tiled.begin(), tiled.end(),
						   [&](uint64_t m) {
							   return std::find(offered->begin(),
									    offered->end(),
									    m) == offered->end();
						   }),
				    tiled.end());
	}
	std::vector<uint64_t> out{ kDrmModifierLinear };
	for (uint64_t m : tiled)
		if (m != kDrmModifierInvalid && std::find(out.begin(), out.end(), m) == out.end())
			out.push_back(m);
	return out;
}

bool GlBackend::holds(const Frame &frame) const
{
	for (uint32_t r = 0; r < frame.numResources(); ++r)
		if (!objectOf(frame.resource(r), *device_))
			return false;
	return frame.numResources() > 0;
}

Result<Frame> GlBackend::importOpaqueFd(const Frame &frame)
{
	const Features &f = device_->features;
	auto info = pixelFormatInfo(frame.format());
	if (!info.ok())
		return Error::format(ErrorCode::NotSupported, "format", "opengl: %s",
				     info.error().message().c_str());
	auto source = std::make_shared<SourceAnchor>(frame);
	std::array<Resource, 4> resources{};
	for (uint32_t r = 0; r < frame.numResources(); ++r) {
		const VulkanMemoryFd *memory = frame.resource(r).get<VulkanMemoryFd>();
		if (!memory)
			return Error::format(
				ErrorCode::WrongKind, "frame",
				"opengl: an opaque-fd import takes VulkanMemoryFd resources; resource %u is "
				"a %s.",
				r, resourceKindName(frame.resource(r).kind()));
		const VulkanMemoryFdDesc &desc = memory->desc();
		if (desc.deviceUuid && f.deviceUuid && *desc.deviceUuid != *f.deviceUuid)
			return Error::format(
				ErrorCode::DeviceMismatch, "memory.deviceUuid",
				"opengl: the Vulkan memory was exported by device %s, but the GL context "
				"runs on device %s; an opaque fd imports only on its own device.",
				formatUuid(*desc.deviceUuid).c_str(),
				formatUuid(*f.deviceUuid).c_str());
		if (desc.driverUuid && f.driverUuid && *desc.driverUuid != *f.driverUuid)
			return Error::format(
				ErrorCode::DeviceMismatch, "memory.driverUuid",
				"opengl: the Vulkan memory was exported by driver %s, but the GL context "
				"runs on driver %s; an opaque fd imports only into its own driver.",
				formatUuid(*desc.driverUuid).c_str(),
				formatUuid(*f.driverUuid).c_str());
		if (memory->isImage()) {
			std::shared_ptr<GlAllocation> object = findImport(*device_, *memory, 0);
			if (!object) {
				auto made = importImageMemory(*memory);
				if (!made.ok())
					return std::move(made).error();
				object = std::move(*made);
				rememberImport(*device_, *memory, 0, object);
			}
			auto texture = viewOf(object, source);
			if (!texture.ok())
				return std::move(texture).error();
			resources[r] = std::move(*texture);
			continue;
		}
		// The buffer covers what the planes need (the end of the last plane), not the whole
		// allocation: llvmpipe refuses storage that fills the memory object.
		uint64_t size = 0;
		for (uint32_t p = 0; p < frame.numPlanes(); ++p) {
			const PlaneView &plane = frame.plane(p);
			uint64_t rowBytes = (*info)->planes[p].rowBytes(frame.width());
			if (plane.resource != r)
				continue;
			if (plane.stride < rowBytes)
				return Error::format(
					ErrorCode::FormatMismatch, "planes",
					"opengl: plane %u has a stride of %u bytes, less than a %s row of %u "
					"pixels (%" PRIu64 " bytes).",
					p, plane.stride, pixelFormatName(frame.format()),
					frame.width(), rowBytes);
			uint32_t rows = (*info)->planes[p].rows(frame.height());
			size = std::max<uint64_t>(
				size,
				plane.offset + uint64_t(plane.stride) * (rows - 1) + rowBytes);
		}
		size = std::max<uint64_t>(size, 1);
		if (std::shared_ptr<GlAllocation> cached = findImport(*device_, *memory, size)) {
			auto resource = viewOf(cached, source);
			if (!resource.ok())
				return std::move(resource).error();
			resources[r] = std::move(*resource);
			continue;
		}
		// The import keeps what it is given alive; given the exporter's own SharedFd, the
		// objects cached with that fd's owner would keep the owner alive for ever.
		VulkanMemoryFdDesc own = memory->desc();
		own.fd = SharedFd(memory->desc().fd.dup());
		if (!own.fd.isValid())
			return Error::format(ErrorCode::Io, "memory.fd",
					     "opengl: duplicating fd %d for GL failed: %s.",
					     memory->desc().fd.get(), std::strerror(errno));
		auto ownMemory = VulkanMemoryFd::create(std::move(own));
		if (!ownMemory.ok())
			return std::move(ownMemory).error();
		auto buffer = importVulkanMemoryIntoGl(*ownMemory, inlineWhereCurrent(device_),
						       device_->context, size);
		if (!buffer.ok()) {
			if (buffer.error().code() == ErrorCode::Backend &&
			    size == desc.exportDesc.allocationSize)
				return Error::format(
					ErrorCode::NotSupported, "size",
					"opengl: the frame needs all %" PRIu64
					" bytes of the Vulkan "
					"allocation, and GL refused buffer storage that fills the memory object "
					"(llvmpipe does; the exporter has to leave headroom): %s",
					size, buffer.error().message().c_str());
			return std::move(buffer).error();
		}
		auto object = std::make_shared<GlAllocation>();
		object->device = device_;
		object->type = GlAllocation::Type::Buffer;
		object->name = buffer->get<GlBuffer>()->desc().name;
		object->size = size;
		object->inner = std::move(*buffer);
		rememberImport(*device_, *memory, size, object);
		auto resource = viewOf(object, source);
		if (!resource.ok())
			return std::move(resource).error();
		resources[r] = std::move(*resource);
	}
	// An image resource holds one plane: the texture's size has to be the plane's.
	for (uint32_t p = 0; p < frame.numPlanes(); ++p) {
		const GlTexture *texture = resources[frame.plane(p).resource].get<GlTexture>();
		const PlaneInfo &plane = (*info)->planes[p];
		if (texture && (texture->desc().width != plane.rowTexels(frame.width()) ||
				texture->desc().height != plane.rows(frame.height())))
			return Error::format(
				ErrorCode::FormatMismatch, "planes",
				"opengl: plane %u of a %ux%u %s frame is %ux%u texels, but its Vulkan image "
				"is %ux%u.",
				p, frame.width(), frame.height(), pixelFormatName(frame.format()),
				plane.rowTexels(frame.width()), plane.rows(frame.height()),
				texture->desc().width, texture->desc().height);
	}
	return frameLike(frame, std::span<const Resource>(resources.data(), frame.numResources()));
}

// A Vulkan image export as a texture with storage in the imported memory object (no source:
// the caller's view holds it, the cache keeps this).
Result<std::shared_ptr<GlAllocation>> GlBackend::importImageMemory(const VulkanMemoryFd &memory)
{
	const VulkanExportDesc &e = memory.desc().exportDesc;
	auto plane = fromPlaneApiFormat(PlaneApi::VkFormat, e.format);
	if (!plane.ok())
		return Error::format(
			ErrorCode::NotSupported, "memory",
			"opengl: the Vulkan image's VkFormat %u has no GL plane format.", e.format);
	auto transfer = transferFor(device_->features, *plane);
	if (!transfer.ok())
		return std::move(transfer).error();
	if (*plane == PlaneFormat::BGRA8) {
		// The texel bytes are the image's (B first): an RGBA8 texture holds them as they
		// are, read back unchanged, and samples through a red/blue swizzle.
		*transfer = Transfer{ 0x8058, 0x1908, 0x1401, 4, true };
	}
	if (e.tiling != 0 && e.tiling != 1)
		return Error::format(
			ErrorCode::NotSupported, "memory",
			"opengl: the Vulkan image has tiling %u (a DRM modifier); GL imports optimal "
			"and linear images only.",
			e.tiling);
	UniqueFd fd = memory.desc().fd.dup();
	if (!fd.isValid())
		return Error::format(ErrorCode::Io, "memory.fd",
				     "opengl: duplicating fd %d for GL failed: %s.",
				     memory.desc().fd.get(), std::strerror(errno));
	auto object = std::make_shared<GlAllocation>();
	object->device = device_;
	object->type = GlAllocation::Type::Texture;
	object->width = e.width;
	object->height = e.height;
	object->transfer = *transfer;
	GLenum importError = kNoError, storageError = kNoError;
	Status ran = device_->run([&] {
		const Functions &gl = device_->gl;
		BindingGuard guard(gl);
		takeError(gl);
		gl.createMemoryObjects(1, &object->memory);
		if (e.dedicated) {
			GLint yes = 1;
			gl.memoryObjectParameteriv(object->memory, kDedicatedMemoryObject, &yes);
		}
		gl.importMemoryFd(object->memory, e.allocationSize, kHandleTypeOpaqueFd, fd.get());
		importError = takeError(gl);
		if (importError != kNoError)
			return;
		(void)fd.release(); // GL owns the fd once the import succeeded
		gl.genTextures(1, &object->name);
		gl.bindTexture(kTexture2D, object->name);
		gl.texParameteri(kTexture2D, kTextureTiling,
				 e.tiling == 1 ? kLinearTiling : kOptimalTiling);
		gl.texStorageMem2D(kTexture2D, 1, transfer->internalFormat,
				   static_cast<GLsizei>(e.width), static_cast<GLsizei>(e.height),
				   object->memory, 0);
		gl.texParameteri(kTexture2D, kTextureMinFilter, kNearest);
		gl.texParameteri(kTexture2D, kTextureMagFilter, kNearest);
		if (transfer->swapRedBlue) {
			gl.texParameteri(kTexture2D, kTextureSwizzleR, kBlue);
			gl.texParameteri(kTexture2D, kTextureSwizzleB, kRed);
		}
		storageError = takeError(gl);
	});
	if (!ran.ok())
		return std::move(ran).error(); // the object deletes whatever was made
	if (importError != kNoError)
		return Error::format(ErrorCode::Backend, "memory",
				     "opengl: glImportMemoryFdEXT of fd %d (%" PRIu64
				     " bytes) failed with GL error 0x%x.",
				     memory.desc().fd.get(), e.allocationSize, importError);
	if (storageError != kNoError)
		return Error::format(
			ErrorCode::Backend, "memory",
			"opengl: glTexStorageMem2DEXT of a %ux%u %s %s texture in a %" PRIu64
			"-byte "
			"memory object failed with GL error 0x%x.",
			e.width, e.height, planeFormatName(*plane),
			e.tiling == 1 ? "linear" : "optimal", e.allocationSize, storageError);
	return object;
}

// One EGLImage per plane (a single-plane fourcc at the plane's offset and pitch), each bound to a
// texture with glEGLImageTargetTexture2DOES.
Result<Frame> GlBackend::importDmaBuf(const Frame &frame)
{
	auto info = pixelFormatInfo(frame.format());
	if (!info.ok())
		return Error::format(ErrorCode::NotSupported, "format", "opengl: %s",
				     info.error().message().c_str());
	if (!device_->gl.eglCreateImage)
		return routeNotSupported(kName, ImportRoute::DmaBuf,
					 "eglCreateImageKHR was not found.");
	auto source = std::make_shared<SourceAnchor>(frame);
	FrameDesc desc = frame.desc();
	desc.numResources = frame.numPlanes();
	desc.resources = {};
	for (uint32_t p = 0; p < frame.numPlanes(); ++p) {
		const PlaneView view = frame.plane(p);
		const DmaBuf *dmaBuf = frame.resource(view.resource).get<DmaBuf>();
		if (!dmaBuf)
			return Error::format(
				ErrorCode::WrongKind, "frame",
				"opengl: a DMA-BUF import takes DmaBuf resources; plane %u is in a %s.",
				p, resourceKindName(frame.resource(view.resource).kind()));
		const PlaneInfo &plane = (*info)->planes[p];
		uint32_t code = planeFourcc(plane.format);
		auto transfer = transferFor(device_->features, plane.format);
		if (!code || !transfer.ok())
			return Error::format(
				ErrorCode::NotSupported, "format",
				"opengl: plane %u of %s (%s) has no single-plane DRM format GL can import.",
				p, pixelFormatName(frame.format()), planeFormatName(plane.format));
		uint64_t modifier = dmaBuf->desc().modifier;
		if (modifier != kDrmModifierInvalid && modifier != kDrmModifierLinear &&
		    !device_->features.dmaBufModifiers)
			return Error::format(ErrorCode::NotSupported, "modifier",
					     "opengl: the DMA-BUF has modifier 0x%" PRIx64
					     ", and the EGL display offers "
					     "no EGL_EXT_image_dma_buf_import_modifiers.",
					     modifier);
		std::vector<EGLint> attributes = {
			EGL_WIDTH,
			static_cast<EGLint>(plane.rowTexels(frame.width())),
			EGL_HEIGHT,
			static_cast<EGLint>(plane.rows(frame.height())),
			EGL_LINUX_DRM_FOURCC_EXT,
			static_cast<EGLint>(code),
			EGL_DMA_BUF_PLANE0_FD_EXT,
			dmaBuf->desc().objects[view.subresource].fd.get(),
			EGL_DMA_BUF_PLANE0_OFFSET_EXT,
			static_cast<EGLint>(view.offset),
			EGL_DMA_BUF_PLANE0_PITCH_EXT,
			static_cast<EGLint>(view.stride)
		};
		if (modifier != kDrmModifierInvalid && device_->features.dmaBufModifiers)
			attributes.insert(attributes.end(),
					  { EGL_DMA_BUF_PLANE0_MODIFIER_LO_EXT,
					    static_cast<EGLint>(modifier & 0xffffffff),
					    EGL_DMA_BUF_PLANE0_MODIFIER_HI_EXT,
					    static_cast<EGLint>(modifier >> 32) });
		attributes.push_back(EGL_NONE);
		auto object = std::make_shared<GlAllocation>();
		object->device = device_;
		object->type = GlAllocation::Type::Texture;
		object->width = plane.rowTexels(frame.width());
		object->height = plane.rows(frame.height());
		object->transfer = *transfer;
		object->source = source;
		GLenum error = kNoError;
		EGLint imageError = EGL_SUCCESS;
		// On the GL thread, EGL included (GlDevice::onGlThread says why).
		Status ran = device_->run([&] {
			const Functions &gl = device_->gl;
			object->eglImage = gl.eglCreateImage(device_->display, EGL_NO_CONTEXT,
							     EGL_LINUX_DMA_BUF_EXT, nullptr,
							     attributes.data());
			if (object->eglImage == EGL_NO_IMAGE_KHR) {
				imageError = eglGetError();
				return;
			}
			BindingGuard guard(gl);
			takeError(gl);
			gl.genTextures(1, &object->name);
			gl.bindTexture(kTexture2D, object->name);
			gl.eglImageTargetTexture2D(kTexture2D, object->eglImage);
			error = takeError(gl);
		});
		if (!ran.ok())
			return std::move(ran).error();
		if (imageError != EGL_SUCCESS)
			return Error::format(
				ErrorCode::Backend, "frame",
				"opengl: eglCreateImageKHR of plane %u (%s, pitch %u, offset %" PRIu64
				") failed with EGL error 0x%x.",
				p, planeFormatName(plane.format), view.stride, view.offset,
				static_cast<unsigned>(imageError));
		if (error != kNoError)
			return Error::format(
				ErrorCode::Backend, "frame",
				"opengl: glEGLImageTargetTexture2DOES of plane %u failed with GL error 0x%x.",
				p, error);
		auto resource = resourceOf(object);
		if (!resource.ok())
			return std::move(resource).error();
		desc.resources[p] = std::move(*resource);
		desc.planes[p] = PlaneView{ p, 0, 0, 0 };
	}
	return Frame::create(std::move(desc));
}

} // namespace gpuhandle::gl
