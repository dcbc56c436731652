// ThreadBlockCache: per-thread free lists of fixed-size blocks and a depot between threads, for
// objects made and dropped per frame.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <new>
#include <utility>

namespace gpuhandle::detail {

// Blocks of Size bytes that threads gave back, taken again before the heap is asked: a thread
// that makes and drops one object per buffer (an element's streaming thread) allocates nothing
// in steady state. Each thread keeps up to kLocal blocks in a list of its own (no lock); past
// that it hands a batch of kBatch to a depot that every thread of this library shares, and a
// thread whose list is empty takes a batch from there (one lock per kBatch blocks). So blocks
// made on one thread and dropped on another (a src's buffers, freed where an appsink's samples
// are pulled; a waiter's records, made by the enqueuing thread and dropped by the waiter) come
// back too. The depot keeps at most kDepotBatches batches, the rest goes to the heap; a thread's
// own blocks are freed when it exits, the depot's when the process does. Each library that uses
// a size has its own lists and depot (header-only).
template<size_t Size, size_t Align>
class ThreadBlockCache
{
	static_assert(Align <= alignof(std::max_align_t),
		      "operator new aligns for max_align_t only");

public:
	static constexpr uint32_t kBatch = 8;
	static constexpr uint32_t kLocal = 2 * kBatch;
	static constexpr uint32_t kDepotBatches = 8;

	static void *take()
	{
		Cache &cache = t_cache;
		if (cache.count == 0 && !cache.closed)
			refill(cache);
		return cache.count ? cache.blocks[--cache.count] : ::operator new(Size);
	}

	static void give(void *block) noexcept
	{
		Cache &cache = t_cache;
		if (cache.closed) {
			::operator delete(block);
			return;
		}
		if (cache.count == kLocal)
			spill(cache);
		if (cache.count == 0)
			armReaper();
		cache.blocks[cache.count++] = block;
	}

private:
	// Trivially destructible, so that it stays readable through the whole of the thread's
	// exit; the reaper empties and closes it when the thread's C++ destructors run.
	struct Cache {
		std::array<void *, kLocal> blocks;
		uint32_t count;
		bool closed;
	};
	static inline thread_local Cache t_cache{};

	// Batches handed over between threads. Constant-initialized and trivially destructible,
	// like a thread's list: a thread still running while the process exits finds it closed by
	// its reaper, and frees what it gives.
	struct Depot {
		std::mutex mutex;
		std::array<std::array<void *, kBatch>, kDepotBatches> batches;
		uint32_t count;
		bool closed;
	};
	static inline Depot s_depot{};

	// Takes a batch from the depot, if it has one.
	static void refill(Cache &cache)
	{
		{
			std::lock_guard<std::mutex> lock(s_depot.mutex);
			if (s_depot.count == 0)
				return;
			const std::array<void *, kBatch> &batch = s_depot.batches[--s_depot.count];
			std::copy(batch.begin(), batch.end(), cache.blocks.begin());
		}
		cache.count = kBatch;
		armReaper();
	}

	// Hands the newest kBatch blocks of a full list to the depot, or to the heap when it is
	// full.
	static void spill(Cache &cache) noexcept
	{
		cache.count -= kBatch;
		void **first = cache.blocks.data() + cache.count;
		{
			std::lock_guard<std::mutex> lock(s_depot.mutex);
			if (!s_depot.closed && s_depot.count < kDepotBatches) {
				std::copy(first, first + kBatch,
					  s_depot.batches[s_depot.count++].begin());
				armDepotReaper();
				return;
			}
		}
		for (uint32_t i = 0; i < kBatch; ++i)
			::operator delete(first[i]);
	}

	struct Reaper {
		~Reaper()
		{
			for (uint32_t i = 0; i < t_cache.count; ++i)
				::operator delete(t_cache.blocks[i]);
			t_cache.count = 0;
			t_cache.closed = true;
		}
	};
	// Registers this thread's reaper once: only threads that kept a block pay for one.
	static void armReaper()
	{
		thread_local Reaper reaper;
		(void)reaper;
	}

	struct DepotReaper {
		~DepotReaper()
		{
			std::lock_guard<std::mutex> lock(s_depot.mutex);
			for (uint32_t b = 0; b < s_depot.count; ++b)
				for (void *block : s_depot.batches[b])
					::operator delete(block);
			s_depot.count = 0;
			s_depot.closed = true;
		}
	};
	// Registered at the first batch handed over (under the depot's lock): the process's
	// exit frees what the depot holds then.
	static void armDepotReaper()
	{
		static DepotReaper reaper;
		(void)reaper;
	}
};

// One object of type T in a block of the lists of its size, and back: for objects made and
// dropped per frame that are neither shared_ptr-owned (ThreadRecyclingAllocator) nor pooled.
template<typename T, typename... Args>
T *newFromBlocks(Args &&...args)
{
	return new (ThreadBlockCache<sizeof(T), alignof(T)>::take()) T(std::forward<Args>(args)...);
}

template<typename T>
void deleteToBlocks(T *object) noexcept
{
	object->~T();
	ThreadBlockCache<sizeof(T), alignof(T)>::give(object);
}

// A std::allocator for std::allocate_shared whose single-object allocations (the control block
// and the object together) come from ThreadBlockCache.
template<typename T>
struct ThreadRecyclingAllocator {
	using value_type = T;
	ThreadRecyclingAllocator() noexcept = default;
	template<typename U>
	ThreadRecyclingAllocator(const ThreadRecyclingAllocator<U> &) noexcept
	{
	}
	T *allocate(size_t n)
	{
		if (n != 1)
			return static_cast<T *>(::operator new(n * sizeof(T)));
		return static_cast<T *>(ThreadBlockCache<sizeof(T), alignof(T)>::take());
	}
	void deallocate(T *p, size_t n) noexcept
	{
		if (n != 1)
			::operator delete(p);
		else
			ThreadBlockCache<sizeof(T), alignof(T)>::give(p);
	}
	template<typename U>
	friend bool operator==(const ThreadRecyclingAllocator &,
			       const ThreadRecyclingAllocator<U> &) noexcept
	{
		return true;
	}
};

// A std::function for a callback that runs exactly once (CpuMapping::adopt's `end`) without a
// heap block per call: `f` goes into a block of this thread's lists and the std::function holds
// only a pointer to it, which it stores in place (a trivially copyable functor of 8 bytes).
// Running gives the block back. The contract is the caller's: called exactly once (a function
// dropped uncalled keeps its block, a second call is undefined), and never copied.
template<typename R, typename F>
std::function<R()> onceFromBlocks(F f)
{
	using Blocks = ThreadBlockCache<sizeof(F), alignof(F)>;
	F *held = new (Blocks::take()) F(std::move(f));
	return [held]() -> R {
		F run(std::move(*held));
		held->~F();
		Blocks::give(held);
		return run();
	};
}

} // namespace gpuhandle::detail
