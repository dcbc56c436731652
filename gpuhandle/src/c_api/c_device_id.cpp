// C API: a context's device identity as gpuhandle_device_id, and sameDevice() over two of them.
#include <gpuhandle/gpuhandle_context.h>

#include "c_internal.h"

using namespace gpuhandle;
using namespace gpuhandle::capi;

namespace {

void cDeviceId(const DeviceId &id, gpuhandle_device_id &c)
{
	c.isCpu = id.isCpu;
	putUuid(id.uuid, c.hasUuid, c.uuid);
	putLuid(id.luid, c.hasLuid, c.luid);
	c.hasPciBusId = id.pciBusId.has_value();
	if (id.pciBusId)
		c.pciBusId = { id.pciBusId->domain(), id.pciBusId->bus(), id.pciBusId->device(),
			       id.pciBusId->function() };
	c.hasDrmRenderNode = id.drmRenderNode.has_value();
	if (id.drmRenderNode)
		c.drmRenderNode = { id.drmRenderNode->major, id.drmRenderNode->minor };
	c.hasDrmPrimaryNode = id.drmPrimaryNode.has_value();
	if (id.drmPrimaryNode)
		c.drmPrimaryNode = { id.drmPrimaryNode->major, id.drmPrimaryNode->minor };
	putOptional(id.metalRegistryId, c.hasMetalRegistryId, c.metalRegistryId);
}

// An out-of-range PCI bus id identifies nothing, so it is left out.
DeviceId deviceIdOf(const gpuhandle_device_id &c)
{
	DeviceId id;
	id.isCpu = c.isCpu;
	id.uuid = uuidOf(c.hasUuid, c.uuid);
	id.luid = luidOf(c.hasLuid, c.luid);
	if (c.hasPciBusId) {
		auto pci = PciBusId::create(c.pciBusId.domain, c.pciBusId.bus, c.pciBusId.device,
					    c.pciBusId.function);
		if (pci)
			id.pciBusId = *pci;
	}
	if (c.hasDrmRenderNode)
		id.drmRenderNode = DrmNode{ c.drmRenderNode.major, c.drmRenderNode.minor };
	if (c.hasDrmPrimaryNode)
		id.drmPrimaryNode = DrmNode{ c.drmPrimaryNode.major, c.drmPrimaryNode.minor };
	id.metalRegistryId = optionalOf(c.hasMetalRegistryId, c.metalRegistryId);
	return id;
}

} // namespace

extern "C" {

gpuhandle_status gpuhandle_context_get_device_id(const gpuhandle_context *context,
						 gpuhandle_device_id *out) noexcept
{
	if (out)
		*out = {};
	if (!context || !out)
		return GPUHANDLE_ERROR_NULL_HANDLE;
	return guard(nullptr, [&]() -> gpuhandle_status {
		cDeviceId(context->value->deviceId(), *out);
		return GPUHANDLE_OK;
	});
}

gpuhandle_device_match gpuhandle_device_id_compare(const gpuhandle_device_id *a,
						   const gpuhandle_device_id *b) noexcept
{
	if (!a || !b)
		return GPUHANDLE_DEVICE_MATCH_UNKNOWN;
	try {
		return static_cast<gpuhandle_device_match>(
			sameDevice(deviceIdOf(*a), deviceIdOf(*b)));
	} catch (...) {
		// PciBusId's error sentence could not be allocated.
		return GPUHANDLE_DEVICE_MATCH_UNKNOWN;
	}
}

const char *gpuhandle_device_match_name(gpuhandle_device_match match) noexcept
{
	return deviceMatchName(static_cast<DeviceMatch>(match));
}

} // extern "C"
