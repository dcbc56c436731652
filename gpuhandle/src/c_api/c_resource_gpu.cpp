// C API: resources of the Linux GPU APIs (Vulkan image and buffer, GL, CUDA, OpenCL, VA-API).
#include <gpuhandle/gpuhandle_resource.h>

#include "c_internal.h"

using namespace gpuhandle;
using namespace gpuhandle::capi;

namespace {

Result<VulkanImageDesc> nativeVulkanImage(const gpuhandle_vulkan_image_desc &c)
{
	auto anchor = anchorOf(c.anchor, "VulkanImage");
	if (!anchor)
		return std::move(anchor).error();
	VulkanImageDesc d;
	d.image = c.image;
	d.device = c.device;
	d.deviceUuid = uuidOf(c.hasDeviceUuid, c.deviceUuid);
	d.rowPitch = c.rowPitch;
	d.planes = c.planes == 0 ? 1 : c.planes;
	d.anchor = std::move(*anchor);
	return d;
}

void cVulkanImage(const VulkanImageDesc &d, gpuhandle_vulkan_image_desc &c)
{
	c.image = d.image;
	c.device = d.device;
	putUuid(d.deviceUuid, c.hasDeviceUuid, c.deviceUuid);
	c.rowPitch = d.rowPitch;
	c.planes = d.planes;
}

Result<VulkanBufferDesc> nativeVulkanBuffer(const gpuhandle_vulkan_buffer_desc &c)
{
	auto anchor = anchorOf(c.anchor, "VulkanBuffer");
	if (!anchor)
		return std::move(anchor).error();
	VulkanBufferDesc d;
	d.buffer = c.buffer;
	d.device = c.device;
	d.size = c.size;
	d.deviceUuid = uuidOf(c.hasDeviceUuid, c.deviceUuid);
	d.anchor = std::move(*anchor);
	return d;
}

void cVulkanBuffer(const VulkanBufferDesc &d, gpuhandle_vulkan_buffer_desc &c)
{
	c.buffer = d.buffer;
	c.device = d.device;
	c.size = d.size;
	putUuid(d.deviceUuid, c.hasDeviceUuid, c.deviceUuid);
}

Result<GlTextureDesc> nativeGlTexture(const gpuhandle_gl_texture_desc &c)
{
	auto anchor = anchorOf(c.anchor, "GlTexture");
	if (!anchor)
		return std::move(anchor).error();
	GlTextureDesc d;
	d.name = c.name;
	d.target = c.target;
	d.internalFormat = c.internalFormat;
	d.width = c.width;
	d.height = c.height;
	d.context = c.context;
	d.flavour = static_cast<GlFlavour>(c.flavour);
	d.anchor = std::move(*anchor);
	return d;
}

void cGlTexture(const GlTextureDesc &d, gpuhandle_gl_texture_desc &c)
{
	c.name = d.name;
	c.target = d.target;
	c.internalFormat = d.internalFormat;
	c.width = d.width;
	c.height = d.height;
	c.context = d.context;
	c.flavour = static_cast<gpuhandle_gl_flavour>(d.flavour);
}

Result<GlBufferDesc> nativeGlBuffer(const gpuhandle_gl_buffer_desc &c)
{
	auto anchor = anchorOf(c.anchor, "GlBuffer");
	if (!anchor)
		return std::move(anchor).error();
	GlBufferDesc d;
	d.name = c.name;
	d.target = c.target;
	d.size = c.size;
	d.context = c.context;
	d.flavour = static_cast<GlFlavour>(c.flavour);
	d.anchor = std::move(*anchor);
	return d;
}

void cGlBuffer(const GlBufferDesc &d, gpuhandle_gl_buffer_desc &c)
{
	c.name = d.name;
	c.target = d.target;
	c.size = d.size;
	c.context = d.context;
	c.flavour = static_cast<gpuhandle_gl_flavour>(d.flavour);
}

Result<CudaPitched2DDesc> nativeCudaPitched2D(const gpuhandle_cuda_pitched_2d_desc &c)
{
	auto anchor = anchorOf(c.anchor, "CudaPitched2D");
	if (!anchor)
		return std::move(anchor).error();
	CudaPitched2DDesc d;
	d.pointer = c.pointer;
	d.pitch = c.pitch;
	d.numPlanes = c.numPlanes;
	std::copy(std::begin(c.planeOffsets), std::end(c.planeOffsets), d.planeOffsets.begin());
	d.size = c.size;
	d.context = c.context;
	d.deviceUuid = uuidOf(c.hasDeviceUuid, c.deviceUuid);
	d.anchor = std::move(*anchor);
	return d;
}

void cCudaPitched2D(const CudaPitched2DDesc &d, gpuhandle_cuda_pitched_2d_desc &c)
{
	c.pointer = d.pointer;
	c.pitch = d.pitch;
	c.numPlanes = d.numPlanes;
	std::copy(d.planeOffsets.begin(), d.planeOffsets.end(), std::begin(c.planeOffsets));
	c.size = d.size;
	c.context = d.context;
	putUuid(d.deviceUuid, c.hasDeviceUuid, c.deviceUuid);
}

Result<CudaBufferDesc> nativeCudaBuffer(const gpuhandle_cuda_buffer_desc &c)
{
	auto anchor = anchorOf(c.anchor, "CudaBuffer");
	if (!anchor)
		return std::move(anchor).error();
	CudaBufferDesc d;
	d.pointer = c.pointer;
	d.size = c.size;
	d.context = c.context;
	d.deviceUuid = uuidOf(c.hasDeviceUuid, c.deviceUuid);
	d.anchor = std::move(*anchor);
	return d;
}

void cCudaBuffer(const CudaBufferDesc &d, gpuhandle_cuda_buffer_desc &c)
{
	c.pointer = d.pointer;
	c.size = d.size;
	c.context = d.context;
	putUuid(d.deviceUuid, c.hasDeviceUuid, c.deviceUuid);
}

Result<CudaSurfaceDesc> nativeCudaSurface(const gpuhandle_cuda_surface_desc &c)
{
	auto anchor = anchorOf(c.anchor, "CudaSurface");
	if (!anchor)
		return std::move(anchor).error();
	CudaSurfaceDesc d;
	d.surface = c.surface;
	d.array = c.array;
	d.width = c.width;
	d.height = c.height;
	d.context = c.context;
	d.deviceUuid = uuidOf(c.hasDeviceUuid, c.deviceUuid);
	d.anchor = std::move(*anchor);
	return d;
}

void cCudaSurface(const CudaSurfaceDesc &d, gpuhandle_cuda_surface_desc &c)
{
	c.surface = d.surface;
	c.array = d.array;
	c.width = d.width;
	c.height = d.height;
	c.context = d.context;
	putUuid(d.deviceUuid, c.hasDeviceUuid, c.deviceUuid);
}

Result<OpenClMemDesc> nativeOpenClMem(const gpuhandle_opencl_mem_desc &c)
{
	auto anchor = anchorOf(c.anchor, "OpenClMem");
	if (!anchor)
		return std::move(anchor).error();
	OpenClMemDesc d;
	d.mem = c.mem;
	d.queue = c.queue;
	d.size = c.size;
	d.anchor = std::move(*anchor);
	return d;
}

void cOpenClMem(const OpenClMemDesc &d, gpuhandle_opencl_mem_desc &c)
{
	c.mem = d.mem;
	c.queue = d.queue;
	c.size = d.size;
}

Result<VaSurfaceDesc> nativeVaSurface(const gpuhandle_va_surface_desc &c)
{
	auto anchor = anchorOf(c.anchor, "VaSurface");
	if (!anchor)
		return std::move(anchor).error();
	VaSurfaceDesc d;
	d.surface = c.surface;
	d.display = c.display;
	d.anchor = std::move(*anchor);
	return d;
}

void cVaSurface(const VaSurfaceDesc &d, gpuhandle_va_surface_desc &c)
{
	c.surface = d.surface;
	c.display = d.display;
}

} // namespace

extern "C" {

gpuhandle_status gpuhandle_resource_new_vulkan_image(const gpuhandle_vulkan_image_desc *desc,
						     gpuhandle_resource **out,
						     gpuhandle_error **error) noexcept
{
	return createResource<VulkanImage>(__func__, desc, out, error, nativeVulkanImage);
}

gpuhandle_status gpuhandle_resource_get_vulkan_image(const gpuhandle_resource *resource,
						     gpuhandle_vulkan_image_desc *out) noexcept
{
	return getResource<VulkanImage>(resource, out, cVulkanImage);
}

gpuhandle_status gpuhandle_resource_new_vulkan_buffer(const gpuhandle_vulkan_buffer_desc *desc,
						      gpuhandle_resource **out,
						      gpuhandle_error **error) noexcept
{
	return createResource<VulkanBuffer>(__func__, desc, out, error, nativeVulkanBuffer);
}

gpuhandle_status gpuhandle_resource_get_vulkan_buffer(const gpuhandle_resource *resource,
						      gpuhandle_vulkan_buffer_desc *out) noexcept
{
	return getResource<VulkanBuffer>(resource, out, cVulkanBuffer);
}

gpuhandle_status gpuhandle_resource_new_gl_texture(const gpuhandle_gl_texture_desc *desc,
						   gpuhandle_resource **out,
						   gpuhandle_error **error) noexcept
{
	return createResource<GlTexture>(__func__, desc, out, error, nativeGlTexture);
}

gpuhandle_status gpuhandle_resource_get_gl_texture(const gpuhandle_resource *resource,
						   gpuhandle_gl_texture_desc *out) noexcept
{
	return getResource<GlTexture>(resource, out, cGlTexture);
}

gpuhandle_status gpuhandle_resource_new_gl_buffer(const gpuhandle_gl_buffer_desc *desc,
						  gpuhandle_resource **out,
						  gpuhandle_error **error) noexcept
{
	return createResource<GlBuffer>(__func__, desc, out, error, nativeGlBuffer);
}

gpuhandle_status gpuhandle_resource_get_gl_buffer(const gpuhandle_resource *resource,
						  gpuhandle_gl_buffer_desc *out) noexcept
{
	return getResource<GlBuffer>(resource, out, cGlBuffer);
}

gpuhandle_status gpuhandle_resource_new_cuda_pitched_2d(const gpuhandle_cuda_pitched_2d_desc *desc,
							gpuhandle_resource **out,
							gpuhandle_error **error) noexcept
{
	return createResource<CudaPitched2D>(__func__, desc, out, error, nativeCudaPitched2D);
}

gpuhandle_status
gpuhandle_resource_get_cuda_pitched_2d(const gpuhandle_resource *resource,
				       gpuhandle_cuda_pitched_2d_desc *out) noexcept
{
	return getResource<CudaPitched2D>(resource, out, cCudaPitched2D);
}

gpuhandle_status gpuhandle_resource_new_cuda_buffer(const gpuhandle_cuda_buffer_desc *desc,
						    gpuhandle_resource **out,
						    gpuhandle_error **error) noexcept
{
	return createResource<CudaBuffer>(__func__, desc, out, error, nativeCudaBuffer);
}

gpuhandle_status gpuhandle_resource_get_cuda_buffer(const gpuhandle_resource *resource,
						    gpuhandle_cuda_buffer_desc *out) noexcept
{
	return getResource<CudaBuffer>(resource, out, cCudaBuffer);
}

gpuhandle_status gpuhandle_resource_new_cuda_surface(const gpuhandle_cuda_surface_desc *desc,
						     gpuhandle_resource **out,
						     gpuhandle_error **error) noexcept
{
	return createResource<CudaSurface>(__func__, desc, out, error, nativeCudaSurface);
}

gpuhandle_status gpuhandle_resource_get_cuda_surface(const gpuhandle_resource *resource,
						     gpuhandle_cuda_surface_desc *out) noexcept
{
	return getResource<CudaSurface>(resource, out, cCudaSurface);
}

gpuhandle_status gpuhandle_resource_new_opencl_mem(const gpuhandle_opencl_mem_desc *desc,
						   gpuhandle_resource **out,
						   gpuhandle_error **error) noexcept
{
	return createResource<OpenClMem>(__func__, desc, out, error, nativeOpenClMem);
}

gpuhandle_status gpuhandle_resource_get_opencl_mem(const gpuhandle_resource *resource,
						   gpuhandle_opencl_mem_desc *out) noexcept
{
	return getResource<OpenClMem>(resource, out, cOpenClMem);
}

gpuhandle_status gpuhandle_resource_new_va_surface(const gpuhandle_va_surface_desc *desc,
						   gpuhandle_resource **out,
						   gpuhandle_error **error) noexcept
{
	return createResource<VaSurface>(__func__, desc, out, error, nativeVaSurface);
}

gpuhandle_status gpuhandle_resource_get_va_surface(const gpuhandle_resource *resource,
						   gpuhandle_va_surface_desc *out) noexcept
{
	return getResource<VaSurface>(resource, out, cVaSurface);
}

} // extern "C"
