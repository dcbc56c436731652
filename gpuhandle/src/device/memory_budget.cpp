// MemoryBudget: lock-free accounting on the fast path, serialised pressure handling otherwise.
#include <gpuhandle/memory_budget.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

namespace gpuhandle {

namespace detail {

// A registered pool or pressure callback. callMutex_ is held for the whole of every call, so
// retire() (which takes it) cannot return while a call runs on another thread.
class BudgetListener
{
public:
	BudgetListener(uint32_t backendIndex, EvictablePool *pool)
		: backendIndex_(backendIndex), pool_(pool)
	{
	}
	explicit BudgetListener(BudgetPressureCallback callback) : callback_(std::move(callback)) {}

	uint32_t backendIndex() const noexcept { return backendIndex_; }
	EvictablePool *pool() const noexcept { return pool_; }
	const BudgetPressureCallback &callback() const noexcept { return callback_; }

	// Runs fn() unless retired; returns whether it ran.
	template<typename Fn>
	bool call(Fn &&fn)
	{
		std::lock_guard lock(callMutex_);
		if (retired_)
			return false;
		CallerScope caller(caller_);
		fn();
		return true;
	}

	void retire() noexcept
	{
		// Retiring from inside our own call: this thread already holds callMutex_ further
		// up its stack, so locking again would deadlock and is not needed.
		if (caller_.load(std::memory_order_relaxed) == std::this_thread::get_id()) {
			retired_ = true;
			return;
		}
		std::lock_guard lock(callMutex_);
		retired_ = true;
	}

private:
	struct CallerScope {
		explicit CallerScope(std::atomic<std::thread::id> &id) : id_(id)
		{
			id_.store(std::this_thread::get_id(), std::memory_order_relaxed);
		}
		~CallerScope() { id_.store(std::thread::id(), std::memory_order_relaxed); }
		std::atomic<std::thread::id> &id_;
	};

	uint32_t backendIndex_ = 0;
	EvictablePool *pool_ = nullptr;
	BudgetPressureCallback callback_;
	std::mutex callMutex_;
	std::atomic<std::thread::id> caller_{};
	bool retired_ = false; // guarded by callMutex_
};

} // namespace detail

namespace {

using ListenerList = std::vector<std::shared_ptr<detail::BudgetListener>>;
// Copy-on-write: readers take a reference under the registry mutex and iterate without it.
using ListenerListRef = std::shared_ptr<const ListenerList>;

// Depth of pressure handling (callbacks, evictions) on this thread, over every budget. A thread
// inside a handler starts no further handling, so handlers can reserve without deadlocking.
thread_local uint32_t tHandlerDepth = 0;

struct HandlerScope {
	HandlerScope() noexcept { ++tHandlerDepth; }
	~HandlerScope() { --tHandlerDepth; }
	HandlerScope(const HandlerScope &) = delete;
	HandlerScope &operator=(const HandlerScope &) = delete;
};

constexpr uint64_t kNoCap = UINT64_MAX;

std::optional<uint64_t> capOf(const std::atomic<uint64_t> &cap) noexcept
{
	const uint64_t value = cap.load(std::memory_order_relaxed);
	return value == kNoCap ? std::nullopt : std::optional<uint64_t>(value);
}

bool indexOf(BackendKind backend, uint32_t &index) noexcept
{
	index = static_cast<uint32_t>(backend);
	return index < kBackendKindCount;
}

unsigned long long ull(uint64_t value)
{
	return static_cast<unsigned long long>(value);
}

} // namespace

struct MemoryBudget::State {
	// One cache line per backend, so reservations on different backends do not contend. The
	// caps are atomics (kNoCap: none) because setCaps() may change them while others reserve.
	struct alignas(64) Backend {
		std::atomic<uint64_t> usage{ 0 };
		std::atomic<uint64_t> peak{ 0 };
		std::atomic<uint64_t> hard{ kNoCap };
		std::atomic<uint64_t> soft{ kNoCap };
		std::mutex pressureMutex; // serialises the slow path of this backend
		ListenerListRef pools;    // guarded by registryMutex
	};

	std::array<Backend, kBackendKindCount> backends;
	mutable std::mutex registryMutex;
	ListenerListRef callbacks; // guarded by registryMutex

	ListenerListRef snapshot(const ListenerListRef &list) const
	{
		std::lock_guard lock(registryMutex);
		return list;
	}

	void add(ListenerListRef &list, std::shared_ptr<detail::BudgetListener> listener)
	{
		std::lock_guard lock(registryMutex);
		auto next = list ? std::make_shared<ListenerList>(*list)
				 : std::make_shared<ListenerList>();
		next->push_back(std::move(listener));
		list = std::move(next);
	}

	// Adds usage only while it stays within the hard cap. The counter orders no other memory,
	// so relaxed is enough: read-modify-writes of one atomic are totally ordered anyway.
	static bool reserveFast(Backend &backend, uint64_t bytes, uint64_t &before) noexcept
	{
		const uint64_t limit = backend.hard.load(std::memory_order_relaxed);
		uint64_t current = backend.usage.load(std::memory_order_relaxed);
		do {
			if (bytes > limit || current > limit - bytes)
				return false;
		} while (!backend.usage.compare_exchange_weak(current, current + bytes,
							      std::memory_order_relaxed));
		before = current;
		// The peak only rises; most reservations stay below it and only read it.
		uint64_t peak = backend.peak.load(std::memory_order_relaxed);
		while (current + bytes > peak &&
		       !backend.peak.compare_exchange_weak(peak, current + bytes,
							   std::memory_order_relaxed)) {
		}
		return true;
	}

	void notify(const BudgetPressureEvent &event)
	{
		ListenerListRef list = snapshot(callbacks);
		if (!list)
			return;
		HandlerScope scope;
		for (const auto &listener : *list)
			listener->call([&] { listener->callback()(event); });
	}

	// Asks the backend's pools, largest first, for what is missing; retries after each one.
	bool evictUntilFits(Backend &backend, uint64_t bytes, uint64_t &before)
	{
		ListenerListRef list = snapshot(backend.pools);
		if (!list)
			return false;
		HandlerScope scope;
		std::vector<std::pair<uint64_t, detail::BudgetListener *>> order;
		order.reserve(list->size());
		for (const auto &listener : *list) {
			uint64_t held = 0;
			listener->call([&] { held = listener->pool()->bytesInUse(); });
			if (held > 0)
				order.emplace_back(held, listener.get());
		}
		std::stable_sort(order.begin(), order.end(),
				 [](const auto &a, const auto &b) { return a.first > b.first; });

		const uint64_t limit = backend.hard.load(std::memory_order_relaxed);
		for (const auto &[held, listener] : order) {
			const uint64_t current = backend.usage.load(std::memory_order_relaxed);
			// Usage may stand above a cap lowered by setCaps(): that excess is wanted
			// too.
			const uint64_t wanted = current + bytes > limit ? current + bytes - limit
									: 0;
			if (wanted > 0)
				listener->call(
					[&, l = listener] { l->pool()->evictUnused(wanted); });
			if (reserveFast(backend, bytes, before))
				return true;
		}
		return false;
	}
};

/**
 * \class MemoryBudget
 * \brief Byte accounting per backend with a soft and a hard cap
 *
 * A reservation within the hard cap is one compare-and-swap on the backend's counter: no lock,
 * no allocation. Crossing the soft cap still succeeds, and the reserving thread then tells the
 * pressure callbacks once with a BudgetPressure::Soft event; while usage stays above the soft
 * cap no further Soft event is sent, and falling back to or below it re-arms the notification.
 *
 * A reservation that would exceed the hard cap takes the slow path, one thread per backend at
 * a time: it retries first (another thread may have made room while it waited), then runs the
 * pressure callbacks with a BudgetPressure::Hard event and retries, then asks the backend's
 * evictable pools, largest bytesInUse() first and pools holding nothing skipped, to evict what
 * is missing, retrying after each pool. If none of that makes room the call fails with
 * ErrorCode::OutOfMemory.
 *
 * Callbacks and pools run on the reserving thread and hold no lock of the budget that they
 * could need: they may release reservations, query the budget, register or unregister, and
 * reserve. A reservation made from inside a callback or an eviction (of any budget) never
 * starts pressure handling of its own: over the hard cap it fails at once with OutOfMemory,
 * and its soft-cap crossing is not reported. A callback or a pool is never run concurrently
 * with itself. Callbacks should be short and must not wait for another thread that reserves
 * from the same budget.
 */

// The caps were validated by create().
MemoryBudget::MemoryBudget(std::span<const BackendBudgetCaps> caps)
	: state_(std::make_unique<State>())
{
	for (const BackendBudgetCaps &entry : caps) {
		State::Backend &b = state_->backends[static_cast<uint32_t>(entry.backend)];
		b.hard.store(entry.caps.hardBytes.value_or(kNoCap), std::memory_order_relaxed);
		b.soft.store(entry.caps.softBytes.value_or(kNoCap), std::memory_order_relaxed);
	}
}

MemoryBudget::~MemoryBudget() = default;

/**
 * \brief Reserves \a bytes on \a backend
 * \return The reservation, or ErrorCode::ZeroSize (field "bytes") for 0 bytes,
 * ErrorCode::InvalidArgument (field "backend") for an unknown backend, ErrorCode::OutOfMemory
 * when the hard cap leaves no room after pressure handling (see the class description)
 *
 * Within the hard cap this allocates nothing and takes no lock, unless the soft cap is crossed
 * and the callbacks are told.
 */
Result<BudgetReservation> MemoryBudget::tryReserve(BackendKind backend, uint64_t bytes)
{
	uint32_t index;
	if (!indexOf(backend, index))
		return Error::format(ErrorCode::InvalidArgument, "backend",
				     "Backend %u is not a BackendKind value.", index);
	if (bytes == 0)
		return Error::format(
			ErrorCode::ZeroSize, "bytes",
			"A reservation of 0 bytes was asked on %s; a reservation holds "
			"at least one byte.",
			backendKindName(backend));
	uint64_t before;
	if (State::reserveFast(state_->backends[index], bytes, before))
		return grant(index, bytes, before);
	return reserveUnderPressure(index, bytes);
}

// Wraps bytes already added to the counter, and reports a soft-cap crossing.
BudgetReservation MemoryBudget::grant(uint32_t index, uint64_t bytes, uint64_t before)
{
	const auto backend = static_cast<BackendKind>(index);
	BudgetReservation reservation(shared_from_this(), backend, bytes);
	const BudgetCaps caps = this->caps(backend);
	// Exactly one compare-and-swap moves usage from <= soft to > soft: one thread reports it.
	if (caps.softBytes && before <= *caps.softBytes && before + bytes > *caps.softBytes &&
	    tHandlerDepth == 0)
		state_->notify({ backend, BudgetPressure::Soft, bytes, before + bytes,
				 caps.softBytes, caps.hardBytes });
	return reservation;
}

Result<BudgetReservation> MemoryBudget::reserveUnderPressure(uint32_t index, uint64_t bytes)
{
	const auto backend = static_cast<BackendKind>(index);
	State::Backend &b = state_->backends[index];
	const char *name = backendKindName(backend);
	const std::optional<uint64_t> hardCap = capOf(b.hard);
	if (!hardCap)
		return Error::format(ErrorCode::OutOfMemory, "bytes",
				     "Reserving %llu bytes on %s would overflow the 64-bit usage "
				     "counter (%llu bytes in use).",
				     ull(bytes), name, ull(usage(backend)));
	const uint64_t hard = *hardCap;
	if (bytes > hard)
		return Error::format(
			ErrorCode::OutOfMemory, "bytes",
			"Reserving %llu bytes on %s can never succeed: the hard cap is "
			"%llu bytes.",
			ull(bytes), name, ull(hard));
	if (tHandlerDepth > 0)
		return Error::format(ErrorCode::OutOfMemory, "bytes",
				     "Reserving %llu bytes on %s would exceed the hard cap of %llu "
				     "bytes (%llu bytes in use); no pressure handling is started "
				     "from inside a pressure callback or a pool eviction.",
				     ull(bytes), name, ull(hard), ull(usage(backend)));

	// A callback may drop the last outside reference to this budget.
	const std::shared_ptr<MemoryBudget> self = shared_from_this();
	uint64_t before;
	bool granted;
	{
		std::lock_guard lock(b.pressureMutex);
		// Another thread's release or eviction may have made room while this one waited.
		granted = State::reserveFast(b, bytes, before);
		if (!granted) {
			state_->notify({ backend, BudgetPressure::Hard, bytes, usage(backend),
					 capOf(b.soft), hardCap });
			granted = State::reserveFast(b, bytes, before) ||
				  state_->evictUntilFits(b, bytes, before);
		}
	}
	if (granted)
		return grant(index, bytes, before);
	return Error::format(ErrorCode::OutOfMemory, "bytes",
			     "Reserving %llu bytes on %s would exceed the hard cap of %llu bytes: "
			     "%llu bytes are still in use after the pressure callbacks and pool "
			     "eviction.",
			     ull(bytes), name, ull(hard), ull(usage(backend)));
}

void MemoryBudget::giveBack(BackendKind backend, uint64_t bytes) noexcept
{
	state_->backends[static_cast<uint32_t>(backend)].usage.fetch_sub(bytes,
									 std::memory_order_relaxed);
}

/**
 * \brief Registers \a pool to be asked for memory when \a backend hits its hard cap
 * \param[in] pool Borrowed until the registration is reset: reset it before destroying the pool
 * (first thing in the pool's destructor when the pool owns its registration)
 * \return The registration, or ErrorCode::InvalidArgument (field "backend")
 */
Result<BudgetRegistration> MemoryBudget::registerPool(BackendKind backend, EvictablePool &pool)
{
	uint32_t index;
	if (!indexOf(backend, index))
		return Error::format(ErrorCode::InvalidArgument, "backend",
				     "Backend %u is not a BackendKind value.", index);
	auto listener = std::make_shared<detail::BudgetListener>(index, &pool);
	state_->add(state_->backends[index].pools, listener);
	return BudgetRegistration(shared_from_this(), std::move(listener));
}

/**
 * \brief Registers \a callback to be told about soft-cap crossings and hard-cap pressure on
 * every backend
 * \return The registration, or ErrorCode::NullHandle (field "callback") for an empty callback
 */
Result<BudgetRegistration> MemoryBudget::registerPressureCallback(BudgetPressureCallback callback)
{
	if (!callback)
		return Error::format(ErrorCode::NullHandle, "callback",
				     "The pressure callback is empty.");
	auto listener = std::make_shared<detail::BudgetListener>(std::move(callback));
	state_->add(state_->callbacks, listener);
	return BudgetRegistration(shared_from_this(), std::move(listener));
}

// Removes the listener from its list, then waits for a call of it running on another thread.
void MemoryBudget::unregister(const std::shared_ptr<detail::BudgetListener> &listener) noexcept
{
	{
		std::lock_guard lock(state_->registryMutex);
		ListenerListRef &list = listener->pool()
						? state_->backends[listener->backendIndex()].pools
						: state_->callbacks;
		if (list) {
			auto next = std::make_shared<ListenerList>();
			for (const auto &other : *list)
				if (other != listener)
					next->push_back(other);
			list = next->empty() ? nullptr : std::move(next);
		}
	}
	listener->retire();
}

/**
 * \brief Bytes reserved on \a backend now (0 for an unknown backend)
 */
uint64_t MemoryBudget::usage(BackendKind backend) const noexcept
{
	uint32_t index;
	if (!indexOf(backend, index))
		return 0;
	return state_->backends[index].usage.load(std::memory_order_relaxed);
}

/**
 * \brief The caps of \a backend (none for an unknown backend)
 */
BudgetCaps MemoryBudget::caps(BackendKind backend) const noexcept
{
	uint32_t index;
	if (!indexOf(backend, index))
		return {};
	const State::Backend &b = state_->backends[index];
	return BudgetCaps{ capOf(b.soft), capOf(b.hard) };
}

/**
 * \brief Replaces the caps of \a backend; reservations already held stay
 * \return ErrorCode::InvalidArgument for an unknown backend (field "backend") or a soft cap
 * above the hard cap (field "caps.softBytes")
 *
 * Usage above a lowered hard cap is not taken back: the next reservation that would exceed it
 * goes through pressure handling (callbacks, then pool eviction). A cap of UINT64_MAX bytes is
 * the same as none. The two caps are stored one after the other: a reservation made at the same
 * time may see the new hard cap with the old soft one.
 */
Status MemoryBudget::setCaps(BackendKind backend, const BudgetCaps &caps)
{
	uint32_t index;
	if (!indexOf(backend, index))
		return Error::format(ErrorCode::InvalidArgument, "backend",
				     "Backend %u is not a BackendKind value.", index);
	if (caps.softBytes && caps.hardBytes && *caps.softBytes > *caps.hardBytes)
		return Error::format(ErrorCode::InvalidArgument, "caps.softBytes",
				     "The soft cap of %s (%llu bytes) is above its hard cap "
				     "(%llu bytes).",
				     backendKindName(backend), ull(*caps.softBytes),
				     ull(*caps.hardBytes));
	State::Backend &b = state_->backends[index];
	b.hard.store(caps.hardBytes.value_or(kNoCap), std::memory_order_relaxed);
	b.soft.store(caps.softBytes.value_or(kNoCap), std::memory_order_relaxed);
	return {};
}

/**
 * \brief The most bytes reserved on \a backend at once since the budget was made (0 for an
 * unknown backend)
 */
uint64_t MemoryBudget::peakUsage(BackendKind backend) const noexcept
{
	uint32_t index;
	if (!indexOf(backend, index))
		return 0;
	return state_->backends[index].peak.load(std::memory_order_relaxed);
}

/**
 * \brief Bytes that can still be reserved on \a backend without pressure handling: the hard
 * cap minus the usage, UINT64_MAX when uncapped, 0 for an unknown backend
 */
uint64_t MemoryBudget::available(BackendKind backend) const noexcept
{
	uint32_t index;
	if (!indexOf(backend, index))
		return 0;
	const State::Backend &b = state_->backends[index];
	const uint64_t hard = b.hard.load(std::memory_order_relaxed);
	if (hard == kNoCap)
		return UINT64_MAX;
	const uint64_t used = b.usage.load(std::memory_order_relaxed);
	return used < hard ? hard - used : 0;
}

/**
 * \brief The pressure \a backend would be under with \a extraBytes more reserved
 *
 * A snapshot: other threads may change the usage right after. An unknown backend reads as
 * BudgetPressure::None.
 */
BudgetPressure MemoryBudget::pressure(BackendKind backend, uint64_t extraBytes) const noexcept
{
	uint32_t index;
	if (!indexOf(backend, index))
		return BudgetPressure::None;
	const State::Backend &b = state_->backends[index];
	const uint64_t used = b.usage.load(std::memory_order_relaxed);
	const uint64_t total = used > UINT64_MAX - extraBytes ? UINT64_MAX : used + extraBytes;
	const uint64_t hard = b.hard.load(std::memory_order_relaxed);
	const uint64_t soft = b.soft.load(std::memory_order_relaxed);
	if (hard != kNoCap && total > hard)
		return BudgetPressure::Hard;
	if (soft != kNoCap && total > soft)
		return BudgetPressure::Soft;
	return BudgetPressure::None;
}

} // namespace gpuhandle
