/* C API: gpuhandle_resource, one validated native handle, with a desc struct per resource kind. */
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/gpuhandle_error.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Each resource kind has a desc struct mirroring the C++ Desc member for member (an error's field
 * names the member as spelled here: "objects[1].size"), a constructor
 * gpuhandle_resource_new_<kind>(desc, out, error) that validates it, and a getter
 * gpuhandle_resource_get_<kind>(resource, out) that fills the struct back (WRONG_KIND on another
 * kind). Getters leave `anchor` zero (the resource holds it); fds they return are the resource's
 * own: borrowed, open while the resource lives, never to be closed by the caller (unused DMA-BUF
 * objects read -1).
 * Optional values come as a `has<Name>` flag and the value; zero is never "unset".
 */

/* A producer's keep-alive for borrowed handles (GDestroyNotify style), copied into the object.
 * destroy: nullable (NULL: no anchor); runs exactly once, on any thread, when the last object
 * holding the anchor is freed, or before the constructor returns when it fails.
 * data: passed to both callbacks. consumed: nullable, needs destroy; runs on mark_consumed. */
typedef struct gpuhandle_anchor {
	void (*destroy)(void *data);  /* nullable: NULL means no anchor */
	void *data;                   /* the producer's; passed to both callbacks */
	void (*consumed)(void *data); /* nullable; needs destroy */
} gpuhandle_anchor;

/* A Windows adapter LUID (DXGI_ADAPTER_DESC::AdapterLuid). */
typedef struct gpuhandle_luid {
	uint32_t low; /* LowPart */
	int32_t high; /* HighPart */
} gpuhandle_luid;

/* The window-system binding of a GL context; numbers equal gpuhandle::GlFlavour's. */
typedef enum gpuhandle_gl_flavour {
	GPUHANDLE_GL_FLAVOUR_EGL = 0,
	GPUHANDLE_GL_FLAVOUR_GLX = 1,
	GPUHANDLE_GL_FLAVOUR_WGL = 2,
	GPUHANDLE_GL_FLAVOUR_CGL = 3,
	GPUHANDLE_GL_FLAVOUR_MAX_ENUM = 0x7fffffff /* not a value */
} gpuhandle_gl_flavour;

/* DRM_FORMAT_MOD_LINEAR: no tiling, one row after another. */
#define GPUHANDLE_DRM_FORMAT_MOD_LINEAR 0ULL
/* DRM_FORMAT_MOD_INVALID, the implicit modifier: none given, the layout is the driver's. */
#define GPUHANDLE_DRM_FORMAT_MOD_INVALID 0x00ffffffffffffffULL

/* One validated native handle. Opaque, refcounted, immutable; thread-safe to share. */
typedef struct gpuhandle_resource gpuhandle_resource;

/* A borrowed VkImage (non-zero) on a VkDevice (non-null); the anchor keeps both alive. Plane i of
 * a multi-planar image is its aspect VK_IMAGE_ASPECT_PLANE_i_BIT, the frame's subresource i. */
typedef struct gpuhandle_vulkan_image_desc {
	uint64_t image; /* VkImage; non-zero */
	void *device;   /* VkDevice; borrowed, non-null */
	/* true: deviceUuid is set */
	bool hasDeviceUuid;
	uint8_t deviceUuid[16]; /* VkPhysicalDeviceIDProperties::deviceUUID */
	uint32_t rowPitch;      /* bytes per row of a linear single-plane image; 0 when optimal */
	uint32_t planes;        /* 0 or 1; 2 or 3 for a multi-planar VkFormat (rowPitch 0) */
	/* keeps image and device alive; destroy NULL: none */
	gpuhandle_anchor anchor;
} gpuhandle_vulkan_image_desc;

/* A borrowed VkBuffer of `size` bytes. */
typedef struct gpuhandle_vulkan_buffer_desc {
	uint64_t buffer; /* VkBuffer; non-zero */
	void *device;    /* VkDevice; borrowed, non-null */
	uint64_t size;   /* bytes; non-zero */
	/* true: deviceUuid is set */
	bool hasDeviceUuid;
	uint8_t deviceUuid[16];  /* VkPhysicalDeviceIDProperties.deviceUUID */
	gpuhandle_anchor anchor; /* keeps buffer and device alive; destroy NULL: none */
} gpuhandle_vulkan_buffer_desc;

/* What an importer needs to rebuild an exported allocation (VkMemoryAllocateInfo,
 * VkImageCreateInfo). */
typedef struct gpuhandle_vulkan_export_desc {
	uint64_t allocationSize;  /* non-zero */
	uint32_t memoryTypeIndex; /* < 32 */
	/* allocated with VkMemoryDedicatedAllocateInfo */
	bool dedicated;
	uint32_t format; /* VkFormat; 0 for a buffer export (then no extent) */
	uint32_t width;  /* VkExtent3D; non-zero for an image, 0 for a buffer */
	uint32_t height; /* non-zero for an image, 0 for a buffer */
	uint32_t depth;  /* 0 is read as 1 */
	uint32_t tiling; /* 0 optimal, 1 linear, 1000158000 DRM modifier */
	uint32_t usage;  /* VkImageUsageFlags / VkBufferUsageFlags; non-zero */
	/* true: acquireTimelineValue is set */
	bool hasAcquireTimelineValue;
	uint64_t acquireTimelineValue; /* timeline value to wait for before reading */
} gpuhandle_vulkan_export_desc;

/* Vulkan device memory exported as an OPAQUE_FD, which imports only on the device and driver
 * that exported it: importers compare deviceUuid and driverUuid (DEVICE_MISMATCH). */
typedef struct gpuhandle_vulkan_memory_fd_desc {
	int fd; /* taken: closed by the resource, or on failure; borrowed instead when borrowFd */
	/* the allocation (and image) the exporter made, for the importer to rebuild */
	gpuhandle_vulkan_export_desc exportDesc;
	/* true: deviceUuid is set */
	bool hasDeviceUuid;
	uint8_t deviceUuid[16]; /* the exporter's VkPhysicalDeviceIDProperties.deviceUUID */
	/* true: driverUuid is set */
	bool hasDriverUuid;
	uint8_t driverUuid[16];  /* VkPhysicalDeviceIDProperties.driverUUID */
	bool borrowFd;           /* true: fd stays the caller's, kept open through `anchor` */
	gpuhandle_anchor anchor; /* only with borrowFd (INVALID_ARGUMENT otherwise) */
} gpuhandle_vulkan_memory_fd_desc;

/* A borrowed GL texture name with the context that owns it. */
typedef struct gpuhandle_gl_texture_desc {
	uint32_t name;           /* non-zero */
	uint32_t target;         /* GL_TEXTURE_2D, _RECTANGLE, _EXTERNAL_OES, _2D_ARRAY */
	uint32_t internalFormat; /* sized GL format; 0 only for GL_TEXTURE_EXTERNAL_OES */
	uint32_t width;          /* non-zero */
	uint32_t height;         /* non-zero */
	void *context; /* EGLContext / GLXContext / HGLRC / CGLContextObj; borrowed, non-null */
	/* the binding of context: one of gpuhandle_gl_flavour (INVALID_ARGUMENT otherwise) */
	gpuhandle_gl_flavour flavour;
	/* keeps the texture and its context alive; destroy NULL: none */
	gpuhandle_anchor anchor;
} gpuhandle_gl_texture_desc;

/* A borrowed GL buffer object of `size` bytes. */
typedef struct gpuhandle_gl_buffer_desc {
	uint32_t name;   /* non-zero */
	uint32_t target; /* a binding point: GL_ARRAY_BUFFER, GL_PIXEL_UNPACK_BUFFER, ... */
	uint64_t size;   /* non-zero */
	void *context;   /* borrowed, non-null */
	/* the binding of context: one of gpuhandle_gl_flavour (INVALID_ARGUMENT otherwise) */
	gpuhandle_gl_flavour flavour;
	/* keeps the buffer and its context alive; destroy NULL: none */
	gpuhandle_anchor anchor;
} gpuhandle_gl_buffer_desc;

/* A pitched CUdeviceptr (cuMemAllocPitch) with 1..4 planes at the producer's offsets. */
typedef struct gpuhandle_cuda_pitched_2d_desc {
	uint64_t pointer;         /* CUdeviceptr; non-zero */
	uint32_t pitch;           /* bytes per row; non-zero, <= size */
	uint32_t numPlanes;       /* 1..4 */
	uint64_t planeOffsets[4]; /* strictly increasing, each < size */
	uint64_t size;            /* bytes in all; non-zero */
	void *context;            /* CUcontext; borrowed, nullable (current context) */
	bool hasDeviceUuid;       /* true: deviceUuid is set */
	uint8_t deviceUuid[16];   /* CUuuid; a CUDA backend on another device refuses it */
	gpuhandle_anchor anchor;  /* keeps the allocation alive; destroy NULL: none */
} gpuhandle_cuda_pitched_2d_desc;

/* A flat CUdeviceptr allocation of `size` bytes. */
typedef struct gpuhandle_cuda_buffer_desc {
	uint64_t pointer; /* non-zero */
	uint64_t size;    /* non-zero */
	void *context;    /* CUcontext; borrowed, nullable */
	/* true: deviceUuid is set */
	bool hasDeviceUuid;
	uint8_t deviceUuid[16];  /* CUuuid; a CUDA backend on another device refuses it */
	gpuhandle_anchor anchor; /* keeps the allocation alive; destroy NULL: none */
} gpuhandle_cuda_buffer_desc;

/* A CUsurfObject over a CUarray of width x height elements. */
typedef struct gpuhandle_cuda_surface_desc {
	uint64_t surface; /* CUsurfObject; non-zero */
	void *array;      /* CUarray; borrowed, nullable (unknown) */
	uint32_t width;   /* non-zero */
	uint32_t height;  /* non-zero */
	void *context;    /* CUcontext; borrowed, nullable */
	/* true: deviceUuid is set */
	bool hasDeviceUuid;
	uint8_t deviceUuid[16];  /* CUuuid of the device */
	gpuhandle_anchor anchor; /* keeps the surface and array alive; destroy NULL: none */
} gpuhandle_cuda_surface_desc;

/* A borrowed cl_mem written by work on `queue`. */
typedef struct gpuhandle_opencl_mem_desc {
	void *mem;     /* cl_mem; borrowed, non-null */
	void *queue;   /* cl_command_queue; borrowed, non-null */
	uint64_t size; /* bytes of a buffer; 0 when unknown (images) */
	/* keeps mem and queue alive; destroy NULL: none */
	gpuhandle_anchor anchor;
} gpuhandle_opencl_mem_desc;

/* A DMA-BUF object: its fd and size. */
typedef struct gpuhandle_dmabuf_object {
	int fd;        /* taken (see gpuhandle_dmabuf_desc::borrowFds) */
	uint64_t size; /* bytes; non-zero, within the fd's own size */
} gpuhandle_dmabuf_object;

/* One DMA-BUF plane: object index, byte offset, bytes per row. */
typedef struct gpuhandle_dmabuf_plane {
	uint32_t objectIndex; /* < numObjects */
	uint64_t offset;      /* inside the object */
	uint32_t pitch;       /* non-zero */
} gpuhandle_dmabuf_plane;

/* What AVDRMFrameDescriptor / VADRMPRIMESurfaceDescriptor carry. Only objects[0..numObjects-1]
 * and planes[0..numPlanes-1] are read; the fds of objects[0..min(numObjects,4)-1] are taken:
 * closed by the resource, or before returning on failure (an fd listed twice is closed once). */
typedef struct gpuhandle_dmabuf_desc {
	uint32_t fourcc;   /* DRM_FORMAT_*; non-zero */
	uint64_t modifier; /* GPUHANDLE_DRM_FORMAT_MOD_LINEAR, _INVALID (implicit) or a vendor's */
	uint32_t width;    /* non-zero */
	uint32_t height;   /* non-zero */
	uint32_t numObjects; /* 1..4 */
	/* [0..numObjects-1]: each object's fd and size */
	gpuhandle_dmabuf_object objects[4];
	uint32_t numPlanes; /* 1..4 */
	/* [0..numPlanes-1]: plane i's object, offset and pitch */
	gpuhandle_dmabuf_plane planes[4];
	bool borrowFds;          /* true: the fds stay the caller's, kept open through `anchor` */
	gpuhandle_anchor anchor; /* only with borrowFds (INVALID_ARGUMENT otherwise) */
} gpuhandle_dmabuf_desc;

/* A shared-memory fd (memfd_create, shm_open) holding `size` bytes from `offset`. */
typedef struct gpuhandle_shm_fd_desc {
	int fd; /* taken: closed by the resource, or on failure; borrowed instead when borrowFd */
	uint64_t offset;         /* offset + size within the file */
	uint64_t size;           /* non-zero */
	uint32_t seals;          /* output only: F_GET_SEALS read at creation; ignored on input */
	bool borrowFd;           /* true: fd stays the caller's, kept open through `anchor` */
	gpuhandle_anchor anchor; /* only with borrowFd (INVALID_ARGUMENT otherwise) */
} gpuhandle_shm_fd_desc;

/* A borrowed VA surface on its VADisplay. */
typedef struct gpuhandle_va_surface_desc {
	uint32_t surface; /* VASurfaceID; 0 is legal, VA_INVALID_SURFACE (0xffffffff) is not */
	void *display;    /* VADisplay; borrowed, non-null */
	/* keeps the surface and display alive; destroy NULL: none */
	gpuhandle_anchor anchor;
} gpuhandle_va_surface_desc;

/* A borrowed ID3D11Texture2D (one slice of a texture array). */
typedef struct gpuhandle_d3d11_texture_desc {
	void *texture; /* ID3D11Texture2D*; borrowed, non-null */
	/* the slice of a texture array; 0 for a single texture */
	uint32_t arraySlice;
	uint32_t rowPitch; /* bytes per row when known (staging); 0 otherwise */
	/* true: adapterLuid is set */
	bool hasAdapterLuid;
	gpuhandle_luid adapterLuid; /* the adapter of the texture's device */
	gpuhandle_anchor anchor;    /* keeps the texture alive; destroy NULL: none */
} gpuhandle_d3d11_texture_desc;

/* A borrowed ID3D12Resource used as a texture. */
typedef struct gpuhandle_d3d12_resource_desc {
	void *resource; /* ID3D12Resource*; borrowed, non-null */
	/* the D3D12 subresource index (mip level, array slice, plane) */
	uint32_t subresource;
	bool hasAdapterLuid;        /* true: adapterLuid is set */
	gpuhandle_luid adapterLuid; /* the adapter of the resource's device */
	gpuhandle_anchor anchor;    /* keeps the resource alive; destroy NULL: none */
} gpuhandle_d3d12_resource_desc;

/* A borrowed buffer-dimension ID3D12Resource of `size` bytes. */
typedef struct gpuhandle_d3d12_buffer_desc {
	void *resource; /* borrowed, non-null */
	uint64_t size;  /* non-zero */
	/* true: adapterLuid is set */
	bool hasAdapterLuid;
	gpuhandle_luid adapterLuid; /* the adapter of the resource's device */
	gpuhandle_anchor anchor;    /* keeps the resource alive; destroy NULL: none */
} gpuhandle_d3d12_buffer_desc;

/* A borrowed id<MTLTexture>. */
typedef struct gpuhandle_metal_texture_desc {
	void *texture; /* borrowed, non-null */
	/* true: registryId is set */
	bool hasRegistryId;
	uint64_t registryId; /* MTLDevice.registryID */
	/* keeps the texture alive; destroy NULL: none */
	gpuhandle_anchor anchor;
} gpuhandle_metal_texture_desc;

/* A borrowed id<MTLBuffer> of `size` bytes. */
typedef struct gpuhandle_metal_buffer_desc {
	void *buffer;  /* borrowed, non-null */
	uint64_t size; /* non-zero */
	/* true: registryId is set */
	bool hasRegistryId;
	uint64_t registryId;     /* MTLDevice.registryID */
	gpuhandle_anchor anchor; /* keeps the buffer alive; destroy NULL: none */
} gpuhandle_metal_buffer_desc;

/* A borrowed WGPUTexture on its WGPUDevice. */
typedef struct gpuhandle_webgpu_texture_desc {
	void *texture;   /* WGPUTexture; borrowed, non-null */
	void *device;    /* WGPUDevice; borrowed, non-null */
	uint32_t format; /* WGPUTextureFormat; 0 when unknown */
	uint32_t width;  /* non-zero */
	uint32_t height; /* non-zero */
	/* keeps the texture and device alive; destroy NULL: none */
	gpuhandle_anchor anchor;
} gpuhandle_webgpu_texture_desc;

/* `size` borrowed bytes at `data`. */
typedef struct gpuhandle_cpu_bytes_desc {
	void *data;    /* borrowed, non-null; kept valid by `anchor` */
	uint64_t size; /* non-zero */
	/* keeps data valid; destroy NULL: none */
	gpuhandle_anchor anchor;
} gpuhandle_cpu_bytes_desc;

/* One borrowed CPU plane. */
typedef struct gpuhandle_cpu_plane {
	void *data;      /* borrowed, non-null */
	uint32_t stride; /* bytes per row; non-zero */
	uint32_t rows;   /* non-zero */
} gpuhandle_cpu_plane;

/* 1..4 borrowed CPU planes (AVFrame data[] / linesize[]). */
typedef struct gpuhandle_cpu_planes_desc {
	uint32_t numPlanes; /* 1..4 */
	/* [0..numPlanes-1] are read */
	gpuhandle_cpu_plane planes[4];
	gpuhandle_anchor anchor; /* keeps every plane's data valid; destroy NULL: none */
} gpuhandle_cpu_planes_desc;

/* A slot of a producer's CPU staging pool, named by number; the anchor is required. */
typedef struct gpuhandle_cpu_shared_slot_desc {
	uint64_t slot;           /* the producer's number for it; never dereferenced */
	uint64_t size;           /* non-zero */
	uint32_t rowPitch;       /* <= size */
	gpuhandle_anchor anchor; /* destroy must be non-null: it hands the slot back */
} gpuhandle_cpu_shared_slot_desc;

/* Constructors: desc is borrowed for the call and non-null; *out gets a new reference, or NULL on
 * failure; error is nullable. Every fd and the anchor in desc are consumed, even on failure. */
/* Validates desc into a borrowed VkImage; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_new_vulkan_image(
	const gpuhandle_vulkan_image_desc *desc, gpuhandle_resource **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a borrowed VkBuffer; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_new_vulkan_buffer(
	const gpuhandle_vulkan_buffer_desc *desc, gpuhandle_resource **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into Vulkan memory exported as an opaque fd (fd taken unless borrowFd); *out: new
 * reference or NULL. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_new_vulkan_memory_fd(
	const gpuhandle_vulkan_memory_fd_desc *desc, gpuhandle_resource **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a borrowed GL texture; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_resource_new_gl_texture(const gpuhandle_gl_texture_desc *desc, gpuhandle_resource **out,
				  gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a borrowed GL buffer; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_resource_new_gl_buffer(const gpuhandle_gl_buffer_desc *desc, gpuhandle_resource **out,
				 gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a pitched 2D CUDA allocation; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_new_cuda_pitched_2d(
	const gpuhandle_cuda_pitched_2d_desc *desc, gpuhandle_resource **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a flat CUDA allocation; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_resource_new_cuda_buffer(const gpuhandle_cuda_buffer_desc *desc, gpuhandle_resource **out,
				   gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a CUDA surface object; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_new_cuda_surface(
	const gpuhandle_cuda_surface_desc *desc, gpuhandle_resource **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a borrowed cl_mem; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_resource_new_opencl_mem(const gpuhandle_opencl_mem_desc *desc, gpuhandle_resource **out,
				  gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a DMA-BUF (fds taken unless borrowFds); *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_resource_new_dmabuf(const gpuhandle_dmabuf_desc *desc, gpuhandle_resource **out,
			      gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a shared-memory fd (fd taken unless borrowFd); *out: new reference or NULL.
 */
GPUHANDLE_API gpuhandle_status
gpuhandle_resource_new_shm_fd(const gpuhandle_shm_fd_desc *desc, gpuhandle_resource **out,
			      gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a borrowed VA surface; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_resource_new_va_surface(const gpuhandle_va_surface_desc *desc, gpuhandle_resource **out,
				  gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a borrowed D3D11 texture; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_new_d3d11_texture(
	const gpuhandle_d3d11_texture_desc *desc, gpuhandle_resource **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a borrowed D3D12 resource; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_new_d3d12_resource(
	const gpuhandle_d3d12_resource_desc *desc, gpuhandle_resource **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a borrowed D3D12 buffer; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_new_d3d12_buffer(
	const gpuhandle_d3d12_buffer_desc *desc, gpuhandle_resource **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a borrowed MTLTexture; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_new_metal_texture(
	const gpuhandle_metal_texture_desc *desc, gpuhandle_resource **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a borrowed MTLBuffer; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_new_metal_buffer(
	const gpuhandle_metal_buffer_desc *desc, gpuhandle_resource **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a borrowed WGPUTexture; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_new_webgpu_texture(
	const gpuhandle_webgpu_texture_desc *desc, gpuhandle_resource **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into borrowed CPU bytes; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_resource_new_cpu_bytes(const gpuhandle_cpu_bytes_desc *desc, gpuhandle_resource **out,
				 gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into borrowed CPU planes; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_resource_new_cpu_planes(const gpuhandle_cpu_planes_desc *desc, gpuhandle_resource **out,
				  gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a CPU staging-pool slot; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_new_cpu_shared_slot(
	const gpuhandle_cpu_shared_slot_desc *desc, gpuhandle_resource **out,
	gpuhandle_error **error) GPUHANDLE_NOEXCEPT;

/* Getters: resource and out are non-null; *out is overwritten, and zeroed on failure (WRONG_KIND
 * when the resource holds another kind). Pointers and fds in *out are borrowed from resource. */
/* Reads back a borrowed VkImage; out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_vulkan_image(
	const gpuhandle_resource *resource, gpuhandle_vulkan_image_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a borrowed VkBuffer; out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_vulkan_buffer(
	const gpuhandle_resource *resource, gpuhandle_vulkan_buffer_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back Vulkan memory exported as an opaque fd (fd taken unless borrowFd); out: filled,
 * borrowed values. */
GPUHANDLE_API gpuhandle_status
gpuhandle_resource_get_vulkan_memory_fd(const gpuhandle_resource *resource,
					gpuhandle_vulkan_memory_fd_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a borrowed GL texture; out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_gl_texture(
	const gpuhandle_resource *resource, gpuhandle_gl_texture_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a borrowed GL buffer; out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_gl_buffer(
	const gpuhandle_resource *resource, gpuhandle_gl_buffer_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a pitched 2D CUDA allocation; out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_cuda_pitched_2d(
	const gpuhandle_resource *resource, gpuhandle_cuda_pitched_2d_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a flat CUDA allocation; out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_cuda_buffer(
	const gpuhandle_resource *resource, gpuhandle_cuda_buffer_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a CUDA surface object; out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_cuda_surface(
	const gpuhandle_resource *resource, gpuhandle_cuda_surface_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a borrowed cl_mem; out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_opencl_mem(
	const gpuhandle_resource *resource, gpuhandle_opencl_mem_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a DMA-BUF (fds taken unless borrowFds); out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_dmabuf(
	const gpuhandle_resource *resource, gpuhandle_dmabuf_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a shared-memory fd (fd taken unless borrowFd); out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_shm_fd(
	const gpuhandle_resource *resource, gpuhandle_shm_fd_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a borrowed VA surface; out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_va_surface(
	const gpuhandle_resource *resource, gpuhandle_va_surface_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a borrowed D3D11 texture; out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_d3d11_texture(
	const gpuhandle_resource *resource, gpuhandle_d3d11_texture_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a borrowed D3D12 resource; out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_d3d12_resource(
	const gpuhandle_resource *resource, gpuhandle_d3d12_resource_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a borrowed D3D12 buffer; out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_d3d12_buffer(
	const gpuhandle_resource *resource, gpuhandle_d3d12_buffer_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a borrowed MTLTexture; out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_metal_texture(
	const gpuhandle_resource *resource, gpuhandle_metal_texture_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a borrowed MTLBuffer; out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_metal_buffer(
	const gpuhandle_resource *resource, gpuhandle_metal_buffer_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a borrowed WGPUTexture; out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_webgpu_texture(
	const gpuhandle_resource *resource, gpuhandle_webgpu_texture_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back borrowed CPU bytes; out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_cpu_bytes(
	const gpuhandle_resource *resource, gpuhandle_cpu_bytes_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back borrowed CPU planes; out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_cpu_planes(
	const gpuhandle_resource *resource, gpuhandle_cpu_planes_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a CPU staging-pool slot; out: filled, borrowed values. */
GPUHANDLE_API gpuhandle_status gpuhandle_resource_get_cpu_shared_slot(
	const gpuhandle_resource *resource, gpuhandle_cpu_shared_slot_desc *out) GPUHANDLE_NOEXCEPT;

/* Adds a reference. resource: nullable (then a no-op). Returns resource. */
GPUHANDLE_API gpuhandle_resource *
gpuhandle_resource_ref(gpuhandle_resource *resource) GPUHANDLE_NOEXCEPT;
/* Drops a reference; the last one closes owned fds and releases the anchor. Nullable (no-op). */
GPUHANDLE_API void gpuhandle_resource_unref(gpuhandle_resource *resource) GPUHANDLE_NOEXCEPT;
/* The handle type held. resource: nullable; NULL gives GPUHANDLE_RESOURCE_KIND_NONE. */
GPUHANDLE_API gpuhandle_resource_kind
gpuhandle_resource_get_kind(const gpuhandle_resource *resource) GPUHANDLE_NOEXCEPT;
/* The API the handle belongs to. resource: nullable; NULL gives GPUHANDLE_BACKEND_CPU. */
GPUHANDLE_API gpuhandle_backend_kind
gpuhandle_resource_get_backend(const gpuhandle_resource *resource) GPUHANDLE_NOEXCEPT;
/* Bytes addressable through part `subresource` (DMA-BUF object, CPU plane; 0 otherwise); 0 when
 * the handle carries no size (images, textures) or resource is NULL. */
GPUHANDLE_API uint64_t gpuhandle_resource_byte_size(const gpuhandle_resource *resource,
						    uint32_t subresource) GPUHANDLE_NOEXCEPT;
/* How many parts a plane view may name: DMA-BUF objects, CPU planes; 1 otherwise; 0 for NULL. */
GPUHANDLE_API uint32_t gpuhandle_resource_subresource_count(const gpuhandle_resource *resource)
	GPUHANDLE_NOEXCEPT;
/* Runs the anchors' `consumed` callbacks: the consumer's sync succeeded. Nullable (no-op). */
GPUHANDLE_API void
gpuhandle_resource_mark_consumed(const gpuhandle_resource *resource) GPUHANDLE_NOEXCEPT;

#ifdef __cplusplus
}
#endif
