// WaiterThread: one epoll thread resolving many asynchronous fence waits; deadlines and cancel.
#include <gpuhandle/fd.h>
#include <gpuhandle/waiter_thread.h>

#include "node_stash.h"
#include "thread_block_cache.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <iterator>
#include <list>
#include <map>
#include <mutex>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <system_error>
#include <unistd.h>
#include <unordered_map>
#include <vector>

namespace gpuhandle {

namespace {

// The longest the thread sleeps without looking at its deadlines again: so that an enqueue whose
// deadline is later than that needs no wake-up (one context switch less per wait). An idle thread
// wakes once a second.
constexpr int kIdleWakeMs = 1000;

using Clock = std::chrono::steady_clock;
using EntryRef = std::shared_ptr<WaitTicket::Entry>;
using EntryList = std::list<EntryRef>;
// Ordered by deadline so the nearest one bounds epoll_wait(); a multimap, as deadlines repeat.
using DeadlineMap = std::multimap<Clock::time_point, EntryRef>;

// Events taken per epoll_wait(); the rest stay ready for the next call (level-triggered).
constexpr int kMaxEvents = 256;
// Linux thread names hold 15 characters plus the terminator.
constexpr size_t kMaxThreadName = 15;

Error ioError(const char *field, const char *call)
{
	return Error::format(ErrorCode::Io, field, "WaiterThread: %s failed: %s.", call,
			     std::strerror(errno));
}

} // namespace

// One pending wait: O(1) memory (this, a list node, a deadline node). Every field but `point`,
// `timeout` and `done` is guarded by the state mutex.
struct WaitTicket::Entry {
	SyncPoint point;
	WaitDuration timeout{};
	WaitCallback done;
	// Cleared once resolved; the callback then runs exactly once, on the thread.
	bool pending = true;
	// The fd registered with epoll for this wait, or -1 when it is checked every slice.
	int fd = -1;
	EntryList::iterator listIt{}; // in its fd record's list, or in the sliced list
	bool hasDeadline = false;
	DeadlineMap::iterator deadlineIt{};
};

struct WaiterThread::State {
	// One epoll registration per fd, shared by every wait on it: epoll refuses a second
	// registration of one fd, and a dup() per wait would cost an fd per wait. A pending wait
	// keeps its waiter, hence the fd, open, so the fd number names the same file while it is
	// here.
	struct FdRecord {
		EntryList entries;
		// False while parked: the fd polled readable while a wait on it was unsignalled, so
		// it is disarmed until the next slice instead of waking the thread in a loop.
		bool armed = true;
	};
	struct Resolution {
		EntryRef entry;
		Status status;
	};
	// A wait to confirm with isSignaled(); `expired` ones time out unless that says done.
	struct Candidate {
		EntryRef entry;
		bool expired;
	};

	UniqueFd epollFd;
	UniqueFd wakeFd;
	mutable std::mutex mutex;
	bool stopping = false;
	size_t pendingCount = 0;
	std::unordered_map<int, FdRecord> fds;
	EntryList sliced;
	std::vector<int> parked;
	// Fds whose last wait was resolved: removed from epoll after the round's callbacks (while
	// those waits still hold them open), so that a wake-up's callback waits for no syscall.
	std::vector<int> unregister;
	DeadlineMap deadlines;
	Clock::time_point nextSlice{};
	// When the thread's current epoll_wait ends at the latest (its timeout, at most kIdleWake):
	// a new deadline at or after it needs no wake-up, the thread looks again by then. In the
	// past while the thread is not sleeping (it looks again before it sleeps).
	Clock::time_point sleepUntil{};
	// Resolved off the thread (cancel, Noop points): the thread delivers them.
	std::vector<Resolution> resolved;
	// The nodes of resolved waits, reused by the next ones: a steady stream of waits
	// allocates no list, deadline or fd node.
	detail::ListNodeStash<EntryRef> listNodes;
	detail::NodeStash<DeadlineMap> deadlineNodes;
	detail::NodeStash<std::unordered_map<int, FdRecord>> fdNodes;

	void wake() const noexcept
	{
		uint64_t one = 1;
		ssize_t written = ::write(wakeFd.get(), &one, sizeof(one));
		// EAGAIN only when the counter is saturated: the thread is awake anyway.
		(void)written;
	}

	bool addFdLocked(int fd, const EntryRef &entry);
	void unlinkLocked(WaitTicket::Entry &entry);
	void resolveLocked(const EntryRef &entry, Status status, std::vector<Resolution> &out);
	int timeoutMsLocked(Clock::time_point now) const;
	void collectLocked(const std::vector<int> &readyFds, std::vector<Candidate> &candidates);
	void run();
	void shutdown();
};

bool WaiterThread::State::addFdLocked(int fd, const EntryRef &entry)
{
	auto it = fds.find(fd);
	if (it == fds.end()) {
		it = fdNodes.insert(fds, fd, FdRecord{});
		epoll_event event{};
		event.events = EPOLLIN;
		event.data.fd = fd;
		// Still registered when its last wait went this round: armed again, not added.
		auto stale = std::find(unregister.begin(), unregister.end(), fd);
		const bool registered = stale != unregister.end();
		if (registered)
			unregister.erase(stale);
		if (epoll_ctl(epollFd.get(), registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd,
			      &event) != 0) {
			// EPERM (a file that cannot be polled) or no watch left: slice it instead.
			fdNodes.erase(fds, it);
			return false;
		}
	}
	entry->listIt = listNodes.pushBack(it->second.entries, entry);
	entry->fd = fd;
	return true;
}

void WaiterThread::State::unlinkLocked(WaitTicket::Entry &entry)
{
	if (entry.hasDeadline)
		deadlineNodes.erase(deadlines, entry.deadlineIt);
	if (entry.fd < 0) {
		listNodes.erase(sliced, entry.listIt);
	} else if (auto it = fds.find(entry.fd); it != fds.end()) {
		listNodes.erase(it->second.entries, entry.listIt);
		// Removed from epoll (unregister) while the wait still holds the fd open, so the
		// kernel sees the right file.
		if (it->second.entries.empty()) {
			unregister.push_back(entry.fd);
			fdNodes.erase(fds, it);
		}
	}
	entry.pending = false;
	entry.hasDeadline = false;
	pendingCount--;
}

void WaiterThread::State::resolveLocked(const EntryRef &entry, Status status,
					std::vector<Resolution> &out)
{
	unlinkLocked(*entry);
	out.push_back({ entry, std::move(status) });
}

// The epoll_wait() timeout: until the nearest deadline or slice, rounded up so that a deadline
// is never seen early; -1 when nothing is timed.
int WaiterThread::State::timeoutMsLocked(Clock::time_point now) const
{
	if (!resolved.empty())
		return 0;
	bool timed = false;
	Clock::time_point wakeAt = Clock::time_point::max();
	if (!deadlines.empty()) {
		wakeAt = deadlines.begin()->first;
		timed = true;
	}
	if (!sliced.empty() || !parked.empty()) {
		wakeAt = std::min(wakeAt, nextSlice);
		timed = true;
	}
	if (!timed)
		return -1;
	if (wakeAt <= now)
		return 0;
	auto ms = std::chrono::ceil<std::chrono::milliseconds>(wakeAt - now).count();
	return static_cast<int>(std::min<decltype(ms)>(ms, INT_MAX));
}

// The waits to confirm with isSignaled(): those on fds epoll reported, every sliced one when a
// slice is due (parked fds are re-armed then, so they report again if still readable), and those
// past their deadline: a final check keeps a fence signalled just in time from timing out.
void WaiterThread::State::collectLocked(const std::vector<int> &readyFds,
					std::vector<Candidate> &candidates)
{
	for (int fd : readyFds) {
		auto it = fds.find(fd);
		if (it == fds.end())
			continue; // resolved since epoll reported it
		for (const EntryRef &entry : it->second.entries)
			candidates.push_back({ entry, false });
	}
	auto now = Clock::now();
	for (auto it = deadlines.begin(); it != deadlines.end() && it->first <= now; ++it)
		candidates.push_back({ it->second, true });
	if ((sliced.empty() && parked.empty()) || now < nextSlice)
		return;
	for (const EntryRef &entry : sliced)
		candidates.push_back({ entry, false });
	for (int fd : parked) {
		auto it = fds.find(fd);
		if (it == fds.end() || it->second.armed)
			continue;
		epoll_event event{};
		event.events = EPOLLIN;
		event.data.fd = fd;
		epoll_ctl(epollFd.get(), EPOLL_CTL_MOD, fd, &event);
		it->second.armed = true;
	}
	parked.clear();
	nextSlice = now + kWaiterSlice;
}

void WaiterThread::State::run()
{
	std::vector<epoll_event> events(kMaxEvents);
	std::vector<int> readyFds;
	std::vector<Candidate> candidates;
	std::vector<Result<bool>> signaled;
	std::vector<Resolution> out;
	for (;;) {
		int timeoutMs;
		{
			std::lock_guard<std::mutex> lock(mutex);
			if (stopping)
				break;
			const auto now = Clock::now();
			timeoutMs = timeoutMsLocked(now);
			if (timeoutMs < 0 || timeoutMs > kIdleWakeMs)
				timeoutMs = kIdleWakeMs;
			sleepUntil = now + std::chrono::milliseconds(timeoutMs);
		}
		int count = epoll_wait(epollFd.get(), events.data(), kMaxEvents, timeoutMs);
		readyFds.clear();
		for (int i = 0; i < count; i++) {
			if (events[static_cast<size_t>(i)].data.fd != wakeFd.get()) {
				readyFds.push_back(events[static_cast<size_t>(i)].data.fd);
				continue;
			}
			uint64_t value;
			ssize_t got = ::read(wakeFd.get(), &value, sizeof(value));
			(void)got; // EAGAIN: another wake-up already drained it
		}

		candidates.clear();
		{
			std::lock_guard<std::mutex> lock(mutex);
			collectLocked(readyFds, candidates);
		}
		// Outside the lock: a driver query may be slow, and enqueue() must not wait for it.
		signaled.clear();
		for (const Candidate &candidate : candidates)
			signaled.push_back(candidate.entry->point.isSignaled());

		{
			std::lock_guard<std::mutex> lock(mutex);
			for (size_t i = 0; i < candidates.size(); i++) {
				const EntryRef &entry = candidates[i].entry;
				if (!entry->pending)
					continue; // cancelled meanwhile, or listed twice
				if (!signaled[i].ok())
					resolveLocked(entry, signaled[i].error(), out);
				else if (*signaled[i])
					resolveLocked(entry, Status{}, out);
				else if (candidates[i].expired)
					resolveLocked(entry,
						      waitTimeoutError(entry->point.backend(),
								       entry->timeout),
						      out);
			}
			// Readable, yet a wait on it is still unsignalled: park the fd (events 0)
			// so that it costs one check per slice instead of a busy loop.
			for (int fd : readyFds) {
				auto it = fds.find(fd);
				if (it == fds.end() || !it->second.armed)
					continue;
				// No slice running yet: start one.
				if (sliced.empty() && parked.empty())
					nextSlice = Clock::now() + kWaiterSlice;
				epoll_event event{};
				epoll_ctl(epollFd.get(), EPOLL_CTL_MOD, fd, &event);
				it->second.armed = false;
				parked.push_back(fd);
			}
			// Deadlines passed since collectLocked() are checked next time round
			// (timeout 0).
			std::move(resolved.begin(), resolved.end(), std::back_inserter(out));
			resolved.clear();
		}
		// Drop references before the callbacks, which may destroy the thread.
		candidates.clear();
		// No lock held: a callback may enqueue, cancel, or drop the last WaiterThread
		// reference.
		for (Resolution &resolution : out)
			resolution.entry->done(std::move(resolution.status));
		{
			// Before `out` lets the waits (and their fds) go; waits resolved elsewhere
			// since (cancel) sit in `resolved`, alive until a later round delivers
			// them.
			std::lock_guard<std::mutex> lock(mutex);
			for (int fd : unregister)
				epoll_ctl(epollFd.get(), EPOLL_CTL_DEL, fd, nullptr);
			unregister.clear();
		}
		out.clear();
	}
	shutdown();
}

// Resolves every wait still pending with Cancelled and delivers them: enqueue() is refused by now.
void WaiterThread::State::shutdown()
{
	std::vector<Resolution> out;
	{
		std::lock_guard<std::mutex> lock(mutex);
		std::vector<EntryRef> left(sliced.begin(), sliced.end());
		for (auto &item : fds)
			left.insert(left.end(), item.second.entries.begin(),
				    item.second.entries.end());
		for (const EntryRef &entry : left)
			resolveLocked(
				entry,
				Error::format(
					ErrorCode::Cancelled, "thread",
					"The asynchronous wait on the %s sync point was cancelled "
					"because its waiter thread was destroyed.",
					syncKindName(entry->point.kind())),
				out);
		std::move(resolved.begin(), resolved.end(), std::back_inserter(out));
		resolved.clear();
	}
	for (Resolution &resolution : out)
		resolution.entry->done(std::move(resolution.status));
}

bool WaitTicket::cancel() const
{
	auto entry = entry_.lock();
	auto thread = thread_.lock();
	if (!entry || !thread)
		return false; // already delivered, or the thread is gone (it cancelled everything)
	return thread->cancel(entry);
}

WaiterThread::WaiterThread(std::shared_ptr<State> state) : state_(std::move(state))
{
}

Result<std::shared_ptr<WaiterThread>> WaiterThread::create(std::string name)
{
	auto state = std::make_shared<State>();
	state->epollFd.reset(epoll_create1(EPOLL_CLOEXEC));
	if (!state->epollFd.isValid())
		return ioError("epoll", "epoll_create1()");
	state->wakeFd.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	if (!state->wakeFd.isValid())
		return ioError("eventfd", "eventfd()");
	epoll_event event{};
	event.events = EPOLLIN;
	event.data.fd = state->wakeFd.get();
	if (epoll_ctl(state->epollFd.get(), EPOLL_CTL_ADD, state->wakeFd.get(), &event) != 0)
		return ioError("epoll", "epoll_ctl(EPOLL_CTL_ADD) of the wake-up eventfd");

	name.resize(std::min(name.size(), kMaxThreadName));
	std::shared_ptr<WaiterThread> thread(new WaiterThread(state));
	try {
		// The thread holds the state, so it may outlive a destructor that detached it.
		thread->thread_ = std::thread([state, name] {
			pthread_setname_np(pthread_self(), name.c_str());
			state->run();
		});
	} catch (const std::system_error &e) {
		return Error::format(ErrorCode::Io, "thread",
				     "WaiterThread: starting the thread failed: %s.", e.what());
	}
	thread->threadId_ = thread->thread_.get_id();
	return thread;
}

std::shared_ptr<WaiterThread> WaiterThread::shared()
{
	// Created once, thread-safely; destroyed (and joined) at exit with the other statics.
	static const std::shared_ptr<WaiterThread> instance = [] {
		auto thread = create("gpuhandle-wait");
		return thread.ok() ? std::move(*thread) : std::shared_ptr<WaiterThread>();
	}();
	return instance;
}

WaiterThread::~WaiterThread()
{
	{
		std::lock_guard<std::mutex> lock(state_->mutex);
		state_->stopping = true;
	}
	state_->wake();
	if (!thread_.joinable())
		return;
	// The last reference dropped in a callback: the thread cannot join itself; it sees
	// `stopping` once the callback returns, cancels the rest and ends on its own.
	if (std::this_thread::get_id() == threadId_)
		thread_.detach();
	else
		thread_.join();
}

Result<WaitTicket> WaiterThread::enqueue(SyncPoint point, WaitDuration timeout, WaitCallback done)
{
	if (!done)
		return Error::format(ErrorCode::NullHandle, "done",
				     "WaiterThread: the completion callback is empty.");
	if (point.isRawCarrier())
		return Error::format(
			ErrorCode::NotSupported, "point",
			"WaiterThread: the %s sync point is a raw carrier; import it with a "
			"backend before waiting on it.",
			syncKindName(point.kind()));
	// Made here, dropped on the waiter thread (or by the ticket's holder): blocks come back
	// through the cache's depot, so steady waits allocate nothing for their entries.
	auto entry = std::allocate_shared<WaitTicket::Entry>(
		detail::ThreadRecyclingAllocator<WaitTicket::Entry>{});
	entry->timeout = timeout;
	entry->done = std::move(done);
	int fd = point.isNoop() ? -1 : point.waiter()->pollFd();
	bool noop = point.isNoop();
	entry->point = std::move(point);
	Deadline deadline = Deadline::after(timeout);

	bool wake = true;
	{
		std::lock_guard<std::mutex> lock(state_->mutex);
		if (state_->stopping)
			return Error::format(
				ErrorCode::InvalidState, "thread",
				"WaiterThread: the thread is shutting down and takes no new wait.");
		if (noop) {
			entry->pending = false;
			state_->resolved.push_back({ entry, Status{} });
		} else {
			state_->pendingCount++;
			if (fd < 0 || !state_->addFdLocked(fd, entry)) {
				entry->fd = -1;
				entry->listIt = state_->listNodes.pushBack(state_->sliced, entry);
				state_->nextSlice = Clock::time_point::min(); // check it at once
			} else {
				// epoll reports it; only a nearer deadline needs the thread.
				wake = false;
			}
			if (!deadline.isNever()) {
				entry->deadlineIt = state_->deadlineNodes.insert(
					state_->deadlines, deadline.when(), entry);
				entry->hasDeadline = true;
				// Only a deadline before the thread's next look needs it now: most
				// waits' budgets (seconds) end long after it.
				wake = wake || (entry->deadlineIt == state_->deadlines.begin() &&
						deadline.when() < state_->sleepUntil);
			}
		}
	}
	if (wake)
		state_->wake();
	WaitTicket ticket;
	ticket.entry_ = entry;
	ticket.thread_ = weak_from_this();
	return ticket;
}

bool WaiterThread::cancel(const std::shared_ptr<WaitTicket::Entry> &entry)
{
	{
		std::lock_guard<std::mutex> lock(state_->mutex);
		if (!entry->pending)
			return false;
		state_->resolveLocked(
			entry,
			Error::format(ErrorCode::Cancelled, "ticket",
				      "The asynchronous wait on the %s sync point was cancelled.",
				      syncKindName(entry->point.kind())),
			state_->resolved);
	}
	state_->wake();
	return true;
}

size_t WaiterThread::pending() const
{
	std::lock_guard<std::mutex> lock(state_->mutex);
	return state_->pendingCount;
}

std::thread::id WaiterThread::threadId() const
{
	return threadId_;
}

} // namespace gpuhandle
