// Counts every heap allocation of a benchmark process: malloc and its kin are interposed here
// (glibc lets a program define them and forwards to its own __libc_* functions), and operator
// new goes through malloc, so C++, GLib, GStreamer and FFmpeg allocations are all counted.
// Allocations that a GPU driver's own code makes (Mesa, PoCL: called from their libraries)
// are counted apart as well while countDriverAllocations is on.
#include "bench_common.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <link.h>

extern "C" {
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *pointer, size_t size);
void *__libc_memalign(size_t alignment, size_t size);
void __libc_free(void *pointer);
}

namespace {
std::atomic<uint64_t> g_allocations{ 0 };
std::atomic<uint64_t> g_driverAllocations{ 0 };

// The code ranges of the drivers' libraries, set while no allocation is counted apart.
struct Range {
	std::atomic<uintptr_t> begin;
	std::atomic<uintptr_t> end;
};
constexpr int kMaxRanges = 64;
Range g_ranges[kMaxRanges];
std::atomic<int> g_numRanges{ 0 };

bool isDriverLibrary(const char *name)
{
	for (const char *part :
	     { "/dri/", "libvulkan_lvp", "libvulkan_", "libpocl", "libLLVM", "libEGL_mesa",
	       "libglapi", "libgallium", "libOpenCL", "libnvidia", "libcuda" })
		if (std::strstr(name, part))
			return true;
	return false;
}

int addRanges(dl_phdr_info *info, size_t, void *data)
{
	int &n = *static_cast<int *>(data);
	if (!info->dlpi_name || !isDriverLibrary(info->dlpi_name))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && n < kMaxRanges; i++) {
		const ElfW(Phdr) &ph = info->dlpi_phdr[i];
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			g_ranges[n].begin.store(info->dlpi_addr + ph.p_vaddr,
						std::memory_order_relaxed);
			g_ranges[n++].end.store(info->dlpi_addr + ph.p_vaddr + ph.p_memsz,
						std::memory_order_relaxed);
		}
	}
	return 0;
}

// `caller`: the return address of malloc and its kin, so the code that called them.
inline void counted(const void *caller)
{
	g_allocations.fetch_add(1, std::memory_order_relaxed);
	const int n = g_numRanges.load(std::memory_order_acquire);
	const auto at = reinterpret_cast<uintptr_t>(caller);
	for (int i = 0; i < n; i++)
		if (at >= g_ranges[i].begin.load(std::memory_order_relaxed) &&
		    at < g_ranges[i].end.load(std::memory_order_relaxed)) {
			g_driverAllocations.fetch_add(1, std::memory_order_relaxed);
			return;
		}
}
} // namespace

extern "C" {
void *malloc(size_t size)
{
	counted(__builtin_return_address(0));
	return __libc_malloc(size);
}
void *calloc(size_t count, size_t size)
{
	counted(__builtin_return_address(0));
	return __libc_calloc(count, size);
}
void *realloc(void *pointer, size_t size)
{
	counted(__builtin_return_address(0));
	return __libc_realloc(pointer, size);
}
void free(void *pointer)
{
	__libc_free(pointer);
}
void *memalign(size_t alignment, size_t size)
{
	counted(__builtin_return_address(0));
	return __libc_memalign(alignment, size);
}
void *aligned_alloc(size_t alignment, size_t size)
{
	counted(__builtin_return_address(0));
	return __libc_memalign(alignment, size);
}
int posix_memalign(void **out, size_t alignment, size_t size)
{
	counted(__builtin_return_address(0));
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

uint64_t driverHeapAllocations()
{
	return g_driverAllocations.load(std::memory_order_relaxed);
}

void countDriverAllocations(bool on)
{
	g_numRanges.store(0, std::memory_order_release);
	if (!on)
		return;
	int n = 0;
	dl_iterate_phdr(addRanges, &n);
	g_numRanges.store(n, std::memory_order_release);
}
} // namespace gpuhandle::bench
