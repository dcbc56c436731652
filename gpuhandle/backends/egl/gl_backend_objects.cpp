// The OpenGL backend's GL-thread plumbing: the device thread, owned objects, texture transfers.
#include <gpuhandle/backends/gl_memory.h>

#include "egl/gl_backend_internal.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstring>
#include <vector>

#include <EGL/egl.h>
#include <EGL/eglext.h>

namespace gpuhandle::gl {

GlDevice::~GlDevice()
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

namespace {

// One run() call, shared with the posted work: the work may run after run() gave up (a posting
// executor), so it holds its own copy of the caller's function and this state, and runs the
// function only while the caller still waits for it (the function uses the caller's locals).
struct Call {
	enum class Stage : uint8_t { Queued, Running, Done, Abandoned };
	std::mutex mutex;
	std::condition_variable changed;
	Stage stage = Stage::Queued;
	void *current = nullptr;  // the context current where the executor ran the work
	std::thread::id thread{}; // where it ran
	std::function<void()> work{};
};

} // namespace

bool GlDevice::onGlThread() const
{
	return std::this_thread::get_id() == glThread.load(std::memory_order_acquire) &&
	       eglGetCurrentContext() == context;
}

namespace {

Error notStarted(void *context, WaitDuration timeout)
{
	return Error::format(
		ErrorCode::Timeout, "executor",
		"opengl: the GL executor did not run the backend's work on the thread of context %p "
		"within %lld ms, so the call gave up without changing anything (a posting executor "
		"has to keep running its queue).",
		context,
		static_cast<long long>(
			std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count()));
}

Error wrongContext(void *context, void *current)
{
	return Error::format(ErrorCode::InvalidState, "executor",
			     "opengl: the GL executor ran work on a thread where context %p is not "
			     "current (current: %p).",
			     context, current);
}

} // namespace

Status GlDevice::run(const std::function<void()> &work, WaitDuration timeout) const
{
	if (onGlThread()) {
		work();
		return {};
	}
	// Counted from before the executor call: a blocking executor spends the budget too.
	const Deadline deadline = Deadline::after(timeout);
	if (worker) {
		// The own thread: the call waits on the caller's stack (no heap block per call).
		// No EGL call here: this is not the GL thread (see onGlThread).
		void *current = nullptr;
		switch (worker->call(work, context, deadline, current)) {
		case Worker::CallResult::Ran: return {};
		case Worker::CallResult::NotStarted: return notStarted(context, timeout);
		case Worker::CallResult::Ended:
			return Error(
				ErrorCode::InvalidState, "executor",
				"opengl: the backend's GL thread has ended; its context is gone.");
		case Worker::CallResult::WrongContext: return wrongContext(context, current);
		}
	}
	auto call = std::make_shared<Call>();
	call->work = work;
	void *wanted = context;
	executor([call, wanted] {
		void *current = eglGetCurrentContext();
		{
			std::lock_guard<std::mutex> lock(call->mutex);
			if (call->stage == Call::Stage::Abandoned)
				return; // the caller returned Timeout: its locals are gone
			call->stage = Call::Stage::Running;
			call->current = current;
			call->thread = std::this_thread::get_id();
		}
		if (current == wanted)
			call->work();
		std::lock_guard<std::mutex> lock(call->mutex);
		call->stage = Call::Stage::Done;
		call->changed.notify_all();
	});
	std::unique_lock<std::mutex> lock(call->mutex);
	auto done = [&call] { return call->stage == Call::Stage::Done; };
	// The copy of `work` goes here, on the caller's thread, whoever drops `call` last: what it
	// holds (a GlDevice) must not be released on the GL thread it would have to stop.
	struct DropWork {
		Call &call;
		~DropWork() { call.work = nullptr; }
	} dropWork{ *call };
	if (deadline.isNever()) {
		call->changed.wait(lock, done);
	} else if (!call->changed.wait_until(lock, deadline.when(), done)) {
		if (call->stage == Call::Stage::Queued) {
			call->stage = Call::Stage::Abandoned;
			call->work = nullptr;
			return notStarted(wanted, timeout);
		}
		// Started already: it works on the caller's state, so it is seen to its end (GL
		// work on the GL thread, which does not wait on the caller).
		call->changed.wait(lock, done);
	}
	if (call->current != wanted)
		return wrongContext(wanted, call->current);
	glThread.store(call->thread, std::memory_order_release);
	return {};
}

void GlDevice::release(std::function<void()> work) const
{
	if (onGlThread()) {
		work();
		return;
	}
	if (!worker) {
		executor(std::move(work));
		return;
	}
	// The backend's own thread: waited for, so that what the work releases (a source frame's
	// fds) is gone when the caller goes on, and the closure (holding the GlDevice) is dropped
	// here rather than on the thread the GlDevice's end has to join. Timed out, nothing ran: it
	// is queued again, to run whenever the thread gets to it.
	if (!run(work).ok())
		executor(std::move(work));
}

GlExecutor inlineWhereCurrent(DeviceRef device)
{
	return [device = std::move(device)](std::function<void()> work) {
		device->release(std::move(work));
	};
}

GlAllocation::~GlAllocation()
{
	if (names && source && device) {
		// A view of a cached import: the names stay, but the source (the exporter's frame,
		// whose allocation its producer reuses once released) waits for GL commands that
		// may still read it, as below.
		device->release(
			[device = device, source = std::move(source)] { device->gl.finish(); });
		return;
	}
	if (names || !inner.empty() || !device)
		return; // an import's own anchor deletes its names
	// The source is released after the names are gone (it rides along with the delete).
	auto destroy = [device = device, type = type, name = name, memory = memory,
			image = eglImage, source = std::move(source)] {
		const Functions &gl = device->gl;
		// Memory imported from another API (a memory object, an EGLImage) is freed by its
		// source right after this: GL commands already queued on the context that read it
		// (a host's draw from the texture: llvmpipe draws only at the next flush) must have
		// run first, or they read freed memory. GL names alone would be kept alive by GL.
		if (memory || image)
			gl.finish();
		if (type == Type::Buffer)
			gl.deleteBuffers(1, &name);
		else
			gl.deleteTextures(1, &name);
		if (memory)
			gl.deleteMemoryObjects(1, &memory);
		if (image && gl.eglDestroyImage)
			gl.eglDestroyImage(device->display, image);
	};
	// Inline when released on the GL thread itself (inside GL work, or by the host there): a
	// blocking host executor that posts to its own thread would wait for itself.
	device->release(std::move(destroy));
}

const GlAllocation *objectOf(const Resource &resource, const GlDevice &device)
{
	const KeepAliveRef *anchor = nullptr;
	if (const GlBuffer *buffer = resource.get<GlBuffer>())
		anchor = &buffer->desc().anchor;
	else if (const GlTexture *texture = resource.get<GlTexture>())
		anchor = &texture->desc().anchor;
	const auto *object = anchor ? dynamic_cast<const GlAllocation *>(anchor->get()) : nullptr;
	return object && object->device.get() == &device ? object : nullptr;
}

Result<Resource> resourceOf(std::shared_ptr<GlAllocation> object)
{
	const GlDevice &device = *object->device;
	if (object->type == GlAllocation::Type::Buffer) {
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
			// Desktop GL has no GL_BGRA8: RGBA8 stores it, uploaded as BGRA.
			t.internalFormat = 0x8058;
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

void downloadTexture(const GlDevice &device, const GlAllocation &texture, void *at,
		     uint32_t rowTexels)
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

void uploadTexture(const GlDevice &device, const GlAllocation &texture, const void *at,
		   uint32_t rowTexels)
{
	const Functions &gl = device.gl;
	const Transfer &t = texture.transfer;
	gl.pixelStorei(kUnpackAlignment, 1);
	gl.pixelStorei(kUnpackRowLength, static_cast<GLint>(rowTexels));
	gl.bindTexture(kTexture2D, texture.name);
	gl.texSubImage2D(kTexture2D, 0, 0, 0, static_cast<GLsizei>(texture.width),
			 static_cast<GLsizei>(texture.height), t.format, t.type, at);
}

} // namespace gpuhandle::gl
