// Counts this process's open file descriptors, to prove that nothing leaks an fd.
#pragma once

#include <gpuhandle/fd.h>

namespace gpuhandle::test {

// Number of entries in /proc/self/fd (excluding the one used to read it).
int openFdCount();

// A fresh memfd of `size` bytes (for tests that need a real, open fd).
UniqueFd makeMemfd(uint64_t size, bool sealed = false);

} // namespace gpuhandle::test
