// An element's side of the process's memory budget: its `memory-budget` property, the cap it
// sets, the error an allocation past the cap posts, and the figures in its `stats`.
#pragma once

#include <gpuhandle/backends/backend.h>
#include <gpuhandle/memory_budget.h>

#include <memory>
#include <mutex>
#include <string>

#include <gst/gst.h>

namespace gpuhandle::gst {

// The `memory-budget` property: a string, "" (the default) leaving the budget's cap as it is.
GParamSpec *memoryBudgetParamSpec();

// Sets the hard cap `text` names (see parseBudgetCap) on the budget of `backend`, for its
// kind, when `text` is not empty; the soft cap goes if it would be above it. False, with an
// element error, for a text that names no cap, or a cap asked of a backend that has no budget
// (one the application opened without one and put in the pipeline's DeviceSet).
bool applyMemoryBudget(GstElement *element, const std::string &text, const BackendRef &backend);

// Whether `text` names a cap at all (a number and a unit, or a share), for a backend whose
// frames charge nothing (cpu frames wrap their input in place): false, with an element error,
// for one that does not, as applyMemoryBudget says of it where a budget applies.
bool checkMemoryBudget(GstElement *element, const std::string &text);

// Posts why the pool gave no buffer (its last allocation's error, such as a budget's refusal
// with the bytes asked, in use and the cap) as an element error; `ret` is the acquire's.
void postPoolError(GstElement *element, GstBufferPool *pool, GstFlowReturn ret);

// The budget figures an element's `stats` carry: set from the streaming thread when the
// element has its backend (and pool), read from any thread by the property.
class BudgetStats
{
public:
	// `pool` may be null (no pool: nothing is evicted); a reference is taken.
	void set(const BackendRef &backend, GstBufferPool *pool);
	void clear();
	// Adds budget-bytes, budget-peak-bytes, budget-cap-bytes and pool-evictions (guint64) to
	// `stats`; zeros while the element has no budgeted backend.
	void addTo(GstStructure *stats) const;
	~BudgetStats() { clear(); }

private:
	mutable std::mutex mutex_{};
	std::shared_ptr<MemoryBudget> budget_{};
	BackendKind kind_ = BackendKind::Cpu;
	GstBufferPool *pool_ = nullptr;
};

} // namespace gpuhandle::gst
