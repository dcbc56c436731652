// Counts every heap allocation of a benchmark process: malloc and its kin are interposed here
// (glibc lets a program define them and forwards to its own __libc_* functions), and operator
// new goes through malloc, so C++, GLib, GStreamer and FFmpeg allocations are all counted.
#include "bench_common.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>

extern "C" {
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *pointer, size_t size);
void *__libc_memalign(size_t alignment, size_t size);
void __libc_free(void *pointer);
}

namespace {
std::atomic<uint64_t> g_allocations{ 0 };
inline void counted()
{
	g_allocations.fetch_add(1, std::memory_order_relaxed);
}
} // namespace

extern "C" {
void *malloc(size_t size)
{
	counted();
	return __libc_malloc(size);
}
void *calloc(size_t count, size_t size)
{
	counted();
	return __libc_calloc(count, size);
}
void *realloc(void *pointer, size_t size)
{
	counted();
	return __libc_realloc(pointer, size);
}
void free(void *pointer)
{
	__libc_free(pointer);
}
void *memalign(size_t alignment, size_t size)
{
	counted();
	return __libc_memalign(alignment, size);
}
void *aligned_alloc(size_t alignment, size_t size)
{
	counted();
	return __libc_memalign(alignment, size);
}
int posix_memalign(void **out, size_t alignment, size_t size)
{
	counted();
	void *p = __libc_memalign(alignment, size);
	if (!p)
		return 12; // ENOMEM
	*out = p;
	return 0;
}
}

namespace gpuhandle::bench {
uint64_t heapAllocations()
{
	return g_allocations.load(std::memory_order_relaxed);
}
} // namespace gpuhandle::bench
