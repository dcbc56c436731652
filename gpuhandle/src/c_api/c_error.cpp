// C API: the error object, the boundary helpers, and names of the shared enums.
#include <gpuhandle/backend_kind.h>
#include <gpuhandle/device_id.h>
#include <gpuhandle/execution_path.h>
#include <gpuhandle/gl_resources.h>
#include <gpuhandle/gpuhandle_error.h>

#include "c_internal.h"

using namespace gpuhandle;

// The C numbers are the C++ ones: checked here, so that a renumbering fails the build.
static_assert(GPUHANDLE_ERROR_INVALID_ARGUMENT == int(ErrorCode::InvalidArgument));
static_assert(GPUHANDLE_ERROR_NULL_HANDLE == int(ErrorCode::NullHandle));
static_assert(GPUHANDLE_ERROR_ZERO_SIZE == int(ErrorCode::ZeroSize));
static_assert(GPUHANDLE_ERROR_OUT_OF_RANGE == int(ErrorCode::OutOfRange));
static_assert(GPUHANDLE_ERROR_BAD_FD == int(ErrorCode::BadFd));
static_assert(GPUHANDLE_ERROR_WRONG_KIND == int(ErrorCode::WrongKind));
static_assert(GPUHANDLE_ERROR_NOT_SUPPORTED == int(ErrorCode::NotSupported));
static_assert(GPUHANDLE_ERROR_INVALID_STATE == int(ErrorCode::InvalidState));
static_assert(GPUHANDLE_ERROR_OUT_OF_MEMORY == int(ErrorCode::OutOfMemory));
static_assert(GPUHANDLE_ERROR_TIMEOUT == int(ErrorCode::Timeout));
static_assert(GPUHANDLE_ERROR_WOULD_BLOCK == int(ErrorCode::WouldBlock));
static_assert(GPUHANDLE_ERROR_CANCELLED == int(ErrorCode::Cancelled));
static_assert(GPUHANDLE_ERROR_DEVICE_LOST == int(ErrorCode::DeviceLost));
static_assert(GPUHANDLE_ERROR_DEVICE_MISMATCH == int(ErrorCode::DeviceMismatch));
static_assert(GPUHANDLE_ERROR_FORMAT_MISMATCH == int(ErrorCode::FormatMismatch));
static_assert(GPUHANDLE_ERROR_IO == int(ErrorCode::Io));
static_assert(GPUHANDLE_ERROR_BACKEND == int(ErrorCode::Backend));
static_assert(GPUHANDLE_ERROR_FATAL == int(ErrorCode::Fatal));

static_assert(GPUHANDLE_ERROR_KIND_CANCELLED == int(ErrorKind::Cancelled));
static_assert(GPUHANDLE_ERROR_KIND_RECOVERABLE == int(ErrorKind::Recoverable));
static_assert(GPUHANDLE_ERROR_KIND_CONFIGURATION == int(ErrorKind::Configuration));
static_assert(GPUHANDLE_ERROR_KIND_FATAL == int(ErrorKind::Fatal));

static_assert(GPUHANDLE_BACKEND_CPU == int(BackendKind::Cpu));
static_assert(GPUHANDLE_BACKEND_VULKAN == int(BackendKind::Vulkan));
static_assert(GPUHANDLE_BACKEND_OPENGL == int(BackendKind::OpenGL));
static_assert(GPUHANDLE_BACKEND_CUDA == int(BackendKind::Cuda));
static_assert(GPUHANDLE_BACKEND_OPENCL == int(BackendKind::OpenCl));
static_assert(GPUHANDLE_BACKEND_VAAPI == int(BackendKind::VaApi));
static_assert(GPUHANDLE_BACKEND_FD == int(BackendKind::Fd));
static_assert(GPUHANDLE_BACKEND_D3D11 == int(BackendKind::D3D11));
static_assert(GPUHANDLE_BACKEND_D3D12 == int(BackendKind::D3D12));
static_assert(GPUHANDLE_BACKEND_METAL == int(BackendKind::Metal));
static_assert(GPUHANDLE_BACKEND_WEBGPU == int(BackendKind::WebGpu));
static_assert(GPUHANDLE_BACKEND_WEBGPU + 1 == kBackendKindCount);

static_assert(GPUHANDLE_RESOURCE_KIND_NONE == int(ResourceKind::None));
static_assert(GPUHANDLE_RESOURCE_KIND_VULKAN_IMAGE == int(ResourceKind::VulkanImage));
static_assert(GPUHANDLE_RESOURCE_KIND_VULKAN_BUFFER == int(ResourceKind::VulkanBuffer));
static_assert(GPUHANDLE_RESOURCE_KIND_VULKAN_MEMORY_FD == int(ResourceKind::VulkanMemoryFd));
static_assert(GPUHANDLE_RESOURCE_KIND_GL_TEXTURE == int(ResourceKind::GlTexture));
static_assert(GPUHANDLE_RESOURCE_KIND_GL_BUFFER == int(ResourceKind::GlBuffer));
static_assert(GPUHANDLE_RESOURCE_KIND_CUDA_PITCHED_2D == int(ResourceKind::CudaPitched2D));
static_assert(GPUHANDLE_RESOURCE_KIND_CUDA_BUFFER == int(ResourceKind::CudaBuffer));
static_assert(GPUHANDLE_RESOURCE_KIND_CUDA_SURFACE == int(ResourceKind::CudaSurface));
static_assert(GPUHANDLE_RESOURCE_KIND_OPENCL_MEM == int(ResourceKind::OpenClMem));
static_assert(GPUHANDLE_RESOURCE_KIND_DMABUF == int(ResourceKind::DmaBuf));
static_assert(GPUHANDLE_RESOURCE_KIND_SHM_FD == int(ResourceKind::ShmFd));
static_assert(GPUHANDLE_RESOURCE_KIND_VA_SURFACE == int(ResourceKind::VaSurface));
static_assert(GPUHANDLE_RESOURCE_KIND_D3D11_TEXTURE == int(ResourceKind::D3D11Texture));
static_assert(GPUHANDLE_RESOURCE_KIND_D3D12_RESOURCE == int(ResourceKind::D3D12Resource));
static_assert(GPUHANDLE_RESOURCE_KIND_D3D12_BUFFER == int(ResourceKind::D3D12Buffer));
static_assert(GPUHANDLE_RESOURCE_KIND_METAL_TEXTURE == int(ResourceKind::MetalTexture));
static_assert(GPUHANDLE_RESOURCE_KIND_METAL_BUFFER == int(ResourceKind::MetalBuffer));
static_assert(GPUHANDLE_RESOURCE_KIND_WEBGPU_TEXTURE == int(ResourceKind::WebGpuTexture));
static_assert(GPUHANDLE_RESOURCE_KIND_CPU_BYTES == int(ResourceKind::CpuBytes));
static_assert(GPUHANDLE_RESOURCE_KIND_CPU_PLANES == int(ResourceKind::CpuPlanes));
static_assert(GPUHANDLE_RESOURCE_KIND_CPU_SHARED_SLOT == int(ResourceKind::CpuSharedSlot));
static_assert(GPUHANDLE_RESOURCE_KIND_CPU_SHARED_SLOT + 1 == kResourceKindCount);

static_assert(GPUHANDLE_EXECUTION_PATH_NOT_RUN == int(ExecutionPath::Kind::NotRun));
static_assert(GPUHANDLE_EXECUTION_PATH_ZERO_COPY == int(ExecutionPath::Kind::ZeroCopy));
static_assert(GPUHANDLE_EXECUTION_PATH_GPU_COPY == int(ExecutionPath::Kind::GpuCopy));
static_assert(GPUHANDLE_EXECUTION_PATH_CPU_COPY == int(ExecutionPath::Kind::CpuCopy));

static_assert(GPUHANDLE_GL_FLAVOUR_EGL == int(GlFlavour::Egl));
static_assert(GPUHANDLE_GL_FLAVOUR_GLX == int(GlFlavour::Glx));
static_assert(GPUHANDLE_GL_FLAVOUR_WGL == int(GlFlavour::Wgl));
static_assert(GPUHANDLE_GL_FLAVOUR_CGL == int(GlFlavour::Cgl));

static_assert(GPUHANDLE_DEVICE_MATCH_SAME == int(DeviceMatch::Same));
static_assert(GPUHANDLE_DEVICE_MATCH_DIFFERENT == int(DeviceMatch::Different));
static_assert(GPUHANDLE_DEVICE_MATCH_UNKNOWN == int(DeviceMatch::Unknown));

namespace gpuhandle::capi {

namespace {

// Built at load time, so that reporting a failed allocation allocates nothing.
gpuhandle_error
	outOfMemoryError(Error(ErrorCode::OutOfMemory, "",
			       "gpuhandle: memory ran out while the call was building its result."),
			 true);
gpuhandle_error fatalError(Error(ErrorCode::Fatal, "",
				 "gpuhandle: an unexpected internal failure stopped the call."),
			   true);

} // namespace

gpuhandle_status fail(gpuhandle_error **error, Error e) noexcept
{
	gpuhandle_status status = statusOf(e.code());
	if (!error)
		return status;
	*error = new (std::nothrow) gpuhandle_error(std::move(e));
	if (!*error)
		return failOutOfMemory(error);
	return status;
}

gpuhandle_status failNull(gpuhandle_error **error, const char *function, const char *argument)
{
	if (!error)
		return GPUHANDLE_ERROR_NULL_HANDLE;
	return fail(error, Error::format(ErrorCode::NullHandle, argument, "%s: %s is NULL.",
					 function, argument));
}

gpuhandle_status failOutOfMemory(gpuhandle_error **error) noexcept
{
	if (error)
		*error = &outOfMemoryError;
	return GPUHANDLE_ERROR_OUT_OF_MEMORY;
}

gpuhandle_status failFatal(gpuhandle_error **error) noexcept
{
	if (error)
		*error = &fatalError;
	return GPUHANDLE_ERROR_FATAL;
}

Result<KeepAliveRef> anchorOf(const gpuhandle_anchor &anchor, const char *type)
{
	if (!anchor.destroy) {
		if (anchor.consumed)
			return Error::format(
				ErrorCode::InvalidArgument, "anchor.destroy",
				"%s: anchor.consumed is set but anchor.destroy is NULL; an anchor "
				"needs its destroy callback.",
				type);
		return KeepAliveRef();
	}
	try {
		return makeKeepAlive(anchor.destroy, anchor.data, anchor.consumed);
	} catch (...) {
		anchor.destroy(anchor.data); // nothing holds it: release the producer's object now
		throw;
	}
}

} // namespace gpuhandle::capi

using namespace gpuhandle::capi;

extern "C" {

const char *gpuhandle_status_name(gpuhandle_status status) noexcept
{
	if (status == GPUHANDLE_OK)
		return "ok";
	return errorCodeName(static_cast<ErrorCode>(status));
}

const char *gpuhandle_error_kind_name(gpuhandle_error_kind kind) noexcept
{
	return errorKindName(static_cast<ErrorKind>(kind));
}

const char *gpuhandle_backend_kind_name(gpuhandle_backend_kind kind) noexcept
{
	return backendKindName(static_cast<BackendKind>(kind));
}

const char *gpuhandle_resource_kind_name(gpuhandle_resource_kind kind) noexcept
{
	return resourceKindName(static_cast<ResourceKind>(kind));
}

gpuhandle_backend_kind gpuhandle_resource_kind_backend(gpuhandle_resource_kind kind) noexcept
{
	return static_cast<gpuhandle_backend_kind>(backendOf(static_cast<ResourceKind>(kind)));
}

const char *gpuhandle_execution_path_kind_name(gpuhandle_execution_path_kind kind) noexcept
{
	return executionPathKindName(static_cast<ExecutionPath::Kind>(kind));
}

gpuhandle_error *gpuhandle_error_ref(gpuhandle_error *error) noexcept
{
	return error && !error->immortal ? ref(error) : error;
}

void gpuhandle_error_unref(gpuhandle_error *error) noexcept
{
	if (error && !error->immortal)
		unref(error);
}

gpuhandle_status gpuhandle_error_get_code(const gpuhandle_error *error) noexcept
{
	return error ? statusOf(error->value.code()) : GPUHANDLE_OK;
}

gpuhandle_error_kind gpuhandle_error_get_kind(const gpuhandle_error *error) noexcept
{
	return error ? static_cast<gpuhandle_error_kind>(error->value.kind())
		     : GPUHANDLE_ERROR_KIND_FATAL;
}

const char *gpuhandle_error_get_field(const gpuhandle_error *error) noexcept
{
	return error ? error->value.field() : "";
}

const char *gpuhandle_error_get_message(const gpuhandle_error *error) noexcept
{
	return error ? error->value.message().c_str() : "";
}

} // extern "C"
