// Result<T>: a value or an Error, returned instead of throwing (C++20 has no std::expected).
#pragma once

#include <gpuhandle/error.h>
#include <gpuhandle/export.h>

#include <type_traits>
#include <utility>
#include <variant>

namespace GPUHANDLE_API gpuhandle {

// A T on success, or the Error that prevented it; check ok() before reading either side.
template<typename T>
class [[nodiscard]] Result
{
public:
	// Success holding `value`; implicit, so a function returning Result<T> can return a T.
	Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
	// Failure holding `error`; implicit, so such a function can return an Error.
	Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}

	// True when a value is held, false when an Error is.
	bool ok() const noexcept { return state_.index() == 0; }
	explicit operator bool() const noexcept { return ok(); } // same as ok()

	// Only valid when ok(); checked by the caller, as with std::optional.
	T &value() & { return *std::get_if<0>(&state_); }
	const T &value() const & { return *std::get_if<0>(&state_); }   // read-only value()
	T &&value() && { return std::move(*std::get_if<0>(&state_)); }  // moves the value out
	T *operator->() { return std::get_if<0>(&state_); }             // null when !ok()
	const T *operator->() const { return std::get_if<0>(&state_); } // null when !ok()
	T &operator*() & { return value(); }                            // value()
	const T &operator*() const & { return value(); }                // value(), read-only

	// Only valid when !ok().
	const Error &error() const & { return *std::get_if<1>(&state_); }
	Error &&error() && { return std::move(*std::get_if<1>(&state_)); } // moves the Error out

private:
	std::variant<T, Error> state_;
};

// Result of an operation with no value.
class [[nodiscard]] Status
{
public:
	Status() = default;
	// Failure holding `error`; implicit, so a function returning Status can return an Error.
	// A default-constructed Status is success.
	Status(Error error) : error_(std::in_place_index<1>, std::move(error)) {}

	// True when the operation succeeded (no Error is held).
	bool ok() const noexcept { return error_.index() == 0; }
	explicit operator bool() const noexcept { return ok(); } // same as ok()
	// Only valid when !ok().
	const Error &error() const & { return *std::get_if<1>(&error_); }
	Error &&error() && { return std::move(*std::get_if<1>(&error_)); } // moves the Error out

private:
	std::variant<std::monostate, Error> error_;
};

} // namespace gpuhandle
