/* C API: gpuhandle_context, the host's own GPU context (device, queue), and device identity. */
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/gpuhandle_error.h>
#include <gpuhandle/gpuhandle_resource.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Each backend has a desc struct mirroring the C++ one (an error's field names the member as
 * spelled here), a constructor gpuhandle_context_new_<backend>(desc, out, error) and a getter
 * gpuhandle_context_get_<backend>(context, out), WRONG_KIND on another backend's context.
 * Native handles are borrowed plain values: gpuhandle never destroys them; `anchor`, when set,
 * is held as long as the context lives. Identities left unset (has<Name> false) are unknown;
 * set ones must be non-zero. Getters leave `anchor` zero; pointers they return are borrowed
 * from the context.
 */

/* A PCI address; bus <= 255, device <= 31, function <= 7. */
typedef struct gpuhandle_pci_bus_id {
	uint32_t domain;   /* PCI segment; 0 on most machines */
	uint32_t bus;      /* 0..255 */
	uint32_t device;   /* 0..31 */
	uint32_t function; /* 0..7 */
} gpuhandle_pci_bus_id;

/* A DRM device node as stat() reports it (st_rdev major and minor). */
typedef struct gpuhandle_drm_node {
	uint32_t major; /* major(st_rdev); 226 for DRM on Linux */
	uint32_t minor; /* minor(st_rdev); render nodes are 128 and up */
} gpuhandle_drm_node;

/* Everything known about the identity of one physical device; every field is optional. */
typedef struct gpuhandle_device_id {
	bool isCpu; /* the host itself; the other fields are then ignored */
	/* Whether uuid is set. */
	bool hasUuid;
	uint8_t uuid[16];                  /* Vulkan, GL, CL or CUDA device UUID (one namespace) */
	bool hasLuid;                      /* whether luid is set */
	gpuhandle_luid luid;               /* the Windows adapter LUID */
	bool hasPciBusId;                  /* whether pciBusId is set */
	gpuhandle_pci_bus_id pciBusId;     /* the PCI address; ignored when out of range */
	bool hasDrmRenderNode;             /* whether drmRenderNode is set */
	gpuhandle_drm_node drmRenderNode;  /* /dev/dri/renderD* */
	bool hasDrmPrimaryNode;            /* whether drmPrimaryNode is set */
	gpuhandle_drm_node drmPrimaryNode; /* /dev/dri/card* */
	bool hasMetalRegistryId;           /* whether metalRegistryId is set */
	uint64_t metalRegistryId;          /* MTLDevice.registryID */
} gpuhandle_device_id;

/* Whether two device ids name one physical device; numbers equal gpuhandle::DeviceMatch's. */
typedef enum gpuhandle_device_match {
	GPUHANDLE_DEVICE_MATCH_SAME = 0,      /* the strongest identity both carry is equal */
	GPUHANDLE_DEVICE_MATCH_DIFFERENT = 1, /* it differs, or only one side is the CPU */
	GPUHANDLE_DEVICE_MATCH_UNKNOWN = 2,   /* no identity kind in common */
	GPUHANDLE_DEVICE_MATCH_MAX_ENUM = 0x7fffffff /* not a value */
} gpuhandle_device_match;

/* The host's Vulkan instance, device and queue. */
typedef struct gpuhandle_vulkan_context_desc {
	void *instance;            /* VkInstance; borrowed, non-null */
	void *physicalDevice;      /* VkPhysicalDevice; borrowed, non-null */
	void *device;              /* VkDevice; borrowed, non-null */
	void *queue;               /* VkQueue the host submits on; borrowed, non-null */
	uint32_t queueFamilyIndex; /* a real family, not VK_QUEUE_FAMILY_IGNORED/EXTERNAL/FOREIGN */
	void *getInstanceProcAddr; /* PFN_vkGetInstanceProcAddr; nullable (the loader's) */
	/* borrowed for the call (copied), non-null when the count is non-zero; each non-empty */
	const char *const *enabledInstanceExtensions;
	uint32_t enabledInstanceExtensionCount;     /* 0: not told */
	const char *const *enabledDeviceExtensions; /* as enabledInstanceExtensions */
	uint32_t enabledDeviceExtensionCount;       /* 0: not told */
	/* Whether deviceUuid is set. */
	bool hasDeviceUuid;
	uint8_t deviceUuid[16];        /* VkPhysicalDeviceIDProperties.deviceUUID */
	bool hasDriverUuid;            /* whether driverUuid is set */
	uint8_t driverUuid[16];        /* VkPhysicalDeviceIDProperties.driverUUID */
	bool hasDeviceLuid;            /* whether deviceLuid is set */
	gpuhandle_luid deviceLuid;     /* VkPhysicalDeviceIDProperties.deviceLUID (Windows) */
	bool hasPciBusId;              /* whether pciBusId is set */
	gpuhandle_pci_bus_id pciBusId; /* VK_EXT_pci_bus_info; OUT_OF_RANGE when out of range */
	bool hasRenderNode;            /* whether renderNode is set */
	gpuhandle_drm_node renderNode; /* VK_EXT_physical_device_drm */
	gpuhandle_anchor anchor;       /* held while the context lives; zero: none */
} gpuhandle_vulkan_context_desc;

/* The host's OpenGL / GLES context. */
typedef struct gpuhandle_opengl_context_desc {
	void *display; /* EGLDisplay / Display* / HDC; borrowed, non-null unless flavour is CGL */
	void *context; /* EGLContext / GLXContext / HGLRC / CGLContextObj; borrowed, non-null */
	/* Whether shareGroup is set. */
	bool hasShareGroup;
	uint64_t shareGroup; /* opaque token: contexts with equal tokens share names */
	/* The window-system binding, which says what display and context are; one of the enum's
	 * values (INVALID_ARGUMENT otherwise). */
	gpuhandle_gl_flavour flavour;
	bool hasDeviceUuid;     /* whether deviceUuid is set */
	uint8_t deviceUuid[16]; /* GL_DEVICE_UUID_EXT */
	/* Whether renderNode is set. */
	bool hasRenderNode;
	gpuhandle_drm_node renderNode; /* EGL_EXT_device_drm_render_node */
	gpuhandle_anchor anchor;       /* held while the context lives; zero: none */
} gpuhandle_opengl_context_desc;

/* The host's CUDA context and stream. */
typedef struct gpuhandle_cuda_context_desc {
	void *context;   /* CUcontext; borrowed, non-null */
	void *stream;    /* CUstream; borrowed, nullable (the legacy default stream) */
	int32_t ordinal; /* CUdevice ordinal, >= 0 */
	/* Whether uuid is set. */
	bool hasUuid;
	uint8_t uuid[16];              /* cuDeviceGetUuid */
	bool hasPciBusId;              /* whether pciBusId is set */
	gpuhandle_pci_bus_id pciBusId; /* cuDeviceGetPCIBusId; OUT_OF_RANGE when out of range */
	gpuhandle_anchor anchor;       /* held while the context lives; zero: none */
} gpuhandle_cuda_context_desc;

/* GL sharing of an OpenCL context (CL_GL_CONTEXT_KHR and the display property). */
typedef struct gpuhandle_opencl_gl_sharing {
	void *glContext; /* borrowed, non-null */
	void *glDisplay; /* borrowed, non-null unless flavour is CGL */
	/* The GL context's window-system binding; one of the enum's values (INVALID_ARGUMENT
	 * otherwise). */
	gpuhandle_gl_flavour flavour;
} gpuhandle_opencl_gl_sharing;

/* The host's OpenCL context, queue and device. */
typedef struct gpuhandle_opencl_context_desc {
	void *context; /* cl_context; borrowed, non-null */
	void *queue;   /* cl_command_queue; borrowed, non-null */
	void *device;  /* cl_device_id; borrowed, non-null */
	/* Whether the CL context can use a GL context's objects, as glSharing says. */
	bool hasGlSharing;
	gpuhandle_opencl_gl_sharing glSharing; /* read only with hasGlSharing */
	bool hasDeviceUuid;                    /* whether deviceUuid is set */
	uint8_t deviceUuid[16];                /* CL_DEVICE_UUID_KHR (cl_khr_device_uuid) */
	bool hasPciBusId;                      /* whether pciBusId is set */
	gpuhandle_pci_bus_id pciBusId;         /* CL_DEVICE_PCI_BUS_INFO_KHR, cl_khr_pci_bus_info */
	gpuhandle_anchor anchor;               /* held while the context lives; zero: none */
} gpuhandle_opencl_context_desc;

/* The host's VA-API display. */
typedef struct gpuhandle_vaapi_context_desc {
	void *display; /* VADisplay; borrowed, non-null */
	/* Whether renderNode is set: a display opened on X11 or Wayland does not tell its node. */
	bool hasRenderNode;
	gpuhandle_drm_node renderNode; /* the render node a DRM display was opened on */
	gpuhandle_anchor anchor;       /* held while the context lives; zero: none */
} gpuhandle_vaapi_context_desc;

/* The host's D3D11 device and immediate context. */
typedef struct gpuhandle_d3d11_context_desc {
	void *device;        /* ID3D11Device*; borrowed, non-null */
	void *deviceContext; /* ID3D11DeviceContext*; borrowed, non-null */
	/* Whether luid is set. */
	bool hasLuid;
	gpuhandle_luid luid;     /* DXGI_ADAPTER_DESC.AdapterLuid of the device's adapter */
	gpuhandle_anchor anchor; /* held while the context lives; zero: none */
} gpuhandle_d3d11_context_desc;

/* The host's D3D12 device and command queue. */
typedef struct gpuhandle_d3d12_context_desc {
	void *device; /* ID3D12Device*; borrowed, non-null */
	void *queue;  /* ID3D12CommandQueue*; borrowed, non-null */
	/* Whether luid is set. */
	bool hasLuid;
	gpuhandle_luid luid;     /* DXGI_ADAPTER_DESC.AdapterLuid of the device's adapter */
	gpuhandle_anchor anchor; /* held while the context lives; zero: none */
} gpuhandle_d3d12_context_desc;

/* The host's Metal device and command queue. */
typedef struct gpuhandle_metal_context_desc {
	void *device; /* id<MTLDevice>; borrowed, non-null */
	void *queue;  /* id<MTLCommandQueue>; borrowed, non-null */
	/* Whether registryId is set. */
	bool hasRegistryId;
	uint64_t registryId;     /* MTLDevice.registryID */
	gpuhandle_anchor anchor; /* held while the context lives; zero: none */
} gpuhandle_metal_context_desc;

/* The host's WebGPU (webgpu.h) device and queue. */
typedef struct gpuhandle_webgpu_context_desc {
	void *device;   /* WGPUDevice; borrowed, non-null */
	void *queue;    /* WGPUQueue; borrowed, non-null */
	void *adapter;  /* WGPUAdapter; borrowed, nullable */
	void *instance; /* WGPUInstance; borrowed, nullable */
	/* Held while the context lives; zero: none. */
	gpuhandle_anchor anchor;
} gpuhandle_webgpu_context_desc;

/* One host context of one backend. Opaque, refcounted, immutable; thread-safe to share. */
typedef struct gpuhandle_context gpuhandle_context;

/* The host CPU as a context. *out: new reference or NULL; error: nullable. */
GPUHANDLE_API gpuhandle_status
gpuhandle_context_new_cpu(gpuhandle_context **out, gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Constructors: desc borrowed for the call, non-null; its anchor is consumed even on failure;
 * *out: new reference or NULL; error: nullable. */
/* Validates desc into a Vulkan context; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_context_new_vulkan(const gpuhandle_vulkan_context_desc *desc, gpuhandle_context **out,
			     gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into an OpenGL context; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_context_new_opengl(const gpuhandle_opengl_context_desc *desc, gpuhandle_context **out,
			     gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a CUDA context; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_context_new_cuda(const gpuhandle_cuda_context_desc *desc, gpuhandle_context **out,
			   gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into an OpenCL context; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_context_new_opencl(const gpuhandle_opencl_context_desc *desc, gpuhandle_context **out,
			     gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a VA-API context; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_context_new_vaapi(const gpuhandle_vaapi_context_desc *desc, gpuhandle_context **out,
			    gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a D3D11 context; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_context_new_d3d11(const gpuhandle_d3d11_context_desc *desc, gpuhandle_context **out,
			    gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a D3D12 context; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_context_new_d3d12(const gpuhandle_d3d12_context_desc *desc, gpuhandle_context **out,
			    gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a Metal context; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_context_new_metal(const gpuhandle_metal_context_desc *desc, gpuhandle_context **out,
			    gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* Validates desc into a WebGPU context; *out: new reference or NULL. */
GPUHANDLE_API gpuhandle_status
gpuhandle_context_new_webgpu(const gpuhandle_webgpu_context_desc *desc, gpuhandle_context **out,
			     gpuhandle_error **error) GPUHANDLE_NOEXCEPT;

/* Adds a reference. context: nullable (then a no-op). Returns context. */
GPUHANDLE_API gpuhandle_context *
gpuhandle_context_ref(gpuhandle_context *context) GPUHANDLE_NOEXCEPT;
/* Drops a reference; the last one releases the anchor. context: nullable (then a no-op). */
GPUHANDLE_API void gpuhandle_context_unref(gpuhandle_context *context) GPUHANDLE_NOEXCEPT;
/* The context's backend. context: nullable; NULL gives GPUHANDLE_BACKEND_CPU. */
GPUHANDLE_API gpuhandle_backend_kind gpuhandle_context_get_backend(const gpuhandle_context *context)
	GPUHANDLE_NOEXCEPT;
/* The device identity the context was made with (isCpu for the CPU context). context, out:
 * non-null; *out zeroed on failure. */
GPUHANDLE_API gpuhandle_status gpuhandle_context_get_device_id(
	const gpuhandle_context *context, gpuhandle_device_id *out) GPUHANDLE_NOEXCEPT;

/* Getters: context and out non-null; *out zeroed on failure (WRONG_KIND on another backend's
 * context); pointers in *out are borrowed from the context. */
/* Reads back a Vulkan context's desc; extension arrays live as long as the context. */
GPUHANDLE_API gpuhandle_status gpuhandle_context_get_vulkan(
	const gpuhandle_context *context, gpuhandle_vulkan_context_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back an OpenGL context's desc. */
GPUHANDLE_API gpuhandle_status gpuhandle_context_get_opengl(
	const gpuhandle_context *context, gpuhandle_opengl_context_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a CUDA context's desc. */
GPUHANDLE_API gpuhandle_status gpuhandle_context_get_cuda(
	const gpuhandle_context *context, gpuhandle_cuda_context_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back an OpenCL context's desc. */
GPUHANDLE_API gpuhandle_status gpuhandle_context_get_opencl(
	const gpuhandle_context *context, gpuhandle_opencl_context_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a VA-API context's desc. */
GPUHANDLE_API gpuhandle_status gpuhandle_context_get_vaapi(
	const gpuhandle_context *context, gpuhandle_vaapi_context_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a D3D11 context's desc. */
GPUHANDLE_API gpuhandle_status gpuhandle_context_get_d3d11(
	const gpuhandle_context *context, gpuhandle_d3d11_context_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a D3D12 context's desc. */
GPUHANDLE_API gpuhandle_status gpuhandle_context_get_d3d12(
	const gpuhandle_context *context, gpuhandle_d3d12_context_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a Metal context's desc. */
GPUHANDLE_API gpuhandle_status gpuhandle_context_get_metal(
	const gpuhandle_context *context, gpuhandle_metal_context_desc *out) GPUHANDLE_NOEXCEPT;
/* Reads back a WebGPU context's desc. */
GPUHANDLE_API gpuhandle_status gpuhandle_context_get_webgpu(
	const gpuhandle_context *context, gpuhandle_webgpu_context_desc *out) GPUHANDLE_NOEXCEPT;

/* Whether a and b name the same physical device: the strongest identity both carry decides
 * (uuid, luid, PCI bus id, render node, primary node, Metal registry id). a, b: borrowed,
 * nullable (NULL gives UNKNOWN); an out-of-range pciBusId counts as absent. */
GPUHANDLE_API gpuhandle_device_match gpuhandle_device_id_compare(
	const gpuhandle_device_id *a, const gpuhandle_device_id *b) GPUHANDLE_NOEXCEPT;
/* "same", "different", "unknown"; "invalid" otherwise. Static string, never NULL. */
GPUHANDLE_API const char *
gpuhandle_device_match_name(gpuhandle_device_match match) GPUHANDLE_NOEXCEPT;

#ifdef __cplusplus
}
#endif
