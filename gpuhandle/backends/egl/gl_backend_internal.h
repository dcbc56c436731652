// The OpenGL backend's shared pieces: GL entry points, the device state (context, GL thread),
// anchors.
#pragma once

#include <gpuhandle/backends/gl_sync.h>
#include <gpuhandle/format_mappings.h>

#include "common/backend_internal.h"
#include "egl/gl_worker.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

namespace gpuhandle::gl {

// GL comes through eglGetProcAddress (the library links EGL only, not libGL or libGLESv2): the
// names it needs, with the values of the GL registry.
using GLenum = unsigned int;
using GLuint = unsigned int;
using GLint = int;
using GLsizei = int;
using GLbitfield = unsigned int;
using GLintptr = intptr_t;
using GLsizeiptr = intptr_t;
using GLuint64 = uint64_t;

constexpr GLenum kNoError = 0;
constexpr GLenum kOutOfMemory = 0x0505;
constexpr GLenum kVendor = 0x1F00;
constexpr GLenum kRenderer = 0x1F01;
constexpr GLenum kVersion = 0x1F02;
constexpr GLenum kExtensions = 0x1F03;
constexpr GLenum kNumExtensions = 0x821D;
constexpr GLenum kMajorVersion = 0x821B;
constexpr GLenum kMinorVersion = 0x821C;
constexpr GLenum kTexture2D = 0x0DE1;
constexpr GLenum kTextureBinding2D = 0x8069;
constexpr GLenum kTextureMinFilter = 0x2801;
constexpr GLenum kTextureMagFilter = 0x2800;
constexpr GLenum kNearest = 0x2600;
constexpr GLenum kTextureSwizzleR = 0x8E42;
constexpr GLenum kTextureSwizzleB = 0x8E44;
constexpr GLenum kRed = 0x1903;
constexpr GLenum kBlue = 0x1905;
constexpr GLenum kCopyReadBuffer = 0x8F36;
constexpr GLenum kCopyWriteBuffer = 0x8F37;
constexpr GLenum kPixelPackBuffer = 0x88EB;
constexpr GLenum kPixelUnpackBuffer = 0x88EC;
constexpr GLenum kPixelPackBufferBinding = 0x88ED;
constexpr GLenum kPixelUnpackBufferBinding = 0x88EF;
constexpr GLenum kPackRowLength = 0x0D02;
constexpr GLenum kPackAlignment = 0x0D05;
constexpr GLenum kUnpackRowLength = 0x0CF2;
constexpr GLenum kUnpackAlignment = 0x0CF5;
constexpr GLenum kReadFramebuffer = 0x8CA8;
constexpr GLenum kReadFramebufferBinding = 0x8CAA;
constexpr GLenum kColorAttachment0 = 0x8CE0;
constexpr GLenum kFramebufferComplete = 0x8CD5;
constexpr GLenum kStreamRead = 0x88E1;
constexpr GLenum kBufferMapped = 0x88BC;
constexpr GLenum kDynamicCopy = 0x88EA;
constexpr GLbitfield kMapReadBit = 0x0001;
constexpr GLbitfield kMapWriteBit = 0x0002;
constexpr GLbitfield kMapPersistentBit = 0x0040;
constexpr GLbitfield kMapCoherentBit = 0x0080;
constexpr GLbitfield kDynamicStorageBit = 0x0100;
// GL_EXT_memory_object(_fd)
constexpr GLenum kDedicatedMemoryObject = 0x9581;
constexpr GLenum kHandleTypeOpaqueFd = 0x9586;
constexpr GLenum kTextureTiling = 0x9580;
constexpr GLenum kOptimalTiling = 0x9584;
constexpr GLenum kLinearTiling = 0x9585;
constexpr GLenum kNumDeviceUuids = 0x9596;
constexpr GLenum kDeviceUuid = 0x9597;
constexpr GLenum kDriverUuid = 0x9598;

// Every GL entry point the backend calls. Extension ones stay null unless the context offers them.
struct Functions {
	const unsigned char *(*getString)(GLenum) = nullptr;
	const unsigned char *(*getStringi)(GLenum, GLuint) = nullptr;
	void (*getIntegerv)(GLenum, GLint *) = nullptr;
	GLenum (*getError)() = nullptr;
	void (*finish)() = nullptr;
	void (*genBuffers)(GLsizei, GLuint *) = nullptr;
	void (*deleteBuffers)(GLsizei, const GLuint *) = nullptr;
	void (*bindBuffer)(GLenum, GLuint) = nullptr;
	void (*bufferData)(GLenum, GLsizeiptr, const void *, GLenum) = nullptr;
	// GL 4.4, EXT.
	void (*bufferStorage)(GLenum, GLsizeiptr, const void *, GLbitfield) = nullptr;
	void *(*mapBufferRange)(GLenum, GLintptr, GLsizeiptr, GLbitfield) = nullptr;
	unsigned char (*unmapBuffer)(GLenum) = nullptr;
	void (*getBufferParameteriv)(GLenum, GLenum, GLint *) = nullptr;
	void (*copyBufferSubData)(GLenum, GLenum, GLintptr, GLintptr, GLsizeiptr) = nullptr;
	void (*genTextures)(GLsizei, GLuint *) = nullptr;
	void (*deleteTextures)(GLsizei, const GLuint *) = nullptr;
	void (*bindTexture)(GLenum, GLuint) = nullptr;
	void (*texStorage2D)(GLenum, GLsizei, GLenum, GLsizei, GLsizei) = nullptr;
	void (*texParameteri)(GLenum, GLenum, GLint) = nullptr;
	void (*texSubImage2D)(GLenum, GLint, GLint, GLint, GLsizei, GLsizei, GLenum, GLenum,
			      const void *) = nullptr;
	void (*pixelStorei)(GLenum, GLint) = nullptr;
	void (*getTexImage)(GLenum, GLint, GLenum, GLenum, void *) = nullptr; // desktop GL only
	void (*readPixels)(GLint, GLint, GLsizei, GLsizei, GLenum, GLenum, void *) = nullptr;
	void (*genFramebuffers)(GLsizei, GLuint *) = nullptr;
	void (*deleteFramebuffers)(GLsizei, const GLuint *) = nullptr;
	void (*bindFramebuffer)(GLenum, GLuint) = nullptr;
	void (*framebufferTexture2D)(GLenum, GLenum, GLenum, GLuint, GLint) = nullptr;
	GLenum (*checkFramebufferStatus)(GLenum) = nullptr;
	void (*copyImageSubData)(GLuint, GLenum, GLint, GLint, GLint, GLint, GLuint, GLenum, GLint,
				 GLint, GLint, GLint, GLsizei, GLsizei, GLsizei) = nullptr;
	// GL_EXT_memory_object(_fd)
	void (*getUnsignedBytev)(GLenum, unsigned char *) = nullptr;
	void (*getUnsignedBytei)(GLenum, GLuint, unsigned char *) = nullptr;
	void (*createMemoryObjects)(GLsizei, GLuint *) = nullptr;
	void (*deleteMemoryObjects)(GLsizei, const GLuint *) = nullptr;
	void (*memoryObjectParameteriv)(GLuint, GLenum, const GLint *) = nullptr;
	void (*importMemoryFd)(GLuint, GLuint64, GLenum, GLint) = nullptr;
	void (*texStorageMem2D)(GLenum, GLsizei, GLenum, GLsizei, GLsizei, GLuint,
				GLuint64) = nullptr;
	// GL_OES_EGL_image
	void (*eglImageTargetTexture2D)(GLenum, void *) = nullptr;
	// EGL_KHR_image_base (EGL entry points, resolved with the GL ones on the GL thread)
	void *(*eglCreateImage)(void *, void *, unsigned, void *, const int32_t *) = nullptr;
	unsigned (*eglDestroyImage)(void *, void *) = nullptr;
};

// What the context offers, found once on the GL thread when the backend opens.
struct Features {
	bool desktop = false; // desktop GL (else GLES)
	int major = 0;
	int minor = 0;
	bool memoryObjectFd = false;  // GL_EXT_memory_object + GL_EXT_memory_object_fd
	bool semaphoreFd = false;     // GL_EXT_semaphore_fd
	bool dmaBufImport = false;    // EGL_EXT_image_dma_buf_import + GL_OES_EGL_image
	bool dmaBufModifiers = false; // EGL_EXT_image_dma_buf_import_modifiers
	// With it: each plane format's modifiers that a DMA-BUF plane imports with into a 2D
	// texture (eglQueryDmaBufModifiersEXT of its planeFourcc, external-only ones left out).
	std::vector<std::pair<PlaneFormat, std::vector<uint64_t>>> planeModifiers{};
	bool norm16 = false; // 16-bit normalised textures (desktop, GL_EXT_texture_norm16)
	bool bgra8 = false;  // GLES GL_EXT_texture_format_BGRA8888
	std::optional<Uuid> deviceUuid{};
	std::optional<Uuid> driverUuid{};
	std::string renderer{};
	std::string version{};
	std::string vendor{};
};

// How one plane format goes in and out of a texture: internal format, pixel transfer format/type.
struct Transfer {
	GLenum internalFormat = 0;
	GLenum format = 0;
	GLenum type = 0;
	uint32_t bytesPerTexel = 0;
	// An imported BGRA8 image stored as RGBA8 samples through a swizzle.
	bool swapRedBlue = false;
};
// Test aid, on the GL thread: with GPUHANDLE_GL_DEBUG set (not "0") and KHR_debug in the
// context, turns on synchronous debug output and, unless the context has a callback already,
// prints GL errors and undefined behaviour on stderr as "gpuhandle-gl-debug: ...".
void enableDebugOutput(const Features &features, bool khrDebug);

// The transfer of `plane` in this context, or NotSupported naming what the context lacks.
Result<Transfer> transferFor(const Features &features, PlaneFormat plane);

// The single-plane DRM fourcc a DMA-BUF plane of `plane` imports as (one EGLImage each), or 0.
uint32_t planeFourcc(PlaneFormat plane);
// Features::planeModifiers of `display` (EGL_EXT_image_dma_buf_import_modifiers), on the GL
// thread.
std::vector<std::pair<PlaneFormat, std::vector<uint64_t>>> queryPlaneModifiers(void *display);

// Everything a frame of the backend needs: it outlives the BackendRef through the anchors.
class GlDevice final : public KeepAlive
{
public:
	~GlDevice() override;

	// Runs `work` where the context is current and waits for it: inline on the GL thread when
	// the context is current there, else through the executor. Timeout (nothing ran, nor will)
	// when the executor did not start the work within `timeout`; InvalidState when the executor
	// ran it elsewhere.
	Status run(const std::function<void()> &work,
		   WaitDuration timeout = kDefaultWaitTimeout) const;
	// Runs `work` (a release: deletes and what they keep alive) where the context is current,
	// with no result: inline on the GL thread, waited for on the backend's own
	// thread (bounded; queued there when that ran out), else through the host's executor.
	void release(std::function<void()> work) const;

	void *display = nullptr; // EGLDisplay
	void *context = nullptr; // EGLContext
	GlExecutor executor{};
	Functions gl{};
	Features features{};
	ContextRef host{}; // the host's context (keeps its objects alive); null for our own
	std::shared_ptr<Worker> worker{}; // set for the backend's own thread
	std::thread thread{};
	// The thread the executor runs work on with the context current: the backend's own thread,
	// or the host's GL thread once the executor has run work there (it lives as long as the
	// host's context, which this device holds, so the id is not reused while it is kept).
	mutable std::atomic<std::thread::id> glThread{};

	// Whether the calling thread is the GL thread with the context current. Asks EGL only on
	// the GL thread: any EGL call makes libglvnd keep state for the calling thread, and a
	// pipeline's streaming thread that ends while the process exits then has that state freed
	// twice (by libEGL's destructor and by the thread's own exit), corrupting the heap.
	bool onGlThread() const;
};
using DeviceRef = std::shared_ptr<GlDevice>;

// An executor for other GL code's releases: GlDevice::release (inline where the context is
// current, where a blocking host executor would wait for itself).
GlExecutor inlineWhereCurrent(DeviceRef device);

// The anchor of every resource the backend makes: the GL names (deleted once, on the GL thread)
// and what they came from. Frames of this backend are those whose resources carry one of these.
struct GlAllocation final : KeepAlive {
	enum class Type : uint8_t { Buffer, Texture };
	~GlAllocation() override;

	DeviceRef device{};
	Type type = Type::Buffer;
	GLuint name = 0;          // buffer or texture
	GLuint memory = 0;        // memory object of an imported image
	void *eglImage = nullptr; // EGLImage of a DMA-BUF import
	bool mappable = false; // a buffer made with map bits (else mapped through a staging copy)
	uint64_t size = 0;     // buffers: bytes
	uint32_t width = 0;    // textures: texels
	uint32_t height = 0;
	Transfer transfer{};   // textures
	Resource inner{};      // an import whose own anchor deletes the names (GL buffers)
	KeepAliveRef source{}; // what an import came from (a copy of the frame)
	// A view (gl_import_cache.h): the cached import that owns the names this one borrows.
	std::shared_ptr<const GlAllocation> names{};
	BudgetReservation charge{}; // an allocation's charge (a frame's first plane)
};

// The anchor of `resource` when it is a GL buffer or texture of `device`, else null.
const GlAllocation *objectOf(const Resource &resource, const GlDevice &device);

// Makes a resource over `object` (a GlBuffer or GlTexture naming it, anchored by it).
Result<Resource> resourceOf(std::shared_ptr<GlAllocation> object);

// Restores the bindings and pixel-store state the backend touches, so a host context is left as
// it was. Made on the GL thread.
class BindingGuard
{
public:
	explicit BindingGuard(const Functions &gl);
	~BindingGuard();
	BindingGuard(const BindingGuard &) = delete;
	BindingGuard &operator=(const BindingGuard &) = delete;

private:
	const Functions &gl_;
	GLint copyRead_ = 0, copyWrite_ = 0, pack_ = 0, unpack_ = 0, texture_ = 0, readFb_ = 0;
	GLint packRow_ = 0, packAlign_ = 4, unpackRow_ = 0, unpackAlign_ = 4;
};

// Texture pixels to or from memory (a CPU pointer, or an offset in the bound pack/unpack buffer)
// whose rows are `rowTexels` texels apart. On the GL thread; the caller reads glGetError.
void downloadTexture(const GlDevice &device, const GlAllocation &texture, void *at,
		     uint32_t rowTexels);
void uploadTexture(const GlDevice &device, const GlAllocation &texture, const void *at,
		   uint32_t rowTexels);

// The first GL error since the last call (and clears the rest).
GLenum takeError(const Functions &gl);

class GlBackend final : public Backend
{
public:
	GlBackend(DeviceInfo info, BackendCapabilities caps, ContextRef context, DeviceRef device)
		: Backend(std::move(info), std::move(caps), std::move(context)),
		  device_(std::move(device))
	{
	}

	bool supportsFormat(PixelFormat format, FrameStorage storage) const override;
	Result<Frame> allocate(const AllocateRequest &request) override;
	Result<Frame> exportFrame(const Frame &frame, ResourceKind kind) override;
	Result<Frame> importFrame(const Frame &frame, ImportRoute route) override;
	Result<CpuMapping> map(const Frame &frame, MapAccess access, WaitDuration timeout) override;
	Status copyFrame(const Frame &dst, const Frame &src, WaitDuration timeout) override;
	bool holds(const Frame &frame) const override;
	std::vector<uint64_t> dmaBufImportModifiers(PixelFormat format) const override;

private:
	Result<Frame> allocateBuffer(const AllocateRequest &request);
	Result<Frame> allocateTextures(const AllocateRequest &request, BudgetReservation charged);
	Result<Frame> importOpaqueFd(const Frame &frame);
	Result<std::shared_ptr<GlAllocation>> importImageMemory(const VulkanMemoryFd &memory);
	Result<Frame> importDmaBuf(const Frame &frame);

	DeviceRef device_;
};

} // namespace gpuhandle::gl
