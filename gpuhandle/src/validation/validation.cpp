// Sentence-style validation errors for the resource factories.
#include "validation.h"

#include <cinttypes>
#include <cstdio>

namespace gpuhandle::detail {

std::string indexed(const char *array, uint32_t index, const char *member)
{
	char buffer[96];
	std::snprintf(buffer, sizeof(buffer), "%s[%u]%s%s", array, index, member[0] ? "." : "",
		      member);
	return buffer;
}

Error nullHandle(const char *type, const std::string &field)
{
	return Error::format(ErrorCode::NullHandle, field,
			     "%s: %s is null; a valid handle is required.", type, field.c_str());
}

Error zeroSize(const char *type, const std::string &field)
{
	return Error::format(ErrorCode::ZeroSize, field, "%s: %s is 0; it must be at least 1.",
			     type, field.c_str());
}

std::optional<Error> requireHandle(const char *type, const char *field, const void *handle)
{
	if (!handle)
		return nullHandle(type, field);
	return std::nullopt;
}

std::optional<Error> requireHandle(const char *type, const char *field, uint64_t handle)
{
	if (!handle)
		return nullHandle(type, field);
	return std::nullopt;
}

std::optional<Error> requireNonZero(const char *type, const char *field, uint64_t value)
{
	if (!value)
		return zeroSize(type, field);
	return std::nullopt;
}

std::optional<Error> requireCount(const char *type, const char *field, uint32_t count, uint32_t max)
{
	if (count < 1 || count > max)
		return Error::format(ErrorCode::OutOfRange, field,
				     "%s: %s is %u; it must be between 1 and %u.", type, field,
				     count, max);
	return std::nullopt;
}

std::optional<Error> requireOpenFd(const char *type, const std::string &field, const SharedFd &fd)
{
	if (fd.get() < 0)
		return Error::format(ErrorCode::BadFd, field,
				     "%s: %s is %d; a file descriptor >= 0 is required.", type,
				     field.c_str(), fd.get());
	if (!isOpenFd(fd.get()))
		return Error::format(ErrorCode::BadFd, field,
				     "%s: %s (%d) is not an open file descriptor.", type,
				     field.c_str(), fd.get());
	return std::nullopt;
}

} // namespace gpuhandle::detail
