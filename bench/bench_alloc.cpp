// Counts every heap allocation of a benchmark process: malloc and its kin are interposed here
// (glibc lets a program define them and forwards to its own __libc_* functions), and operator
// new goes through malloc, so C++, GLib, GStreamer and FFmpeg allocations are all counted.
// Allocations that other libraries' own code makes (a GPU driver's, FFmpeg's: called from their
// code) are counted apart as well while countAllocationsFrom names them.
#include "bench_common.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
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
std::atomic<uint64_t> g_foreignAllocations{ 0 };

// The code ranges of the drivers' libraries, set while no allocation is counted apart.
struct Range {
	std::atomic<uintptr_t> begin;
	std::atomic<uintptr_t> end;
};
constexpr int kMaxRanges = 64;
Range g_ranges[kMaxRanges];
std::atomic<int> g_numRanges{ 0 };

// What addRanges looks for: parts of library file names.
struct Wanted {
	std::initializer_list<const char *> parts;
	int count = 0;
};

bool isWanted(const char *name, const Wanted &wanted)
{
	for (const char *part : wanted.parts)
		if (std::strstr(name, part))
			return true;
	return false;
}

int addRanges(dl_phdr_info *info, size_t, void *data)
{
	Wanted &wanted = *static_cast<Wanted *>(data);
	int &n = wanted.count;
	if (!info->dlpi_name || !isWanted(info->dlpi_name, wanted))
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
			g_foreignAllocations.fetch_add(1, std::memory_order_relaxed);
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

uint64_t foreignHeapAllocations()
{
	return g_foreignAllocations.load(std::memory_order_relaxed);
}

void countAllocationsFrom(std::initializer_list<const char *> libraries)
{
	g_numRanges.store(0, std::memory_order_release);
	if (libraries.size() == 0)
		return;
	Wanted wanted{ libraries };
	dl_iterate_phdr(addRanges, &wanted);
	g_numRanges.store(wanted.count, std::memory_order_release);
}

void countDriverAllocations(bool on)
{
	if (on)
		countAllocationsFrom({ "/dri/", "libvulkan_", "libpocl", "libLLVM", "libEGL_mesa",
				       "libglapi", "libgallium", "libOpenCL", "libnvidia",
				       "libcuda" });
	else
		countAllocationsFrom({});
}
} // namespace gpuhandle::bench
