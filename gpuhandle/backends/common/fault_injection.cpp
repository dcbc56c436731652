// Fault injection: a Backend wrapper that fails planned steps, and the environment hook.
#include <gpuhandle/backends/fault_injection.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace gpuhandle {

namespace {

std::atomic<uint64_t> g_injected{ 0 };

// Calls counted for one plan, shared by every backend it wraps.
struct FaultCounter {
	FaultPlan plan;
	std::atomic<uint64_t> calls{ 0 };

	explicit FaultCounter(const FaultPlan &p) : plan(p) {}

	// The error for this call of `step`, when it is one of the planned ones.
	std::optional<Error> check(FaultStep step, BackendKind kind)
	{
		if (step != plan.step || (plan.only && *plan.only != kind))
			return std::nullopt;
		const uint64_t n = calls.fetch_add(1, std::memory_order_relaxed);
		if (n < plan.afterCalls ||
		    (plan.count && n >= uint64_t(plan.afterCalls) + plan.count))
			return std::nullopt;
		g_injected.fetch_add(1, std::memory_order_relaxed);
		return Error::format(plan.code, faultStepName(step),
				     "%s: injected fault: %s call %llu fails with %s "
				     "(GPUHANDLE_FAULT_INJECTION or injectFaults()).",
				     backendKindName(kind), faultStepName(step),
				     static_cast<unsigned long long>(n + 1),
				     errorCodeName(plan.code));
	}
};

class FaultInjectingBackend final : public Backend
{
public:
	FaultInjectingBackend(BackendRef inner, std::shared_ptr<FaultCounter> counter)
		: Backend(inner->deviceInfo(), inner->capabilities(), inner->context()),
		  inner_(std::move(inner)), counter_(std::move(counter))
	{
	}

	bool supportsFormat(PixelFormat format, FrameStorage storage) const override
	{
		return inner_->supportsFormat(format, storage);
	}
	Result<Frame> allocate(const AllocateRequest &request) override
	{
		if (auto e = fault(FaultStep::Allocate))
			return std::move(*e);
		return inner_->allocate(request);
	}
	Result<Frame> exportFrame(const Frame &frame, ResourceKind kind) override
	{
		if (auto e = fault(FaultStep::Export))
			return std::move(*e);
		return inner_->exportFrame(frame, kind);
	}
	Result<Frame> importFrame(const Frame &frame, ImportRoute route) override
	{
		if (auto e = fault(FaultStep::Import))
			return std::move(*e);
		return inner_->importFrame(frame, route);
	}
	Result<CpuMapping> map(const Frame &frame, MapAccess access, WaitDuration timeout) override
	{
		if (auto e = fault(FaultStep::Wait))
			return std::move(*e);
		if (auto e = fault(FaultStep::Map))
			return std::move(*e);
		return inner_->map(frame, access, timeout);
	}
	Status copyFrame(const Frame &dst, const Frame &src, WaitDuration timeout) override
	{
		if (auto e = fault(FaultStep::Wait))
			return std::move(*e);
		if (auto e = fault(FaultStep::Copy))
			return std::move(*e);
		return inner_->copyFrame(dst, src, timeout);
	}
	bool holds(const Frame &frame) const override { return inner_->holds(frame); }
	std::vector<uint64_t> dmaBufImportModifiers(PixelFormat format) const override
	{
		return inner_->dmaBufImportModifiers(format);
	}
	Result<SyncPoint> exportFence(const SyncPoint &point) override
	{
		return inner_->exportFence(point);
	}
	Result<SyncPoint> importFence(const SyncPoint &point) override
	{
		return inner_->importFence(point);
	}

private:
	std::optional<Error> fault(FaultStep step) { return counter_->check(step, kind()); }

	BackendRef inner_;
	std::shared_ptr<FaultCounter> counter_;
};

// One counter per distinct plan while a backend wrapped with it lives; `keep` holds it for
// the rest of the process (the environment's plan).
std::shared_ptr<FaultCounter> counterFor(const FaultPlan &plan, bool keep)
{
	static std::mutex mutex;
	static std::vector<std::weak_ptr<FaultCounter>> counters;
	static std::vector<std::shared_ptr<FaultCounter>> kept;
	std::lock_guard lock(mutex);
	std::erase_if(counters, [](const auto &weak) { return weak.expired(); });
	std::shared_ptr<FaultCounter> counter;
	for (const auto &weak : counters) {
		auto live = weak.lock();
		if (live && live->plan == plan)
			counter = std::move(live);
	}
	if (!counter) {
		counter = std::make_shared<FaultCounter>(plan);
		counters.push_back(counter);
	}
	if (keep && std::find(kept.begin(), kept.end(), counter) == kept.end())
		kept.push_back(counter);
	return counter;
}

std::vector<std::string_view> split(std::string_view text)
{
	std::vector<std::string_view> parts;
	size_t start = 0;
	for (;;) {
		const size_t colon = text.find(':', start);
		parts.push_back(text.substr(start, colon - start));
		if (colon == std::string_view::npos)
			return parts;
		start = colon + 1;
	}
}

bool sameName(std::string_view given, const char *name)
{
	if (given.size() != std::char_traits<char>::length(name))
		return false;
	for (size_t i = 0; i < given.size(); ++i) {
		const char c = given[i] == '_' ? '-' : given[i];
		if (c != name[i])
			return false;
	}
	return true;
}

std::optional<uint32_t> number(std::string_view text)
{
	uint32_t value = 0;
	auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
	if (ec != std::errc() || end != text.data() + text.size() || text.empty())
		return std::nullopt;
	return value;
}

Error badPlan(std::string_view text, const char *why)
{
	return Error::format(ErrorCode::InvalidArgument, "GPUHANDLE_FAULT_INJECTION",
			     "Fault plan \"%.*s\": %s (expected step:after[:count]:code[:backend], "
			     "e.g. map:20:device-lost).",
			     static_cast<int>(std::min<size_t>(text.size(), 80)), text.data(), why);
}

} // namespace

const char *faultStepName(FaultStep step) noexcept
{
	switch (step) {
	case FaultStep::Allocate: return "allocate";
	case FaultStep::Export: return "export";
	case FaultStep::Import: return "import";
	case FaultStep::Map: return "map";
	case FaultStep::Copy: return "copy";
	case FaultStep::Wait: return "wait";
	}
	return "unknown";
}

BackendRef injectFaults(BackendRef backend, const FaultPlan &plan)
{
	if (!backend)
		return backend;
	return std::make_shared<FaultInjectingBackend>(std::move(backend), counterFor(plan, false));
}

Result<FaultPlan> parseFaultPlan(std::string_view text)
{
	const auto parts = split(text);
	if (parts.size() < 3 || parts.size() > 5)
		return badPlan(text, "it needs 3 to 5 parts");
	FaultPlan plan;
	bool stepFound = false;
	for (uint32_t s = 0; s < kFaultStepCount; ++s) {
		if (sameName(parts[0], faultStepName(static_cast<FaultStep>(s)))) {
			plan.step = static_cast<FaultStep>(s);
			stepFound = true;
		}
	}
	if (!stepFound)
		return badPlan(text, "the step is not allocate, export, import, map, copy or wait");
	auto after = number(parts[1]);
	if (!after)
		return badPlan(text, "the number of calls before the fault is not a number");
	plan.afterCalls = *after;
	size_t next = 2;
	if (auto count = number(parts[next]); count && parts.size() >= 4) {
		plan.count = *count;
		++next;
	}
	if (next >= parts.size())
		return badPlan(text, "the error code is missing");
	bool codeFound = false;
	for (int32_t c = 1; c <= static_cast<int32_t>(ErrorCode::Fatal); ++c) {
		if (sameName(parts[next], errorCodeName(static_cast<ErrorCode>(c)))) {
			plan.code = static_cast<ErrorCode>(c);
			codeFound = true;
		}
	}
	if (!codeFound)
		return badPlan(text, "the error code is not one of gpuhandle's (device-lost, "
				     "out-of-memory, timeout ...)");
	if (++next < parts.size()) {
		for (uint32_t k = 0; k < 32 && !plan.only; ++k) {
			if (sameName(parts[next], backendKindName(static_cast<BackendKind>(k))))
				plan.only = static_cast<BackendKind>(k);
		}
		if (!plan.only)
			return badPlan(text, "the backend is not one gpuhandle has");
		++next;
	}
	if (next != parts.size())
		return badPlan(text, "it has parts left over");
	return plan;
}

uint64_t faultsInjected() noexcept
{
	return g_injected.load(std::memory_order_relaxed);
}

namespace detail {

// openBackend's hook: the environment's plan, parsed once per distinct value.
Result<BackendRef> applyEnvironmentFaults(BackendRef backend)
{
	const char *text = std::getenv("GPUHANDLE_FAULT_INJECTION");
	if (!text || !*text)
		return backend;
	static std::mutex mutex;
	static std::string parsedText;
	static FaultPlan parsedPlan;
	FaultPlan plan;
	{
		std::lock_guard lock(mutex);
		if (parsedText != text) {
			auto parsed = parseFaultPlan(text);
			if (!parsed.ok())
				return std::move(parsed).error();
			parsedPlan = *parsed;
			parsedText = text;
		}
		plan = parsedPlan;
	}
	if (plan.only && *plan.only != backend->kind())
		return backend;
	// Counted for the whole process: a restarted pipeline's new backends see the fault once.
	return BackendRef(std::make_shared<FaultInjectingBackend>(std::move(backend),
								  counterFor(plan, true)));
}

} // namespace detail

} // namespace gpuhandle
