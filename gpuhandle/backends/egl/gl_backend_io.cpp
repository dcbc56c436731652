// The OpenGL backend's CPU mapping and device copies.
#include <gpuhandle/backends/gl_memory.h>

#include "egl/gl_backend_internal.h"
#include "thread_block_cache.h"

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

} // namespace

namespace {

// One resource of a mapped frame: a GL buffer mapped in place or through a staging buffer, or a
// texture read into (and written back from) CPU bytes.
struct MappedResource {
	KeepAliveRef anchor{}; // the GlAllocation, alive while mapped
	const GlAllocation *object = nullptr;
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
		if (m.object->type == GlAllocation::Type::Texture) {
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

// On the GL thread: undoes a begun access that will not be ended (begin failed, or the end could
// not run): unmaps and deletes staging buffers, with no copy-back or upload, so the frame keeps
// the bytes it had.
void abortAccess(MapState &state)
{
	const Functions &gl = state.device->gl;
	BindingGuard guard(gl);
	takeError(gl);
	for (uint32_t r = 0; r < state.count; ++r) {
		MappedResource &m = state.resources[r];
		m.bytes = {};
		if (m.base) {
			gl.bindBuffer(kCopyWriteBuffer, m.staging ? m.staging : m.object->name);
			gl.unmapBuffer(kCopyWriteBuffer);
		}
		if (m.staging)
			gl.deleteBuffers(1, &m.staging);
		m.base = nullptr;
		m.staging = 0;
	}
	takeError(gl); // the begin's error is the one reported
}

// beginAccess's answer for a buffer that is mapped already (not a GL error code).
constexpr GLenum kAlreadyMapped = 0x10000;

// On the GL thread: maps (or stages) every resource. The caller aborts the access on failure.
GLenum beginAccess(MapState &state)
{
	const Functions &gl = state.device->gl;
	BindingGuard guard(gl);
	takeError(gl);
	bool read = state.access != MapAccess::Write;
	GLbitfield bits = (read ? kMapReadBit : 0) | (writes(state.access) ? kMapWriteBit : 0);
	for (uint32_t r = 0; r < state.count; ++r) {
		MappedResource &m = state.resources[r];
		const GlAllocation &object = *m.object;
		if (object.type == GlAllocation::Type::Texture) {
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
			// A buffer has one mapping at a time: a second is refused here, not left to
			// a GL error (which debug output reports as the caller's mistake).
			GLint mapped = 0;
			gl.getBufferParameteriv(kCopyWriteBuffer, kBufferMapped, &mapped);
			if (mapped)
				return kAlreadyMapped;
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
	// Made and dropped per map (on the caller's thread): from this thread's block lists.
	auto state = std::allocate_shared<MapState>(detail::ThreadRecyclingAllocator<MapState>{});
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
	Status ran = device_->run(
		[&] {
			error = beginAccess(*state);
			if (error != kNoError)
				abortAccess(*state); // nothing the CPU saw goes back into the frame
		},
		timeout);
	if (!ran.ok())
		return std::move(ran).error();
	if (error == kAlreadyMapped)
		return Error::format(
			ErrorCode::Backend, "frame",
			"opengl: a buffer of the %ux%u %s frame is mapped already (a GL "
			"buffer has one mapping at a time); unmap it first.",
			frame.width(), frame.height(), pixelFormatName(frame.format()));
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
		if (m.object->type == GlAllocation::Type::Texture) {
			planes[p] = m.bytes.data();
			strides[p] = m.object->width * m.object->transfer.bytesPerTexel;
		} else {
			planes[p] = m.base + view.offset;
			strides[p] = view.stride;
		}
	}
	// The end runs once (CpuMapping's contract): held in a block of this thread's lists.
	return CpuMapping::adopt(
		frame, access, frame.numPlanes(), planes, strides,
		detail::onceFromBlocks<Status>([state]() -> Status {
			GLenum endError = kNoError;
			Status endRan = state->device->run([&] { endError = endAccess(*state); });
			if (!endRan.ok()) {
				if (endRan.error().code() != ErrorCode::Timeout)
					return endRan;
				// The end never ran and never will: the mapping and staging go back
				// whenever the executor gets to it, without the CPU's bytes.
				state->device->executor([state] { abortAccess(*state); });
				return Error::format(
					ErrorCode::Timeout, "executor",
					"opengl: ending a CPU access to a GL frame timed out, so anything "
					"written through it is not in the frame: %s",
					endRan.error().message().c_str());
			}
			if (endError != kNoError)
				return Error::format(
					ErrorCode::Backend, "frame",
					"opengl: ending a CPU access to a GL frame failed with GL error 0x%x.",
					endError);
			return {};
		}));
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
	auto copy = [&] {
		const Functions &gl = device_->gl;
		BindingGuard guard(gl);
		takeError(gl);
		for (uint32_t p = 0; p < info->numPlanes && !refused; ++p) {
			const PlaneView &sv = src.plane(p), &dv = dst.plane(p);
			const GlAllocation &so = *objectOf(src.resource(sv.resource), *device_);
			const GlAllocation &dob = *objectOf(dst.resource(dv.resource), *device_);
			uint32_t rows = info->planes[p].rows(src.height());
			uint64_t rowBytes = info->planes[p].rowBytes(src.width());
			bool srcTexture = so.type == GlAllocation::Type::Texture,
			     dstTexture = dob.type == GlAllocation::Type::Texture;
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
				const GlAllocation &texture = srcTexture ? so : dob;
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
	};
	// The caller's timeout bounds the wait for the GL thread too.
	Status ran = device_->run(copy, timeout);
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
