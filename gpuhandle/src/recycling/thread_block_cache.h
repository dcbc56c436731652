// ThreadBlockCache: per-thread free lists of fixed-size blocks, for objects made and dropped per
// frame.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <new>
#include <utility>

namespace gpuhandle::detail {

// Up to Count blocks of Size bytes that this thread gave back, taken again before the heap is
// asked: a thread that makes and drops one object per buffer (an element's streaming thread)
// allocates nothing in steady state. Blocks made on one thread and given back on another go to
// the giver's list, and past Count to the heap, as malloc's own per-thread caches would. No lock:
// each thread has its own lists. Each library that uses a size has its own lists (header-only).
template<size_t Size, size_t Align>
class ThreadBlockCache
{
	static_assert(Align <= alignof(std::max_align_t),
		      "operator new aligns for max_align_t only");
	static constexpr uint32_t kCount = 8;

public:
	static void *take()
	{
		Cache &cache = t_cache;
		return cache.count ? cache.blocks[--cache.count] : ::operator new(Size);
	}

	static void give(void *block) noexcept
	{
		Cache &cache = t_cache;
		if (cache.closed || cache.count == kCount) {
			::operator delete(block);
			return;
		}
		if (cache.count == 0)
			armReaper();
		cache.blocks[cache.count++] = block;
	}

private:
	// Trivially destructible, so that it stays readable through the whole of the thread's
	// exit; the reaper empties and closes it when the thread's C++ destructors run.
	struct Cache {
		std::array<void *, kCount> blocks;
		uint32_t count;
		bool closed;
	};
	static inline thread_local Cache t_cache{};

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
};

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
