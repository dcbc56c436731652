// Private helpers shared by the resource factories: checks that return sentence-style Errors.
#pragma once

#include <gpuhandle/error.h>
#include <gpuhandle/fd.h>

#include <cstdint>
#include <optional>
#include <string>

namespace gpuhandle::detail {

// "planes[2].pitch"
std::string indexed(const char *array, uint32_t index, const char *member);

Error nullHandle(const char *type, const std::string &field);
Error zeroSize(const char *type, const std::string &field);

// Null pointer / zero handle checks, as an optional error so factories chain them cheaply.
std::optional<Error> requireHandle(const char *type, const char *field, const void *handle);
std::optional<Error> requireHandle(const char *type, const char *field, uint64_t handle);
std::optional<Error> requireNonZero(const char *type, const char *field, uint64_t value);
// `count` must lie in [1, max].
std::optional<Error> requireCount(const char *type, const char *field, uint32_t count,
				  uint32_t max);
// The fd must be >= 0 and open in this process.
std::optional<Error> requireOpenFd(const char *type, const std::string &field, const SharedFd &fd);

} // namespace gpuhandle::detail
