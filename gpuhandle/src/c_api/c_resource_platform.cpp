// C API: resources of the other platforms' APIs (D3D11, D3D12, Metal, WebGPU) and CPU memory.
#include <gpuhandle/gpuhandle_resource.h>

#include "c_internal.h"

using namespace gpuhandle;
using namespace gpuhandle::capi;

namespace {

Result<D3D11TextureDesc> nativeD3D11Texture(const gpuhandle_d3d11_texture_desc &c)
{
	auto anchor = anchorOf(c.anchor, "D3D11Texture");
	if (!anchor)
		return std::move(anchor).error();
	D3D11TextureDesc d;
	d.texture = c.texture;
	d.arraySlice = c.arraySlice;
	d.rowPitch = c.rowPitch;
	d.adapterLuid = luidOf(c.hasAdapterLuid, c.adapterLuid);
	d.anchor = std::move(*anchor);
	return d;
}

void cD3D11Texture(const D3D11TextureDesc &d, gpuhandle_d3d11_texture_desc &c)
{
	c.texture = d.texture;
	c.arraySlice = d.arraySlice;
	c.rowPitch = d.rowPitch;
	putLuid(d.adapterLuid, c.hasAdapterLuid, c.adapterLuid);
}

Result<D3D12ResourceDesc> nativeD3D12Resource(const gpuhandle_d3d12_resource_desc &c)
{
	auto anchor = anchorOf(c.anchor, "D3D12Resource");
	if (!anchor)
		return std::move(anchor).error();
	D3D12ResourceDesc d;
	d.resource = c.resource;
	d.subresource = c.subresource;
	d.adapterLuid = luidOf(c.hasAdapterLuid, c.adapterLuid);
	d.anchor = std::move(*anchor);
	return d;
}

void cD3D12Resource(const D3D12ResourceDesc &d, gpuhandle_d3d12_resource_desc &c)
{
	c.resource = d.resource;
	c.subresource = d.subresource;
	putLuid(d.adapterLuid, c.hasAdapterLuid, c.adapterLuid);
}

Result<D3D12BufferDesc> nativeD3D12Buffer(const gpuhandle_d3d12_buffer_desc &c)
{
	auto anchor = anchorOf(c.anchor, "D3D12Buffer");
	if (!anchor)
		return std::move(anchor).error();
	D3D12BufferDesc d;
	d.resource = c.resource;
	d.size = c.size;
	d.adapterLuid = luidOf(c.hasAdapterLuid, c.adapterLuid);
	d.anchor = std::move(*anchor);
	return d;
}

void cD3D12Buffer(const D3D12BufferDesc &d, gpuhandle_d3d12_buffer_desc &c)
{
	c.resource = d.resource;
	c.size = d.size;
	putLuid(d.adapterLuid, c.hasAdapterLuid, c.adapterLuid);
}

Result<MetalTextureDesc> nativeMetalTexture(const gpuhandle_metal_texture_desc &c)
{
	auto anchor = anchorOf(c.anchor, "MetalTexture");
	if (!anchor)
		return std::move(anchor).error();
	MetalTextureDesc d;
	d.texture = c.texture;
	d.registryId = optionalOf(c.hasRegistryId, c.registryId);
	d.anchor = std::move(*anchor);
	return d;
}

void cMetalTexture(const MetalTextureDesc &d, gpuhandle_metal_texture_desc &c)
{
	c.texture = d.texture;
	putOptional(d.registryId, c.hasRegistryId, c.registryId);
}

Result<MetalBufferDesc> nativeMetalBuffer(const gpuhandle_metal_buffer_desc &c)
{
	auto anchor = anchorOf(c.anchor, "MetalBuffer");
	if (!anchor)
		return std::move(anchor).error();
	MetalBufferDesc d;
	d.buffer = c.buffer;
	d.size = c.size;
	d.registryId = optionalOf(c.hasRegistryId, c.registryId);
	d.anchor = std::move(*anchor);
	return d;
}

void cMetalBuffer(const MetalBufferDesc &d, gpuhandle_metal_buffer_desc &c)
{
	c.buffer = d.buffer;
	c.size = d.size;
	putOptional(d.registryId, c.hasRegistryId, c.registryId);
}

Result<WebGpuTextureDesc> nativeWebGpuTexture(const gpuhandle_webgpu_texture_desc &c)
{
	auto anchor = anchorOf(c.anchor, "WebGpuTexture");
	if (!anchor)
		return std::move(anchor).error();
	WebGpuTextureDesc d;
	d.texture = c.texture;
	d.device = c.device;
	d.format = c.format;
	d.width = c.width;
	d.height = c.height;
	d.anchor = std::move(*anchor);
	return d;
}

void cWebGpuTexture(const WebGpuTextureDesc &d, gpuhandle_webgpu_texture_desc &c)
{
	c.texture = d.texture;
	c.device = d.device;
	c.format = d.format;
	c.width = d.width;
	c.height = d.height;
}

Result<CpuBytesDesc> nativeCpuBytes(const gpuhandle_cpu_bytes_desc &c)
{
	auto anchor = anchorOf(c.anchor, "CpuBytes");
	if (!anchor)
		return std::move(anchor).error();
	CpuBytesDesc d;
	d.data = c.data;
	d.size = c.size;
	d.anchor = std::move(*anchor);
	return d;
}

void cCpuBytes(const CpuBytesDesc &d, gpuhandle_cpu_bytes_desc &c)
{
	c.data = d.data;
	c.size = d.size;
}

Result<CpuPlanesDesc> nativeCpuPlanes(const gpuhandle_cpu_planes_desc &c)
{
	auto anchor = anchorOf(c.anchor, "CpuPlanes");
	if (!anchor)
		return std::move(anchor).error();
	CpuPlanesDesc d;
	d.numPlanes = c.numPlanes;
	for (uint32_t i = 0; i < 4; ++i)
		d.planes[i] = { c.planes[i].data, c.planes[i].stride, c.planes[i].rows };
	d.anchor = std::move(*anchor);
	return d;
}

void cCpuPlanes(const CpuPlanesDesc &d, gpuhandle_cpu_planes_desc &c)
{
	c.numPlanes = d.numPlanes;
	for (uint32_t i = 0; i < 4; ++i)
		c.planes[i] = { d.planes[i].data, d.planes[i].stride, d.planes[i].rows };
}

Result<CpuSharedSlotDesc> nativeCpuSharedSlot(const gpuhandle_cpu_shared_slot_desc &c)
{
	auto anchor = anchorOf(c.anchor, "CpuSharedSlot");
	if (!anchor)
		return std::move(anchor).error();
	CpuSharedSlotDesc d;
	d.slot = c.slot;
	d.size = c.size;
	d.rowPitch = c.rowPitch;
	d.anchor = std::move(*anchor);
	return d;
}

void cCpuSharedSlot(const CpuSharedSlotDesc &d, gpuhandle_cpu_shared_slot_desc &c)
{
	c.slot = d.slot;
	c.size = d.size;
	c.rowPitch = d.rowPitch;
}

} // namespace

extern "C" {

gpuhandle_status gpuhandle_resource_new_d3d11_texture(const gpuhandle_d3d11_texture_desc *desc,
						      gpuhandle_resource **out,
						      gpuhandle_error **error) noexcept
{
	return createResource<D3D11Texture>(__func__, desc, out, error, nativeD3D11Texture);
}

gpuhandle_status gpuhandle_resource_get_d3d11_texture(const gpuhandle_resource *resource,
						      gpuhandle_d3d11_texture_desc *out) noexcept
{
	return getResource<D3D11Texture>(resource, out, cD3D11Texture);
}

gpuhandle_status gpuhandle_resource_new_d3d12_resource(const gpuhandle_d3d12_resource_desc *desc,
						       gpuhandle_resource **out,
						       gpuhandle_error **error) noexcept
{
	return createResource<D3D12Resource>(__func__, desc, out, error, nativeD3D12Resource);
}

gpuhandle_status gpuhandle_resource_get_d3d12_resource(const gpuhandle_resource *resource,
						       gpuhandle_d3d12_resource_desc *out) noexcept
{
	return getResource<D3D12Resource>(resource, out, cD3D12Resource);
}

gpuhandle_status gpuhandle_resource_new_d3d12_buffer(const gpuhandle_d3d12_buffer_desc *desc,
						     gpuhandle_resource **out,
						     gpuhandle_error **error) noexcept
{
	return createResource<D3D12Buffer>(__func__, desc, out, error, nativeD3D12Buffer);
}

gpuhandle_status gpuhandle_resource_get_d3d12_buffer(const gpuhandle_resource *resource,
						     gpuhandle_d3d12_buffer_desc *out) noexcept
{
	return getResource<D3D12Buffer>(resource, out, cD3D12Buffer);
}

gpuhandle_status gpuhandle_resource_new_metal_texture(const gpuhandle_metal_texture_desc *desc,
						      gpuhandle_resource **out,
						      gpuhandle_error **error) noexcept
{
	return createResource<MetalTexture>(__func__, desc, out, error, nativeMetalTexture);
}

gpuhandle_status gpuhandle_resource_get_metal_texture(const gpuhandle_resource *resource,
						      gpuhandle_metal_texture_desc *out) noexcept
{
	return getResource<MetalTexture>(resource, out, cMetalTexture);
}

gpuhandle_status gpuhandle_resource_new_metal_buffer(const gpuhandle_metal_buffer_desc *desc,
						     gpuhandle_resource **out,
						     gpuhandle_error **error) noexcept
{
	return createResource<MetalBuffer>(__func__, desc, out, error, nativeMetalBuffer);
}

gpuhandle_status gpuhandle_resource_get_metal_buffer(const gpuhandle_resource *resource,
						     gpuhandle_metal_buffer_desc *out) noexcept
{
	return getResource<MetalBuffer>(resource, out, cMetalBuffer);
}

gpuhandle_status gpuhandle_resource_new_webgpu_texture(const gpuhandle_webgpu_texture_desc *desc,
						       gpuhandle_resource **out,
						       gpuhandle_error **error) noexcept
{
	return createResource<WebGpuTexture>(__func__, desc, out, error, nativeWebGpuTexture);
}

gpuhandle_status gpuhandle_resource_get_webgpu_texture(const gpuhandle_resource *resource,
						       gpuhandle_webgpu_texture_desc *out) noexcept
{
	return getResource<WebGpuTexture>(resource, out, cWebGpuTexture);
}

gpuhandle_status gpuhandle_resource_new_cpu_bytes(const gpuhandle_cpu_bytes_desc *desc,
						  gpuhandle_resource **out,
						  gpuhandle_error **error) noexcept
{
	return createResource<CpuBytes>(__func__, desc, out, error, nativeCpuBytes);
}

gpuhandle_status gpuhandle_resource_get_cpu_bytes(const gpuhandle_resource *resource,
						  gpuhandle_cpu_bytes_desc *out) noexcept
{
	return getResource<CpuBytes>(resource, out, cCpuBytes);
}

gpuhandle_status gpuhandle_resource_new_cpu_planes(const gpuhandle_cpu_planes_desc *desc,
						   gpuhandle_resource **out,
						   gpuhandle_error **error) noexcept
{
	return createResource<CpuPlanes>(__func__, desc, out, error, nativeCpuPlanes);
}

gpuhandle_status gpuhandle_resource_get_cpu_planes(const gpuhandle_resource *resource,
						   gpuhandle_cpu_planes_desc *out) noexcept
{
	return getResource<CpuPlanes>(resource, out, cCpuPlanes);
}

gpuhandle_status gpuhandle_resource_new_cpu_shared_slot(const gpuhandle_cpu_shared_slot_desc *desc,
							gpuhandle_resource **out,
							gpuhandle_error **error) noexcept
{
	return createResource<CpuSharedSlot>(__func__, desc, out, error, nativeCpuSharedSlot);
}

gpuhandle_status
gpuhandle_resource_get_cpu_shared_slot(const gpuhandle_resource *resource,
				       gpuhandle_cpu_shared_slot_desc *out) noexcept
{
	return getResource<CpuSharedSlot>(resource, out, cCpuSharedSlot);
}

} // extern "C"
