// GstContext sharing of gpuhandle devices: elements in one pipeline open each backend once.
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/memory_budget.h>
#include <gpuhandle/result.h>

#include <memory>
#include <mutex>
#include <string>

#include <gst/gpuhandle/gstgpuhandleprelude.h>
#include <gst/gst.h>

namespace GST_GPUHANDLE_API gpuhandle {
namespace gst {

// The GstContext type that carries a DeviceSet ("gst.gpuhandle.devices"), persistent.
inline constexpr const char *kDevicesContextType = "gst.gpuhandle.devices";

// The backends opened for one pipeline (or application), by kind, each opened on first use.
// The application may put its own (inside its host context) before the pipeline starts, with
// setBackend() on a set it then gives to the pipeline with gst_element_set_context().
class DeviceSet
{
public:
	// Its backends' allocations are charged to `budget` (processBudget() when null).
	explicit DeviceSet(std::shared_ptr<MemoryBudget> budget = nullptr);
	~DeviceSet();
	DeviceSet(const DeviceSet &) = delete;
	DeviceSet &operator=(const DeviceSet &) = delete;

	// The backend of `kind`, opened on its default device the first time (thread-safe; a
	// failed open is remembered and answered again without retrying).
	Result<BackendRef> backend(BackendKind kind);
	// Uses `backend` for its kind from now on (replacing nothing already handed out). Its
	// allocations are charged to the budget it was opened with, which may not be budget().
	void setBackend(BackendRef backend);
	// The budget the backends this set opens charge (never null).
	const std::shared_ptr<MemoryBudget> &budget() const noexcept;
	// What the set holds, for logs: "vulkan on <device>, opengl on <device>; cuda did not
	// open", or "no backend opened yet".
	std::string describe() const;

private:
	struct State;
	std::unique_ptr<State> state_;
};
// A shared DeviceSet: the elements of a pipeline (and the application) hold one set.
using DeviceSetRef = std::shared_ptr<DeviceSet>;

// A GstContext of kDevicesContextType holding `devices` (transfer full).
GST_GPUHANDLE_API GstContext *devicesContextNew(const DeviceSetRef &devices);
// The set a context of kDevicesContextType holds, or null.
GST_GPUHANDLE_API DeviceSetRef devicesFromContext(GstContext *context);

// An element's DeviceSet, read and written from its streaming thread, set_context() and context
// queries at once.
class DevicesSlot
{
public:
	// The set held, or null.
	DeviceSetRef get() const;
	// Replaces the set held (null clears it).
	void set(DeviceSetRef devices);

private:
	mutable std::mutex mutex_{};
	DeviceSetRef devices_{};
};

// For elements: the DeviceSet of the pipeline. Kept when the slot has one (from set_context);
// otherwise the neighbours are asked (a GST_QUERY_CONTEXT to the peers of the source pads, then
// of the sink pads), then a GST_MESSAGE_NEED_CONTEXT is posted (the application or a bin answers
// with gst_element_set_context), and when nobody has one a new set is made and announced with
// GST_MESSAGE_HAVE_CONTEXT, so that the pipeline's other gpuhandle elements share it.
GST_GPUHANDLE_API DeviceSetRef ensureDevices(GstElement *element, DevicesSlot &slot);
// Answers a GST_QUERY_CONTEXT for kDevicesContextType with the slot's set (TRUE when answered).
GST_GPUHANDLE_API gboolean handleDevicesQuery(GstQuery *query, const DevicesSlot &slot);
// Takes `context` into the slot when it is of kDevicesContextType (from set_context).
GST_GPUHANDLE_API void handleDevicesSetContext(GstContext *context, DevicesSlot &slot);

} // namespace gst
} // namespace gpuhandle
