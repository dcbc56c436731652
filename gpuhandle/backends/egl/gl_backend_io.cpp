// The OpenGL backend's memory work: imports (opaque fd, DMA-BUF), CPU mapping, device copies.
#include <gpuhandle/backends/gl_memory.h>

#include "egl/gl_backend_internal.h"

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

// The single-plane DRM fourcc an EGLImage of one plane is made with (R in the low bytes where the
// plane format says so), or 0.
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

} // namespace

Device::~Device()
{
	if (!worker)
		return;
	{
		std::lock_guard<std::mutex> lock(worker->mutex);
		worker->stop = true;
	}
	worker->wake.notify_all();
	// The last reference may go inside work on the GL thread itself: that thread cannot join
	// itself, so it finishes the queue and tears the context down on its own (it owns
	// `worker`).
	if (std::this_thread::get_id() == thread.get_id())
		thread.detach();
	else if (thread.joinable())
		thread.join();
}

Status Device::run(const std::function<void()> &work) const
{
	if (eglGetCurrentContext() == context) {
		work();
		return {};
	}
	struct Call {
		std::mutex mutex;
		std::condition_variable ran;
		bool done = false;
		void *current = nullptr; // the context current where the executor ran the work
	};
	auto call = std::make_shared<Call>();
	void *wanted = context;
	executor([call, &work, wanted] {
		void *current = eglGetCurrentContext();
		if (current == wanted)
			work();
		std::lock_guard<std::mutex> lock(call->mutex);
		call->current = current;
		call->done = true;
		call->ran.notify_all();
	});
	std::unique_lock<std::mutex> lock(call->mutex);
	call->ran.wait(lock, [&call] { return call->done; });
	if (call->current != wanted)
		return Error::format(
			ErrorCode::InvalidState, "executor",
			"opengl: the GL executor ran work on a thread where context %p is not current "
			"(current: %p).",
			wanted, call->current);
	return {};
}

Object::~Object()
{
	if (!inner.empty() || !device)
		return; // an import's own anchor deletes its names
	// The source is released after the names are gone (it rides along with the delete).
	device->executor([device = device, type = type, name = name, memory = memory,
			  image = eglImage, source = std::move(source)] {
		const Functions &gl = device->gl;
		if (type == Type::Buffer)
			gl.deleteBuffers(1, &name);
		else
			gl.deleteTextures(1, &name);
		if (memory)
			gl.deleteMemoryObjects(1, &memory);
		if (image) {
			PFNEGLDESTROYIMAGEKHRPROC destroy = nullptr;
			destroy = reinterpret_cast<PFNEGLDESTROYIMAGEKHRPROC>(
				eglGetProcAddress("eglDestroyImageKHR"));
			if (destroy)
				destroy(device->display, image);
		}
	});
}

const Object *objectOf(const Resource &resource, const Device &device)
{
	const KeepAliveRef *anchor = nullptr;
	if (const GlBuffer *buffer = resource.get<GlBuffer>())
		anchor = &buffer->desc().anchor;
	else if (const GlTexture *texture = resource.get<GlTexture>())
		anchor = &texture->desc().anchor;
	const auto *object = anchor ? dynamic_cast<const Object *>(anchor->get()) : nullptr;
	return object && object->device.get() == &device ? object : nullptr;
}

Result<Resource> resourceOf(std::shared_ptr<Object> object)
{
	const Device &device = *object->device;
	if (object->type == Object::Type::Buffer) {
		auto buffer = GlBuffer::create({ object->name, kCopyReadBuffer, object->size,
						 device.context, GlFlavour::Egl, object });
		if (!buffer.ok())
			return std::move(buffer).error();
		return Resource(std::move(*buffer));
	}
	auto texture = GlTexture::create(
		{ object->name, kTexture2D, object->transfer.internalFormat, object->width,
		  object->height, device.context, GlFlavour::Egl, object });
	if (!texture.ok())
		return std::move(texture).error();
	return Resource(std::move(*texture));
}

Result<Transfer> transferFor(const Features &features, PlaneFormat plane)
{
	constexpr GLenum rg = 0x8227, rgb = 0x1907, rgba = 0x1908, bgra = 0x80E1;
	constexpr GLenum ub = 0x1401, us = 0x1403, half = 0x140B, flt = 0x1406;
	Transfer t;
	t.bytesPerTexel = bytesPerTexel(plane);
	switch (plane) {
	case PlaneFormat::R8: t.format = kRed, t.type = ub; break;
	case PlaneFormat::RG8: t.format = rg, t.type = ub; break;
	case PlaneFormat::RGB8: t.format = rgb, t.type = ub; break;
	case PlaneFormat::RGBA8: t.format = rgba, t.type = ub; break;
	case PlaneFormat::BGRA8: t.format = bgra, t.type = ub; break;
	case PlaneFormat::R16: t.format = kRed, t.type = us; break;
	case PlaneFormat::RG16: t.format = rg, t.type = us; break;
	case PlaneFormat::RGB16: t.format = rgb, t.type = us; break;
	case PlaneFormat::RGBA16: t.format = rgba, t.type = us; break;
	case PlaneFormat::RGBA16F: t.format = rgba, t.type = half; break;
	case PlaneFormat::RGBA32F: t.format = rgba, t.type = flt; break;
	case PlaneFormat::R16Uint: t.format = 0x8D94, t.type = us; break; // GL_RED_INTEGER
	case PlaneFormat::R32Float: t.format = kRed, t.type = flt; break;
	case PlaneFormat::RGBA16Uint: t.format = 0x8D99, t.type = us; break; // GL_RGBA_INTEGER
	case PlaneFormat::RGB10A2:
		t.format = rgba, t.type = 0x8368;
		break; // 2_10_10_10_REV: R in 0..9
	case PlaneFormat::RGB565: t.format = rgb, t.type = 0x8363; break; // 5_6_5: R in 11..15
	}
	auto internal = toPlaneApiFormat(PlaneApi::GlInternal, plane);
	if (!internal.ok())
		return std::move(internal).error();
	t.internalFormat = internal->value;
	bool norm16 = plane == PlaneFormat::R16 || plane == PlaneFormat::RG16 ||
		      plane == PlaneFormat::RGB16 || plane == PlaneFormat::RGBA16;
	if (norm16 && !features.norm16)
		return Error::format(
			ErrorCode::NotSupported, "format",
			"opengl: the GLES context has no 16-bit normalised textures (%s needs "
			"GL_EXT_texture_norm16).",
			planeFormatName(plane));
	if (plane == PlaneFormat::BGRA8) {
		if (features.desktop)
			t.internalFormat = 0x8058; // desktop GL has no GL_BGRA8: RGBA8 stores it,
						   // uploaded as BGRA
		else if (!features.bgra8)
			return Error(
				ErrorCode::NotSupported, "format",
				"opengl: the GLES context has no BGRA8 textures (GL_EXT_texture_format_BGRA8888).");
	}
	return t;
}

GLenum takeError(const Functions &gl)
{
	GLenum first = gl.getError();
	for (int i = 0; i < 16 && gl.getError() != kNoError; ++i) {
	}
	return first;
}

BindingGuard::BindingGuard(const Functions &gl) : gl_(gl)
{
	gl.getIntegerv(kCopyReadBuffer, &copyRead_);
	gl.getIntegerv(kCopyWriteBuffer, &copyWrite_);
	gl.getIntegerv(kPixelPackBufferBinding, &pack_);
	gl.getIntegerv(kPixelUnpackBufferBinding, &unpack_);
	gl.getIntegerv(kTextureBinding2D, &texture_);
	gl.getIntegerv(kReadFramebufferBinding, &readFb_);
	gl.getIntegerv(kPackRowLength, &packRow_);
	gl.getIntegerv(kPackAlignment, &packAlign_);
	gl.getIntegerv(kUnpackRowLength, &unpackRow_);
	gl.getIntegerv(kUnpackAlignment, &unpackAlign_);
}

BindingGuard::~BindingGuard()
{
	gl_.bindBuffer(kCopyReadBuffer, static_cast<GLuint>(copyRead_));
	gl_.bindBuffer(kCopyWriteBuffer, static_cast<GLuint>(copyWrite_));
	gl_.bindBuffer(kPixelPackBuffer, static_cast<GLuint>(pack_));
	gl_.bindBuffer(kPixelUnpackBuffer, static_cast<GLuint>(unpack_));
	gl_.bindTexture(kTexture2D, static_cast<GLuint>(texture_));
	gl_.bindFramebuffer(kReadFramebuffer, static_cast<GLuint>(readFb_));
	gl_.pixelStorei(kPackRowLength, packRow_);
	gl_.pixelStorei(kPackAlignment, packAlign_);
	gl_.pixelStorei(kUnpackRowLength, unpackRow_);
	gl_.pixelStorei(kUnpackAlignment, unpackAlign_);
}

void downloadTexture(const Device &device, const Object &texture, void *at, uint32_t rowTexels)
{
	const Functions &gl = device.gl;
	const Transfer &t = texture.transfer;
	gl.pixelStorei(kPackAlignment, 1);
	gl.pixelStorei(kPackRowLength, static_cast<GLint>(rowTexels));
	if (gl.getTexImage) {
		gl.bindTexture(kTexture2D, texture.name);
		gl.getTexImage(kTexture2D, 0, t.format, t.type, at);
		return;
	}
	// GLES has no glGetTexImage: the texture is read through a framebuffer.
	GLuint framebuffer = 0;
	gl.genFramebuffers(1, &framebuffer);
	gl.bindFramebuffer(kReadFramebuffer, framebuffer);
	gl.framebufferTexture2D(kReadFramebuffer, kColorAttachment0, kTexture2D, texture.name, 0);
	gl.readPixels(0, 0, static_cast<GLsizei>(texture.width),
		      static_cast<GLsizei>(texture.height), t.format, t.type, at);
	gl.bindFramebuffer(kReadFramebuffer, 0);
	gl.deleteFramebuffers(1, &framebuffer);
}

void uploadTexture(const Device &device, const Object &texture, const void *at, uint32_t rowTexels)
{
	const Functions &gl = device.gl;
	const Transfer &t = texture.transfer;
	gl.pixelStorei(kUnpackAlignment, 1);
	gl.pixelStorei(kUnpackRowLength, static_cast<GLint>(rowTexels));
	gl.bindTexture(kTexture2D, texture.name);
	gl.texSubImage2D(kTexture2D, 0, 0, 0, static_cast<GLsizei>(texture.width),
			 static_cast<GLsizei>(texture.height), t.format, t.type, at);
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
			auto texture = importImageMemory(*memory, source);
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
		auto buffer = importVulkanMemoryIntoGl(*memory, device_->executor, device_->context,
						       size);
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
		auto object = std::make_shared<Object>();
		object->device = device_;
		object->type = Object::Type::Buffer;
		object->name = buffer->get<GlBuffer>()->desc().name;
		object->size = size;
		object->inner = std::move(*buffer);
		object->source = source;
		auto resource = resourceOf(object);
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

// A Vulkan image export as a texture with storage in the imported memory object.
Result<Resource> GlBackend::importImageMemory(const VulkanMemoryFd &memory,
					      const KeepAliveRef &source)
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
	auto object = std::make_shared<Object>();
	object->device = device_;
	object->type = Object::Type::Texture;
	object->width = e.width;
	object->height = e.height;
	object->transfer = *transfer;
	object->source = source;
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
	return resourceOf(object);
}

// One EGLImage per plane (a single-plane fourcc at the plane's offset and pitch), each bound to a
// texture with glEGLImageTargetTexture2DOES.
Result<Frame> GlBackend::importDmaBuf(const Frame &frame)
{
	auto info = pixelFormatInfo(frame.format());
	if (!info.ok())
		return Error::format(ErrorCode::NotSupported, "format", "opengl: %s",
				     info.error().message().c_str());
	auto createImage =
		reinterpret_cast<PFNEGLCREATEIMAGEKHRPROC>(eglGetProcAddress("eglCreateImageKHR"));
	if (!createImage)
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
		auto object = std::make_shared<Object>();
		object->device = device_;
		object->type = Object::Type::Texture;
		object->width = plane.rowTexels(frame.width());
		object->height = plane.rows(frame.height());
		object->transfer = *transfer;
		object->source = source;
		object->eglImage = createImage(device_->display, EGL_NO_CONTEXT,
					       EGL_LINUX_DMA_BUF_EXT, nullptr, attributes.data());
		if (object->eglImage == EGL_NO_IMAGE_KHR)
			return Error::format(
				ErrorCode::Backend, "frame",
				"opengl: eglCreateImageKHR of plane %u (%s, pitch %u, offset %" PRIu64
				") "
				"failed with EGL error 0x%x.",
				p, planeFormatName(plane.format), view.stride, view.offset,
				static_cast<unsigned>(eglGetError()));
		GLenum error = kNoError;
		Status ran = device_->run([&] {
			const Functions &gl = device_->gl;
			BindingGuard guard(gl);
			takeError(gl);
			gl.genTextures(1, &object->name);
			gl.bindTexture(kTexture2D, object->name);
			gl.eglImageTargetTexture2D(kTexture2D, object->eglImage);
			error = takeError(gl);
		});
		if (!ran.ok())
			return std::move(ran).error();
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

namespace {

// One resource of a mapped frame: a GL buffer mapped in place or through a staging buffer, or a
// texture read into (and written back from) CPU bytes.
struct MappedResource {
	KeepAliveRef anchor{}; // the Object, alive while mapped
	const Object *object = nullptr;
	uint8_t *base = nullptr;
	GLuint staging = 0;
	std::vector<uint8_t> bytes{};
};

struct MapState {
	DeviceRef device{};
	MapAccess access = MapAccess::Read;
	uint32_t count = 0;
	std::array<MappedResource, 4> resources{};
};

bool writes(MapAccess access)
{
	return access == MapAccess::Write || access == MapAccess::ReadWrite;
}

// On the GL thread: ends every access (unmap, copy back, upload) and reports the first GL error.
GLenum endAccess(MapState &state)
{
	const Functions &gl = state.device->gl;
	BindingGuard guard(gl);
	takeError(gl);
	bool write = writes(state.access);
	for (uint32_t r = 0; r < state.count; ++r) {
		MappedResource &m = state.resources[r];
		if (m.object->type == Object::Type::Texture) {
			if (write)
				uploadTexture(*state.device, *m.object, m.bytes.data(),
					      m.object->width);
			continue;
		}
		if (!m.base && !m.staging)
			continue;
		gl.bindBuffer(kCopyWriteBuffer, m.staging ? m.staging : m.object->name);
		if (m.base)
			gl.unmapBuffer(kCopyWriteBuffer);
		if (m.staging) {
			if (write) {
				gl.bindBuffer(kCopyReadBuffer, m.staging);
				gl.bindBuffer(kCopyWriteBuffer, m.object->name);
				gl.copyBufferSubData(kCopyReadBuffer, kCopyWriteBuffer, 0, 0,
						     static_cast<GLsizeiptr>(m.object->size));
			}
			gl.deleteBuffers(1, &m.staging);
		}
		m.base = nullptr;
		m.staging = 0;
	}
	// Finished, so that another API reading the memory (an import's exporter) sees the bytes.
	if (write)
		gl.finish();
	return takeError(gl);
}

// On the GL thread: maps (or stages) every resource. The caller ends the access on failure too.
GLenum beginAccess(MapState &state)
{
	const Functions &gl = state.device->gl;
	BindingGuard guard(gl);
	takeError(gl);
	bool read = state.access != MapAccess::Write;
	GLbitfield bits = (read ? kMapReadBit : 0) | (writes(state.access) ? kMapWriteBit : 0);
	for (uint32_t r = 0; r < state.count; ++r) {
		MappedResource &m = state.resources[r];
		const Object &object = *m.object;
		if (object.type == Object::Type::Texture) {
			m.bytes.assign(uint64_t(object.width) * object.height *
					       object.transfer.bytesPerTexel,
				       0);
			if (read)
				downloadTexture(*state.device, object, m.bytes.data(),
						object.width);
			continue;
		}
		auto size = static_cast<GLsizeiptr>(object.size);
		if (object.mappable) {
			gl.bindBuffer(kCopyWriteBuffer, object.name);
			m.base = static_cast<uint8_t *>(
				gl.mapBufferRange(kCopyWriteBuffer, 0, size,
						  bits | kMapPersistentBit | kMapCoherentBit));
		} else {
			// Imported storage has no map bits: a staging buffer stands in for it.
			gl.genBuffers(1, &m.staging);
			gl.bindBuffer(kCopyWriteBuffer, m.staging);
			gl.bufferData(kCopyWriteBuffer, size, nullptr, kStreamRead);
			if (read) {
				gl.bindBuffer(kCopyReadBuffer, object.name);
				gl.copyBufferSubData(kCopyReadBuffer, kCopyWriteBuffer, 0, 0, size);
			}
			m.base = static_cast<uint8_t *>(
				gl.mapBufferRange(kCopyWriteBuffer, 0, size, bits));
		}
		if (!m.base)
			return std::max<GLenum>(takeError(gl), 1);
	}
	return takeError(gl);
}

} // namespace

Result<CpuMapping> GlBackend::map(const Frame &frame, MapAccess access, WaitDuration timeout)
{
	if (access != MapAccess::Read && access != MapAccess::Write &&
	    access != MapAccess::ReadWrite)
		return Error::format(ErrorCode::InvalidArgument, "access",
				     "opengl: map access %u is not read, write or both.",
				     static_cast<unsigned>(access));
	auto state = std::make_shared<MapState>();
	state->device = device_;
	state->access = access;
	state->count = frame.numResources();
	for (uint32_t r = 0; r < frame.numResources(); ++r) {
		state->resources[r].object = objectOf(frame.resource(r), *device_);
		if (!state->resources[r].object)
			return notThisBackendsFrame(kName, "map");
		const GlBuffer *buffer = frame.resource(r).get<GlBuffer>();
		state->resources[r].anchor =
			buffer ? buffer->desc().anchor
			       : frame.resource(r).get<GlTexture>()->desc().anchor;
	}
	// The producer's work must be done before the CPU touches the memory.
	Status acquired = frame.acquire().wait(timeout);
	if (!acquired.ok())
		return std::move(acquired).error();
	GLenum error = kNoError;
	Status ran = device_->run([&] {
		error = beginAccess(*state);
		if (error != kNoError)
			(void)endAccess(*state); // unmaps what was mapped; the first error is the
						 // one reported
	});
	if (!ran.ok())
		return std::move(ran).error();
	if (error != kNoError)
		return Error::format(ErrorCode::Backend, "frame",
				     "opengl: mapping a %ux%u %s frame failed with GL error 0x%x.",
				     frame.width(), frame.height(), pixelFormatName(frame.format()),
				     error);
	std::array<uint8_t *, 4> planes{};
	std::array<uint32_t, 4> strides{};
	for (uint32_t p = 0; p < frame.numPlanes(); ++p) {
		const PlaneView &view = frame.plane(p);
		MappedResource &m = state->resources[view.resource];
		if (m.object->type == Object::Type::Texture) {
			planes[p] = m.bytes.data();
			strides[p] = m.object->width * m.object->transfer.bytesPerTexel;
		} else {
			planes[p] = m.base + view.offset;
			strides[p] = view.stride;
		}
	}
	return CpuMapping::adopt(frame, access, frame.numPlanes(), planes, strides, [state]() -> Status {
		GLenum endError = kNoError;
		Status endRan = state->device->run([&] { endError = endAccess(*state); });
		if (!endRan.ok())
			return endRan;
		if (endError != kNoError)
			return Error::format(
				ErrorCode::Backend, "frame",
				"opengl: ending a CPU access to a GL frame failed with GL error 0x%x.",
				endError);
		return {};
	});
}

Status GlBackend::copyFrame(const Frame &dst, const Frame &src, WaitDuration timeout)
{
	if (!holds(dst) || !holds(src))
		return notThisBackendsFrame(kName, "copyFrame");
	if (dst.format() != src.format() || dst.width() != src.width() ||
	    dst.height() != src.height())
		return Error::format(
			ErrorCode::FormatMismatch, "frame",
			"opengl: copyFrame copies between frames of one format and size, not from a "
			"%ux%u %s frame into a %ux%u %s one.",
			src.width(), src.height(), pixelFormatName(src.format()), dst.width(),
			dst.height(), pixelFormatName(dst.format()));
	const PixelFormatInfo *info = *pixelFormatInfo(src.format());
	for (const Frame *frame : { &src, &dst })
		if (Status acquired = frame->acquire().wait(timeout); !acquired.ok())
			return acquired;
	std::optional<Error> refused;
	GLenum error = kNoError;
	Status ran = device_->run([&] {
		const Functions &gl = device_->gl;
		BindingGuard guard(gl);
		takeError(gl);
		for (uint32_t p = 0; p < info->numPlanes && !refused; ++p) {
			const PlaneView &sv = src.plane(p), &dv = dst.plane(p);
			const Object &so = *objectOf(src.resource(sv.resource), *device_);
			const Object &dob = *objectOf(dst.resource(dv.resource), *device_);
			uint32_t rows = info->planes[p].rows(src.height());
			uint64_t rowBytes = info->planes[p].rowBytes(src.width());
			bool srcTexture = so.type == Object::Type::Texture,
			     dstTexture = dob.type == Object::Type::Texture;
			if (srcTexture && dstTexture) {
				if (!gl.copyImageSubData) {
					refused = Error(
						ErrorCode::NotSupported, "frame",
						"opengl: the context has no glCopyImageSubData (GL 4.3, GLES 3.2), so it "
						"cannot copy between textures.");
					break;
				}
				gl.copyImageSubData(so.name, kTexture2D, 0, 0, 0, 0, dob.name,
						    kTexture2D, 0, 0, 0, 0,
						    static_cast<GLsizei>(so.width),
						    static_cast<GLsizei>(so.height), 1);
			} else if (!srcTexture && !dstTexture) {
				gl.bindBuffer(kCopyReadBuffer, so.name);
				gl.bindBuffer(kCopyWriteBuffer, dob.name);
				bool whole = sv.stride == dv.stride;
				for (uint32_t row = 0; row < (whole ? 1 : rows); ++row) {
					uint64_t bytes =
						whole ? uint64_t(sv.stride) * (rows - 1) + rowBytes
						      : rowBytes;
					gl.copyBufferSubData(
						kCopyReadBuffer, kCopyWriteBuffer,
						static_cast<GLintptr>(sv.offset +
								      uint64_t(sv.stride) * row),
						static_cast<GLintptr>(dv.offset +
								      uint64_t(dv.stride) * row),
						static_cast<GLsizeiptr>(bytes));
				}
			} else {
				// Between a texture and a buffer through the pack/unpack binding:
				// rows are counted in texels there.
				const PlaneView &bufferView = srcTexture ? dv : sv;
				const Object &texture = srcTexture ? so : dob;
				uint32_t texel = texture.transfer.bytesPerTexel;
				if (bufferView.stride % texel) {
					refused = Error::format(
						ErrorCode::NotSupported, "planes",
						"opengl: plane %u's buffer stride (%u bytes) is not a whole "
						"number of %u-byte texels, so GL cannot copy it to or from a "
						"texture.",
						p, bufferView.stride, texel);
					break;
				}
				auto *at = reinterpret_cast<uint8_t *>(
					static_cast<uintptr_t>(bufferView.offset));
				if (srcTexture) {
					gl.bindBuffer(kPixelPackBuffer, dob.name);
					downloadTexture(*device_, so, at, dv.stride / texel);
					gl.bindBuffer(kPixelPackBuffer, 0);
				} else {
					gl.bindBuffer(kPixelUnpackBuffer, so.name);
					uploadTexture(*device_, dob, at, sv.stride / texel);
					gl.bindBuffer(kPixelUnpackBuffer, 0);
				}
			}
		}
		gl.finish();
		error = takeError(gl);
	});
	if (!ran.ok())
		return ran;
	if (refused)
		return std::move(*refused);
	if (error != kNoError)
		return Error::format(ErrorCode::Backend, "frame",
				     "opengl: copying a %ux%u %s frame failed with GL error 0x%x.",
				     src.width(), src.height(), pixelFormatName(src.format()),
				     error);
	return {};
}

} // namespace gpuhandle::gl
