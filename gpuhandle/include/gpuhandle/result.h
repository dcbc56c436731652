// Result<T>: a value or an Error, returned instead of throwing (C++20 has no std::expected).
#pragma once

#include <gpuhandle/error.h>
#include <gpuhandle/export.h>

#include <type_traits>
#include <utility>
#include <variant>

namespace GPUHANDLE_API gpuhandle {

template<typename T>
class [[nodiscard]] Result
{
public:
	Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
	Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}

	bool ok() const noexcept { return state_.index() == 0; }
	explicit operator bool() const noexcept { return ok(); }

	// Only valid when ok(); checked by the caller, as with std::optional.
	T &value() & { return *std::get_if<0>(&state_); }
	const T &value() const & { return *std::get_if<0>(&state_); }
	T &&value() && { return std::move(*std::get_if<0>(&state_)); }
	T *operator->() { return std::get_if<0>(&state_); }
	const T *operator->() const { return std::get_if<0>(&state_); }
	T &operator*() & { return value(); }
	const T &operator*() const & { return value(); }

	// Only valid when !ok().
	const Error &error() const & { return *std::get_if<1>(&state_); }
	Error &&error() && { return std::move(*std::get_if<1>(&state_)); }

private:
	std::variant<T, Error> state_;
};

// Result of an operation with no value.
class [[nodiscard]] Status
{
public:
	Status() = default;
	Status(Error error) : error_(std::in_place_index<1>, std::move(error)) {}

	bool ok() const noexcept { return error_.index() == 0; }
	explicit operator bool() const noexcept { return ok(); }
	const Error &error() const & { return *std::get_if<1>(&error_); }
	Error &&error() && { return std::move(*std::get_if<1>(&error_)); }

private:
	std::variant<std::monostate, Error> error_;
};

} // namespace gpuhandle
