/* C API: gpuhandle_frame, a picture as 1..4 plane views over 1..4 resources. */
#pragma once

#include <gpuhandle/export.h>
#include <gpuhandle/gpuhandle_error.h>
#include <gpuhandle/gpuhandle_resource.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Range, matrix, primaries and transfer, numbered as ITU-T H.273 (and AVColor*): range 0 unknown,
 * 1 limited, 2 full; 2 is "unknown" for the other three. Reserved numbers are refused. */
typedef struct gpuhandle_colorimetry {
	uint8_t range;     /* 0 unknown, 1 limited, 2 full (AVColorRange) */
	uint8_t matrix;    /* MatrixCoefficients (AVColorSpace) */
	uint8_t primaries; /* ColourPrimaries (AVColorPrimaries) */
	uint8_t transfer;  /* TransferCharacteristics (AVColorTransferCharacteristic) */
} gpuhandle_colorimetry;

/* Initializer for a colorimetry nobody knows (all zeros is refused: primaries 0 is reserved). */
#define GPUHANDLE_COLORIMETRY_UNKNOWN                                                              \
	{                                                                                          \
		0, 2, 2, 2                                                                         \
	}

/* Where plane i lives: resource index, its part (DMA-BUF object, CPU plane, Vulkan image plane; 0
 * otherwise), byte offset, bytes per row (0 when the handle is opaque). */
typedef struct gpuhandle_plane_view {
	uint32_t resource;    /* index into the frame's resources; < numResources */
	uint32_t subresource; /* < gpuhandle_resource_subresource_count() */
	uint64_t offset;      /* bytes from the start of that part */
	uint32_t stride;      /* bytes per row; 0 when opaque (an optimal-tiled image) */
} gpuhandle_plane_view;

/* A frame's description; member names are the error fields' ("planes[1].offset"). */
typedef struct gpuhandle_frame_desc {
	uint32_t format; /* pixel format number; 0 (unknown) is always legal */
	uint32_t width;  /* non-zero */
	uint32_t height; /* non-zero */
	/* valid per gpuhandle_colorimetry_is_valid (INVALID_ARGUMENT otherwise) */
	gpuhandle_colorimetry colorimetry;
	uint32_t numResources; /* 1..4 */
	/* [0..numResources-1] non-null, the rest NULL; borrowed: the frame takes its own references
	 */
	gpuhandle_resource *resources[4];
	uint32_t numPlanes; /* 1..4 */
	/* [0..numPlanes-1] are read; a known format fixes numPlanes to its own count */
	gpuhandle_plane_view planes[4];
} gpuhandle_frame_desc;

/* A validated frame. Opaque, refcounted, immutable; thread-safe to share. A new frame's acquire
 * sync point is the no-op one and it has no release gate; gpuhandle_frame_with_sync()
 * (gpuhandle_sync.h) makes a frame that carries them. */
typedef struct gpuhandle_frame gpuhandle_frame;

/* Validates desc into a frame. desc: borrowed, non-null; *out: new reference or NULL; error:
 * nullable. */
GPUHANDLE_API gpuhandle_status gpuhandle_frame_new(const gpuhandle_frame_desc *desc,
						   gpuhandle_frame **out,
						   gpuhandle_error **error) GPUHANDLE_NOEXCEPT;
/* A frame over one resource with plane views from its own layout (DMA-BUF planes, CPU planes,
 * CUDA plane offsets; one plane otherwise). resource: borrowed, non-null (the frame takes a
 * reference); *out: new reference or NULL; error: nullable. */
GPUHANDLE_API gpuhandle_status gpuhandle_frame_wrap(uint32_t format, uint32_t width,
						    uint32_t height,
						    gpuhandle_colorimetry colorimetry,
						    gpuhandle_resource *resource,
						    gpuhandle_frame **out,
						    gpuhandle_error **error) GPUHANDLE_NOEXCEPT;

/* Adds a reference. frame: nullable (then a no-op). Returns frame. */
GPUHANDLE_API gpuhandle_frame *gpuhandle_frame_ref(gpuhandle_frame *frame) GPUHANDLE_NOEXCEPT;
/* Drops a reference; the last one releases the frame's resource references. Nullable (no-op). */
GPUHANDLE_API void gpuhandle_frame_unref(gpuhandle_frame *frame) GPUHANDLE_NOEXCEPT;

/* Pixel format number. frame: nullable; NULL gives 0. */
GPUHANDLE_API uint32_t gpuhandle_frame_get_format(const gpuhandle_frame *frame) GPUHANDLE_NOEXCEPT;
/* Width in pixels. frame: nullable; NULL gives 0. */
GPUHANDLE_API uint32_t gpuhandle_frame_get_width(const gpuhandle_frame *frame) GPUHANDLE_NOEXCEPT;
/* Height in pixels. frame: nullable; NULL gives 0. */
GPUHANDLE_API uint32_t gpuhandle_frame_get_height(const gpuhandle_frame *frame) GPUHANDLE_NOEXCEPT;
/* Colorimetry. frame: nullable; NULL gives GPUHANDLE_COLORIMETRY_UNKNOWN. */
GPUHANDLE_API gpuhandle_colorimetry gpuhandle_frame_get_colorimetry(const gpuhandle_frame *frame)
	GPUHANDLE_NOEXCEPT;
/* Number of resources (1..4). frame: nullable; NULL gives 0. */
GPUHANDLE_API uint32_t gpuhandle_frame_get_num_resources(const gpuhandle_frame *frame)
	GPUHANDLE_NOEXCEPT;
/* Resource `index`: borrowed (no new reference), valid while frame lives; NULL for a NULL frame
 * or index >= num_resources. gpuhandle_resource_ref() it to keep it longer. */
GPUHANDLE_API gpuhandle_resource *gpuhandle_frame_get_resource(const gpuhandle_frame *frame,
							       uint32_t index) GPUHANDLE_NOEXCEPT;
/* Number of planes (1..4). frame: nullable; NULL gives 0. */
GPUHANDLE_API uint32_t gpuhandle_frame_get_num_planes(const gpuhandle_frame *frame)
	GPUHANDLE_NOEXCEPT;
/* Plane `index` into *out. frame, out: non-null; OUT_OF_RANGE past num_planes; *out zeroed on
 * failure. */
GPUHANDLE_API gpuhandle_status gpuhandle_frame_get_plane(
	const gpuhandle_frame *frame, uint32_t index, gpuhandle_plane_view *out) GPUHANDLE_NOEXCEPT;
/* The whole description into *out; its resources are borrowed like get_resource's. frame, out:
 * non-null; *out zeroed on failure. */
GPUHANDLE_API gpuhandle_status gpuhandle_frame_get_desc(
	const gpuhandle_frame *frame, gpuhandle_frame_desc *out) GPUHANDLE_NOEXCEPT;
/* True when every colorimetry value is one H.273 defines (what the constructors check). */
GPUHANDLE_API bool
gpuhandle_colorimetry_is_valid(gpuhandle_colorimetry colorimetry) GPUHANDLE_NOEXCEPT;

#ifdef __cplusplus
}
#endif
