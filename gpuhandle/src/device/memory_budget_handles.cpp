// MemoryBudget's caps validation and the RAII handles it gives out: reservations, registrations.
#include <gpuhandle/memory_budget.h>

#include <array>
#include <string>
#include <utility>

namespace gpuhandle {

/**
 * \brief Creates a budget with the given caps
 * \param[in] caps Caps per backend; each backend at most once, unlisted backends are uncapped
 * \return The budget, or ErrorCode::InvalidArgument naming the faulty entry ("caps[1].softBytes")
 * when a backend is unknown or listed twice, or a soft cap is above the hard cap
 */
Result<std::shared_ptr<MemoryBudget>> MemoryBudget::create(std::span<const BackendBudgetCaps> caps)
{
	// Index of the entry that named each backend, to report duplicates by both positions.
	std::array<int64_t, kBackendKindCount> seenAt;
	seenAt.fill(-1);
	for (size_t i = 0; i < caps.size(); ++i) {
		const BackendBudgetCaps &entry = caps[i];
		const BudgetCaps &c = entry.caps;
		const std::string field = "caps[" + std::to_string(i) + "]";
		const auto index = static_cast<uint32_t>(entry.backend);
		if (index >= kBackendKindCount)
			return Error::format(ErrorCode::InvalidArgument, field + ".backend",
					     "Backend %u is not a BackendKind value.", index);
		const char *name = backendKindName(entry.backend);
		if (seenAt[index] >= 0)
			return Error::format(
				ErrorCode::InvalidArgument, field + ".backend",
				"Caps for %s are given twice, at caps[%lld] and caps[%zu].", name,
				static_cast<long long>(seenAt[index]), i);
		seenAt[index] = static_cast<int64_t>(i);
		if (c.softBytes && c.hardBytes && *c.softBytes > *c.hardBytes)
			return Error::format(
				ErrorCode::InvalidArgument, field + ".softBytes",
				"The soft cap of %s (%llu bytes) is above its hard cap "
				"(%llu bytes).",
				name, static_cast<unsigned long long>(*c.softBytes),
				static_cast<unsigned long long>(*c.hardBytes));
	}

	// The constructor is private, so make_shared cannot reach it.
	return std::shared_ptr<MemoryBudget>(new MemoryBudget(caps));
}

/**
 * \brief Creates a budget from a braced list of caps, as create(std::span) does
 */
Result<std::shared_ptr<MemoryBudget>>
MemoryBudget::create(std::initializer_list<BackendBudgetCaps> caps)
{
	return create(std::span<const BackendBudgetCaps>(caps.begin(), caps.size()));
}

/**
 * \brief The lower-case name of \a pressure, for logs
 */
const char *budgetPressureName(BudgetPressure pressure) noexcept
{
	switch (pressure) {
	case BudgetPressure::None: return "none";
	case BudgetPressure::Soft: return "soft";
	case BudgetPressure::Hard: return "hard";
	}
	return "unknown";
}

/**
 * \class BudgetReservation
 * \brief Bytes held on one backend of a MemoryBudget until released
 *
 * Made by MemoryBudget::tryReserve(). Moving transfers the bytes and leaves the source empty;
 * release() or the destructor gives them back with one atomic subtraction, without a lock or an
 * allocation. The reservation holds a strong reference to its budget, so the bytes can always
 * be given back, whichever of the two is dropped last.
 */

BudgetReservation::BudgetReservation(std::shared_ptr<MemoryBudget> budget, BackendKind backend,
				     uint64_t bytes) noexcept
	: budget_(std::move(budget)), backend_(backend), bytes_(bytes)
{
}

BudgetReservation::BudgetReservation(BudgetReservation &&other) noexcept
	: budget_(std::move(other.budget_)), backend_(other.backend_),
	  bytes_(std::exchange(other.bytes_, 0))
{
}

BudgetReservation &BudgetReservation::operator=(BudgetReservation &&other) noexcept
{
	if (this != &other) {
		release();
		budget_ = std::move(other.budget_);
		backend_ = other.backend_;
		bytes_ = std::exchange(other.bytes_, 0);
	}
	return *this;
}

/**
 * \brief Gives the bytes back and leaves the reservation empty; nothing happens when empty
 */
void BudgetReservation::release() noexcept
{
	if (bytes_ > 0)
		budget_->giveBack(backend_, bytes_);
	bytes_ = 0;
	budget_.reset();
}

/**
 * \brief Gives back all but \a newBytes
 * \return ErrorCode::InvalidArgument (field "newBytes") when \a newBytes is above bytes();
 * growing needs a new reservation, which can fail
 *
 * shrink(0) is release().
 */
Status BudgetReservation::shrink(uint64_t newBytes)
{
	if (newBytes > bytes_)
		return Error::format(ErrorCode::InvalidArgument, "newBytes",
				     "A reservation of %llu bytes cannot shrink to %llu bytes; "
				     "shrinking cannot grow it.",
				     static_cast<unsigned long long>(bytes_),
				     static_cast<unsigned long long>(newBytes));
	if (newBytes == 0) {
		release();
		return {};
	}
	if (newBytes < bytes_)
		budget_->giveBack(backend_, bytes_ - newBytes);
	bytes_ = newBytes;
	return {};
}

/**
 * \class BudgetRegistration
 * \brief Keeps a pool or a pressure callback registered with a MemoryBudget
 *
 * Made by MemoryBudget::registerPool() and MemoryBudget::registerPressureCallback().
 * reset() and the destructor unregister: once they return, the budget never calls the pool or
 * callback again, and a call that was running on another thread has finished (unregistering
 * waits for it). Unregistering from inside the pool's or callback's own call returns at once;
 * that call is the last. Unregistering another registration from inside a call waits for that
 * one's running call, so two calls must not each unregister the other.
 */

BudgetRegistration::BudgetRegistration(std::shared_ptr<MemoryBudget> budget,
				       std::shared_ptr<detail::BudgetListener> listener) noexcept
	: budget_(std::move(budget)), listener_(std::move(listener))
{
}

BudgetRegistration &BudgetRegistration::operator=(BudgetRegistration &&other) noexcept
{
	if (this != &other) {
		reset();
		budget_ = std::move(other.budget_);
		listener_ = std::move(other.listener_);
	}
	return *this;
}

/**
 * \brief Unregisters now; nothing happens when not registered
 */
void BudgetRegistration::reset() noexcept
{
	if (listener_)
		budget_->unregister(listener_);
	listener_.reset();
	budget_.reset();
}

} // namespace gpuhandle
