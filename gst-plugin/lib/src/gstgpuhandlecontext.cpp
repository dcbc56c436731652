// GstContext sharing of gpuhandle devices (DeviceSet): one backend per kind for a whole pipeline.
#include <array>
#include <optional>
#include <vector>

#include <gst/gpuhandle/gstgpuhandlebudget.hpp>
#include <gst/gpuhandle/gstgpuhandlecontext.hpp>
#include <gst/gpuhandle/gstgpuhandlememory.h>

GST_DEBUG_CATEGORY_STATIC(gst_gpu_handle_context_debug);
#define GST_CAT_DEFAULT gst_gpu_handle_context_debug

using namespace gpuhandle;
using namespace gpuhandle::gst;

// The boxed type a GstContext's structure holds: a heap copy of the shared reference.
extern "C" {
typedef struct _GstGpuHandleDeviceSet GstGpuHandleDeviceSet;
}
struct _GstGpuHandleDeviceSet {
	DeviceSetRef devices;
};

namespace {

GstGpuHandleDeviceSet *deviceSetCopy(const GstGpuHandleDeviceSet *set)
{
	return new GstGpuHandleDeviceSet{ set->devices };
}

void deviceSetFree(GstGpuHandleDeviceSet *set)
{
	delete set;
}

// GStreamer prints a structure field it cannot serialize as "(Type)NULL", which reads like a
// missing device in every context log line: the set serializes as what it holds, in quotes and
// unescaped for the reader (it is a pointer, so nothing deserializes it).
gchar *deviceSetSerialize(const GValue *value)
{
	const auto *set = static_cast<const GstGpuHandleDeviceSet *>(g_value_get_boxed(value));
	const std::string text = set && set->devices ? set->devices->describe() : "no device set";
	return g_strdup_printf("\"%s\"", text.c_str());
}

void registerSerializer(GType type)
{
	static GstValueTable table{};
	table.type = type;
	table.serialize = deviceSetSerialize;
	gst_value_register(&table);
}

void initDebug()
{
	static std::once_flag once;
	std::call_once(once, [] {
		GST_DEBUG_CATEGORY_INIT(gst_gpu_handle_context_debug, "gpuhandlecontext", 0,
					"gpuhandle device sharing through GstContext");
	});
}

constexpr const char *kField = "devices";

} // namespace

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
G_DEFINE_BOXED_TYPE_WITH_CODE(GstGpuHandleDeviceSet, gst_gpu_handle_device_set, deviceSetCopy,
			      deviceSetFree, registerSerializer(g_define_type_id))
#pragma GCC diagnostic pop

namespace gpuhandle::gst {

struct DeviceSet::State {
	std::mutex mutex{};
	// Per kind: the backend, or why it did not open (remembered: opening a missing driver
	// again for every element would be slow and would log the same failure again).
	std::array<BackendRef, kBackendKindCount> backends{};
	std::array<std::optional<Error>, kBackendKindCount> failures{};
	std::shared_ptr<MemoryBudget> budget{};
};

DeviceSet::DeviceSet(std::shared_ptr<MemoryBudget> budget) : state_(std::make_unique<State>())
{
	state_->budget = budget ? std::move(budget) : processBudget();
}

const std::shared_ptr<MemoryBudget> &DeviceSet::budget() const noexcept
{
	return state_->budget;
}
DeviceSet::~DeviceSet() = default;

std::string DeviceSet::describe() const
{
	std::string opened, failed;
	std::lock_guard<std::mutex> lock(state_->mutex);
	for (size_t i = 0; i < kBackendKindCount; ++i) {
		const char *kind = backendKindName(static_cast<BackendKind>(i));
		if (const BackendRef &backend = state_->backends[i]) {
			opened += opened.empty() ? "" : ", ";
			opened += std::string(kind) + " on " + backend->deviceInfo().name;
		} else if (state_->failures[i]) {
			failed += failed.empty() ? "" : ", ";
			failed += kind;
		}
	}
	if (opened.empty() && failed.empty())
		return "no backend opened yet";
	if (failed.empty())
		return opened;
	return (opened.empty() ? std::string("none opened") : opened) + "; " + failed +
	       " did not open";
}

Result<BackendRef> DeviceSet::backend(BackendKind kind)
{
	const auto index = static_cast<size_t>(kind);
	if (index >= kBackendKindCount)
		return Error::format(ErrorCode::InvalidArgument, "kind", "no backend kind %zu",
				     index);
	std::lock_guard<std::mutex> lock(state_->mutex);
	if (state_->backends[index])
		return state_->backends[index];
	if (state_->failures[index])
		return *state_->failures[index];
	// Opened under the lock: two elements asking at once must get the same device.
	BackendOpenOptions options;
	options.budget = state_->budget;
	Result<BackendRef> opened = openBackend(kind, options);
	if (!opened.ok()) {
		state_->failures[index] = opened.error();
		return std::move(opened).error();
	}
	state_->backends[index] = *opened;
	return *opened;
}

void DeviceSet::setBackend(BackendRef backend)
{
	if (!backend)
		return;
	const auto index = static_cast<size_t>(backend->kind());
	std::lock_guard<std::mutex> lock(state_->mutex);
	state_->backends[index] = std::move(backend);
	state_->failures[index].reset();
}

GstContext *devicesContextNew(const DeviceSetRef &devices)
{
	GstContext *context = gst_context_new(kDevicesContextType, TRUE);
	GstStructure *s = gst_context_writable_structure(context);
	GstGpuHandleDeviceSet boxed{ devices };
	gst_structure_set(s, kField, gst_gpu_handle_device_set_get_type(), &boxed, nullptr);
	return context;
}

DeviceSetRef devicesFromContext(GstContext *context)
{
	if (!context || g_strcmp0(gst_context_get_context_type(context), kDevicesContextType) != 0)
		return {};
	const GstStructure *s = gst_context_get_structure(context);
	GstGpuHandleDeviceSet *boxed = nullptr;
	if (!gst_structure_get(s, kField, gst_gpu_handle_device_set_get_type(), &boxed, nullptr) ||
	    !boxed)
		return {};
	DeviceSetRef devices = boxed->devices;
	deviceSetFree(boxed);
	return devices;
}

DeviceSetRef DevicesSlot::get() const
{
	std::lock_guard<std::mutex> lock(mutex_);
	return devices_;
}

void DevicesSlot::set(DeviceSetRef devices)
{
	std::lock_guard<std::mutex> lock(mutex_);
	devices_ = std::move(devices);
}

namespace {

// Asks the peers of `element`'s pads of one direction; true once one answered with a set.
bool queryPeers(GstElement *element, GstPadDirection direction, DevicesSlot &slot)
{
	std::vector<GstPad *> pads;
	GST_OBJECT_LOCK(element);
	for (GList *l = direction == GST_PAD_SRC ? element->srcpads : element->sinkpads; l;
	     l = l->next)
		pads.push_back(static_cast<GstPad *>(gst_object_ref(l->data)));
	GST_OBJECT_UNLOCK(element);
	bool found = false;
	for (GstPad *pad : pads) {
		if (!found) {
			GstQuery *query = gst_query_new_context(kDevicesContextType);
			if (gst_pad_peer_query(pad, query)) {
				GstContext *context = nullptr;
				gst_query_parse_context(query, &context);
				if (DeviceSetRef devices = devicesFromContext(context)) {
					GST_DEBUG_OBJECT(element, "devices from a %s peer",
							 direction == GST_PAD_SRC ? "downstream"
										  : "upstream");
					slot.set(std::move(devices));
					found = true;
				}
			}
			gst_query_unref(query);
		}
		gst_object_unref(pad);
	}
	return found;
}

} // namespace

DeviceSetRef ensureDevices(GstElement *element, DevicesSlot &slot)
{
	initDebug();
	if (DeviceSetRef devices = slot.get())
		return devices;
	// One element at a time looks and, finding nothing, makes and announces a set: two
	// streaming threads (elements on either side of a queue) would otherwise both make one,
	// and open every device twice. The second finds the first's through its peers or its bin.
	static std::recursive_mutex lookup;
	std::lock_guard<std::recursive_mutex> lock(lookup);
	if (DeviceSetRef devices = slot.get())
		return devices;
	if (queryPeers(element, GST_PAD_SRC, slot) || queryPeers(element, GST_PAD_SINK, slot))
		return slot.get();
	// A bin that knows the context (or an application's sync handler) calls set_context on
	// the element before post returns.
	gst_element_post_message(element, gst_message_new_need_context(GST_OBJECT_CAST(element),
								       kDevicesContextType));
	if (DeviceSetRef devices = slot.get())
		return devices;
	auto devices = std::make_shared<DeviceSet>();
	slot.set(devices);
	GST_DEBUG_OBJECT(element, "no gpuhandle devices shared yet: announcing a new set");
	gst_element_post_message(element, gst_message_new_have_context(GST_OBJECT_CAST(element),
								       devicesContextNew(devices)));
	return devices;
}

gboolean handleDevicesQuery(GstQuery *query, const DevicesSlot &slot)
{
	if (GST_QUERY_TYPE(query) != GST_QUERY_CONTEXT)
		return FALSE;
	const gchar *type = nullptr;
	if (!gst_query_parse_context_type(query, &type) ||
	    g_strcmp0(type, kDevicesContextType) != 0)
		return FALSE;
	DeviceSetRef devices = slot.get();
	if (!devices)
		return FALSE;
	GstContext *context = devicesContextNew(devices);
	gst_query_set_context(query, context);
	gst_context_unref(context);
	return TRUE;
}

void handleDevicesSetContext(GstContext *context, DevicesSlot &slot)
{
	if (DeviceSetRef devices = devicesFromContext(context))
		slot.set(std::move(devices));
}

} // namespace gpuhandle::gst
