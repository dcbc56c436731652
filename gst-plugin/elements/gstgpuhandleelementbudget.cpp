// An element's side of the process's memory budget (see gstgpuhandleelementbudget.h).
#include "gstgpuhandleelementbudget.h"

#include "gstgpuhandleelements.h"

#include <gst/gpuhandle/gstgpuhandlebudget.hpp>
#include <gst/gpuhandle/gstgpuhandlebufferpool.hpp>

namespace gpuhandle::gst {

GParamSpec *memoryBudgetParamSpec()
{
	return g_param_spec_string(
		"memory-budget", "Memory budget",
		"Hard cap on the memory gpuhandle frames of this element's backend may hold in "
		"this process, shared by every gpuhandle element: bytes (\"512M\", \"2GiB\") or "
		"a share of the device's memory (\"25%\"); empty leaves the cap as it is. Idle "
		"pooled frames are freed first; past the cap an allocation is an element error",
		"",
		static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
					 GST_PARAM_MUTABLE_READY));
}

namespace {

// The element error for a budget text that cannot be applied, and why; false.
bool refuseBudget(GstElement *element, const std::string &text, const Error &why)
{
	GPUHANDLE_ELEMENT_ERROR(element, RESOURCE, SETTINGS,
				(_("The memory budget \"%s\" cannot be applied."), text.c_str()),
				why);
	return false;
}

} // namespace

bool checkMemoryBudget(GstElement *element, const std::string &text)
{
	// A share needs a device's size: any size will do to check the words (1 TiB).
	Result<std::optional<uint64_t>> cap = parseBudgetCap(text, uint64_t(1) << 40);
	if (!cap.ok())
		return refuseBudget(element, text, cap.error());
	return true;
}

bool applyMemoryBudget(GstElement *element, const std::string &text, const BackendRef &backend)
{
	if (text.empty())
		return true;
	if (!backend)
		return checkMemoryBudget(element, text);
	const std::shared_ptr<MemoryBudget> &budget = backend->budget();
	if (!budget) {
		GST_ELEMENT_ERROR(element, RESOURCE, SETTINGS,
				  (_("The memory budget \"%s\" cannot be applied."), text.c_str()),
				  ("the %s backend in the pipeline's device set was opened without "
				   "a budget (BackendOpenOptions::budget)",
				   backendKindName(backend->kind())));
		return false;
	}
	Result<std::optional<uint64_t>> cap = parseBudgetCap(text, budgetBaseBytes(*backend));
	if (!cap.ok())
		return refuseBudget(element, text, cap.error());
	const BackendKind kind = backend->kind();
	BudgetCaps caps = budget->caps(kind);
	caps.hardBytes = *cap;
	if (caps.softBytes && caps.hardBytes && *caps.softBytes > *caps.hardBytes)
		caps.softBytes.reset();
	if (Status set = budget->setCaps(kind, caps); !set.ok())
		return refuseBudget(element, text, set.error());
	GST_INFO_OBJECT(element, "memory budget of %s: %s (%" G_GUINT64_FORMAT " bytes in use)",
			backendKindName(kind), text.c_str(),
			static_cast<guint64>(budget->usage(kind)));
	return true;
}

void postPoolError(GstElement *element, GstBufferPool *pool, GstFlowReturn ret)
{
	if (ret == GST_FLOW_FLUSHING)
		return; // stopping, not failing
	if (std::optional<Error> why = bufferPoolLastError(pool)) {
		GPUHANDLE_ELEMENT_ERROR(element, RESOURCE, NO_SPACE_LEFT,
					(_("Could not allocate gpuhandle frames.")), *why);
		return;
	}
	GST_ELEMENT_ERROR(element, RESOURCE, NO_SPACE_LEFT,
			  (_("Could not allocate gpuhandle frames.")),
			  ("the pool gave no buffer (%s)", gst_flow_get_name(ret)));
}

void BudgetStats::set(const BackendRef &backend, GstBufferPool *pool)
{
	std::lock_guard<std::mutex> lock(mutex_);
	budget_ = backend ? backend->budget() : nullptr;
	kind_ = backend ? backend->kind() : BackendKind::Cpu;
	if (pool)
		gst_object_ref(pool);
	if (pool_)
		gst_object_unref(pool_);
	pool_ = pool;
}

void BudgetStats::clear()
{
	set(nullptr, nullptr);
}

void BudgetStats::addTo(GstStructure *stats) const
{
	std::lock_guard<std::mutex> lock(mutex_);
	if (budget_)
		addBudgetStats(stats, *budget_, kind_);
	else
		gst_structure_set(stats, "budget-bytes", G_TYPE_UINT64, guint64{ 0 },
				  "budget-peak-bytes", G_TYPE_UINT64, guint64{ 0 },
				  "budget-cap-bytes", G_TYPE_UINT64, guint64{ 0 }, nullptr);
	gst_structure_set(stats, "pool-evictions", G_TYPE_UINT64,
			  static_cast<guint64>(bufferPoolEvictions(pool_)), nullptr);
}

} // namespace gpuhandle::gst
