// Counts heap allocations made through operator new and malloc on the calling thread.
#pragma once

#include <cstdint>

namespace gpuhandle::test {

// Allocations (operator new of any form, malloc, calloc, realloc) made by this thread so far.
uint64_t allocationsOnThisThread() noexcept;

// Counts the allocations made by this thread between construction and count().
class AllocationScope
{
public:
	AllocationScope() noexcept : start_(allocationsOnThisThread()) {}
	uint64_t count() const noexcept { return allocationsOnThisThread() - start_; }

private:
	uint64_t start_;
};

} // namespace gpuhandle::test
