// Replaces operator new and wraps malloc/calloc/realloc to count this thread's allocations.
#include "alloc_counter.h"

#include <cstdlib>
#include <new>

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
// only the operator new family is counted.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GPUHANDLE_COUNT_MALLOC 0
#else
#define GPUHANDLE_COUNT_MALLOC 1
#endif

#if GPUHANDLE_COUNT_MALLOC
extern "C" {
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
}

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

namespace {

void *allocate(size_t size) noexcept
{
	if (!GPUHANDLE_COUNT_MALLOC)
		++g_allocations; // otherwise counted by malloc above
	return std::malloc(size ? size : 1);
}

void *allocateAligned(size_t size, std::align_val_t align) noexcept
{
	++g_allocations; // aligned_alloc is not wrapped above
	auto alignment = static_cast<size_t>(align);
	size_t rounded = (size + alignment - 1) / alignment * alignment;
	return std::aligned_alloc(alignment, rounded ? rounded : alignment);
}

} // namespace

// Every form is replaced, so that whatever new allocated, delete frees with the same allocator.
void *operator new(size_t size)
{
	if (void *p = allocate(size))
		return p;
	throw std::bad_alloc();
}
void *operator new[](size_t size)
{
	return operator new(size);
}
void *operator new(size_t size, const std::nothrow_t &) noexcept
{
	return allocate(size);
}
void *operator new[](size_t size, const std::nothrow_t &) noexcept
{
	return allocate(size);
}
void *operator new(size_t size, std::align_val_t align)
{
	if (void *p = allocateAligned(size, align))
		return p;
	throw std::bad_alloc();
}
void *operator new[](size_t size, std::align_val_t align)
{
	return operator new(size, align);
}
void *operator new(size_t size, std::align_val_t align, const std::nothrow_t &) noexcept
{
	return allocateAligned(size, align);
}
void *operator new[](size_t size, std::align_val_t align, const std::nothrow_t &) noexcept
{
	return allocateAligned(size, align);
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
void operator delete(void *p, const std::nothrow_t &) noexcept
{
	std::free(p);
}
void operator delete[](void *p, const std::nothrow_t &) noexcept
{
	std::free(p);
}
void operator delete(void *p, std::align_val_t) noexcept
{
	std::free(p);
}
void operator delete[](void *p, std::align_val_t) noexcept
{
	std::free(p);
}
void operator delete(void *p, size_t, std::align_val_t) noexcept
{
	std::free(p);
}
void operator delete[](void *p, size_t, std::align_val_t) noexcept
{
	std::free(p);
}
void operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept
{
	std::free(p);
}
void operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept
{
	std::free(p);
}
