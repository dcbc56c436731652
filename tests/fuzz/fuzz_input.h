// Typed values read from a fuzzer's bytes (zeros once the bytes run out), and fds to go with them.
#pragma once

#include <gpuhandle/fd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <span>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

namespace gpuhandle::fuzz {

class FuzzInput
{
public:
	FuzzInput(const uint8_t *data, size_t size) : data_(data), size_(size) {}

	template<typename T>
	T take()
	{
		// Through a zeroed byte array: GCC 12 at -O2 drops `T value{}` before a memcpy of
		// fewer than sizeof(T) bytes, so that a short input's missing bytes were stale
		// stack (and a crash found by libFuzzer, built with clang, did not replay).
		uint8_t bytes[sizeof(T)] = {};
		const size_t n = std::min(sizeof(T), size_ - pos_);
		std::memcpy(bytes, data_ + pos_, n);
		pos_ += n;
		T value;
		std::memcpy(&value, bytes, sizeof(T));
		return value;
	}
	std::span<const uint8_t> rest() const { return { data_ + pos_, size_ - pos_ }; }
	bool empty() const { return pos_ >= size_; }

private:
	const uint8_t *data_;
	size_t size_;
	size_t pos_ = 0;
};

// Set GPUHANDLE_FUZZ_VERBOSE to see why each input was refused (to check that seeds are valid).
inline bool verbose()
{
	static const bool on = std::getenv("GPUHANDLE_FUZZ_VERBOSE") != nullptr;
	return on;
}
template<typename R>
void report(const char *harness, const R &result)
{
	if (verbose())
		std::fprintf(stderr, "%s: %s\n", harness,
			     result.ok() ? "valid" : result.error().message().c_str());
}

// A memfd of `size` bytes (sizes a fuzzer picks are kept small) sealed against resizing, as
// shared memory must be to cross processes, or an eventfd when `fence`.
inline UniqueFd fuzzFd(bool fence, uint32_t size)
{
	if (fence)
		return UniqueFd(eventfd(0, EFD_CLOEXEC));
	UniqueFd fd(memfd_create("gpuhandle-fuzz", MFD_CLOEXEC | MFD_ALLOW_SEALING));
	if (fd.isValid() && (ftruncate(fd.get(), static_cast<off_t>(size % (1u << 22))) != 0 ||
			     fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0))
		fd.reset();
	return fd;
}

} // namespace gpuhandle::fuzz
