// Replaces operator new and wraps malloc/calloc/realloc to count this thread's allocations.
#include "alloc_counter.h"

#include <cstdlib>
#include <new>

extern "C" {
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
}

namespace {
thread_local uint64_t g_allocations = 0;
} // namespace

namespace gpuhandle::test {
uint64_t allocationsOnThisThread() noexcept
{
	return g_allocations;
}
} // namespace gpuhandle::test

// Sanitizer runtimes interpose malloc themselves and crash if the program does too; under them
// only operator new is counted.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GPUHANDLE_COUNT_MALLOC 0
#else
#define GPUHANDLE_COUNT_MALLOC 1
#endif

#if GPUHANDLE_COUNT_MALLOC
// glibc lets a program interpose malloc; forwarding to __libc_* keeps the real allocator.
extern "C" void *malloc(size_t size)
{
	++g_allocations;
	return __libc_malloc(size);
}
extern "C" void *calloc(size_t n, size_t size)
{
	++g_allocations;
	return __libc_calloc(n, size);
}
extern "C" void *realloc(void *p, size_t size)
{
	++g_allocations;
	return __libc_realloc(p, size);
}

#endif

// operator new goes through malloc, counted above unless a sanitizer owns malloc.
void *operator new(size_t size)
{
	if (!GPUHANDLE_COUNT_MALLOC)
		++g_allocations;
	if (void *p = std::malloc(size ? size : 1))
		return p;
	throw std::bad_alloc();
}
void *operator new[](size_t size)
{
	return operator new(size);
}
void operator delete(void *p) noexcept
{
	std::free(p);
}
void operator delete[](void *p) noexcept
{
	std::free(p);
}
void operator delete(void *p, size_t) noexcept
{
	std::free(p);
}
void operator delete[](void *p, size_t) noexcept
{
	std::free(p);
}
