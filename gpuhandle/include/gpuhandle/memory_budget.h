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
	BackendKind backend{}; // listed at most once
	BudgetCaps caps{};     // its soft and hard caps
};

// How close a backend's usage is to its caps (MemoryBudget::pressure(), pressure events).
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
	BackendKind backend{};  // the backend reserved on
	BudgetPressure level{}; // Soft or Hard, never None
	// The size of the reservation that caused the event.
	uint64_t requestedBytes{};
	// Bytes reserved on the backend (with or without the new reservation: see above).
	uint64_t usageBytes{};
	// The backend's soft cap then; none when uncapped.
	std::optional<uint64_t> softCap{};
	// The backend's hard cap then; none when uncapped.
	std::optional<uint64_t> hardCap{};
};

// Runs on the reserving thread, never concurrently with itself. It may reserve, release and
// (un)register, but a reservation made inside it starts no pressure handling of its own (over
// the hard cap it fails at once). Keep it short; never wait on a thread that reserves from the
// same budget.
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
	// Takes other's bytes; other is left empty.
	BudgetReservation(BudgetReservation &&other) noexcept;
	// Releases this reservation's bytes first, then takes other's.
	BudgetReservation &operator=(BudgetReservation &&other) noexcept;
	BudgetReservation(const BudgetReservation &) = delete;
	BudgetReservation &operator=(const BudgetReservation &) = delete;
	~BudgetReservation() { release(); }

	// Bytes held: 0 once released or moved from.
	uint64_t bytes() const noexcept { return bytes_; }
	// The backend the bytes are held on.
	BackendKind backend() const noexcept { return backend_; }
	// True when no bytes are held (default-made, released or moved from).
	bool isEmpty() const noexcept { return bytes_ == 0; }
	// Gives the bytes back now (no lock, no allocation); nothing happens when empty.
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
// A registered pool or pressure callback (the library's own).
class GPUHANDLE_LOCAL BudgetListener;
} // namespace detail

// Registration of a pool or a pressure callback; move-only. Once reset() or the destructor
// returns, the budget never calls it again and no call of it is still running (unless reset()
// is called from inside that very call). Keeps its budget alive.
class [[nodiscard]] BudgetRegistration
{
public:
	BudgetRegistration() noexcept = default;
	// Takes other's registration; other is left inactive.
	BudgetRegistration(BudgetRegistration &&other) noexcept = default;
	// Resets this registration first, then takes other's.
	BudgetRegistration &operator=(BudgetRegistration &&other) noexcept;
	BudgetRegistration(const BudgetRegistration &) = delete;
	BudgetRegistration &operator=(const BudgetRegistration &) = delete;
	~BudgetRegistration() { reset(); }

	// True while registered: not default-made, reset or moved from.
	bool isActive() const noexcept { return listener_ != nullptr; }
	// Unregisters now (see above); nothing happens when inactive.
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
	// Each backend listed at most once; the others are uncapped. InvalidArgument, naming the
	// entry ("caps[1].softBytes"), for an unknown or repeated backend or a soft cap above the
	// hard cap.
	static Result<std::shared_ptr<MemoryBudget>>
	create(std::span<const BackendBudgetCaps> caps);
	// The same from a braced list; no caps at all by default.
	static Result<std::shared_ptr<MemoryBudget>>
	create(std::initializer_list<BackendBudgetCaps> caps = {});
	~MemoryBudget();
	MemoryBudget(const MemoryBudget &) = delete;
	MemoryBudget &operator=(const MemoryBudget &) = delete;

	// Reserves `bytes` on `backend`. Within the hard cap: one compare-and-swap, no lock and no
	// allocation (crossing the soft cap tells the callbacks once, with a Soft event). Above it,
	// one thread per backend at a time runs the callbacks (a Hard event), then asks the pools,
	// largest first, retrying after each. ZeroSize for 0 bytes, InvalidArgument for an unknown
	// backend, OutOfMemory when no room is made.
	Result<BudgetReservation> tryReserve(BackendKind backend, uint64_t bytes);

	// `pool` is asked to evict when a reservation on `backend` would exceed its hard cap.
	// Borrowed until the registration is reset: reset it before the pool is destroyed.
	// InvalidArgument for an unknown backend.
	Result<BudgetRegistration> registerPool(BackendKind backend, EvictablePool &pool);
	// Told of soft-cap crossings and hard-cap pressure on every backend; NullHandle when empty.
	Result<BudgetRegistration> registerPressureCallback(BudgetPressureCallback callback);

	// Bytes reserved on `backend` now (0 for an unknown backend).
	uint64_t usage(BackendKind backend) const noexcept;
	// The most bytes reserved on `backend` at once since the budget was made.
	uint64_t peakUsage(BackendKind backend) const noexcept;
	// The caps of `backend` (none for an unknown backend).
	BudgetCaps caps(BackendKind backend) const noexcept;
	// Replaces the caps of `backend`. Reservations already held stay: usage above a lowered
	// hard cap is not taken back, the next reservation that would exceed it goes through
	// pressure handling. A cap of UINT64_MAX is none. InvalidArgument for an unknown backend
	// or a soft cap above the hard one.
	Status setCaps(BackendKind backend, const BudgetCaps &caps);
	// Bytes reservable without pressure handling: the hard cap less the usage (UINT64_MAX when
	// uncapped, 0 for an unknown backend).
	uint64_t available(BackendKind backend) const noexcept;
	// The pressure `backend` would be under with `extraBytes` more reserved: a snapshot, which
	// other threads may change at once (None for an unknown backend).
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
