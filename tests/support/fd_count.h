// Counts this process's open file descriptors, to prove that nothing leaks an fd.
#pragma once

#include <gpuhandle/fd.h>

#include <string>

namespace gpuhandle::test {

// Number of entries in /proc/self/fd (excluding the one used to read it).
int openFdCount();
// The open fds and what each is ("3 socket:[4711], 4 anon_inode:[eventfd]"), for a failure's
// message to say which fd is left over.
std::string openFdList();

// A fresh memfd of `size` bytes (for tests that need a real, open fd).
UniqueFd makeMemfd(uint64_t size, bool sealed = false);

} // namespace gpuhandle::test
