// A bounded single-producer/single-consumer queue: the one thread handoff every variant uses.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <optional>
#include <thread>

namespace gpuhandle::bench {

// Lock-free ring of N slots (N a power of two). push() and consume() yield while full or empty,
// so the figures of all variants carry the same handoff cost and nothing is allocated per item.
// Items are built in their slot and consumed there (no moves: a Frame is a value of ~1 KiB).
template<typename T, size_t N>
class SpscQueue
{
	static_assert(N && (N & (N - 1)) == 0, "N must be a power of two");

public:
	// Builds the item in its slot from `from` (a copy of a const reference, a move otherwise).
	template<typename U>
	void push(U &&from)
	{
		const size_t tail = tail_.load(std::memory_order_relaxed);
		// The consumer's index is read again only when the cached one says full: one shared
		// cache line less per item.
		while (tail - headCache_ == N) {
			headCache_ = head_.load(std::memory_order_acquire);
			if (tail - headCache_ == N)
				std::this_thread::yield();
		}
		slots_[tail & (N - 1)].emplace(std::forward<U>(from));
		tail_.store(tail + 1, std::memory_order_release);
	}

	// Calls consume(T &) on the oldest item, then destroys it in its slot.
	template<typename F>
	void consume(F &&consume)
	{
		const size_t head = head_.load(std::memory_order_relaxed);
		while (tailCache_ == head) {
			tailCache_ = tail_.load(std::memory_order_acquire);
			if (tailCache_ == head)
				std::this_thread::yield();
		}
		std::optional<T> &slot = slots_[head & (N - 1)];
		consume(*slot);
		slot.reset();
		head_.store(head + 1, std::memory_order_release);
	}

private:
	// Producer and consumer indices on their own cache lines.
	// Each side's index with its cached copy of the other's.
	alignas(64) std::atomic<size_t> head_{ 0 };
	size_t tailCache_ = 0;
	alignas(64) std::atomic<size_t> tail_{ 0 };
	size_t headCache_ = 0;
	alignas(64) std::array<std::optional<T>, N> slots_{};
};

} // namespace gpuhandle::bench
