// MemoryBudget: per-backend soft/hard caps (changeable), RAII reservations, evictable pools,
// pressure callbacks, peak usage.
#pragma once

#include <gpuhandle/backend_kind.h>
#include <gpuhandle/export.h>
#include <gpuhandle/result.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>

namespace GPUHANDLE_API gpuhandle {

class MemoryBudget;

// Caps of one backend; std::nullopt means "no cap". softBytes <= hardBytes when both are set.
struct BudgetCaps {
	std::optional<uint64_t> softBytes{}; // crossing it succeeds but notifies pressure callbacks
	std::optional<uint64_t> hardBytes{}; // usage never exceeds it
};

// One backend's caps, as given to MemoryBudget::create(). Backends not listed are uncapped.
struct BackendBudgetCaps {
	BackendKind backend{};
	BudgetCaps caps{};
};

enum class BudgetPressure : uint32_t {
	None = 0, // within the soft cap
	Soft = 1, // above the soft cap, within the hard cap
	Hard = 2, // a reservation would exceed the hard cap
};

// "none", "soft", "hard", or "unknown".
GPUHANDLE_API const char *budgetPressureName(BudgetPressure pressure) noexcept;

// What a pressure callback is told. usageBytes counts the new reservation for Soft (it was
// granted) and not for Hard (it is still pending).
struct BudgetPressureEvent {
	BackendKind backend{};
	BudgetPressure level{}; // Soft or Hard, never None
	uint64_t requestedBytes{};
	uint64_t usageBytes{};
	std::optional<uint64_t> softCap{};
	std::optional<uint64_t> hardCap{};
};

using BudgetPressureCallback = std::function<void(const BudgetPressureEvent &event)>;

// A producer's cache whose memory is counted through reservations it holds; evicting releases them.
class EvictablePool
{
public:
	virtual ~EvictablePool() = default;
	// Frees unused memory, ideally at least wantedBytes; returns the bytes freed.
	virtual uint64_t evictUnused(uint64_t wantedBytes) = 0;
	// Bytes this pool holds from the budget; the largest pools are asked first.
	virtual uint64_t bytesInUse() const = 0;
};

// Bytes held on one backend; move-only, given back by release() or the destructor. Keeps its
// budget alive. Thread safety: one object is used by one thread at a time.
class [[nodiscard]] BudgetReservation
{
public:
	BudgetReservation() noexcept = default;
	BudgetReservation(BudgetReservation &&other) noexcept;
	BudgetReservation &operator=(BudgetReservation &&other) noexcept;
	BudgetReservation(const BudgetReservation &) = delete;
	BudgetReservation &operator=(const BudgetReservation &) = delete;
	~BudgetReservation() { release(); }

	uint64_t bytes() const noexcept { return bytes_; }
	BackendKind backend() const noexcept { return backend_; }
	bool isEmpty() const noexcept { return bytes_ == 0; }
	void release() noexcept;
	// Gives back all but newBytes (newBytes == 0 releases); growing is refused.
	Status shrink(uint64_t newBytes);

private:
	friend class MemoryBudget;
	BudgetReservation(std::shared_ptr<MemoryBudget> budget, BackendKind backend,
			  uint64_t bytes) noexcept;

	std::shared_ptr<MemoryBudget> budget_;
	BackendKind backend_ = BackendKind::Cpu;
	uint64_t bytes_ = 0;
};

namespace detail {
class GPUHANDLE_LOCAL BudgetListener;
} // namespace detail

// Registration of a pool or a pressure callback; move-only. Once reset() or the destructor
// returns, the budget never calls it again and no call of it is still running (unless reset()
// is called from inside that very call). Keeps its budget alive.
class [[nodiscard]] BudgetRegistration
{
public:
	BudgetRegistration() noexcept = default;
	BudgetRegistration(BudgetRegistration &&other) noexcept = default;
	BudgetRegistration &operator=(BudgetRegistration &&other) noexcept;
	BudgetRegistration(const BudgetRegistration &) = delete;
	BudgetRegistration &operator=(const BudgetRegistration &) = delete;
	~BudgetRegistration() { reset(); }

	bool isActive() const noexcept { return listener_ != nullptr; }
	void reset() noexcept;

private:
	friend class MemoryBudget;
	GPUHANDLE_LOCAL
	BudgetRegistration(std::shared_ptr<MemoryBudget> budget,
			   std::shared_ptr<detail::BudgetListener> listener) noexcept;

	std::shared_ptr<MemoryBudget> budget_;
	std::shared_ptr<detail::BudgetListener> listener_;
};

// Per-backend byte accounting with soft/hard caps. Thread safety: every member may be called
// from any thread; callbacks and pools run on the reserving thread.
class MemoryBudget : public std::enable_shared_from_this<MemoryBudget>
{
public:
	static Result<std::shared_ptr<MemoryBudget>>
	create(std::span<const BackendBudgetCaps> caps);
	static Result<std::shared_ptr<MemoryBudget>>
	create(std::initializer_list<BackendBudgetCaps> caps = {});
	~MemoryBudget();
	MemoryBudget(const MemoryBudget &) = delete;
	MemoryBudget &operator=(const MemoryBudget &) = delete;

	Result<BudgetReservation> tryReserve(BackendKind backend, uint64_t bytes);

	Result<BudgetRegistration> registerPool(BackendKind backend, EvictablePool &pool);
	Result<BudgetRegistration> registerPressureCallback(BudgetPressureCallback callback);

	uint64_t usage(BackendKind backend) const noexcept;
	uint64_t peakUsage(BackendKind backend) const noexcept;
	BudgetCaps caps(BackendKind backend) const noexcept;
	Status setCaps(BackendKind backend, const BudgetCaps &caps);
	uint64_t available(BackendKind backend) const noexcept;
	BudgetPressure pressure(BackendKind backend, uint64_t extraBytes = 0) const noexcept;

private:
	struct GPUHANDLE_LOCAL State;
	friend class BudgetReservation;
	friend class BudgetRegistration;

	explicit MemoryBudget(std::span<const BackendBudgetCaps> caps);
	BudgetReservation grant(uint32_t index, uint64_t bytes, uint64_t before);
	Result<BudgetReservation> reserveUnderPressure(uint32_t index, uint64_t bytes);
	void giveBack(BackendKind backend, uint64_t bytes) noexcept;
	GPUHANDLE_LOCAL void
	unregister(const std::shared_ptr<detail::BudgetListener> &listener) noexcept;

	std::unique_ptr<State> state_;
};

} // namespace gpuhandle
