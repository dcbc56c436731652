// Vulkan opaque-fd memory imported into GL as a buffer, on the host's GL thread.
#include <gpuhandle/backends/gl_memory.h>

#include "validation.h"

#include <cerrno>
#include <cinttypes>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <EGL/egl.h>

namespace gpuhandle {

namespace {

// GL comes through eglGetProcAddress (the backend links EGL only): the GL names it needs, with
// the values of the GL registry.
using GLenum = unsigned int;
using GLuint = unsigned int;
using GLint = int;
using GLsizei = int;
using GLsizeiptr = intptr_t;
using GLuint64 = uint64_t;
constexpr GLenum kGlNoError = 0;
constexpr GLenum kGlVersion = 0x1F02;
constexpr GLenum kGlExtensions = 0x1F03;
constexpr GLenum kGlNumExtensions = 0x821D;
constexpr GLenum kGlCopyWriteBuffer = 0x8F37; // its binding query has the same value
constexpr GLenum kGlDedicatedMemoryObject = 0x9581;
constexpr GLenum kGlHandleTypeOpaqueFd = 0x9586;
constexpr GLenum kGlNumDeviceUuids = 0x9596;
constexpr GLenum kGlDeviceUuid = 0x9597;
constexpr GLenum kGlDriverUuid = 0x9598;

struct GlMemoryEntryPoints {
	const unsigned char *(*getString)(GLenum name) = nullptr;
	const unsigned char *(*getStringi)(GLenum name, GLuint index) = nullptr;
	void (*getIntegerv)(GLenum name, GLint *data) = nullptr;
	GLenum (*getError)() = nullptr;
	void (*getUnsignedBytev)(GLenum name, unsigned char *data) = nullptr;
	void (*getUnsignedBytei)(GLenum target, GLuint index, unsigned char *data) = nullptr;
	void (*createMemoryObjects)(GLsizei n, GLuint *memoryObjects) = nullptr;
	void (*deleteMemoryObjects)(GLsizei n, const GLuint *memoryObjects) = nullptr;
	void (*memoryObjectParameteriv)(GLuint memory, GLenum name, const GLint *params) = nullptr;
	void (*importMemoryFd)(GLuint memory, GLuint64 size, GLenum handleType, GLint fd) = nullptr;
	void (*genBuffers)(GLsizei n, GLuint *buffers) = nullptr;
	void (*deleteBuffers)(GLsizei n, const GLuint *buffers) = nullptr;
	void (*bindBuffer)(GLenum target, GLuint buffer) = nullptr;
	void (*bufferStorageMem)(GLenum target, GLsizeiptr size, GLuint memory,
				 GLuint64 offset) = nullptr;
};

template<typename F>
bool resolve(F &function, const char *name)
{
	// eglGetProcAddress returns a generic function pointer; this is its documented use.
	function = reinterpret_cast<F>(eglGetProcAddress(name));
	return function != nullptr;
}

// Whether the current context lists `name` (GL 3 core contexts only answer glGetStringi).
bool contextHasExtension(const GlMemoryEntryPoints &gl, const char *name)
{
	std::string wanted(name);
	// GL 3.0 and GLES 3.0 list extensions one by one (glGetString(GL_EXTENSIONS) is an error in
	// a core context, which debug output reports); older contexts only as one string.
	const auto *version = reinterpret_cast<const char *>(gl.getString(kGlVersion));
	const char *digits = version ? std::strpbrk(version, "0123456789") : nullptr;
	if (!digits || std::atoi(digits) < 3) {
		const auto *list = reinterpret_cast<const char *>(gl.getString(kGlExtensions));
		std::string padded = " " + std::string(list ? list : "") + " ";
		return padded.find(" " + wanted + " ") != std::string::npos;
	}
	GLint count = 0;
	gl.getIntegerv(kGlNumExtensions, &count);
	for (GLint i = 0; i < count; ++i) {
		const auto *entry = reinterpret_cast<const char *>(
			gl.getStringi(kGlExtensions, static_cast<GLuint>(i)));
		if (entry && wanted == entry)
			return true;
	}
	return false;
}

// The core entry points, resolvable before any context is current. Extension entry points are
// resolved only after the context said it offers the extension.
bool resolveCore(GlMemoryEntryPoints &gl)
{
	return resolve(gl.getString, "glGetString") && resolve(gl.getStringi, "glGetStringi") &&
	       resolve(gl.getIntegerv, "glGetIntegerv") && resolve(gl.getError, "glGetError") &&
	       resolve(gl.genBuffers, "glGenBuffers") &&
	       resolve(gl.deleteBuffers, "glDeleteBuffers") &&
	       resolve(gl.bindBuffer, "glBindBuffer");
}

bool resolveExtension(GlMemoryEntryPoints &gl)
{
	return resolve(gl.getUnsignedBytev, "glGetUnsignedBytevEXT") &&
	       resolve(gl.getUnsignedBytei, "glGetUnsignedBytei_vEXT") &&
	       resolve(gl.createMemoryObjects, "glCreateMemoryObjectsEXT") &&
	       resolve(gl.deleteMemoryObjects, "glDeleteMemoryObjectsEXT") &&
	       resolve(gl.memoryObjectParameteriv, "glMemoryObjectParameterivEXT") &&
	       resolve(gl.importMemoryFd, "glImportMemoryFdEXT") &&
	       resolve(gl.bufferStorageMem, "glBufferStorageMemEXT");
}

std::string hex(const Uuid &uuid)
{
	static const char digits[] = "0123456789abcdef";
	std::string text;
	for (uint8_t byte : uuid) {
		text += digits[byte >> 4];
		text += digits[byte & 0xF];
	}
	return text;
}

// The export's UUIDs against the context's: an opaque fd means something only to the device
// and driver that exported it (importing it elsewhere is undefined), so a mismatch is refused.
std::optional<Error> checkUuids(const GlMemoryEntryPoints &gl, const VulkanMemoryFdDesc &desc,
				void *context)
{
	if (desc.deviceUuid) {
		GLint count = 0;
		gl.getIntegerv(kGlNumDeviceUuids, &count);
		bool found = false;
		std::string seen;
		for (GLint i = 0; i < count && !found; ++i) {
			Uuid uuid{};
			gl.getUnsignedBytei(kGlDeviceUuid, static_cast<GLuint>(i), uuid.data());
			found = uuid == *desc.deviceUuid;
			seen += (seen.empty() ? "" : ", ") + hex(uuid);
		}
		if (!found)
			return Error::format(
				ErrorCode::DeviceMismatch, "memory.deviceUuid",
				"The Vulkan memory was exported by device %s, but GL context %p runs on "
				"%s; an opaque fd imports only on the device that exported it.",
				hex(*desc.deviceUuid).c_str(), context,
				seen.empty() ? "no device" : seen.c_str());
	}
	if (desc.driverUuid) {
		Uuid uuid{};
		gl.getUnsignedBytev(kGlDriverUuid, uuid.data());
		if (uuid != *desc.driverUuid)
			return Error::format(
				ErrorCode::DeviceMismatch, "memory.driverUuid",
				"The Vulkan memory was exported by driver %s, but GL context %p runs on "
				"driver %s; an opaque fd imports only into the driver that exported it.",
				hex(*desc.driverUuid).c_str(), context, hex(uuid).c_str());
	}
	return std::nullopt;
}

// GL errors left by the host's earlier calls, cleared so that the import reads only its own.
void clearErrors(const GlMemoryEntryPoints &gl)
{
	for (int i = 0; i < 16 && gl.getError() != kGlNoError; ++i) {
	}
}

struct GlNames {
	GLuint buffer = 0;
	GLuint memory = 0;
};

// On the GL thread: the checks, then the memory object and the buffer with storage in it.
Result<GlNames> importOnGlThread(GlMemoryEntryPoints &gl, const VulkanMemoryFdDesc &desc,
				 void *context, uint64_t size)
{
	void *current = eglGetCurrentContext();
	if (current != context)
		return Error::format(
			ErrorCode::InvalidState, "executor",
			"The GL executor ran the memory import on a thread where GL context %p is "
			"not current (current: %p).",
			context, current);
	// Calling an entry point the context does not advertise may crash the driver: ask first.
	for (const char *name : { "GL_EXT_memory_object", "GL_EXT_memory_object_fd" })
		if (!contextHasExtension(gl, name))
			return Error::format(
				ErrorCode::NotSupported, "glContext",
				"GL context %p does not offer %s, so it cannot import Vulkan memory.",
				context, name);
	if (!resolveExtension(gl))
		return Error(
			ErrorCode::NotSupported, "glContext",
			"GL_EXT_memory_object_fd is listed but eglGetProcAddress did not find its entry points.");
	if (auto e = checkUuids(gl, desc, context))
		return std::move(*e);

	UniqueFd fd = desc.fd.dup();
	if (!fd.isValid())
		return Error::format(ErrorCode::Io, "memory.fd",
				     "Duplicating fd %d for GL failed: %s.", desc.fd.get(),
				     std::strerror(errno));
	clearErrors(gl);
	GlNames names;
	gl.createMemoryObjects(1, &names.memory);
	if (desc.exportDesc.dedicated) {
		GLint yes = 1;
		gl.memoryObjectParameteriv(names.memory, kGlDedicatedMemoryObject, &yes);
	}
	gl.importMemoryFd(names.memory, desc.exportDesc.allocationSize, kGlHandleTypeOpaqueFd,
			  fd.get());
	if (GLenum error = gl.getError(); error != kGlNoError) {
		gl.deleteMemoryObjects(1, &names.memory);
		return Error::format(ErrorCode::Backend, "memory",
				     "glImportMemoryFdEXT of fd %d (%" PRIu64
				     " bytes) failed with GL error 0x%x.",
				     desc.fd.get(), desc.exportDesc.allocationSize, error);
	}
	(void)fd.release(); // a successful import hands the fd to GL, which closes it

	// The storage is set through GL_COPY_WRITE_BUFFER, whose binding is put back afterwards, so
	// the host's bindings are left as they were; a buffer name is not tied to one target.
	GLint previous = 0;
	gl.getIntegerv(kGlCopyWriteBuffer, &previous);
	gl.genBuffers(1, &names.buffer);
	gl.bindBuffer(kGlCopyWriteBuffer, names.buffer);
	gl.bufferStorageMem(kGlCopyWriteBuffer, static_cast<GLsizeiptr>(size), names.memory, 0);
	GLenum error = gl.getError();
	gl.bindBuffer(kGlCopyWriteBuffer, static_cast<GLuint>(previous));
	if (error != kGlNoError) {
		gl.deleteBuffers(1, &names.buffer);
		gl.deleteMemoryObjects(1, &names.memory);
		return Error::format(
			ErrorCode::Backend, "size",
			"glBufferStorageMemEXT of %" PRIu64 " bytes in a %" PRIu64 "-byte memory "
			"object failed with GL error 0x%x (llvmpipe needs the size to leave "
			"headroom below the allocation).",
			size, desc.exportDesc.allocationSize, error);
	}
	return names;
}

// The GlBuffer's anchor: the last copy deletes the buffer and the memory object on the GL thread,
// then lets go of the export and the caller's owner (in that order: they ride along the work).
class GlBufferAnchor final : public KeepAlive
{
public:
	GlBufferAnchor(GlMemoryEntryPoints gl, GlNames names, GlExecutor executor,
		       VulkanMemoryFd source, KeepAliveRef owner)
		: gl_(gl), names_(names), executor_(std::move(executor)),
		  source_(std::move(source)), owner_(std::move(owner))
	{
	}

	~GlBufferAnchor() override
	{
		executor_([gl = gl_, names = names_, source = std::move(source_),
			   owner = std::move(owner_)]() {
			gl.deleteBuffers(1, &names.buffer);
			gl.deleteMemoryObjects(1, &names.memory);
		});
	}

	void markConsumed() noexcept override
	{
		if (owner_)
			owner_->markConsumed();
	}

private:
	GlMemoryEntryPoints gl_;
	GlNames names_;
	GlExecutor executor_;
	VulkanMemoryFd source_;
	KeepAliveRef owner_;
};

// One import posted to the GL thread and its outcome (the work may run after a posting
// executor returned, so it holds this by shared_ptr).
struct ImportCall {
	std::mutex mutex;
	std::condition_variable ran;
	std::optional<Result<GlNames>> result;
	GlMemoryEntryPoints gl; // with the extension entry points, once resolved there
};

} // namespace

Result<Resource> importVulkanMemoryIntoGl(const VulkanMemoryFd &memory, GlExecutor executor,
					  void *glContext, uint64_t size, uint32_t target,
					  KeepAliveRef owner)
{
	if (!executor)
		return detail::nullHandle("GlExecutor", "executor");
	if (!glContext)
		return detail::nullHandle("EGLContext", "glContext");
	const VulkanMemoryFdDesc &desc = memory.desc();
	if (memory.isImage())
		return Error::format(
			ErrorCode::WrongKind, "memory",
			"The Vulkan memory is an image export (VkFormat %u); only buffer exports "
			"import as a GL buffer.",
			desc.exportDesc.format);
	if (size == 0)
		return detail::zeroSize("importVulkanMemoryIntoGl", "size");
	if (size > desc.exportDesc.allocationSize)
		return Error::format(ErrorCode::OutOfRange, "size",
				     "The GL buffer size (%" PRIu64
				     ") is larger than the Vulkan allocation (%" PRIu64 " bytes).",
				     size, desc.exportDesc.allocationSize);
	// The target and the rest are checked before GL work starts, with a stand-in name.
	auto checked = GlBuffer::create({ 1, target, size, glContext, GlFlavour::Egl, {} });
	if (!checked.ok())
		return std::move(checked).error();
	GlMemoryEntryPoints gl;
	if (!resolveCore(gl))
		return Error(ErrorCode::NotSupported, "glContext",
			     "eglGetProcAddress did not find the core GL buffer entry points.");

	auto call = std::make_shared<ImportCall>();
	executor([call, gl, desc, glContext, size]() {
		GlMemoryEntryPoints resolved = gl;
		auto result = importOnGlThread(resolved, desc, glContext, size);
		std::lock_guard<std::mutex> lock(call->mutex);
		call->gl = resolved;
		call->result.emplace(std::move(result));
		call->ran.notify_all();
	});
	std::unique_lock<std::mutex> lock(call->mutex);
	call->ran.wait(lock, [&call] { return call->result.has_value(); });
	if (!call->result->ok())
		return std::move(*call->result).error();
	GlNames names = **call->result;
	gl = call->gl;
	lock.unlock();

	auto anchor = std::make_shared<GlBufferAnchor>(gl, names, std::move(executor), memory,
						       std::move(owner));
	auto buffer = GlBuffer::create(
		{ names.buffer, target, size, glContext, GlFlavour::Egl, std::move(anchor) });
	if (!buffer.ok())
		// Unreachable after the check above; the anchor cleans up.
		return std::move(buffer).error();
	return Resource(std::move(buffer).value());
}

} // namespace gpuhandle
